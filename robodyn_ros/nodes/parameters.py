"""Node parameter schemas: one YAML file per node is the only place a parameter's name, type,
default, range, read-only flag and description are written.

The files (``robodyn_ros/params/<node>.yaml``) follow generate_parameter_library's layout::

    node_name:
      include: [robot_description]        # groups of params/common.yaml
      rate:
        type: double                      # bool, int, double, string, *_array, or numbers
        default_value: 100.0
        read_only: true
        description: "..."
        validation:
          bounds<>: [0.1, 2000.0]         # inclusive
          one_of<>: [[a, b]]              # for strings

``numbers`` is a number or an array of numbers (a control-law gain: one value, one per joint or a
matrix); its checks are the control law's. No rclpy here: the nodes declare from these specs
(:mod:`robodyn_ros.nodes.common`) and the documentation tables are rendered from them.
"""
from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Mapping
from importlib.resources import files
from typing import Any

import yaml

from ..plumbing.reasons import bounded

TYPES = ("bool", "int", "double", "string", "bool_array", "int_array", "double_array",
         "string_array", "numbers")
_SCALAR = {"bool": (bool,), "int": (int,), "double": (float, int), "string": (str,)}


@dataclasses.dataclass(frozen=True)
class ParamSpec:
    name: str
    type: str
    default: Any
    description: str
    read_only: bool = False
    bounds: tuple[float, float] | None = None
    one_of: tuple[str, ...] | None = None

    @property
    def dynamic(self) -> bool:
        """Declared without a fixed ROS type (a gain is a number or an array)."""
        return self.type == "numbers"

    def check(self, value) -> None:
        """ValueError naming the parameter when ``value`` has the wrong type or is out of range.
        (For declared types rclpy refuses a wrong type first; "numbers" are checked here.)"""
        if not _has_type(self.type, value):
            raise ValueError(f"parameter '{self.name}' must be {_TYPE_WORDS[self.type]}, got "
                             f"{bounded(repr(value), max_chars=120)}")
        if self.bounds is not None:
            low, high = self.bounds
            values = value if isinstance(value, list) else [value]
            for v in values:
                if not low <= v <= high:
                    raise ValueError(f"parameter '{self.name}' must be within [{low:g}, {high:g}],"
                                     f" got {v!r}")
        if self.one_of is not None and value not in self.one_of:
            raise ValueError(f"parameter '{self.name}' must be one of {list(self.one_of)}, got "
                             f"{bounded(repr(value), max_chars=120)}")


_TYPE_WORDS = {
    "bool": "true or false", "int": "an integer", "double": "a number", "string": "a string",
    "bool_array": "a list of true/false", "int_array": "a list of integers",
    "double_array": "a list of numbers", "string_array": "a list of strings",
    "numbers": "a number or a list of numbers",
}


def _is_number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _has_type(kind: str, value) -> bool:
    if kind == "numbers":
        return (_is_number(value) or (isinstance(value, list) and len(value) > 0
                                      and all(_is_number(v) for v in value)))
    if kind.endswith("_array"):
        element = kind[:-len("_array")]
        return isinstance(value, list) and all(_has_type(element, v) for v in value)
    if kind in ("int", "double") and isinstance(value, bool):
        return False
    return isinstance(value, _SCALAR[kind])


@functools.cache
def _document(name: str) -> Mapping[str, Any]:
    path = files("robodyn_ros") / "params" / f"{name}.yaml"
    return yaml.safe_load(path.read_text())


def _spec(name: str, row: Mapping[str, Any], where: str) -> ParamSpec:
    unknown = set(row) - {"type", "default_value", "description", "read_only", "validation"}
    kind = row.get("type")
    if unknown or kind not in TYPES or "description" not in row:
        raise ValueError(f"{where}: parameter '{name}' needs type (one of {list(TYPES)}) and "
                         f"description; unknown keys {sorted(unknown)}")
    validation = row.get("validation") or {}
    bounds = validation.get("bounds<>")
    one_of = validation.get("one_of<>")
    spec = ParamSpec(name, kind, row.get("default_value"), " ".join(row["description"].split()),
                     bool(row.get("read_only", False)),
                     None if bounds is None else (float(bounds[0]), float(bounds[1])),
                     None if one_of is None else tuple(one_of[0]))
    if spec.default is not None:
        spec.check(spec.default)
    return spec


def schema_section(node: str, key: str) -> Mapping[str, Any]:
    """Another top-level section of a node's file (the controller's ``law_defaults``)."""
    return _document(node).get(key, {})


def node_schema(node: str) -> tuple[ParamSpec, ...]:
    """The parameters of ``node`` in the order of its file (included groups first)."""
    where = f"robodyn_ros/params/{node}.yaml"
    rows = dict(_document(node)[node])
    specs = []
    for group in rows.pop("include", []):
        specs += [_spec(n, r, "robodyn_ros/params/common.yaml")
                  for n, r in _document("common")[group].items()]
    specs += [_spec(n, r, where) for n, r in rows.items()]
    return tuple(specs)


def law_specs(laws: Mapping[str, type], defaults: Mapping[str, Any],
              declared: set[str]) -> tuple[ParamSpec, ...]:
    """A spec for each parameter the control laws ``laws`` (name -> class) take beyond
    ``declared``: described by the first law that takes it, typed ``numbers`` for numbers, its
    default the law's own (or ``defaults``, the node's for the gains a law requires)."""
    first: dict[str, tuple[str, Any]] = {}  # parameter -> (description, default) of its first law
    users: dict[str, list[str]] = {}  # parameter -> the laws that take it
    for law_name, cls in sorted(laws.items()):
        for name, text in cls.parameters.items():
            if name not in declared:
                first.setdefault(name, (text, cls.defaults.get(name, defaults.get(name))))
                users.setdefault(name, []).append(law_name)
    specs = []
    for name, (text, default) in first.items():
        if isinstance(default, float) and math.isinf(default):
            default = None  # no ROS double for "unbounded": unset means the law's default
        kind = ("bool" if isinstance(default, bool) else
                "numbers" if default is None or _is_number(default) or isinstance(default, list)
                else "string")
        owners = "control law" + ("s " if len(users[name]) > 1 else " ") + ", ".join(users[name])
        specs.append(ParamSpec(name, kind, default, f"{text} ({owners})"))
    return tuple(specs)


def controller_schema(warn=lambda text: None) -> tuple[ParamSpec, ...]:
    """computed_torque_controller's parameters: its file's, then each registered control law's
    (``warn`` hears of a law that does not load; choosing it later gives the error again)."""
    from ..control.law import available_laws, load_law
    node = "computed_torque_controller"
    specs = node_schema(node)
    laws = {}
    for name in available_laws():
        try:
            laws[name] = load_law(name)
        except Exception as exc:  # noqa: BLE001 (a broken plugin must not stop the node)
            warn(f"control law '{name}' does not load, its parameters are not declared: {exc!r}")
    return specs + law_specs(laws, schema_section(node, "law_defaults"), {s.name for s in specs})


#: The nodes with a parameter table in doc/<node>.md, and how to get their schemas.
NODE_SCHEMAS = {
    "computed_torque_controller": controller_schema,
    "arm_simulator": lambda: node_schema("arm_simulator"),
    "stewart_platform": lambda: node_schema("stewart_platform"),
    "stewart_simulator": lambda: node_schema("stewart_simulator"),
    "effort_feedforward": lambda: node_schema("effort_feedforward"),
}
COLUMNS = ("name", "type", "default", "range / constraints", "read-only", "description")


def table_markers(node: str) -> tuple[str, str]:
    return f"<!-- parameters:{node} -->", f"<!-- /parameters:{node} -->"


def markdown_table(specs) -> str:
    """The parameter table of a node page: one row per parameter."""
    rows = ["| " + " | ".join(COLUMNS) + " |", "|" + " --- |" * len(COLUMNS)]
    for s in specs:
        if s.bounds is not None:
            limits = f"[{s.bounds[0]:g}, {s.bounds[1]:g}]"
        elif s.one_of is not None:
            limits = " \\| ".join(f"`{c}`" for c in s.one_of)
        else:
            limits = ""
        default = "unset" if s.default is None else yaml.safe_dump(
            s.default, default_flow_style=True, width=1000).strip().removesuffix("...").strip()
        rows.append(f"| `{s.name}` | {s.type} | `{default}` | {limits} | "
                    f"{'yes' if s.read_only else 'no'} | {s.description.replace('|', '&#124;')} |")
    return "\n".join(rows)

