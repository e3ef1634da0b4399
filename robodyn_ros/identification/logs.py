"""Joint logs as robots and their loggers write them, read into arrays for a bag
(``bag.write_joint_states``; ``robodyn-ros bag``). No rclpy here.

Three layouts, one reader each:

* **a CSV table** (``read_csv``), one row per sample and a header naming the columns: UR's RTDE
  recorder (``timestamp``, ``actual_q_0..5``, ``actual_qd_0..5``, ``actual_current_0..5``,
  ``target_current_0..5``, ``target_moment_0..5``; space- or comma-separated, as UR's and
  ur_rtde's recorders write it), or any other;
* **NumPy arrays** (``read_npz``), an ``.npz`` of named arrays: (N,) times, (N, n) joint arrays or
  one (N,) array per joint;
* **one text file per quantity** (``read_text``): whitespace-separated numbers, one sample per row
  or one value per line row-major (sample k's n joints on lines k n + 1 .. k n + n), as the Panda run
  of Gaz et al. (2019) is published.

Any of them gzipped (told by the file's first bytes, not its name). A joint quantity is named by a
*column spec*: a pattern with ``{i}`` (the joint's index from 0), ``{j}`` (from 1) or ``{joint}``
(its name), e.g. ``actual_q_{i}``; or the n names, comma-separated; or, in an .npz, the key of an
(N, n) array; for ``read_text``, the file. Anything wrong is a :class:`LogError` that names the file
and the column (or key) and, for a bad value, the row.
"""
from __future__ import annotations

import csv
import dataclasses
import gzip
import io
import re
import zipfile
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

#: UR's RTDE names for ``read_csv``'s defaults (the joint states' effort: the motor currents, A,
#: as ur_robot_driver publishes them by default)
RTDE = {"time": "timestamp", "position": "actual_q_{i}", "velocity": "actual_qd_{i}",
        "effort": "actual_current_{i}"}
#: UR's joint names, as ur_robot_driver publishes them (no tf_prefix)
UR_JOINTS = ("shoulder_pan_joint", "shoulder_lift_joint", "elbow_joint", "wrist_1_joint",
             "wrist_2_joint", "wrist_3_joint")
#: ``read_npz``'s defaults: sensor_msgs/JointState's field names
NPZ = {"time": "time", "position": "position", "velocity": "velocity", "effort": "effort"}
#: seconds per unit of the time column
TIME_UNITS = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9}
FIELDS = ("position", "velocity", "effort")


class LogError(ValueError):
    """A log that cannot be read as asked: the message names the file, the column and the row."""


@dataclasses.dataclass(frozen=True)
class JointLog:
    """A log as arrays: ``t`` (N,) s as stamped; ``position`` (N, n) and ``velocity`` /
    ``effort`` (N, n) or None in ``joints`` order; ``arrays`` {topic: (N, n)} more joint arrays
    (a controller's command, RTDE's target_moment); ``sources`` {quantity: its columns, array or
    file}, for the summary."""
    t: np.ndarray
    joints: tuple
    position: np.ndarray
    velocity: np.ndarray | None
    effort: np.ndarray | None
    arrays: dict
    sources: dict

    def summary(self) -> str:
        dt = np.diff(self.t)
        spacing = (f"{1e3 * dt.min():.3g}-{1e3 * dt.max():.3g} ms apart, median "
                   f"{1e3 * np.median(dt):.3g} ms") if len(dt) else "one sample"
        return (f"{len(self.t)} samples of {len(self.joints)} joints over "
                f"{self.t[-1] - self.t[0]:.3f} s ({spacing}); "
                + ", ".join(f"{name}: {where}" for name, where in self.sources.items()))


def read_csv(path, joints: Sequence[str], *, time: str = RTDE["time"],
             position: str = RTDE["position"], velocity: str | None = RTDE["velocity"],
             effort: str | None = RTDE["effort"], arrays: Mapping[str, str] | None = None,
             time_unit: str = "s", optional: Sequence[str] = ()) -> JointLog:
    """A CSV log (module docstring): the columns of the header line named by ``time`` and the
    column specs. A quantity in ``optional`` whose columns the file lacks is left out (None)
    instead of refused; None leaves it out."""
    table = _CsvTable(Path(path))
    return _joint_log(table, joints, time, {"position": position, "velocity": velocity,
                                            "effort": effort}, arrays, time_unit, optional)


def read_npz(path, joints: Sequence[str], *, time: str = NPZ["time"],
             position: str = NPZ["position"], velocity: str | None = NPZ["velocity"],
             effort: str | None = NPZ["effort"], arrays: Mapping[str, str] | None = None,
             time_unit: str = "s", optional: Sequence[str] = ()) -> JointLog:
    """An .npz log (module docstring): keys instead of columns; otherwise as ``read_csv``."""
    table = _NpzTable(Path(path))
    return _joint_log(table, joints, time, {"position": position, "velocity": velocity,
                                            "effort": effort}, arrays, time_unit, optional)


def read_text(joints: Sequence[str], *, time, position, velocity=None, effort=None,
              arrays: Mapping[str, str] | None = None, time_unit: str = "s") -> JointLog:
    """One text file per quantity (module docstring): ``time`` (N values) and ``position`` (N n),
    ``velocity``, ``effort`` and each of ``arrays`` ({topic: file}) files of N n values, None
    for none."""
    n = len(joints)
    _check_joints(joints)
    t = _times(_text(Path(time), 1), str(time), time_unit)
    fields = {name: None if f is None else _rows(_text(Path(f), n), str(f), len(t))
              for name, f in (("position", position), ("velocity", velocity), ("effort", effort))}
    extra = {topic: _rows(_text(Path(f), n), str(f), len(t)) for topic, f in (arrays or {}).items()}
    sources = {"time": Path(time).name, **{k: Path(f).name for k, f in (("position", position),
               ("velocity", velocity), ("effort", effort)) if f is not None},
               **{topic: Path(f).name for topic, f in (arrays or {}).items()}}
    return JointLog(t, tuple(joints), fields["position"], fields["velocity"], fields["effort"],
                    extra, sources)


def column_names(spec: str, joints: Sequence[str]) -> list[str] | None:
    """The n column names of a column spec (module docstring), or None for a single name (an
    .npz key of an (N, n) array)."""
    if "{" in spec:
        try:
            return [spec.format(i=k, j=k + 1, joint=name) for k, name in enumerate(joints)]
        except (KeyError, IndexError, ValueError) as exc:
            raise LogError(f"column spec {spec!r}: only {{i}}, {{j}} and {{joint}} may be "
                           f"filled in ({exc})") from None
    if "," in spec:
        names = [s.strip() for s in spec.split(",")]
        if len(names) != len(joints):
            raise LogError(f"column spec {spec!r}: {len(names)} names for {len(joints)} joints")
        return names
    return None


def _joint_log(table, joints, time, specs, arrays, time_unit, optional):
    _check_joints(joints)
    specs = {name: spec for name, spec in specs.items() if spec is not None
             and not (name in optional and not table.has(spec, joints))}
    specs.update(arrays or {})
    table.load([time] + [c for spec in specs.values() for c in column_names(spec, joints) or [spec]])
    t = _times(table.column(time), f"{table.path}: column {time!r}", time_unit)
    values, sources = {}, {"time": time}
    for name, spec in specs.items():
        values[name], sources[name] = table.block(spec, joints, len(t))
    return JointLog(t, tuple(joints), *(values.get(name) for name in FIELDS),
                    {topic: values[topic] for topic in arrays or {}}, sources)


def _check_joints(joints):
    if not joints:
        raise LogError("no joints named: give the joints' names in the order of the log's columns")
    repeated = sorted({j for j in joints if list(joints).count(j) > 1})
    if repeated:
        raise LogError(f"joint {', '.join(repeated)} named twice")


def _times(values, where, unit):
    if unit not in TIME_UNITS:
        raise LogError(f"time unit {unit!r} is not one of {', '.join(TIME_UNITS)}")
    t = np.asarray(values, dtype=float).reshape(-1) * TIME_UNITS[unit]
    bad = np.flatnonzero(~np.isfinite(t))
    if bad.size:
        raise LogError(f"{where}: row {bad[0] + 1} is {values[bad[0]]}, not a time")
    if len(t) < 2:
        raise LogError(f"{where}: {len(t)} sample(s); a log needs at least two")
    back = np.flatnonzero(np.diff(t) < 0.0)
    if back.size:
        k = int(back[0]) + 1
        raise LogError(f"{where}: the time goes back at row {k + 1}: {t[k]:.9g} s after "
                       f"{t[k - 1]:.9g} s")
    if t[0] < 0.0:
        raise LogError(f"{where}: starts at {t[0]:.9g} s; a bag's times are >= 0")
    return t


def _rows(values, where, rows):
    """(rows, n) of a block of values, each finite."""
    values = np.asarray(values, dtype=float)
    if values.shape[0] != rows:
        raise LogError(f"{where}: {values.shape[0]} samples, but the time has {rows}")
    bad = np.argwhere(~np.isfinite(values))
    if bad.size:
        k, j = bad[0]
        raise LogError(f"{where}: row {k + 1}, joint {j + 1}: {values[k, j]} is not a finite number")
    return values


def _opened(path: Path):
    """A text stream of ``path``, gunzipped if it starts as gzip does."""
    try:
        with open(path, "rb") as f:
            zipped = f.read(2) == b"\x1f\x8b"
        return io.TextIOWrapper(gzip.open(path), encoding="utf-8") if zipped else \
            open(path, encoding="utf-8")
    except OSError as exc:
        raise LogError(f"{path}: cannot read: {exc.strerror or exc}") from None


def _text(path: Path, n: int):
    """(N, n) numbers of a whitespace-separated text file: one sample per row of n numbers, or
    n N numbers row-major in any layout (one per line)."""
    with _opened(path) as f:
        try:
            words = f.read().split()
        except (OSError, EOFError, UnicodeDecodeError) as exc:
            raise LogError(f"{path}: cannot read: {exc}") from None
    try:
        values = np.array(words, dtype=float)
    except ValueError:
        first = next(k for k, w in enumerate(words) if not _is_number(w))
        raise LogError(f"{path}: value {first + 1} is {words[first]!r}, not a number") from None
    if len(values) % n:
        raise LogError(f"{path}: {len(values)} values, not a multiple of {n} joints")
    return values.reshape(-1, n) if n > 1 else values


def _is_number(word):
    try:
        float(word)
    except ValueError:
        return False
    return True


class _CsvTable:
    """A CSV file's columns by their header names; the delimiter is the header's (comma,
    semicolon or tab, else whitespace). Only the columns asked for are parsed (``load``): an
    RTDE log has a hundred."""

    def __init__(self, path: Path):
        self.path = path
        with _opened(path) as f:
            try:
                header = f.readline()
            except (OSError, EOFError, UnicodeDecodeError) as exc:
                raise LogError(f"{path}: cannot read: {exc}") from None
        self._delimiter = next((d for d in ",;\t" if d in header), None)
        self.names = ([name.strip() for name in next(csv.reader([header],
                                                               delimiter=self._delimiter))]
                      if self._delimiter else header.split())
        if not self.names or _is_number(self.names[0]):
            raise LogError(f"{path}: no header line: a CSV log starts with its columns' names")
        self._index = {name: k for k, name in enumerate(self.names)}
        self._loaded = {}

    def has(self, spec, joints):
        names = column_names(spec, joints) or [spec]
        return all(name in self._index for name in names)

    def load(self, names):
        """Parse the columns ``names`` (all at once: one pass over the file)."""
        for name in names:
            if name not in self._index:
                near = [c for c in self.names if c.lower().startswith(name[:4].lower())][:8]
                raise LogError(f"{self.path}: no column {name!r}"
                               + (f" (columns like it: {', '.join(near)})" if near else
                                  f"; its columns: {', '.join(self.names[:12])}"
                                  + (", ..." if len(self.names) > 12 else "")))
        wanted = sorted({self._index[name] for name in names} - set(self._loaded))
        if not wanted:
            return
        with _opened(self.path) as f:
            try:
                values = np.loadtxt(f, delimiter=self._delimiter, skiprows=1, usecols=wanted,
                                    ndmin=2, dtype=float)
            except (ValueError, EOFError, OSError) as exc:
                raise LogError(f"{self.path}: {_located(exc, self.names)}") from None
        for k, column in zip(wanted, values.T):
            self._loaded[k] = column

    def column(self, name):
        self.load([name])
        return self._loaded[self._index[name]]

    def block(self, spec, joints, rows):
        names = column_names(spec, joints)
        if names is None:
            raise LogError(f"{self.path}: column spec {spec!r} names one column for "
                           f"{len(joints)} joints: give a pattern such as {spec}_{{i}} or "
                           f"{len(joints)} names separated by commas")
        self.load(names)
        values = np.column_stack([self.column(name) for name in names])
        return (_rows(values, f"{self.path}: columns {names[0]}..{names[-1]}", rows),
                f"{names[0]}..{names[-1]}")


def _located(exc, names):
    """NumPy's reason for a value it could not read, with the column's name and the line of the
    file (numpy counts a bad value's row from 0 after the header and its column from 1, a short
    row's row from 1)."""
    text = str(exc)
    bad = re.search(r"(could not convert string .*) at row (\d+), column (\d+)", text)
    if bad:
        row, column = int(bad.group(2)) + 1, int(bad.group(3))
        name = names[column - 1] if 0 < column <= len(names) else f"number {column}"
        return f"line {row + 1}, column {name!r}: {bad.group(1)}"
    short = re.search(r"at row (\d+) with (\d+) columns", text)
    if short:
        return (f"line {int(short.group(1)) + 1} has {short.group(2)} values for "
                f"{len(names)} columns")
    return text


class _NpzTable:
    """An .npz file's arrays by key."""

    def __init__(self, path: Path):
        self.path = path
        try:
            with np.load(path, allow_pickle=False) as data:
                self._arrays = {key: data[key] for key in data.files}
        except (OSError, ValueError, zipfile.BadZipFile, EOFError) as exc:
            raise LogError(f"{path}: not a NumPy .npz file: {exc}") from None

    def has(self, spec, joints):
        names = column_names(spec, joints)
        return all(k in self._arrays for k in (names or [spec]))

    def load(self, keys):
        for key in keys:
            self._array(key)

    def column(self, key):
        value = self._array(key)
        if value.ndim != 1:
            raise LogError(f"{self.path}: array {key!r} has shape {value.shape}, not (N,)")
        return value

    def _array(self, key):
        if key not in self._arrays:
            raise LogError(f"{self.path}: no array {key!r}; its arrays: "
                           f"{', '.join(f'{k} {v.shape}' for k, v in self._arrays.items())}")
        value = self._arrays[key]
        if not np.issubdtype(value.dtype, np.number):
            raise LogError(f"{self.path}: array {key!r} holds {value.dtype}, not numbers")
        return value.astype(float)

    def block(self, spec, joints, rows):
        names = column_names(spec, joints)
        if names is None:
            value = self._array(spec)
            if value.ndim != 2 or value.shape[1] != len(joints):
                raise LogError(f"{self.path}: array {spec!r} has shape {value.shape}, not "
                               f"(N, {len(joints)}) for the {len(joints)} joints")
            return _rows(value, f"{self.path}: array {spec!r}", rows), spec
        values = np.column_stack([self.column(k) for k in names])
        return (_rows(values, f"{self.path}: arrays {names[0]}..{names[-1]}", rows),
                f"{names[0]}..{names[-1]}")

