"""What a joint's ``effort`` measures, and the drive gain that makes it a torque.

A joint with a torque sensor (the Panda) reports N m; most arms report the **motor current**
instead (a UR through ur_robot_driver with ``use_currents_as_efforts``, Kinova, xArm), and the
torque is the current times the drive gain: the motor's torque constant times the gear ratio,
N m/A (N/A for a prismatic joint). ``JointDrives`` holds, per joint, the effort's unit ("N m",
"N" or "A") and that gain (1 for a torque or force; NaN where a current's gain is not known, for
``identification.drive_gains`` to find), with its standard deviation when it was identified.

It is data, not a flag of one tool: identification converts a run's currents with it, and a
node that reads or commands efforts in amperes takes the same per-joint unit and gain. The file
(``save`` / ``load``, YAML) is what ``config/ur_drives.yaml`` is and what ``identify`` writes
beside an identified URDF (``NAME.drives.yaml``).
"""
from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np

from .joint_file import joint_entries
from .link import ModelError

FILE_FORMAT = "robodyn_ros.drives/1"
TORQUE_UNITS = ("N m", "N")
CURRENT = "A"
UNITS = TORQUE_UNITS + (CURRENT,)
# Efforts that are not joint torques give themselves away against the nominal gravity torque
# where gravity loads a joint (identify's check of a run, the collision guard's at rest):
PLAUSIBLE = (1.0 / 3.0, 3.0)   # effort / nominal gravity torque: a nominal model is rarely further off
LOADED = 0.1                   # a joint whose gravity torque has this fraction of the largest one's


@dataclasses.dataclass(frozen=True)
class JointDrives:
    """Per joint of ``joints``: the unit of its effort (``units``), the gain from that effort to
    its torque or force (``gains``: N m/A or N/A for a current, 1 otherwise, NaN unknown) and
    the gain's standard deviation (``std``: 0 when given, NaN when unknown); ``source`` says where
    the gains come from."""
    joints: tuple
    units: tuple
    gains: np.ndarray
    std: np.ndarray
    source: str = ""

    def __post_init__(self):
        n = len(self.joints)
        object.__setattr__(self, "joints", tuple(self.joints))
        object.__setattr__(self, "units", tuple(self.units))
        for name in ("gains", "std"):
            value = np.array(getattr(self, name), dtype=float).reshape(-1)
            if value.size != n:
                raise ModelError(f"drives: {value.size} {name} for {n} joints {list(self.joints)}")
            value.flags.writeable = False
            object.__setattr__(self, name, value)
        for joint, unit, gain in zip(self.joints, self.units, self.gains):
            if unit not in UNITS:
                raise ModelError(f"drives: joint {joint!r}: effort unit {unit!r} is not one of {UNITS}")
            if unit in TORQUE_UNITS and gain != 1.0:
                raise ModelError(f"drives: joint {joint!r} measures {unit}: its gain is 1, not {gain}")
            if unit == CURRENT and not (np.isnan(gain) or (np.isfinite(gain) and gain != 0.0)):
                raise ModelError(f"drives: joint {joint!r}: a drive gain must be finite and nonzero "
                                 f"(N m/A), or unknown; got {gain}")

    @classmethod
    def torques_measured(cls, joints, units=None):
        """Every joint's effort a torque (or ``units``, one per joint, "N m" or "N")."""
        units = ["N m"] * len(joints) if units is None else list(units)
        return cls(tuple(joints), tuple(units), np.ones(len(joints)), np.zeros(len(joints)), "torques")

    @classmethod
    def currents(cls, joints, gains, std=None, source="given"):
        """Every joint's effort a current with these gains (N m/A; NaN: unknown)."""
        gains = np.asarray(gains, dtype=float)
        std = np.where(np.isnan(gains), np.nan, 0.0) if std is None else std
        return cls(tuple(joints), (CURRENT,) * len(joints), gains, std, source)

    @property
    def measures_currents(self):
        """(n,) True where the effort is a current."""
        return np.array([unit == CURRENT for unit in self.units])

    @property
    def unknown(self):
        """The joints whose effort is a current of unknown gain."""
        return [j for j, unit, gain in zip(self.joints, self.units, self.gains) if unit == CURRENT and np.isnan(gain)]

    def with_gains(self, gains, std, source):
        """The same units with identified ``gains`` (and their ``std``) for the current joints."""
        current = self.measures_currents
        return dataclasses.replace(self, gains=np.where(current, gains, 1.0), std=np.where(current, std, 0.0),
                                   source=source)

    def in_order(self, joints):
        """These drives for ``joints`` (a model's), in that order; ModelError naming a missing one."""
        missing = [j for j in joints if j not in self.joints]
        if missing:
            raise ModelError(f"drives ({self.source}): no joint {missing} (they describe {list(self.joints)})")
        index = [self.joints.index(j) for j in joints]
        return JointDrives(tuple(joints), tuple(self.units[i] for i in index), self.gains[index],
                           self.std[index], self.source)

    def torques(self, efforts):
        """The joint torques (..., n) of efforts (..., n) in ``joints`` order: a current times its
        gain. ModelError when a current's gain is unknown."""
        if self.unknown:
            raise ModelError(f"drives ({self.source}): the drive gains of {self.unknown} are unknown: "
                             "give them, or identify them from a run with a known payload")
        return np.asarray(efforts, dtype=float) * self.gains

    def efforts(self, torques):
        """The efforts (..., n) in each joint's unit of joint torques (..., n)."""
        return np.asarray(torques, dtype=float) / self.gains

    def table(self):
        """One line per joint: its unit, gain and σ."""
        def gain(g, s, unit):
            if unit != CURRENT:
                return f"effort in {unit}"
            if np.isnan(g):
                return "current, gain unknown"
            return f"current, gain {g:.5g} N m/A" + (f" ± {s:.2g} ({100 * s / abs(g):.2g} %)" if s > 0 else "")
        width = max(map(len, self.joints))
        return "\n".join(f"  {j:{width}s}  {gain(g, s, u)}" for j, u, g, s in
                         zip(self.joints, self.units, self.gains, self.std))

    def save(self, path, note=""):
        import yaml

        joints = {}
        for name, unit, gain, std in zip(self.joints, self.units, self.gains, self.std):
            entry = {"effort": unit}
            if unit == CURRENT:
                entry["gain"] = None if np.isnan(gain) else float(gain)
                if std > 0.0:
                    entry["std"] = float(std)
            joints[name] = entry
        head = "# what each joint's effort measures, and its drive gain (N m/A): doc/identification.md\n"
        Path(path).write_text(head + "".join(f"# {line}\n" for line in note.splitlines())
                              + yaml.safe_dump({"format": FILE_FORMAT, "source": self.source, "joints": joints},
                                               sort_keys=False))
        return Path(path)

    @classmethod
    def load(cls, path, joints=None):
        """The drives of a file; ``joints`` (a model's joint names): their order, each required.
        ModelError naming the file and the joint on anything missing or wrong."""
        data, entries = joint_entries(path, FILE_FORMAT, "drives", joints)
        names, units, gains, stds = [], [], [], []
        for name, entry in entries:
            names.append(name)
            unit = entry.get("effort")
            if unit not in UNITS:
                raise ModelError(f"{path}: joint {name!r}: effort must be one of {UNITS}, got {unit!r}")
            gain, std = 1.0, 0.0                      # a torque's
            if unit == CURRENT and entry.get("gain") is None:
                gain, std = np.nan, np.nan            # unknown
            elif unit == CURRENT:
                try:
                    gain, std = float(entry["gain"]), float(entry.get("std", 0.0))
                except (TypeError, ValueError) as exc:
                    raise ModelError(f"{path}: joint {name!r}: gain and std must be numbers: {exc}") from None
            units.append(unit)
            gains.append(gain)
            stds.append(std)
        try:
            return cls(tuple(names), tuple(units), gains, stds, str(data.get("source") or path))
        except ModelError as exc:
            raise ModelError(f"{path}: {exc}") from None

    @classmethod
    def parse(cls, text, joints):
        """``text``: a drives file, or the gains of ``joints`` as comma-separated numbers (every
        effort then a current)."""
        values = [v.strip() for v in str(text).split(",")]
        try:
            gains = [float(v) for v in values]
        except ValueError:
            return cls.load(text, joints)
        if len(gains) != len(joints):
            raise ModelError(f"drive gains {text!r}: {len(gains)} values for the {len(joints)} joints "
                             f"{list(joints)} (or give a drives file)")
        return cls.currents(joints, gains, source="given")


#: a node's parameters that say what the measured efforts are (params/common.yaml, measured_effort)
PARAMETERS = ("drives_file", "effort_units", "drive_gains")


def from_parameters(joints, drives_file="", units=(), gains=()) -> JointDrives:
    """The drives a node's ``PARAMETERS`` describe for its ``joints`` (their order): a drives file,
    or ``units`` and ``gains`` (each one value for every joint or one per joint; gains alone make
    every effort a current); nothing: every effort a torque. Every current's gain known and > 0.
    ModelError in one line naming the parameter (or the file) and the joint."""
    joints, units, gains = list(joints), list(units or []), list(gains or [])
    if drives_file and (units or gains):
        raise ModelError(f"drives_file {drives_file!r} and effort_units/drive_gains: give the file "
                         "or the values, not both")
    if drives_file:
        drives = JointDrives.load(drives_file, joints)
        where = f"drives_file {drives_file}"
    else:
        where = "drive_gains"
        for name, given in (("effort_units", units), ("drive_gains", gains)):
            if len(given) not in (0, 1, len(joints)):
                raise ModelError(f"{name}: {len(given)} values for the {len(joints)} joints "
                                 f"{joints}: give one, or one per joint")
        units = units * len(joints) if len(units) == 1 else units or [CURRENT if gains else "N m"] * len(joints)
        gains = np.asarray(gains * len(joints) if len(gains) == 1 else gains or
                           [np.nan if u == CURRENT else 1.0 for u in units], dtype=float)
        for joint, unit, gain in zip(joints, units, gains):
            if unit not in UNITS:
                raise ModelError(f"effort_units: joint {joint!r}: {unit!r} is not one of {list(UNITS)}")
            if unit in TORQUE_UNITS and gain != 1.0:
                raise ModelError(f"drive_gains: joint {joint!r} measures {unit} (effort_units): its gain "
                                 f"is 1, not {gain:g}")
        try:
            drives = JointDrives(tuple(joints), tuple(units), gains, np.zeros(len(joints)), "parameters")
        except ModelError as exc:
            raise ModelError(f"drive_gains: {str(exc).removeprefix('drives: ')}") from None
    if drives.unknown:
        raise ModelError(f"{where}: the drive gains of {drives.unknown} are unknown: give them, or the "
                         "drives file robodyn-ros identify writes (NAME.drives.yaml, from a run with a "
                         "known payload)")
    bad = [(j, g) for j, u, g in zip(drives.joints, drives.units, drives.gains)
           if u == CURRENT and not (np.isfinite(g) and g > 0.0)]
    if bad:
        raise ModelError(f"{where}: joint {bad[0][0]!r}: a drive gain is a positive number of N m/A, "
                         f"got {bad[0][1]:g}")
    return drives


def drives_file(urdf):
    """The drives file beside ``urdf``: NAME.drives.yaml for NAME.urdf."""
    urdf = Path(urdf)
    return urdf.with_name(urdf.stem + ".drives.yaml")
