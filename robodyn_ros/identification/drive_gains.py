"""Drive gains identified with the dynamic parameters, from a run with a known payload beside one
without: the global identification of Gautier & Briot ("Global identification of joint drive
gains and dynamic parameters of robots", ASME J. Dyn. Sys. Meas. Control 136(5), 2014; first as
"New method for global identification of the joint drive gains of robots using a known payload
mass", IROS 2011). No rclpy here.

A joint that reports its motor current i_j (a UR, ``dynamics.drives``) has the torque g_j i_j, and
the maker may not publish the drive gain g_j. Currents alone cannot give it: the model
Y(q, q̇, q̈) π = diag(g) i is unchanged when π and g are scaled together. A payload of known mass M
fixes that scale: on the run that carries it the torques are Y π + Y_L π_L, with π_L the payload's
parameters in the last joint frame, whose mass is known. Gautier & Briot stack both runs and
solve the homogeneous system by total least squares, scaled by M. Here the same model is solved
as what the noise makes it: the currents are measured, the filtered states nearly exact, so the
estimate minimises the currents' residual

    Σ_runs Σ_j w_j² |i_j − (Y_j π_run) / g_j|²,   π_run = π (no payload) or π + π_L (payload),

over the base parameters of the arm (friction included), the payload's unknown parameters (all
but its mass, or with a known centre of mass its inertia only) and the gains: bilinear in
(π, 1/g), solved by Gauss–Newton from the linear equation-error solution (the torque residual
Y π − g i, whose regressor carries the current's noise and so biases g), with Gautier & Khalil's
per-joint weights w_j = 1/σ_j. Every product it needs is a quadratic form of the per-joint Gram
matrices of [Y_j i_j] of each run (``gram``), so the regressor is never held whole. The standard
deviations are those of the Gauss–Newton Jacobian at the solution, scaled as ``identify`` scales
its own for residuals low-passed at the cut-off.

The check by statics: where the arm rests (every joint still) the torque g_j i_j is gravity's, up
to the friction at rest, which may be anything within the Coulomb level. ``StaticCheck`` compares
the two per joint and run. It catches a gross error (a gain off by tens of per cent, a wrong sign,
a current read as N m), not a 2 % one: friction at rest is as large as that.
"""
from __future__ import annotations

import dataclasses

import numpy as np

from ..dynamics.inertial_parameters import BODY_COLUMNS, standard_parameters
from .gram import accumulate, predictions
from .identify import CUTOFF_HZ, IdentificationError, _states
from .layout import Layout
from .samples import MAX_GAP

REST_SPEED = 0.01     # rad/s (m/s): a state with every joint slower than this, ...
REST_ACCELERATION = 0.05   # rad/s² (m/s²): ... and accelerating less, is at rest
SLOW = 0.05           # rad/s (m/s): a joint slower than this is left out of its row (_moving_grams)
MAX_ITERATIONS = 50
MIN_MOVING_STATES = 100   # per joint, over both runs
POORLY_KNOWN = 0.02   # a gain whose relative σ exceeds this is named (DriveGainEstimate.warning)
_BODY = len(BODY_COLUMNS)


@dataclasses.dataclass(frozen=True)
class StaticCheck:
    """Per run and joint where the arm rests: ``states`` at rest, the ``measured`` torque g i and
    the ``predicted`` static torque of the estimate (mean over those states), the ``band`` the
    friction at rest may take (the joint's identified Coulomb level), ``ok`` when the difference
    lies within it."""
    run: str
    states: int
    measured: np.ndarray
    predicted: np.ndarray
    band: np.ndarray

    @property
    def ok(self):
        return np.abs(self.measured - self.predicted) <= self.band

    def report(self, joints):
        return {"run": self.run, "states_at_rest": self.states,
                **{key: dict(zip(joints, getattr(self, key).tolist()))
                   for key in ("measured", "predicted", "band", "ok")}}


@dataclasses.dataclass(frozen=True)
class DriveGainEstimate:
    """``gains`` (N m/A per joint) and their ``std``; the arm's base parameters ``parameters``
    (``base``'s, with ``parameters_std``); the ``payload``'s 10 standard parameters in the last joint
    frame (its mass given) with ``payload_std`` (0 where given); ``fit``: per run the relative RMS
    of the currents' residual per joint; ``iterations`` of Gauss–Newton; ``statics``: the
    StaticCheck of each run with states at rest."""
    joints: tuple
    gains: np.ndarray
    std: np.ndarray
    base: object
    parameters: np.ndarray
    parameters_std: np.ndarray
    payload: np.ndarray
    payload_std: np.ndarray
    fit: dict
    states: dict
    iterations: int
    statics: tuple

    def report(self):
        joints = list(self.joints)
        return {"method": "global identification of drive gains and dynamic parameters (Gautier & Briot), "
                          "least squares in the currents",
                "gains": dict(zip(joints, self.gains.tolist())), "std": dict(zip(joints, self.std.tolist())),
                "relative_std_percent": dict(zip(joints, (100 * self.std / np.abs(self.gains)).tolist())),
                "payload": dict(zip(BODY_COLUMNS, self.payload.tolist())),
                "payload_std": dict(zip(BODY_COLUMNS, self.payload_std.tolist())),
                "fit": {run: dict(zip(joints, value.tolist())) for run, value in self.fit.items()},
                "states": self.states, "iterations": self.iterations,
                "statics": [check.report(joints) for check in self.statics]}

    def poorly_known(self):
        """The joints whose gain's relative σ exceeds POORLY_KNOWN."""
        return [j for j, g, s in zip(self.joints, self.gains, self.std) if s > POORLY_KNOWN * abs(g)]

    def warning(self):
        """A sentence naming the poorly known gains and what would help, or None."""
        weak = self.poorly_known()
        if not weak:
            return None
        return ("the drive gains of " + ", ".join(f"{j} (± {100 * s / abs(g):.2g} %)" for j, g, s in zip(
            self.joints, self.gains, self.std) if j in weak) + " are poorly known: the payload barely loads "
            "them; carry it off the tool axis and move those joints more, in both runs")

    def statics_table(self):
        """One line per run with states at rest: g i minus the static torque, per joint."""
        lines = []
        for check in self.statics:
            lines.append(f"  at rest in the {check.run} ({check.states} states): g i − static torque "
                         + ", ".join(f"{d:+.3g}" + ("" if ok else " (beyond the Coulomb level!)")
                                     for d, ok in zip(check.measured - check.predicted, check.ok)) + " N m")
        return "\n".join(lines)


def identify_drive_gains(model, run, payload_run, payload_mass, payload_com=None, *, friction=None,
                         cutoff_hz=CUTOFF_HZ, max_gap=MAX_GAP, edge_trim=None, progress=print):
    """The drive gains of every joint of ``model`` and its parameters (module docstring) from
    ``run`` and ``payload_run`` (``bag.Recording``s whose efforts are the motor currents, the second
    with a payload of ``payload_mass`` kg fixed to the tip; ``payload_com``: its centre of mass in
    the tip frame, if known). ``friction``: the friction forms (``layout.Layout.of``)."""
    if not (np.isfinite(payload_mass) and payload_mass > 0.0):
        raise IdentificationError(f"the payload's mass must be positive (kg), got {payload_mass}")
    layout = Layout.of(model, friction)
    base, n, p = layout.base, model.dof, len(layout.names)
    grams, counts, states = [], [], {}
    for name, recording in (("run", run), ("payload run", payload_run)):
        t, q, qd, qdd, current = _states(model, recording, cutoff_hz, 0.0, max_gap, edge_trim, name)[0]
        # a joint still or slow has a friction no sign law knows (anything up to stiction at rest):
        # its row leaves those states out; where the whole arm rests they check the statics (_statics)
        moving, count = _moving_grams(layout, q, qd, qdd, current)
        grams.append(moving)
        counts.append(count)
        states[name] = (q, qd, qdd, current, float(np.median(np.diff(t))))
    still = [j for j, count in zip(model.joint_names, counts[0] + counts[1]) if count < MIN_MOVING_STATES]
    if still:
        raise IdentificationError(f"{run.source}, {payload_run.source}: the joints {still} barely move (fewer than "
                                  f"{MIN_MOVING_STATES} states faster than {SLOW:g} rad/s): their drive gains "
                                  "cannot be identified; move every joint in both runs")
    known, free = _payload_columns(model, payload_mass, payload_com, p)
    last = np.arange(_BODY * (n - 1), _BODY * n)
    # π_run = D_run z + c_run with z = [base parameters, the payload's free ones]
    S = np.zeros((p, base.count))
    S[base.columns, np.arange(base.count)] = 1.0
    T = np.zeros((p, len(free)))
    T[last[free], np.arange(len(free))] = 1.0
    runs = [(_expanded(grams[0], p), np.hstack((S, np.zeros_like(T))), np.zeros(p)),
            (_expanded(grams[1], p), np.hstack((S, T)), known)]
    names = base.expressions() + [f"payload.{BODY_COLUMNS[k]}" for k in free] + [
        f"{j} drive gain" for j in model.joint_names]
    z, gains = _equation_error(runs, n, names)
    weights = np.ones(n)
    k, iterations = 1.0 / gains, 0
    for _ in range(2):     # unit weights, then Gautier & Khalil's 1/σ_j from that fit's residuals
        z, k, used = _gauss_newton(runs, z, k, weights)
        iterations += used
        residual, samples = _residual_squares(runs, z, k), counts[0] + counts[1]
        weights = 1.0 / np.sqrt(residual / (samples - (len(z) + n) / n))
    JtJ, _ = _normal_equations(runs, z, k, weights)
    dt = min(states["run"][4], states["payload run"][4])
    correlation = 1.0 / (2.0 * cutoff_hz * dt) if 2.0 * cutoff_hz * dt < 1.0 else 1.0
    rows = int(np.sum(counts))
    sigma2 = float(np.sum(weights ** 2 * _residual_squares(runs, z, k))) / (rows - len(z) - n)
    cov = np.linalg.inv(JtJ) * sigma2 * correlation
    std = np.sqrt(np.diag(cov))
    gains, gains_std = 1.0 / k, std[len(z):] / k ** 2
    payload, payload_std = known[last].copy(), np.zeros(_BODY)
    payload[free] += z[base.count:]
    payload_std[free] = std[base.count:len(z)]
    fit = {name: np.sqrt(_residual_squares([r], z, k) / np.maximum(
        np.array([r[0][j][2] for j in range(n)]), 1e-300)) for name, r in zip(("run", "payload run"), runs)}
    statics = tuple(check for check in (_statics(layout, name, states[name], runs[i][1] @ z + runs[i][2], gains,
                                                 z[:base.count], base)
                                        for i, name in enumerate(("run", "payload run"))) if check is not None)
    progress(f"drive gains (global identification, {iterations} Gauss–Newton iterations): "
             + ", ".join(f"{g:.4g} ± {s:.2g}" for g, s in zip(gains, gains_std)) + " N m/A")
    return DriveGainEstimate(tuple(model.joint_names), gains, gains_std, base, z[:base.count],
                             std[:base.count], payload, payload_std, fit,
                             {name: len(s[0]) for name, s in states.items()}, iterations, statics)


def _moving_grams(layout, q, qd, qdd, current):
    """(JointGrams, states per joint) of the states where each joint moves: joint j's block over
    the states where |q̇_j| ≥ SLOW (a sign law knows neither stiction nor Stribeck's fall, and the
    filter smears a reversal's step over a few hundredths of a second)."""
    blocks, counts = [], []
    for j in range(layout.model.dof):
        keep = np.abs(qd[:, j]) >= SLOW
        grams = accumulate(layout, q[keep], qd[keep], qdd[keep], current[keep])
        blocks.append(grams.blocks[j])
        counts.append(int(keep.sum()))
    return dataclasses.replace(grams, blocks=tuple(blocks)), np.array(counts)


def at_rest(qd, qdd):
    """(N,) True where every joint is still (REST_SPEED, REST_ACCELERATION)."""
    return np.all(np.abs(qd) < REST_SPEED, axis=1) & np.all(np.abs(qdd) < REST_ACCELERATION, axis=1)


def _payload_columns(model, mass, com, p):
    """(c: the payload's known standard parameters in Y's layout (p,), the indices among its 10
    that are estimated): the mass, and with a known centre of mass its first moments too."""
    n = model.dof
    point = standard_parameters(model.with_payload(mass, (0.0, 0.0, 0.0) if com is None else com))
    difference = (point - standard_parameters(model))[_BODY * (n - 1):_BODY * n]
    given = 1 if com is None else 4
    known = np.zeros(p)
    known[_BODY * (n - 1):_BODY * (n - 1) + given] = difference[:given]
    return known, np.arange(given, _BODY)


def _expanded(grams, p):
    """Per joint (G (p, p), h (p,), s): the Gram matrix of [Y_j i_j] over all of Y's columns."""
    out = []
    for own, A in zip(grams.columns, grams.blocks):
        G, h = np.zeros((p, p)), np.zeros(p)
        G[np.ix_(own, own)] = A[:-1, :-1]
        h[own] = A[:-1, -1]
        out.append((G, h, A[-1, -1]))
    return out


def _equation_error(runs, n, names):
    """The linear start: (z, g) minimising Σ |Y_j π_run − g_j i_j|² (torques' residual); refused
    when the runs leave some combination of the unknowns unseen (``_check_identifiable``)."""
    m = runs[0][1].shape[1]
    N, b = np.zeros((m + n, m + n)), np.zeros(m + n)
    for blocks, D, c in runs:
        for j, (G, h, s) in enumerate(blocks):
            DG = D.T @ G
            N[:m, :m] += DG @ D
            N[:m, m + j] -= D.T @ h
            N[m + j, :m] -= D.T @ h
            N[m + j, m + j] += s
            b[:m] -= DG @ c
            b[m + j] += c @ h
    _check_identifiable(N, names)
    x = _solve(N, b)
    if np.any(x[m:] == 0.0):
        raise IdentificationError("a joint's current never varies with its torque: its drive gain is not identifiable")
    return x[:m], x[m:]


def _normal_equations(runs, z, k, weights):
    """(JᵀJ, Jᵀe) of the currents' residual e_j = w_j (i_j − k_j Y_j π_run) at (z, k)."""
    m, n = len(z), len(k)
    JtJ, Jte = np.zeros((m + n, m + n)), np.zeros(m + n)
    for blocks, D, c in runs:
        pi = D @ z + c
        for j, (G, h, s) in enumerate(blocks):
            w2, Gpi = weights[j] ** 2, G @ pi
            JtJ[:m, :m] += w2 * k[j] ** 2 * (D.T @ G @ D)
            JtJ[:m, m + j] += w2 * k[j] * (D.T @ Gpi)
            JtJ[m + j, m + j] += w2 * pi @ Gpi
            Jte[:m] -= w2 * k[j] * (D.T @ (h - k[j] * Gpi))
            Jte[m + j] -= w2 * (pi @ h - k[j] * pi @ Gpi)
    JtJ[m:, :m] = JtJ[:m, m:].T
    return JtJ, Jte


def _gauss_newton(runs, z, k, weights):
    for iteration in range(1, MAX_ITERATIONS + 1):
        JtJ, Jte = _normal_equations(runs, z, k, weights)
        step = -_solve(JtJ, Jte)
        z, k = z + step[:len(z)], k + step[len(z):]
        if np.max(np.abs(step[len(z):] / k)) < 1e-10:
            return z, k, iteration
    raise IdentificationError(f"the drive gains did not converge in {MAX_ITERATIONS} Gauss–Newton iterations")


def _residual_squares(runs, z, k):
    """|i_j − k_j Y_j π_run|² per joint (n,), summed over ``runs``."""
    out = np.zeros(len(k))
    for blocks, D, c in runs:
        pi = D @ z + c
        for j, (G, h, s) in enumerate(blocks):
            out[j] += max(s - 2.0 * k[j] * pi @ h + k[j] ** 2 * pi @ G @ pi, 0.0)
    return out


def _solve(N, b):
    """N x = b for a symmetric positive definite N, its rows and columns scaled to a unit diagonal."""
    d = np.sqrt(np.maximum(np.diag(N), 1e-300))
    return np.linalg.solve(N / np.outer(d, d), b / d) / d


def _check_identifiable(N, names):
    """Refuse when some combination of the unknowns barely changes the torques: the eigenvalues of
    the normal matrix ``N`` scaled to a unit diagonal below 1e-12 of its largest (1e-6 in singular
    values), naming the unknowns that make up those directions."""
    d = np.sqrt(np.maximum(np.diag(N), 1e-300))
    values, vectors = np.linalg.eigh(N / np.outer(d, d))
    weak = np.flatnonzero(values < 1e-12 * values[-1])      # weakest first
    if weak.size:
        unseen = [names[k] for k in np.flatnonzero(np.diag(N) <= 1e-24 * np.max(np.diag(N)))]
        involved = list(dict.fromkeys(unseen + [names[int(np.argmax(np.abs(vectors[:, k])))] for k in weak]))
        raise IdentificationError(
            "the two runs cannot separate the drive gains from the parameters: "
            f"{'; '.join(involved[:6])}{' ...' if len(involved) > 6 else ''} barely change the currents; "
            "move every joint in both runs and use a payload that loads each joint (off the tool axis)")


def _statics(layout, name, state, pi, gains, beta, base):
    """StaticCheck of one run: its states at rest, g i against the static torque Y(q, 0, 0) π."""
    q, qd, qdd, current, _ = state
    rest = at_rest(qd, qdd)
    if not rest.any():
        return None
    zero = np.zeros_like(q[rest])
    static = predictions(layout, q[rest], zero, zero, [pi])[0]
    band = np.zeros(layout.model.dof)
    for j, joint in enumerate(layout.model.joint_names):
        levels = [abs(v) for v, c in zip(beta, base.columns) if layout.names[c].startswith(joint + ".coulomb")]
        band[j] = max(levels, default=0.0)
    return StaticCheck(name, int(rest.sum()), np.mean(current[rest] * gains, axis=0), np.mean(static, axis=0), band)


__all__ = ["DriveGainEstimate", "StaticCheck", "identify_drive_gains"]
