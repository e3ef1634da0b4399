"""No import cycle inside robodyn_ros: the modules form layers, each importing only modules below it.

Every import statement of every module is read with ast, also those inside functions (a lazy import
is still a dependency, and hiding a cycle behind one is what this test exists to prevent), and both
spellings of a relative import count: ``from . import x`` depends on module x, ``from .x import y``
on module x (or on x.y when y is a module). The implicit import of a package's ``__init__`` by
its submodules is not an edge: that is how packages work, not a design choice.
"""
import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "robodyn_ros"


def module_files():
    files = {}
    for path in sorted((ROOT / PACKAGE).rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        files[".".join(parts)] = path
    return files


def imported_modules(name, path, modules):
    """The modules of ``modules`` that module ``name`` (file ``path``) imports anywhere in its body."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - (node.level - 1)]
                base = ".".join(base + ([node.module] if node.module else []))
            else:
                base = node.module
            # a name that is a submodule is that module; any other name is an attribute of base
            targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base
                       for alias in node.names]
        else:
            continue
        found.update(t for t in targets if t in modules)
    found.discard(name)
    return found


def import_graph():
    modules = module_files()
    return {name: imported_modules(name, path, modules) for name, path in modules.items()}


def find_cycle(graph):
    """One cycle as a list of modules (first == last), or None."""
    state, stack = {}, []

    def visit(node):
        state[node] = "open"
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == "open":
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state:
                cycle = visit(nxt)
                if cycle:
                    return cycle
        stack.pop()
        state[node] = "done"
        return None

    for node in sorted(graph):
        if node not in state:
            cycle = visit(node)
            if cycle:
                return cycle
    return None


def test_the_graph_sees_every_spelling_of_an_import():
    graph = import_graph()
    # from . import x (model: from . import crba as _crba), from .x import y, lazy and absolute imports
    assert "robodyn_ros.dynamics.crba" in graph["robodyn_ros.dynamics.model"]
    assert "robodyn_ros.dynamics.link" in graph["robodyn_ros.dynamics.dh"]
    assert "robodyn_ros.plumbing.kernels" in graph["robodyn_ros.dynamics.newton_euler"]
    assert "robodyn_ros.stewart.kinematics" in graph["robodyn_ros.stewart.model"]   # inside a method
    assert "robodyn_ros.dynamics" in graph["robodyn_ros.nodes.simulator"]           # absolute


def test_find_cycle_finds_one():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_no_import_cycle_inside_the_package():
    cycle = find_cycle(import_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


@pytest.mark.parametrize("module", ["robodyn_ros.dynamics.link", "robodyn_ros.dynamics.layout",
                                    "robodyn_ros.plumbing.kernels"])
def test_the_bottom_layers_import_nothing_of_the_package_above_them(module):
    allowed = {"robodyn_ros.dynamics.link": set(),
               "robodyn_ros.dynamics.layout": {"robodyn_ros.dynamics.link"},
               "robodyn_ros.plumbing.kernels": set()}
    assert import_graph()[module] == allowed[module]


# The three wings (doc/architecture.md): the library at the bottom, the ROS adapters above it, the
# applications on top; the plumbing every wing uses under all of them.
PLUMBING = ("plumbing",)
LIBRARY = ("dynamics", "control", "stewart", "sim", "identification", "spatial")
NODES = ("nodes",)
APPS = ("apps",)


def wing(module):
    part = module.split(".")[1] if "." in module else ""
    for name, packages in (("plumbing", PLUMBING), ("library", LIBRARY), ("nodes", NODES),
                           ("apps", APPS)):
        if part in packages:
            return name
    return None


def test_every_module_belongs_to_a_wing():
    assert sorted(m for m in import_graph() if wing(m) is None) == ["robodyn_ros"]


@pytest.mark.parametrize("lower, forbidden", [
    ("plumbing", {"library", "nodes", "apps"}),
    ("library", {"nodes", "apps"}),
    ("nodes", {"apps"}),
])
def test_no_wing_imports_a_wing_above_it(lower, forbidden):
    graph = import_graph()
    upward = sorted(f"{m} -> {t}" for m, targets in graph.items() if wing(m) == lower
                    for t in targets if wing(t) in forbidden)
    assert upward == []


def test_the_wing_check_sees_an_upward_import():
    assert wing("robodyn_ros.control.loop") == "library"
    assert wing("robodyn_ros.apps.demos.puma") == "apps"
    assert "robodyn_ros.nodes.parameters" in import_graph()["robodyn_ros.apps.excite"]
