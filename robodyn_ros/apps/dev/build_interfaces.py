"""Build an interface package of ours (``interfaces/control_msgs``) into this interpreter's prefix,
from the ROS 2 Jazzy wheels on PyPI: no ROS install, no colcon. ``make`` runs it:

    python -m robodyn_ros.apps.dev.build_interfaces interfaces/control_msgs

The ``ros-jazzy-*`` wheels make a venv's root a ROS prefix (``share/<pkg>/cmake``, ``lib/*.so``,
``include/``), so the package's own CMakeLists (rosidl_generate_interfaces) configures against it
as against /opt/ros/jazzy. Two things differ from a ROS install, and a CMake file this module
writes mends both before the package's build sees them:

* the wheels were built in a manylinux container, and the message packages' exported Python
  targets name its headers (``/opt/python/cp3XX-cp3XX/include/python3.X`` and NumPy's include
  directory there), which CMake refuses at generation: they are pointed at this interpreter's;
* only what rclpy needs is generated (C, the C type supports, Python): the C++ generators are left
  out, which halves the build; a C++ node cannot use the result.

Where a control_msgs from outside the prefix already imports (a ROS install's), nothing is built
or installed: the distribution's wins. Needs cmake >= 3.19, a C and a C++ compiler and the
Python headers (Debian/Ubuntu: ``sudo apt-get install cmake g++ python3-dev``); the generators
come from PyPI (setup.py's ``interfaces`` extra). The log goes to a file; its tail is shown on
failure.
"""
from __future__ import annotations

import argparse
import importlib.metadata
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

#: what a bare Debian 12 / Ubuntu 24.04 lacks for the build, by the check that finds it missing
APT = "sudo apt-get install -y cmake g++ python3-dev"
CMAKE_AT_LEAST = (3, 19)   # cmake_language(DEFER), which the mending file uses
#: the generators of the C++ API, left out (their names in rosidl's extension list)
CPP_GENERATORS = ("rosidl_generator_cpp", "rosidl_typesupport_cpp",
                  "rosidl_typesupport_fastrtps_cpp", "rosidl_typesupport_introspection_cpp")


class BuildError(RuntimeError):
    """A reason to stop, in one line a user can act on."""


def _package_name(source: Path) -> str:
    xml = source / "package.xml"
    if not xml.is_file():
        raise BuildError(f"{source} has no package.xml: give the interface package's directory")
    found = re.search(r"<name>\s*([^<\s]+)\s*</name>", xml.read_text())
    if not found:
        raise BuildError(f"{xml}: no <name> element")
    return found.group(1)


def imported_elsewhere(name: str, prefix: Path) -> Path | None:
    """Where ``name`` imports from when that is outside ``prefix`` (a ROS install's), else None."""
    probe = subprocess.run([sys.executable, "-c", f"import {name}; print({name}.__file__)"],
                           capture_output=True, text=True)
    if probe.returncode != 0:
        return None
    where = Path(probe.stdout.strip()).resolve()
    return None if where.is_relative_to(prefix.resolve()) else where


def check_tools() -> None:
    """BuildError naming what is missing (and the apt line that brings it) before any work."""
    missing = [tool for tool in ("cmake", "cc", "c++") if shutil.which(tool) is None]
    headers = Path(sysconfig.get_paths()["include"]) / "Python.h"
    if not headers.is_file():
        missing.append(f"the Python headers ({headers})")
    if missing:
        raise BuildError(f"building the interfaces needs {', '.join(missing)}: {APT}")
    version = subprocess.run(["cmake", "--version"], capture_output=True, text=True).stdout
    found = re.search(r"(\d+)\.(\d+)", version)
    if found is None or tuple(map(int, found.groups())) < CMAKE_AT_LEAST:
        raise BuildError(f"cmake {found.group(0) if found else '?'} is older than "
                         f"{'.'.join(map(str, CMAKE_AT_LEAST))}: install a newer one ({APT})")


def generators() -> list[str]:
    """The generator wheels, as setup.py's ``interfaces`` extra pins them."""
    requires = importlib.metadata.requires("robodyn_ros") or []
    pinned = [r.split(";")[0].strip() for r in requires if re.search(r"extra\s*==\s*.interfaces.", r)]
    if not pinned:
        raise BuildError("robodyn_ros's metadata has no 'interfaces' extra: pip install -e . again")
    return pinned


def mending_cmake(python_only: bool) -> str:
    """The CMake code run after the package's project(): the container's header paths on the
    imported targets pointed at this interpreter's, and (``python_only``) the C++ generators
    dropped from rosidl's extension list."""
    import numpy   # the build's NumPy: the one the generated extension modules are compiled for
    python_headers = sysconfig.get_paths()["include"]
    numpy_headers = numpy.get_include()
    code = f"""
# written by robodyn_ros.apps.dev.build_interfaces
function(robodyn_mend_container_paths)
  get_directory_property(targets DIRECTORY "${{CMAKE_SOURCE_DIR}}" IMPORTED_TARGETS)
  foreach(target IN LISTS targets)
    get_target_property(dirs ${{target}} INTERFACE_INCLUDE_DIRECTORIES)
    if(NOT dirs OR NOT dirs MATCHES "^/opt/python/|;/opt/python/")
      continue()
    endif()
    set(mended "")
    foreach(dir IN LISTS dirs)
      if(dir MATCHES "^/opt/python/.*/numpy/")
        set(dir "{numpy_headers}")
      elseif(dir MATCHES "^/opt/python/[^/]+/include/python")
        set(dir "{python_headers}")
      elseif(dir MATCHES "^/opt/python/")
        continue()
      endif()
      list(APPEND mended "${{dir}}")
    endforeach()
    list(REMOVE_DUPLICATES mended)
    set_target_properties(${{target}} PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${{mended}}")
  endforeach()
endfunction()
cmake_language(DEFER DIRECTORY "${{CMAKE_SOURCE_DIR}}" CALL robodyn_mend_container_paths)
"""
    if python_only:
        dropped = "|".join(CPP_GENERATORS)
        code += f"""
find_package(rosidl_default_generators REQUIRED)   # include-guarded: the package's is then a no-op
list(FILTER AMENT_EXTENSIONS_rosidl_generate_idl_interfaces EXCLUDE REGEX "^({dropped}):")
"""
    return code


SMOKE = """
import importlib, sys
from rclpy.serialization import deserialize_message, serialize_message
name, count = sys.argv[1], 0
for kind in ("msg", "srv", "action"):
    try:
        module = importlib.import_module(f"{name}.{kind}")
    except ImportError:
        continue
    for attr in dir(module):
        cls = getattr(module, attr)
        if attr.startswith("_") or not isinstance(cls, type):
            continue
        # a service or an action is its parts; every other class (the parts, Jazzy's service
        # events, the action's own messages) a message
        parts = [getattr(cls, p) for p in ("Request", "Response", "Goal", "Result", "Feedback")
                 if hasattr(cls, p)] or [cls]
        for typ in parts:
            assert type(deserialize_message(serialize_message(typ()), typ)) is typ, typ
            count += 1
assert count, f"nothing of {name} imports"
print(count)
"""


def build(source: Path, prefix: Path, work: Path, log, python_only: bool = True, jobs: int = 0,
          install_generators: bool = True) -> tuple[str, int, float]:
    """Configure, build and install the interface package ``source`` into ``prefix`` (a venv with
    the ros-jazzy wheels; check_tools first), every tool's output to ``log``. (name, types
    checked, seconds)."""
    name = _package_name(source)
    start = time.monotonic()

    def run(step: str, command: list[str], env=None) -> None:
        print(f"$ {' '.join(command)}", file=log, flush=True)
        if subprocess.run(command, stdout=log, stderr=subprocess.STDOUT, env=env).returncode:
            raise BuildError(f"{name}: {step} failed")

    if install_generators:
        run("installing the generator wheels (pip)",
            [sys.executable, "-m", "pip", "install", "--quiet", *generators()])
    work.mkdir(parents=True, exist_ok=True)
    mend = work / "mend_wheels.cmake"
    mend.write_text(mending_cmake(python_only))
    env = dict(os.environ)
    for variable in ("AMENT_PREFIX_PATH", "CMAKE_PREFIX_PATH"):
        env[variable] = os.pathsep.join(filter(None, (str(prefix), env.get(variable))))
    env["PATH"] = os.pathsep.join((str(Path(sys.executable).parent), env.get("PATH", "")))
    # the generators run Python that loads the wheels' libraries
    env["LD_LIBRARY_PATH"] = os.pathsep.join(filter(None, (str(prefix / "lib"),
                                                           env.get("LD_LIBRARY_PATH"))))
    run("cmake configure", ["cmake", "-S", str(source), "-B", str(work),
                            "-DCMAKE_BUILD_TYPE=Release", f"-DCMAKE_INSTALL_PREFIX={prefix}",
                            f"-DPython3_EXECUTABLE={sys.executable}", "-DBUILD_TESTING=OFF",
                            f"-DCMAKE_PROJECT_INCLUDE={mend}"], env)
    run("cmake build", ["cmake", "--build", str(work), "-j", str(jobs or os.cpu_count() or 1)], env)
    run("cmake install", ["cmake", "--install", str(work)], env)
    # a fresh interpreter: every type imports and survives a serialization round trip
    smoke = subprocess.run([sys.executable, "-c", SMOKE, name], capture_output=True, text=True)
    print(smoke.stdout, smoke.stderr, file=log, flush=True)
    if smoke.returncode:
        raise BuildError(f"{name} was installed into {prefix} but does not import")
    return name, int(smoke.stdout.split()[-1]), time.monotonic() - start


def _tail(path: Path, lines: int = 25) -> str:
    return "".join(path.read_text(errors="replace").splitlines(keepends=True)[-lines:])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="robodyn-ros dev build-interfaces",
        description="Build an interface package (msg, srv, action) into this Python's prefix from "
                    "the ROS 2 Jazzy wheels on PyPI, unless a ROS install already provides it.")
    parser.add_argument("source", type=Path, help="the interface package's directory "
                        "(e.g. interfaces/control_msgs)")
    parser.add_argument("--prefix", type=Path, default=Path(sys.prefix),
                        help="where to install (default: this Python's prefix, the venv)")
    parser.add_argument("--work", type=Path, help="the build directory (default: "
                        "PREFIX/build-NAME)")
    parser.add_argument("--log", type=Path, help="the tools' output (default: PREFIX/NAME_build.log)")
    parser.add_argument("--with-cpp", action="store_true", help="generate the C++ API as well "
                        "(twice the build time; only C++ nodes need it)")
    parser.add_argument("--jobs", type=int, default=0, help="parallel compile jobs (default: "
                        "one per core)")
    args = parser.parse_args(argv)
    try:
        name = _package_name(args.source)
        prefix = args.prefix.resolve()
        elsewhere = imported_elsewhere(name, prefix)
        if elsewhere is not None:
            print(f"{name}: the one at {elsewhere} is used (a ROS install's); nothing built")
            return 0
        check_tools()
        log_path = args.log or prefix / f"{name}_build.log"
        print(f"building {name} ({args.source}) into {prefix}: a minute or two; log in {log_path}",
              flush=True)
        with open(log_path, "w") as log:
            try:
                _, count, seconds = build(args.source.resolve(), prefix,
                                          args.work or prefix / f"build-{name}", log,
                                          python_only=not args.with_cpp, jobs=args.jobs)
            except BuildError:
                log.flush()
                print(_tail(log_path), file=sys.stderr, end="")
                raise
    except BuildError as exc:
        print(f"build-interfaces: {exc}", file=sys.stderr)
        return 1
    print(f"{name}: {count} types built, installed and checked in {seconds:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
