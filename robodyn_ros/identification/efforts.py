"""Is a run's ``effort`` a joint torque? (no rclpy here)

A driver that reports motor currents in ``effort`` (ur_robot_driver with
``use_currents_as_efforts``) gives numbers a drive gain (10-15 N m/A on a UR) smaller than the
torques; read as N m they identify a model of scaled nonsense without a word. The nominal model
knows roughly what the torques must be: where gravity loads a joint, the efforts must follow its
gravity torque. ``implausible_efforts`` fits each such joint's effort to the nominal gravity
torque at the recorded positions (no derivative needed: excitation runs are slow enough that
gravity dominates the loaded joints) and names the scale when it is not near 1.
"""
from __future__ import annotations

import numpy as np

from ..dynamics.drives import LOADED, PLAUSIBLE


def effort_scales(model, recording):
    """({joint: effort ≈ scale × nominal gravity torque} of the joints gravity loads, by least
    squares over the run)."""
    order = [list(recording.joint_names).index(j) for j in model.joint_names]
    gravity = model.gravity_torques(np.asarray(recording.position)[:, order])
    effort = np.asarray(recording.effort)[:, order]
    rms = np.sqrt(np.mean(gravity ** 2, axis=0))
    loaded = np.flatnonzero(rms > LOADED * rms.max()) if rms.max() > 0.0 else []
    return {model.joint_names[j]: float(effort[:, j] @ gravity[:, j] / (gravity[:, j] @ gravity[:, j]))
            for j in loaded}


def implausible_efforts(model, recording):
    """One line saying that ``recording``'s efforts are not N m for ``model`` and what to pass, or
    None when they are plausible."""
    scales = effort_scales(model, recording)
    low, high = PLAUSIBLE
    if not scales or all(low <= s <= high for s in scales.values()):
        return None
    return (f"{recording.source}: the efforts are not N m for this model: where gravity loads a joint they "
            "are " + ", ".join(f"{s:.2g}" for s in scales.values()) + f" times its nominal gravity torque "
            f"({', '.join(scales)}); if they are motor currents pass --drive-gains (a drives file, e.g. "
            "config/ur_drives.yaml for ur_robot_driver's use_currents_as_efforts, or each joint's N m/A), "
            "or identify the gains with --payload-run BAG --payload-mass KG")


__all__ = ["effort_scales", "implausible_efforts"]
