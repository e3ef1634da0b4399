"""Friction where a joint is still, and the Coulomb step through the filter (no rclpy here).

A joint at rest does not tell the sign of its Coulomb friction: its measured velocity is noise
(±1e-4 rad/s on a UR), and at rest the friction takes whatever value, up to the breakaway
torque, holds the joint where it is (Karnopp 1985: inside a band of velocities around zero the
friction is the force that keeps the velocity there, not a function of it). A sign law fed that
noise gives the rest samples ±F_c at random against torques that carry something else, and the
fit pays for it elsewhere: on a UR10e's run, rest samples pulled joint 1 to viscous 35.8 /
Coulomb 15 N m where the moving samples alone gave 28.8 / 19.9. So, with a rest band v_r
(``identify``'s ``rest_band``: by default ``REST_BAND``, 0.01 rad/s, the gravity-compensation
law's boundary layer; 0 fits every sample), per joint:

* its samples with |q̇| < v_r (the measured velocity, unfiltered) are at rest, and its row of the
  regression is left out wherever such samples can make more than ``REST_SHARE`` (1 %) of the
  filtered torque (the rest indicator convolved with the filter's impulse response in absolute
  value, ``signals.absolute_response``: the response rings, so the indicator filtered as the
  torque is would understate it), so a friction there of up to F_c leaks at most 1 % of F_c into
  a row fitted; the other joints' rows at that instant stay;
* where it moves, its Coulomb columns — a step at every reversal, all frequencies at once — are
  filtered as the torque is (Gautier's parallel filtering of the regressor's columns), so that a
  step the filter smears over a few tenths of a second in the torque is smeared alike in the
  model instead of standing sharp against it.

Without a measured velocity both come from the filtered one. Which Coulomb law the model carries
inside the band is the friction form's (``dynamics.friction``): the default ``band=0.01``, the
laws' ramp; ``sign``; ``tanh=V``.
"""
from __future__ import annotations

import numpy as np
from scipy.signal import fftconvolve

REST_SHARE = 0.01   # largest share of a filtered value that samples at rest may make


def check_band(band):
    """ValueError unless ``band`` is a velocity >= 0: what every fit checks before any work."""
    if not (np.isfinite(band) and band >= 0.0):
        raise ValueError(f"rest_band must be a velocity >= 0 (rad/s or m/s), got {band}")


def rest_rows(band, t, velocity, grid, kernel):
    """(len(grid), n) bool: True where samples of joint j at rest (|``velocity``| < ``band``, at the
    stamps ``t``) make more than ``REST_SHARE`` of the filtered value at the uniform ``grid``'s
    time, by the filter's ``kernel`` (``signals.absolute_response`` on the grid's step); never
    for ``band`` 0."""
    dt = (grid[-1] - grid[0]) / max(len(grid) - 1, 1) or 1.0
    pad = len(kernel) // 2
    wide = grid[0] + dt * np.arange(-pad, len(grid) + pad)
    still = (np.abs(velocity) < band).astype(float)
    share = np.column_stack([fftconvolve(np.interp(wide, t, column), kernel, mode="valid")
                             for column in still.T])
    return share > REST_SHARE


__all__ = ["REST_SHARE", "check_band", "rest_rows"]
