"""Every dependency is declared where its users install from, and the nodes need no more.

Declared: every third-party module the package imports (anywhere, functions' imports included) is
in setup.py — install_requires, an extra, or what one of those brings (the ROS wheels' own) — and
in package.xml, which rosdep installs from on the colcon route, or, without a rosdep key, named in
its comment of pip-only packages; the modules only a ROS install has are in package.xml alone.

Enough: every node runs from a venv that holds exactly what ``pip install .[ros]`` installs —
robodyn_ros's declared requirements and its ``ros`` extra, closed over their own requirements (no
SciPy, rosbags, matplotlib, threadpoolctl: the optional extras) — plus control_msgs: the
controller configured, activated and commanding the simulated arm over DDS, the feed-forward node
and the Stewart platform's two nodes up beside them, then all stopped by SIGINT, exit 0, without a
traceback. The venv is made once, in a second or two, without a download or a copy: each
distribution of the closure is linked file by file from this test's venv (its site-packages, and
the libraries and share files the ROS wheels put beside it), robodyn_ros as installed here
(editable: the same sources, so numba's cache of them serves and nothing is compiled twice) and
control_msgs as ``make venv`` built it here. Where this venv's rclpy is not the ROS wheels' (a ROS
install's, whose libraries are not distributions), that test skips, saying so."""
import ast
import importlib.metadata as metadata
import importlib.util
import os
import re
import signal
import subprocess
import sys
import time
import venv
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from std_msgs.msg import Float64MultiArray

from conftest import Q0, URDF

ROOT = Path(__file__).resolve().parents[1]
OPTIONAL = ("scipy", "rosbags", "matplotlib", "threadpoolctl", "mujoco")


def closure(name, extras=()):
    """The distributions ``pip install name[extras]`` installs, as installed here."""
    found, todo = {}, [(name, frozenset(extras))]
    while todo:
        name, extras = todo.pop()
        dist = metadata.distribution(name)
        key = canonicalize_name(dist.metadata["Name"])
        if key in found and extras <= found[key][1]:
            continue
        extras |= found.get(key, (None, frozenset()))[1]
        found[key] = (dist, extras)
        for text in dist.requires or ():
            requirement = Requirement(text)
            if requirement.marker is None or any(requirement.marker.evaluate({"extra": e})
                                                 for e in extras | {""}):
                todo.append((requirement.name, frozenset(requirement.extras)))
    return [dist for dist, _ in found.values()]


def link(source: Path, target: Path):
    if not target.exists() and source.exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        target.symlink_to(source)



#: the package.xml key of a module whose key is not its own name
KEYS = {"numpy": "python3-numpy", "yaml": "python3-yaml", "numba": "python3-numba",
        "scipy": "python3-scipy", "matplotlib": "python3-matplotlib", "urdf_parser_py": "urdfdom_py"}
#: modules no registry has: a ROS install's (control_msgs: or make's build of interfaces/ on the
#: pip route), which package.xml alone declares
ROS_INSTALL_ONLY = {"launch", "launch_ros", "sros2", "control_msgs"}
#: the distribution of a module that packages_distributions cannot name (cmeel's layout)
DISTRIBUTIONS = {"pinocchio": "pin"}


def imported_modules():
    """{top-level module: a file importing it} of every third-party import in the package."""
    found = {}
    for path in sorted((ROOT / "robodyn_ros").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                     [node.module] if isinstance(node, ast.ImportFrom) and node.level == 0 else [])
            for name in names:
                top = name.split(".")[0]
                if top not in sys.stdlib_module_names and top != "robodyn_ros":
                    found.setdefault(top, path.relative_to(ROOT).as_posix())
    return found


def test_every_import_is_declared_in_setup_py_and_package_xml():
    declared = {canonicalize_name(d.metadata["Name"]) for d in closure(
        "robodyn_ros", metadata.distribution("robodyn_ros").metadata.get_all("Provides-Extra"))}
    by_module = metadata.packages_distributions()
    package_xml = (ROOT / "package.xml").read_text()
    keys = set(re.findall(r"<(?:exec|test)_depend>([^<]+)<", package_xml))
    pip_only = re.search(r"pip only[^:]*:([^>]*)-->", package_xml, re.S)
    pip_only = set(re.findall(r"([\w-]+) \(", pip_only.group(1))) if pip_only else set()
    missing = []
    for module, where in imported_modules().items():
        if module not in ROS_INSTALL_ONLY:
            dists = by_module.get(module) or [DISTRIBUTIONS.get(module, module)]
            if not {canonicalize_name(d) for d in dists} & declared:
                missing.append(f"{module} ({where}): in no requirement of setup.py")
        if KEYS.get(module, module) not in keys and module not in pip_only:
            missing.append(f"{module} ({where}): no depend in package.xml, nor pip-only")
    assert missing == [], "\n".join(missing)


@pytest.fixture(scope="module")
def minimal_venv(tmp_path_factory):
    if importlib.util.find_spec("ros_wheels_bootstrapper") is None:
        pytest.skip("rclpy is a ROS install's here, not the ROS wheels': a venv of distributions "
                    "cannot hold it (the colcon route declares its dependencies in package.xml)")
    version = f"python{sys.version_info[0]}.{sys.version_info[1]}"
    here_site = Path(sys.prefix, "lib", version, "site-packages")
    if not (here_site / "control_msgs").is_dir():
        pytest.skip("control_msgs is not built into this venv (make venv builds it): the nodes "
                    "need it")
    root = tmp_path_factory.mktemp("minimal") / "venv"
    venv.create(root, with_pip=False, system_site_packages=False)
    for dist in closure("robodyn_ros", ["ros"]):
        for file in dist.files or ():
            source = Path(dist.locate_file(file))
            relative = Path(os.path.normpath(here_site / file)).relative_to(sys.prefix)
            if relative.parts[0] != "bin":   # the scripts name this venv's interpreter
                link(source, root / relative)
    # control_msgs, built by make venv into this venv (no distribution of it exists)
    for built in [here_site / "control_msgs", *Path(sys.prefix, "lib").glob("libcontrol_msgs__*"),
                  *Path(sys.prefix, "share").glob("**/control_msgs")]:
        link(built, root / built.relative_to(sys.prefix))
    python = root / "bin" / "python"
    missing = [m for m in OPTIONAL if subprocess.run(
        [python, "-c", f"import {m}"], capture_output=True, env=clean_env()).returncode == 0]
    assert missing == [], f"the minimal venv holds optional packages: {missing}"
    return python


def clean_env():
    """This process's environment without what its own venv's start put in (the ROS wheels'
    library path), so that the minimal venv's start puts in its own."""
    return {k: v for k, v in os.environ.items()
            if k not in ("LD_LIBRARY_PATH", "_ROS_WHEELS_BOOTSTRAP_COMPLETE", "PYTHONPATH",
                         "VIRTUAL_ENV")}


#: node module -> its parameters beyond the namespace's (the arm's nodes on the PUMA)
NODES = {
    "robodyn_ros.nodes.simulator": {"urdf_file": URDF, "initial_position": str(Q0.tolist())},
    "robodyn_ros.nodes.controller": {"urdf_file": URDF, "use_sim_time": "true"},
    "robodyn_ros.nodes.feedforward": {"urdf_file": URDF},
    "robodyn_ros.nodes.stewart_platform": {},
    "robodyn_ros.nodes.stewart_simulator": {},
}
NAMES = {"arm_simulator", "computed_torque_controller", "effort_feedforward", "stewart_platform",
         "stewart_simulator"}


def test_the_nodes_run_from_a_minimal_install(ros, minimal_venv, tmp_path):
    import rclpy
    from rclpy.experimental import EventsExecutor

    ns = f"/minimal{os.getpid()}"
    nodes = {}
    for module, params in NODES.items():
        params = {"command_topic": f"{ns}/commands", **params} if "urdf_file" in params else params
        with open(tmp_path / f"{module}.log", "w") as out:
            nodes[module] = subprocess.Popen(
                [minimal_venv, "-m", module, "--ros-args", "-r", f"__ns:={ns}",
                 *(a for k, v in params.items() for a in ("-p", f"{k}:={v}"))],
                stdout=out, stderr=subprocess.STDOUT, env=clean_env())

    def logs():
        return "\n".join(f"--- {m}\n{(tmp_path / f'{m}.log').read_text()}" for m in NODES)
    probe = rclpy.create_node("probe", namespace=ns)
    executor = EventsExecutor()
    executor.add_node(probe)
    commands = []   # the controller's, answering the simulator's joint states
    probe.create_subscription(Float64MultiArray, f"{ns}/commands", commands.append, 10)

    def running():
        return {name for name, space in probe.get_node_names_and_namespaces() if space == ns}
    try:
        deadline = time.monotonic() + 120   # starts on a loaded machine, the cache loaded
        while len(commands) < 10 or not NAMES <= running():
            assert all(node.poll() is None for node in nodes.values()), logs()
            assert time.monotonic() < deadline, logs()
            executor.spin_once(timeout_sec=0.05)
        assert len(commands[-1].data) == 6
    finally:
        for node in nodes.values():
            node.send_signal(signal.SIGINT)
        statuses = {module: node.wait(timeout=60) for module, node in nodes.items()}
        executor.shutdown()
        probe.destroy_node()
    assert set(statuses.values()) == {0} and "Traceback" not in logs(), (statuses, logs())
