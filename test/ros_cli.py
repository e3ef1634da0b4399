"""The real ``ros2`` command line and ``ros2 launch``, run by the tests as a user runs them.

- :func:`require_tools`: skips the calling test module, saying why, where the ros2 CLI, launch or
  this package's ament index entry cannot be had (``make venv`` installs and writes them).
- :func:`environment`, :class:`Launch`, :class:`Probe`: robodyn_ros/apps/dev/ros2_cli.py (the
  launch tool of ``robodyn-ros dev`` uses them too).
- :func:`doc_commands`: the commands a doc page gives, each in a fenced block after a
  ``<!-- command: NAME -->`` marker, run as written (``bash -c``).
"""
from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

from robodyn_ros.apps.dev.ros2_cli import (LAUNCH_ITSELF, MARKER, NON_GAZEBO_PART, PACKAGE,  # noqa: F401
                                           WAIT, Launch, Probe, _prefixes, environment,
                                           ros2_executable)

ROOT = Path(__file__).resolve().parents[1]
_MODULES = ("ros2cli", "ros2launch", "launch_ros", "launch_testing", "ros2lifecycle", "ros2param",
            "ros2action", "ros2service", "ros2topic")


def missing_tools() -> str:
    """Why the ros2 CLI and ros2 launch cannot run this package here; '' when they can."""
    how = ("they come with a ROS 2 install (on no package registry): source "
           "/opt/ros/jazzy/setup.bash, then `make venv` makes .venv an ament prefix of this checkout")
    if ros2_executable() is None:
        return f"the ros2 command line is not installed: {how}"
    absent = [m for m in _MODULES if importlib.util.find_spec(m) is None]
    if absent:
        return f"{', '.join(absent)} not importable: {how}"
    for prefix in _prefixes(environment()):
        if (Path(prefix) / MARKER).is_file() and (Path(prefix) / "lib" / PACKAGE).is_dir():
            return ""
    return (f"{PACKAGE} is in no ament prefix of AMENT_PREFIX_PATH (no {MARKER} with lib/{PACKAGE}/): "
            "`make venv` writes it into .venv (python -m robodyn_ros.apps.dev.ament_prefix .venv), colcon "
            "build into its install space")


def require_tools() -> None:
    reason = missing_tools()
    if reason:
        pytest.skip(reason, allow_module_level=True)


# ---------------------------------------------------------------------------------- doc commands
_COMMAND = re.compile(r"<!-- command: *([\w-]+) *-->\s*\n```(?:bash|console|sh)?\n(.*?)```", re.S)


def doc_commands(page: Path) -> dict[str, str]:
    """name -> the command of the fenced block after ``<!-- command: name -->`` in ``page``, as
    it stands (what a user pastes into a shell; :func:`shell` runs it so)."""
    found = {}
    for name, block in _COMMAND.findall(page.read_text()):
        assert name not in found, f"{page.name}: two commands named {name}"
        found[name] = block.strip()
    return found


def shell(command: str) -> list[str]:
    """argv running ``command`` as a shell runs what a user types (redirections, quotes, #)."""
    return ["bash", "-c", command]


