"""The standard parameters π of a model, in the regressor's column order (``dynamics.regressor``).

Per moving body i, its 10 standard parameters in Pinocchio's order and frame,
``[m, m c_x, m c_y, m c_z, I_xx, I_xy, I_yy, I_xz, I_yz, I_zz]`` — mass, first moment and inertia
about the origin of joint frame i, in that frame (the model's canonical frame: for a URDF joint whose
axis is z it is the child link's frame, else that frame turned by the loader's Q, ``dynamics.urdf``);
then per joint j its drive parameters ``DRIVE_COLUMNS`` (armature; viscous; Coulomb for each
direction of motion, both magnitudes non-negative) and, when asked for, a constant ``offset``.
"""
import dataclasses
import warnings

import numpy as np

from .layout import ARMATURE, COULOMB_NEG, COULOMB_POS, FIRST_MOMENT, INERTIA_AT_ORIGIN, MASS, VISCOUS
from .link import ModelError
from .model import RobotModel

BODY_COLUMNS = ("m", "mx", "my", "mz", "Ixx", "Ixy", "Iyy", "Ixz", "Iyz", "Izz")
DRIVE_COLUMNS = ("armature", "viscous", "coulomb_positive", "coulomb_negative")
OFFSET = "offset"


def columns(dof, offset=False):
    """The number of columns of Y for ``dof`` joints."""
    return dof * (len(BODY_COLUMNS) + len(DRIVE_COLUMNS) + bool(offset))


def parameter_names(model, offset=False):
    """``joint.parameter`` for every column of Y, e.g. ``joint_1.m``, ``joint_1.viscous``."""
    drive = DRIVE_COLUMNS + ((OFFSET,) if offset else ())
    return ([f"{j}.{c}" for j in model.joint_names for c in BODY_COLUMNS]
            + [f"{j}.{c}" for j in model.joint_names for c in drive])


def standard_parameters(model, offset=False):
    """π of ``model`` in Y's column order (module docstring): Y @ π is its inverse dynamics, for
    a model whose friction is the sign law without offset (a friction file's smooth Coulomb law
    or offset, ``RobotModel.with_friction``, is no column of Y)."""
    P, n = model.params, model.dof
    xx, yy, zz, xy, yz, xz = (INERTIA_AT_ORIGIN + k for k in range(6))
    bodies = P[:n, [MASS, FIRST_MOMENT, FIRST_MOMENT + 1, FIRST_MOMENT + 2, xx, xy, yy, xz, yz, zz]]
    drives = P[:n, [ARMATURE, VISCOUS, COULOMB_POS, COULOMB_NEG]]
    if offset:
        drives = np.hstack([drives, np.zeros((n, 1))])
    return np.concatenate([bodies.ravel(), drives.ravel()])


def with_parameters(model, pi, offset=False):
    """``model`` with the bodies and drives of the standard parameters ``pi`` (the inverse of
    ``standard_parameters``; an offset, which no model has, is left out). A body need not be a
    rigid one (``identification.urdf_write`` says where that matters); one with a first moment
    but no mass is refused: it has no centre of mass."""
    n = model.dof
    pi = np.asarray(pi, dtype=float)
    if pi.shape != (columns(n, offset),):
        raise ModelError(f"standard parameters: expected {columns(n, offset)} (the regressor's "
                         f"layout for {n} joints, offset={bool(offset)}), got shape {pi.shape}")
    if not np.all(np.isfinite(pi)):
        bad = [name for name, x in zip(parameter_names(model, offset), pi) if not np.isfinite(x)]
        raise ModelError(f"standard parameters: not finite: {bad}")
    bodies = pi[:10 * n].reshape(n, 10)
    drives = pi[10 * n:].reshape(n, -1)
    links = []
    for link, (m, hx, hy, hz, xx, xy, yy, xz, yz, zz), drive in zip(model.links, bodies, drives):
        h = np.array([hx, hy, hz])
        if m == 0.0 and h.any():
            raise ModelError(f"standard parameters: joint '{link.name}': first moment {h} with "
                             "zero mass: no body has that (no centre of mass)")
        com = h / m if m != 0.0 else np.zeros(3)
        # parallel axis theorem, from the joint-frame origin to the COM
        inertia = np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]]) - m * (
            com @ com * np.eye(3) - np.outer(com, com))
        with warnings.catch_warnings():   # a body beyond the triangle inequality: the caller's call
            warnings.simplefilter("ignore")
            try:
                links.append(dataclasses.replace(   # the drive columns are named as Link's fields
                    link, mass=m, com=com, inertia=inertia, **dict(zip(DRIVE_COLUMNS, drive))))
            except ModelError as exc:
                raise ModelError(f"standard parameters: {exc}") from None
    return RobotModel(links, model.tip, model.gravity, model.name, model.frames)
