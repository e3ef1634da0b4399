"""Joint friction forms beyond the URDF's, and the file beside an identified URDF that carries them.

Per joint, τ_f = f_v q̇ + Coulomb + f_o, linear in its parameters (so they are identified with the
inertial ones), where Coulomb is

* symmetric ``coulomb``: f_c s(q̇);
* ``asymmetric`` (the model's own, and the default): f_c⁺ max(s, 0) − f_c⁻ max(−s, 0);

with s(q̇) the sign (zero at rest), or with ``tanh=v_s`` the smooth tanh(q̇ / v_s) of velocity
scale v_s (a sigmoid law like Gaz et al.'s, without its shift); and ``offset`` a constant f_o (a
torque sensor's bias, or gravity the model misses). A form is written as a spec, e.g.
``asymmetric``, ``coulomb+tanh=0.02+offset``.

A URDF carries f_v (``<dynamics damping>``) and one Coulomb magnitude (``friction``), the package's
block both magnitudes: the sign law. The smooth law and the offset live only in the friction file
(``FrictionModel.save`` / ``load``, YAML), which the nodes load beside the URDF: with it the
friction is ``FrictionModel.torques`` and the model's own is not used (inverse dynamics with
``friction=False``).
"""
from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np

from .joint_file import joint_entries
from .link import ModelError

FILE_FORMAT = "robodyn_ros.friction/1"


@dataclasses.dataclass(frozen=True)
class FrictionForm:
    """One joint's friction law (module docstring): ``coulomb`` "asymmetric" or "symmetric";
    ``velocity_scale`` v_s > 0 for tanh(q̇ / v_s), 0 for the sign; ``offset`` a constant term."""
    coulomb: str = "asymmetric"
    velocity_scale: float = 0.0
    offset: bool = False

    def __post_init__(self):
        if self.coulomb not in ("asymmetric", "symmetric"):
            raise ModelError(f"friction: coulomb must be 'asymmetric' or 'symmetric', got {self.coulomb!r}")
        if not (np.isfinite(self.velocity_scale) and self.velocity_scale >= 0.0):
            raise ModelError(f"friction: the tanh velocity scale must be finite and > 0, got {self.velocity_scale}")
        if self.coulomb == "asymmetric" and self.offset:
            # max(s, 0) − min(s, 0) = |s| = 1 wherever q̇ ≠ 0: the offset's column is the difference
            # of the two Coulomb ones (c⁺ = f_c + f_o, c⁻ = f_c − f_o), which no data can separate
            raise ModelError("friction: an asymmetric Coulomb law already is a symmetric one plus an "
                             "offset; take coulomb+offset")

    @classmethod
    def parse(cls, spec):
        """A form of its spec: '+'-joined ``viscous`` (always there), ``coulomb`` or ``asymmetric``,
        ``tanh=V`` (V in rad/s or m/s), ``offset``."""
        coulomb, scale, offset = "asymmetric", 0.0, False
        for token in filter(None, str(spec).replace(" ", "").split("+")):
            name, _, value = token.partition("=")
            if name in ("coulomb", "symmetric"):
                coulomb = "symmetric"
            elif name == "asymmetric":
                coulomb = "asymmetric"
            elif name == "tanh":
                try:
                    scale = float(value)
                except ValueError:
                    scale = -1.0
                if not scale > 0.0:
                    raise ModelError(f"friction spec {spec!r}: tanh needs its velocity scale, e.g. tanh=0.02")
            elif name == "offset":
                offset = True
            elif name != "viscous":
                raise ModelError(f"friction spec {spec!r}: unknown term {token!r} (viscous, coulomb, "
                                 "asymmetric, tanh=V, offset)")
        return cls(coulomb, scale, offset)

    def spec(self):
        return "+".join(["viscous", "coulomb" if self.coulomb == "symmetric" else "asymmetric"]
                        + ([f"tanh={self.velocity_scale:g}"] if self.velocity_scale else [])
                        + (["offset"] if self.offset else []))

    def names(self):
        """The parameters, in the order of ``columns``."""
        coulomb = ("coulomb",) if self.coulomb == "symmetric" else ("coulomb_positive", "coulomb_negative")
        return ("viscous",) + coulomb + (("offset",) if self.offset else ())

    def columns(self, qd):
        """The regressor columns (N, len(names)) of velocities ``qd`` (N,): τ_f = columns @ values."""
        qd = np.asarray(qd, dtype=float)
        s = np.tanh(qd / self.velocity_scale) if self.velocity_scale else np.sign(qd)
        coulomb = [s] if self.coulomb == "symmetric" else [np.maximum(s, 0.0), np.minimum(s, 0.0)]
        return np.stack([qd, *coulomb] + ([np.ones_like(qd)] if self.offset else []), axis=-1)


@dataclasses.dataclass(frozen=True)
class FrictionModel:
    """Per joint (``joints``) its ``forms`` and ``values`` (arrays in each form's ``names`` order)."""
    joints: tuple
    forms: tuple
    values: tuple

    def torques(self, qd):
        """τ_f (..., n) at velocities ``qd`` (..., n) in ``joints`` order."""
        qd = np.asarray(qd, dtype=float)
        return np.stack([form.columns(qd[..., j]) @ value
                         for j, (form, value) in enumerate(zip(self.forms, self.values))], axis=-1)

    def save(self, path):
        import yaml

        joints = {name: {"form": form.spec(), **dict(zip(form.names(), map(float, value)))}
                  for name, form, value in zip(self.joints, self.forms, self.values)}
        Path(path).write_text("# joint friction identified with the URDF beside it (doc/identification.md)\n"
                              + yaml.safe_dump({"format": FILE_FORMAT, "joints": joints}, sort_keys=False))
        return Path(path)

    @classmethod
    def load(cls, path, joints=None):
        """The model of a friction file; ``joints`` (a model's joint names): their order, each one
        required. ModelError naming the file and the joint on anything missing or not finite."""
        names, forms, values = [], [], []
        for name, entry in joint_entries(path, FILE_FORMAT, "friction", joints)[1]:
            form = FrictionForm.parse(entry.get("form", ""))
            try:
                value = np.array([float(entry[k]) for k in form.names()])
            except (KeyError, TypeError, ValueError) as exc:
                raise ModelError(f"{path}: joint {name!r}: {form.spec()} needs {form.names()}: {exc}") from None
            if not np.all(np.isfinite(value)):
                raise ModelError(f"{path}: joint {name!r}: friction values not finite: {value}")
            names.append(name)
            forms.append(form)
            values.append(value)
        return cls(tuple(names), tuple(forms), tuple(values))


def friction_file(urdf):
    """The friction file beside ``urdf``: NAME.friction.yaml for NAME.urdf."""
    urdf = Path(urdf)
    return urdf.with_name(urdf.stem + ".friction.yaml")
