"""A Python prefix (a venv) made an ament prefix that holds this checkout, as colcon's install space
holds a package, so that ``ros2 launch robodyn_ros ...``, ``ros2 run robodyn_ros ...`` and launch_ros's
``Node(package="robodyn_ros", ...)`` find it. Everything links back to the checkout and to the
console scripts pip installed with ``-e``: the checkout is what runs, as with
``colcon build --symlink-install``. ``make venv`` runs it:

    python -m robodyn_ros.apps.dev.ament_prefix VENV

It writes, in VENV:

* ``share/ament_index/resource_index/packages/robodyn_ros``: the marker the ament index looks for;
* ``share/robodyn_ros/{package.xml,launch,config,urdf}/...``: a link to each of the checkout's
  files (``make`` runs this again when one is added);
* ``lib/robodyn_ros/<executable>``: a link to ``bin/<executable>`` for each console script;
* ``<site-packages>/robodyn_ros_ament_prefix.pth``: every Python started from VENV (``ros2``,
  ``ros2 launch`` and the nodes it starts) has VENV first on ``AMENT_PREFIX_PATH``, as
  ``source install/setup.bash`` gives a colcon workspace.

Idempotent; a link that already points elsewhere is replaced. Imports nothing of ROS.
"""
from __future__ import annotations

import argparse
import importlib.metadata
import os
import sys
import sysconfig
from pathlib import Path

PACKAGE = "robodyn_ros"
CHECKOUT = Path(__file__).resolve().parents[3]
SHARED = ("package.xml", "launch", "config", "urdf")
PTH = f"{PACKAGE}_ament_prefix.pth"
# one line, run by site.py at every start of an interpreter of the prefix
PTH_LINE = ("import os, sys; p = [d for d in os.environ.get('AMENT_PREFIX_PATH', '').split(os.pathsep) if d]; "
            "sys.prefix in p or os.environ.__setitem__('AMENT_PREFIX_PATH', "
            "os.pathsep.join([sys.prefix, *p]))\n")


def console_scripts() -> list[str]:
    """The executables this package installs (setup.py's console_scripts)."""
    return sorted(e.name for e in importlib.metadata.distribution(PACKAGE).entry_points
                  if e.group == "console_scripts")


def _link(target: Path, link: Path) -> None:
    if link.is_symlink() or link.is_file():
        if link.is_symlink() and Path(os.readlink(link)) == target:
            return
        link.unlink()
    elif link.is_dir():  # an earlier layout linked whole directories
        raise FileExistsError(f"{link} is a directory: remove it first")
    link.symlink_to(target)


def _files(directory: Path) -> list[Path]:
    return sorted(f for f in directory.rglob("*") if f.is_file() and "__pycache__" not in f.parts)


def site_packages(prefix: Path) -> Path:
    """The prefix's purelib directory (lib/pythonX.Y/site-packages in a venv)."""
    return Path(sysconfig.get_path("purelib", vars={"base": str(prefix), "platbase": str(prefix)}))


def install(prefix: Path) -> list[Path]:
    """Make ``prefix`` an ament prefix holding this checkout; the paths written."""
    prefix = prefix.resolve()
    if not (CHECKOUT / "package.xml").is_file():
        raise FileNotFoundError(f"{CHECKOUT} is no robodyn_ros checkout (no package.xml): install "
                                "with pip install -e from the source tree")
    written = []
    marker = prefix / "share" / "ament_index" / "resource_index" / "packages" / PACKAGE
    marker.parent.mkdir(parents=True, exist_ok=True)
    marker.touch()
    written.append(marker)
    share = prefix / "share" / PACKAGE
    share.mkdir(parents=True, exist_ok=True)
    for name in SHARED:  # file by file: ros2 launch looks for launch files with os.walk,
        source = CHECKOUT / name  # which does not enter a linked directory
        files = _files(source) if source.is_dir() else [source]
        for f in files:
            link = share / f.relative_to(CHECKOUT)
            link.parent.mkdir(parents=True, exist_ok=True)
            _link(f, link)
            written.append(link)
        for link in (share / name).rglob("*") if source.is_dir() else ():
            if link.is_symlink() and not link.exists():  # a file since removed from the checkout
                link.unlink()
    lib = prefix / "lib" / PACKAGE
    lib.mkdir(parents=True, exist_ok=True)
    for name in console_scripts():
        script = prefix / "bin" / name
        if not script.is_file():
            raise FileNotFoundError(f"console script {script} is missing: pip install -e . into "
                                    f"{prefix} first")
        _link(script, lib / name)
        written.append(lib / name)
    pth = site_packages(prefix) / PTH
    pth.parent.mkdir(parents=True, exist_ok=True)
    pth.write_text(PTH_LINE)
    written.append(pth)
    return written


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m robodyn_ros.apps.dev.ament_prefix",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("prefix", nargs="?", default=sys.prefix,
                        help="the venv (default: this interpreter's prefix)")
    args = parser.parse_args(argv)
    written = install(Path(args.prefix))
    print(f"{PACKAGE} is in the ament index of {Path(args.prefix).resolve()} "
          f"({len(written)} entries, linked to {CHECKOUT})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
