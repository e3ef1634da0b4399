"""The frames a name stands for, wherever a frame is an argument (``RobotModel.frame_pose``,
``frame_jacobian``, ``frame_motion``, a task-space law's ``task_link``), resolved once to where the
compiled kernel finds the frame: the joint whose body carries it and a constant offset.

The names, in this order of precedence:

- ``"tip"`` (also None or ""): the model's tip frame (a URDF's tip link, a DH table's tool);
- a URDF link's name: that link's frame exactly as the URDF defines it (the child frame of its
  parent joint's origin, not turned to the joint axis), links fixed to a chain link (a flange,
  ``tool0``) and links fixed to the base included; only links whose pose the model's joints
  determine exist (not those behind a movable joint off the chain). A link wins over a joint of
  the same name;
- a joint's name: that joint's canonical frame (origin on the axis, z along it: for a URDF, its
  child link's frame turned so that z is the axis; the frames ``link_frames`` gives).

A DH or modified-DH model has no link names: its frames are ``"tip"`` and the joint names (the
table's ``name`` of each link, ``joint_1``, ``joint_2``, ... when it gives none).
"""
from typing import NamedTuple

import numpy as np

from .link import ModelError

TIP = "tip"


class Frame(NamedTuple):
    """Where a named frame is: on the body joint ``joint`` moves (-1: the fixed base), at the pose
    ``offset`` in that joint's canonical frame (the base frame for -1), packed as the kernels read a
    pose (``layout``: the rotation row-major, then the origin; 12 values, read-only)."""
    joint: int
    offset: np.ndarray


def frame(joint, pose):
    pose = np.asarray(pose, dtype=float)
    offset = np.concatenate([pose[:3, :3].ravel(), pose[:3, 3]])
    offset.flags.writeable = False
    return Frame(int(joint), offset)


def frame_table(links, tip, link_frames):
    """Every name of a model's frames -> its ``Frame``, the precedence of the module docstring."""
    table = {link.name: frame(i, np.eye(4)) for i, link in enumerate(links)}
    table.update((name, frame(joint, pose)) for name, (joint, pose) in link_frames.items())
    table[TIP] = frame(len(links) - 1, tip)
    return table


def resolve(model, table, link):
    """The ``Frame`` of ``link`` (None or "" the tip) in ``table``; a ModelError listing the names
    if there is none."""
    if link is not None and not isinstance(link, str):
        raise ModelError(f"a frame is named by a string (a link's or a joint's name), got {link!r}")
    try:
        return table[link or TIP]
    except KeyError:
        links = [name for name in model.frames if name != TIP]
        joints = [name for name in model.joint_names if name not in model.frames]
        where = f"the URDF links {links} and the joint frames {joints}" if links else \
            f"the joint frames {joints} (a model not loaded from a URDF has no link names)"
        raise ModelError(f"unknown link {link!r} of '{model.name}': its frames are '{TIP}' (the "
                         f"tip), {where}") from None
