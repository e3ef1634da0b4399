"""The parameters the identification estimates: per body its 10 standard ones, per joint its
armature and the friction of the form chosen for it (``dynamics.friction``), in this order.

With every joint's form the default (asymmetric sign-law Coulomb, no offset) this is exactly the
regressor's standard layout (``dynamics.inertial_parameters``). Friction columns depend on q̇ alone
and are independent of the rigid-body ones, so the base set is the model's rigid base set (bodies
and armatures, ``dynamics.base_parameters``) with every friction parameter added as its own.
"""
from __future__ import annotations

import dataclasses

import numpy as np

from ..dynamics.base_parameters import BaseParameters, base_parameters
from ..dynamics.friction import FrictionForm, FrictionModel
from ..dynamics.inertial_parameters import (BODY_COLUMNS, DRIVE_COLUMNS, parameter_names,
                                            standard_parameters)
from ..dynamics.regressor import regressor

_BODY, _DRIVE = len(BODY_COLUMNS), len(DRIVE_COLUMNS)


@dataclasses.dataclass(frozen=True)
class Layout:
    """The identification's parameter vector for ``model`` with ``forms`` (one per joint)."""
    model: object
    forms: tuple
    names: tuple
    drive_layout: tuple      # per joint: ("armature",) + its form's names
    base: BaseParameters     # in this layout

    @classmethod
    def of(cls, model, friction=None, band=0.0):
        """``friction``: None (the default form), a FrictionForm or spec for every joint, or a
        {joint: form or spec} (the others default). ``band``: the rest band of the default form
        and of a spec that names no Coulomb shape (0: the sign, the regressor's own)."""
        n = model.dof
        if friction is None or isinstance(friction, (str, FrictionForm)):
            friction = {name: friction for name in model.joint_names}
        unknown = sorted(set(friction) - set(model.joint_names))
        if unknown:
            raise ValueError(f"friction forms for joints the model lacks: {unknown} (it has {model.joint_names})")
        forms = tuple(_form(friction.get(name), band) for name in model.joint_names)
        drive_layout = tuple(("armature",) + form.names() for form in forms)
        names = tuple(parameter_names(model)[:_BODY * n]) + tuple(
            f"{joint}.{column}" for joint, drive in zip(model.joint_names, drive_layout) for column in drive)
        standard = base_parameters(model)
        # where each standard column lands: bodies and armatures keep theirs; the model's own
        # friction columns (viscous, Coulomb) are replaced by the forms'
        index = np.full(len(standard.names), -1)
        index[:_BODY * n] = np.arange(_BODY * n)
        starts = _BODY * n + np.concatenate(([0], np.cumsum([len(d) for d in drive_layout])[:-1]))
        index[_BODY * n + _DRIVE * np.arange(n)] = starts
        rigid = np.array([index[c] >= 0 for c in standard.columns])
        if np.any(index[standard.dependent] < 0) or np.any(standard.beta[~rigid] != 0.0):
            raise ValueError(f"{model.name}: a friction column of the model is not a base parameter of its own")
        friction_columns = np.array([s + 1 + k for s, d in zip(starts, drive_layout) for k in range(len(d) - 1)],
                                    dtype=int)
        columns = np.concatenate((index[standard.columns[rigid]], friction_columns))
        beta = np.vstack((standard.beta[rigid], np.zeros((len(friction_columns), standard.beta.shape[1]))))
        order = np.argsort(columns)
        base = BaseParameters(names, columns[order], index[standard.dependent], beta[order],
                              standard.singular_values, standard.tolerance)
        return cls(model, forms, names, drive_layout, base)

    def joint_columns(self, j):
        """The columns of Y that joint j's row can have nonzero: the bodies from j on (a body moves
        no joint after it) and joint j's own drive block."""
        n = self.model.dof
        start = _BODY * n + sum(len(d) for d in self.drive_layout[:j])
        return np.concatenate((np.arange(_BODY * j, _BODY * n), np.arange(start, start + len(self.drive_layout[j]))))

    @property
    def standard(self):
        """True when this is the model's own standard layout (every joint's form the default)."""
        return all(form == FrictionForm() for form in self.forms)

    def regressor(self, q, qd, qdd, coulomb=None):
        """Y (N, n, p) of this layout; ``coulomb`` (N, m): the Coulomb columns to use instead of
        the forms' of ``qd`` (``coulomb_columns`` filtered as the torque is: ``rest``)."""
        n = self.model.dof
        Y = regressor(self.model, q, qd, qdd)
        if self.standard and coulomb is None:
            return Y
        out = np.zeros(Y.shape[:-1] + (len(self.names),))
        out[..., :_BODY * n] = Y[..., :_BODY * n]
        column, at = _BODY * n, 0
        for j, form in enumerate(self.forms):
            out[..., column] = Y[..., _BODY * n + _DRIVE * j]                 # armature
            drive = form.columns(np.asarray(qd)[..., j])
            if coulomb is not None:
                count = len(form.names()) - 1 - form.offset
                drive[..., 1:1 + count] = coulomb[..., at:at + count]
                at += count
            out[..., j, column + 1:column + 1 + len(form.names())] = drive
            column += 1 + len(form.names())
        return out

    def coulomb_columns(self, qd):
        """(N, m): every joint's Coulomb columns of its form at velocities ``qd`` (N, n), joint by joint."""
        qd = np.asarray(qd, dtype=float)
        return np.concatenate([form.columns(qd[..., j])[..., 1:len(form.names()) - form.offset]
                               for j, form in enumerate(self.forms)], axis=-1)

    def nominal(self):
        """The nominal model's parameters in this layout (offsets zero, a symmetric Coulomb the mean)."""
        n = self.model.dof
        pi = standard_parameters(self.model)
        drives = pi[_BODY * n:].reshape(n, _DRIVE)
        values = [np.concatenate(([d[0]], self._friction_of(form, d))) for form, d in zip(self.forms, drives)]
        return np.concatenate([pi[:_BODY * n], *values])

    def split(self, pi):
        """(standard parameters of ``pi`` for ``with_parameters``, its FrictionModel): the standard
        set keeps the sign-law friction a URDF can carry (a symmetric Coulomb as both magnitudes)."""
        n = self.model.dof
        pi = np.asarray(pi, dtype=float)
        drives, values, at = [], [], _BODY * n
        for form, drive in zip(self.forms, self.drive_layout):
            block = pi[at:at + len(drive)]
            at += len(drive)
            named = dict(zip(drive, block))
            positive = named.get("coulomb_positive", named.get("coulomb"))
            negative = named.get("coulomb_negative", named.get("coulomb"))
            drives.append([named["armature"], named["viscous"], positive, negative])
            values.append(block[1:])
        standard = np.concatenate((pi[:_BODY * n], np.ravel(drives)))
        return standard, FrictionModel(tuple(self.model.joint_names), self.forms, tuple(values))

    @staticmethod
    def _friction_of(form, drive):
        _, viscous, positive, negative = drive
        coulomb = [0.5 * (positive + negative)] if form.coulomb == "symmetric" else [positive, negative]
        return np.array([viscous, *coulomb] + ([0.0] if form.offset else []))


def _form(value, band):
    if value is None:
        return FrictionForm(band=band)
    return value if isinstance(value, FrictionForm) else FrictionForm.parse(value, band)
