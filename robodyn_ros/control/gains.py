"""Parsing and validation of feedback gains, with errors that name the parameter and say why.

A gain is one number (every joint), a vector of one value per joint, or a full n x n matrix (nested,
or n² numbers row-major, which is how a flat ROS ``double_array`` parameter carries it). Vectors stay
vectors so the control path multiplies element-wise instead of through a diagonal matrix.

The stability conditions are those 004 states after eq. (4.3) for ë + Kv ė + Kp e = 0:
(a) Kv symmetric non-negative definite, (b) Kp symmetric positive definite,
(c) rank [Kv | Kp Kv | ... | Kp^(n-1) Kv] = n.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def _numbers(name: str, value, what: str) -> np.ndarray:
    """``value`` as a float array; text and true/false are refused, not converted ('100' and
    True would otherwise pass as 100.0 and 1.0)."""
    if np.asarray(value, dtype=object).dtype.kind not in "fiu":
        flat = np.asarray(value, dtype=object).ravel()
        if any(isinstance(v, (str, bytes, bool, np.bool_)) for v in flat):
            raise ValueError(f"{name} must be {what}, got {value!r}")
    try:
        return np.array(value, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be {what}, got {value!r}") from None


def gain(name: str, value, dof: int) -> np.ndarray:
    """``value`` as a finite (dof,) vector or (dof, dof) matrix."""
    g = _numbers(name, value, "numbers")
    if g.ndim == 0:
        g = np.full(dof, float(g))
    elif g.shape == (dof * dof,) and dof > 1:
        g = g.reshape(dof, dof)
    if g.shape not in ((dof,), (dof, dof)):
        raise ValueError(
            f"{name} has shape {g.shape}: expected one number, {dof} values (one per joint) "
            f"or a {dof}x{dof} matrix (nested, or {dof * dof} values row-major)")
    if not np.all(np.isfinite(g)):
        raise ValueError(f"{name} contains NaN or inf: {g.tolist()}")
    return g


def per_joint(name: str, value, dof: int) -> np.ndarray:
    """One non-negative value per joint (``inf`` allowed), from one number or a vector of dof."""
    what = f"one number or {dof} numbers"
    try:
        v = np.array(np.broadcast_to(_numbers(name, value, what), (dof,)))
    except ValueError as exc:
        if str(exc).startswith(f"{name} must be"):
            raise
        raise ValueError(f"{name} must be {what}, got {value!r}") from None
    if np.any(np.isnan(v)) or np.any(v < 0.0):
        raise ValueError(f"{name} must be non-negative (inf allowed), got {v.tolist()}")
    return v


def check_definite(name: str, g: np.ndarray, joint_names: Sequence[str], strict: bool,
                   why: str) -> None:
    """Positive (``strict``) or non-negative definiteness of a vector or symmetric matrix gain."""
    if g.ndim == 1:
        bad = np.flatnonzero(g <= 0.0 if strict else g < 0.0)
        if bad.size:
            j = bad[0]
            raise ValueError(f"{name} for joint '{joint_names[j]}' is {g[j]:g}: it must be "
                             f"{'> 0' if strict else '>= 0'} ({why})")
        return
    scale = max(1.0, float(np.max(np.abs(g))))
    if not np.allclose(g, g.T, rtol=0.0, atol=1e-12 * scale):
        raise ValueError(f"{name} matrix is not symmetric ({why})")
    smallest = float(np.linalg.eigvalsh(g)[0])
    if smallest <= 0.0 if strict else smallest < -1e-12 * scale:
        raise ValueError(f"{name} matrix is not positive {'definite' if strict else 'semi-definite'}"
                         f": its smallest eigenvalue is {smallest:.3g} ({why})")


def check_damping(kp: np.ndarray, kd: np.ndarray, joint_names: Sequence[str]) -> None:
    """004's condition (c): every error mode of ë + Kv ė + Kp e = 0 is damped."""
    if kp.ndim == 1 and kd.ndim == 1:
        # diagonal gains: the rank is the number of joints with kd > 0
        check_definite("kd", kd, joint_names, strict=True,
                       why="an undamped joint's error oscillates forever, 004 eq. 4.3")
        return
    Kp = np.diag(kp) if kp.ndim == 1 else kp
    block = np.diag(kd) if kd.ndim == 1 else kd
    blocks = [block]
    for _ in range(len(joint_names) - 1):
        block = Kp @ block
        # scaling a block leaves the rank alone and keeps the powers of Kp well conditioned
        block = block / max(np.max(np.abs(block)), 1e-300)
        blocks.append(block)
    if np.linalg.matrix_rank(np.hstack(blocks)) < len(joint_names):
        raise ValueError("kd: rank [Kv | Kp Kv | ... | Kp^(n-1) Kv] < n, so some error mode is "
                         "undamped and oscillates forever (004 eq. 4.3, condition c)")
