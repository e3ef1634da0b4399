"""``--cutoff auto``: the filter's cut-off that predicts torques best on data the fit did not see.

The error against the torque filtered at the same cut-off cannot choose it: the lower the cut-off,
the more of the measured torque it removes, and the smaller that error gets whatever the model
(the Panda run of Gaz et al.: 3.0 % held out at 20 Hz, 0.7 % at 2.5 Hz). So each candidate
(``Processing.candidates``: from twice the motion's bandwidth up, a factor √2 apart) is judged
against one reference for all, the measured torque filtered only at the highest candidate:

* the training data are split in time: ordinary least squares of the base parameters on their
  first three quarters (joints at rest left out, as the identification leaves them), filtered at
  the candidate;
* the last quarter's states, filtered at the candidate, predict its torques; the error
  ‖τ_ref − τ̂‖ / ‖τ_ref‖ is taken over the instants every candidate keeps (a lower cut-off trims
  longer edges).

Too high a cut-off lets noise into q̈ and the fit; too low a one bends the motion: the error has a
minimum, and the held-out data of the identification (its last quarter, or the held-out run) are
never looked at, so they still judge the result. Of a long run only the last ``WINDOW`` seconds
of the training data are looked at: the choice needs a minute of motion, not an hour.
"""
from __future__ import annotations

import numpy as np

from .estimate import least_squares_from_gram
from .gram import accumulate, predictions

FIT_SHARE = 0.75   # of the training data fitted; the rest scores the candidate
WINDOW = 60.0      # s: the most of the training data the choice looks at (the end of it)


def choose_cutoff(layout, states_at, candidates, split=np.inf, progress=print):
    """(the best cut-off or None when no candidate could be fitted, [(cut-off, error)] of every
    candidate). ``states_at(f_c)``: the run's
    (t, q, q̇, q̈, τ, Coulomb columns, rest) filtered at f_c (``identify``); ``split``: the time
    from which the data are held out (never used here); ``candidates``: increasing cut-offs in Hz."""
    base = layout.base
    top, lowest = states_at(candidates[-1]), states_at(candidates[0])
    t_ref, tau_ref = top[0], top[4]
    start, end = lowest[0][0], min(split, lowest[0][-1])
    boundary = start + FIT_SHARE * (end - start)
    # the lowest cut-off trims the longest edges of the same grid: its instants are every candidate's
    scored = np.intersect1d(lowest[0][(lowest[0] >= boundary) & (lowest[0] < end)], t_ref)
    if scored.size == 0:
        return None, []
    reference = tau_ref[np.searchsorted(t_ref, scored)]
    table = []
    for fc in candidates:
        t, q, qd, qdd, tau, coulomb, rest = {candidates[0]: lowest, candidates[-1]: top}.get(fc) or states_at(fc)
        fit = t < boundary
        grams = accumulate(layout, q[fit], qd[fit], qdd[fit], tau[fit], rest=rest[fit], coulomb=coulomb[fit])
        try:
            estimate = least_squares_from_gram(grams.matrix(base.columns), int(np.sum(grams.rows)))
        except (np.linalg.LinAlgError, ValueError):   # too few rows left at this cut-off (its edges, rests)
            table.append((fc, np.inf))
            progress(f"{'':10s}cut-off {fc:7.3g} Hz: too few states left to fit")
            continue
        pi = np.zeros(len(layout.names))
        pi[base.columns] = estimate.parameters
        k = np.searchsorted(t, scored)
        predicted = predictions(layout, q[k], qd[k], qdd[k], [pi], coulomb=coulomb[k])[0]
        error = float(np.linalg.norm(reference - predicted) / np.linalg.norm(reference))
        table.append((fc, error))
        progress(f"{'':10s}cut-off {fc:7.3g} Hz: {100 * error:.3f} % on the last quarter of the training data")
    best = min(table, key=lambda row: row[1])
    return (best[0] if np.isfinite(best[1]) else None), table


__all__ = ["choose_cutoff"]
