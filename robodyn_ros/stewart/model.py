"""The 6-UPS Stewart platform model of Dasgupta & Mruthyunjaya 1998 and its YAML loader.

The model holds constants only (Pinocchio's model/workspace split): every call allocates or receives
its own output arrays, so one model can serve several threads.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import yaml

from . import kernel
from ..spatial import rotations
from .dynamics import inverse_dynamics as _inverse_dynamics

NLEGS = 6
# k_i further than this from unit length are reported (the paper's k1 has norm 0.858).
_UNIT_TOLERANCE = 1e-3
# sin of the smallest accepted angle between k_i and its leg at the home pose.
_MIN_SIN_K_LEG = 1e-3
_TOP_KEYS = {"name", "gravity", "base_points", "fixed_axes", "platform_points", "leg", "legs",
             "platform", "friction", "limits", "home", "prismatic_point", "leg_model"}
# How the legs turn (doc/stewart_models.md): the paper's legs that do not spin about their axis, or
# exact universal joints, whose legs do.
LEG_MODELS = ("no_spin", "universal")


class PlatformFileError(ValueError):
    """A platform description that cannot be used; the message names the file and the element."""


class PlatformWarning(UserWarning):
    """A platform description that is usable but suspicious (non-unit k_i, unrealisable inertia)."""


@dataclass(frozen=True)
class Body:
    mass: float
    com: np.ndarray       # (3,) in the body's frame
    inertia: np.ndarray   # (3, 3) about the centre of mass, body axes


@dataclass(frozen=True, eq=False)
class StewartPlatform:
    """Base points b_i, fixed universal-joint axes k_i (unit), platform points p_i (platform frame),
    per-leg lower (D) and upper (U) parts, platform plus payload, viscous coefficients, gravity, and the
    leg model: "no_spin" (the paper: legs turn at W = s x S'/L, never about their own axis, the
    universal joint's constraint moment lies along s) or "universal" (exact universal joints: the first
    axis k_i fixed in the base, the second y = k_i x s fixed in the leg, so the leg spins at
    (s.k)(k.W)/|k x s|^2 and the constraint moment lies along k_i x y)."""

    b: np.ndarray          # (6, 3)
    k: np.ndarray          # (6, 3), unit
    p: np.ndarray          # (6, 3)
    m_d: np.ndarray        # (6,)
    m_u: np.ndarray        # (6,)
    r_d0: np.ndarray       # (6, 3) leg frame D
    r_u0: np.ndarray       # (6, 3) leg frame U
    I_d0: np.ndarray       # (6, 3, 3)
    I_u0: np.ndarray       # (6, 3, 3)
    M: float
    R0: np.ndarray         # (3,)
    I_p: np.ndarray        # (3, 3)
    C_u: float = 0.0
    C_p: float = 0.0
    C_s: float = 0.0
    gravity: np.ndarray = field(default_factory=lambda: np.array([0.0, 0.0, -9.81]))
    leg_length_limits: tuple[float, float] | None = None
    force_limit: float | None = None
    prismatic_point: float = 0.0   # where F_p acts on the leg axis (only M_p depends on it)
    name: str = "stewart"
    leg_model: str = "no_spin"

    # --- construction -------------------------------------------------------------------------
    @classmethod
    def from_yaml(cls, path, leg_model=None) -> "StewartPlatform":
        """The platform described in the YAML file at path; leg_model ("no_spin" or "universal")
        overrides the file's (whose default is "no_spin")."""
        path = Path(path)
        try:
            text = path.read_text()
        except OSError as exc:
            raise PlatformFileError(f"{path}: cannot read: {exc}") from exc
        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise PlatformFileError(f"{path}: not valid YAML: {exc}") from exc
        return cls.from_dict(data, source=str(path), leg_model=leg_model)

    @classmethod
    def from_dict(cls, data, source: str = "<dict>", leg_model=None) -> "StewartPlatform":
        return _Loader(source).build(cls, data, leg_model)

    # --- the constants as the kernels take them (layout in kernel.py) -------------------------
    def __post_init__(self):
        flat = [self.b, self.k, self.p, self.m_d, self.m_u, self.r_d0, self.r_u0, self.I_d0,
                self.I_d0 + self.I_u0, [self.C_u, self.C_p, self.C_s], self.gravity, [self.M],
                self.R0, self.I_p, [self.prismatic_point]]
        packed = np.concatenate([np.ravel(np.asarray(x, dtype=float)) for x in flat])
        assert packed.size == kernel.MODEL_SIZE
        packed.flags.writeable = False
        object.__setattr__(self, "packed", packed)
        if self.leg_model not in LEG_MODELS:
            raise ValueError(f"leg_model must be one of {LEG_MODELS}, got {self.leg_model!r}")

    def with_legs(self, order) -> "StewartPlatform":
        """The same manipulator with its legs relabelled: new leg j is old leg order[j]."""
        order = np.asarray(order)
        fields = {f: getattr(self, f)[order].copy() for f in
                  ("b", "k", "p", "m_d", "m_u", "r_d0", "r_u0", "I_d0", "I_u0")}
        return _replace(self, **fields)

    def massless_legs(self) -> "StewartPlatform":
        """Legs of no mass and frictionless joints: the model behind F0 (eq. 41)."""
        zero = np.zeros(NLEGS)
        return _replace(self, m_d=zero, m_u=zero.copy(), I_d0=np.zeros((6, 3, 3)),
                        I_u0=np.zeros((6, 3, 3)), C_u=0.0, C_p=0.0, C_s=0.0)

    # --- algorithms (implemented in their own modules) -----------------------------------------
    def inverse_kinematics(self, position, rotation_matrix, linear_velocity=None,
                           angular_velocity=None, linear_acceleration=None,
                           angular_acceleration=None):
        from .kinematics import inverse_kinematics
        return inverse_kinematics(self, position, rotation_matrix, linear_velocity,
                                  angular_velocity, linear_acceleration, angular_acceleration)

    # The function itself, not a wrapper calling it: one Python call less on the single-pose path.
    inverse_dynamics = _inverse_dynamics

    def forward_kinematics(self, leg_lengths, position_guess, rotation_guess, **options):
        from .kinematics import forward_kinematics
        return forward_kinematics(self, leg_lengths, position_guess, rotation_guess, **options)

    def forward_dynamics(self, position, rotation_matrix, linear_velocity, angular_velocity, forces,
                         external_force=None, external_moment=None):
        from .forward import forward_dynamics
        return forward_dynamics(self, position, rotation_matrix, linear_velocity, angular_velocity,
                                forces, external_force, external_moment)


def _replace(sp: StewartPlatform, **changes) -> StewartPlatform:
    import dataclasses
    return dataclasses.replace(sp, **changes)


class _Loader:
    """Validation of a platform description; every error names the source and the element."""

    def __init__(self, source: str):
        self.source = source

    def fail(self, where: str, what: str):
        raise PlatformFileError(f"{self.source}: {where}: {what}")

    def warn(self, where: str, what: str):
        warnings.warn(f"{self.source}: {where}: {what}", PlatformWarning, stacklevel=4)

    def number(self, value, where, minimum=None):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            self.fail(where, f"expected a number, got {value!r}")
        value = float(value)
        if not np.isfinite(value):
            self.fail(where, f"must be finite, got {value}")
        if minimum is not None and value < minimum:
            self.fail(where, f"must be >= {minimum}, got {value}")
        return value

    def array(self, value, shape, where):
        try:
            arr = np.array(value, dtype=float)
        except (TypeError, ValueError):
            self.fail(where, f"expected numbers of shape {shape}, got {value!r}")
        if arr.shape != shape:
            self.fail(where, f"expected shape {shape}, got {arr.shape}"
                      + (f" ({arr.shape[0]} entries, need {shape[0]})" if arr.ndim >= 1 else ""))
        if not np.all(np.isfinite(arr)):
            self.fail(where, "contains non-finite numbers")
        return arr

    def section(self, data, key, where):
        if not isinstance(data, dict) or key not in data:
            self.fail(where, f"missing '{key}'")
        return data[key]

    def body(self, data, where):
        if not isinstance(data, dict):
            self.fail(where, "expected a mapping with mass, com, inertia")
        unknown = set(data) - {"mass", "com", "inertia"}
        if unknown:
            self.fail(where, f"unknown keys {sorted(unknown)}")
        mass = self.number(self.section(data, "mass", where), f"{where}.mass", minimum=0.0)
        com = self.array(data.get("com", [0.0, 0.0, 0.0]), (3,), f"{where}.com")
        inertia = self.array(data.get("inertia", np.zeros((3, 3))), (3, 3), f"{where}.inertia")
        if not np.allclose(inertia, inertia.T, rtol=0.0, atol=1e-12):
            self.fail(f"{where}.inertia", "not symmetric")
        self.check_realisable(inertia, f"{where}.inertia")
        return Body(mass, com, inertia)

    def check_realisable(self, inertia, where):
        ev = np.linalg.eigvalsh(inertia)
        tol = 1e-12 * max(1.0, np.abs(ev).max())
        if ev.min() < -tol:
            self.warn(where, f"not physically realisable (eigenvalue {ev.min():.4g} < 0); "
                             "usable for inverse dynamics, not for simulation")
        elif np.any(2.0 * ev > ev.sum() + tol):
            self.warn(where, "not physically realisable (principal moments violate the triangle "
                             "inequality); usable for inverse dynamics, not for simulation")

    def legs(self, data, part):
        """The six lower or upper parts, from 'leg' (shared by all legs) or 'legs' (one per leg)."""
        if "leg" in data and "legs" in data:
            self.fail("leg/legs", "give either 'leg' (shared) or 'legs' (six entries), not both")
        if "leg" in data:
            return [self.body(self.section(data["leg"], part, "leg"), f"leg.{part}")] * NLEGS
        entries = self.section(data, "legs", "top level")
        if not isinstance(entries, list) or len(entries) != NLEGS:
            self.fail("legs", f"expected {NLEGS} entries, got "
                              f"{len(entries) if isinstance(entries, list) else entries!r}")
        return [self.body(self.section(e, part, f"legs[{i}]"), f"legs[{i}].{part}")
                for i, e in enumerate(entries)]

    def build(self, cls, data, leg_model=None):
        if not isinstance(data, dict):
            self.fail("top level", "expected a mapping")
        unknown = set(data) - _TOP_KEYS
        if unknown:
            self.fail("top level", f"unknown keys {sorted(unknown)}")
        if leg_model is None:
            leg_model = data.get("leg_model", "no_spin")
            if leg_model not in LEG_MODELS:
                self.fail("leg_model", f"expected one of {list(LEG_MODELS)}, got {leg_model!r}")
        elif leg_model not in LEG_MODELS:
            raise ValueError(f"leg_model must be one of {LEG_MODELS}, got {leg_model!r}")
        b = self.array(self.section(data, "base_points", "top level"), (NLEGS, 3), "base_points")
        p = self.array(self.section(data, "platform_points", "top level"), (NLEGS, 3),
                       "platform_points")
        if "fixed_axes" in data:
            k = self.array(data["fixed_axes"], (NLEGS, 3), "fixed_axes")
        else:
            k = self.default_axes(data, b, p)
        norms = np.linalg.norm(k, axis=1)
        for i, n in enumerate(norms):
            if n < 1e-9:
                self.fail(f"fixed_axes[{i}]", "zero length")
            if abs(n - 1.0) > _UNIT_TOLERANCE:
                self.warn(f"fixed_axes[{i}]", f"length {n:.4f}, not unit; normalised "
                                              "(only its direction matters)")
        k = k / norms[:, None]
        lower, upper = self.legs(data, "lower"), self.legs(data, "upper")
        plat = self.body(self.section(data, "platform", "top level"), "platform")
        friction = data.get("friction", {}) or {}
        if not isinstance(friction, dict) or set(friction) - {"C_u", "C_p", "C_s"}:
            self.fail("friction", "expected a mapping with C_u, C_p, C_s")
        coef = {c: self.number(friction.get(c, 0.0), f"friction.{c}", minimum=0.0)
                for c in ("C_u", "C_p", "C_s")}
        gravity = self.array(data.get("gravity", [0.0, 0.0, -9.81]), (3,), "gravity")
        length_limits, force_limit = self.limits(data.get("limits"))
        sp = cls(b=b, k=k, p=p,
                 m_d=np.array([x.mass for x in lower]), m_u=np.array([x.mass for x in upper]),
                 r_d0=np.array([x.com for x in lower]), r_u0=np.array([x.com for x in upper]),
                 I_d0=np.array([x.inertia for x in lower]),
                 I_u0=np.array([x.inertia for x in upper]),
                 M=plat.mass, R0=plat.com, I_p=plat.inertia, gravity=gravity,
                 leg_length_limits=length_limits, force_limit=force_limit,
                 prismatic_point=self.number(data.get("prismatic_point", 0.0), "prismatic_point"),
                 name=str(data.get("name", Path(self.source).stem)), leg_model=leg_model, **coef)
        if "home" in data:
            self.check_home(sp, data["home"])
        return sp

    def default_axes(self, data, b, p):
        """Without fixed_axes each k_i is horizontal and normal to its leg at the home pose,
        k_i = e_z x s_i / |e_z x s_i|: the leg does not spin there and spins little near it."""
        if "home" not in data:
            self.fail("fixed_axes", "missing; give fixed_axes, or a home pose to derive them from")
        home = data["home"]
        if not isinstance(home, dict):
            self.fail("home", "expected a mapping with position and rpy")
        t = self.array(self.section(home, "position", "home"), (3,), "home.position")
        rpy = self.array(home.get("rpy", [0.0, 0.0, 0.0]), (3,), "home.rpy")
        S = p @ rotations.rpy_matrix(rpy).T + t - b
        k = np.cross([0.0, 0.0, 1.0], S)
        norms = np.linalg.norm(k, axis=1)
        for i, n in enumerate(norms):
            if n < _MIN_SIN_K_LEG * np.linalg.norm(S[i]):
                self.fail("fixed_axes", f"missing, and leg {i} is vertical at the home pose (no "
                                        "horizontal axis normal to it is preferred): give fixed_axes")
        return k / norms[:, None]

    def limits(self, data):
        if data is None:
            return None, None
        if not isinstance(data, dict) or set(data) - {"leg_length", "actuator_force"}:
            self.fail("limits", "expected a mapping with leg_length [min, max] and actuator_force")
        length = None
        if "leg_length" in data:
            lo, hi = self.array(data["leg_length"], (2,), "limits.leg_length")
            if not 0.0 < lo < hi:
                self.fail("limits.leg_length", f"need 0 < min < max, got [{lo}, {hi}]")
            length = (float(lo), float(hi))
        force = None
        if "actuator_force" in data:
            force = self.number(data["actuator_force"], "limits.actuator_force", minimum=0.0)
            if force == 0.0:
                self.fail("limits.actuator_force", "must be positive")
        return length, force

    def check_home(self, sp, home):
        """k_i must not lie along its leg (eq. 10 has no frame then) and the legs must fit."""
        if not isinstance(home, dict):
            self.fail("home", "expected a mapping with position and rpy")
        t = self.array(self.section(home, "position", "home"), (3,), "home.position")
        rpy = self.array(home.get("rpy", [0.0, 0.0, 0.0]), (3,), "home.rpy")
        S = rotations.rpy_matrix(rpy) @ sp.p.T + (t - sp.b).T
        s = (S / np.linalg.norm(S, axis=0)).T
        for i in range(NLEGS):
            if np.linalg.norm(np.cross(sp.k[i], s[i])) < _MIN_SIN_K_LEG:
                self.fail(f"fixed_axes[{i}]", "parallel to its leg at the home pose")
        if sp.leg_length_limits is not None:
            L = np.linalg.norm(S, axis=0)
            lo, hi = sp.leg_length_limits
            if np.any(L < lo) or np.any(L > hi):
                self.fail("home", f"leg lengths {np.round(L, 4).tolist()} outside limits [{lo}, {hi}]")
