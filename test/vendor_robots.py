"""Where example-robot-data's robot descriptions are (vendor URDFs and xacro files for the tests)."""
import importlib.metadata
from pathlib import Path

import pytest


def robots_directory() -> Path:
    """example-robot-data's robots/: in the pip wheel (cmeel prefix), else in a ROS install; the
    calling test module is skipped, saying why, when neither has it."""
    try:
        wheel = importlib.metadata.distribution("example-robot-data")
        return Path(wheel.locate_file("cmeel.prefix/share/example-robot-data/robots"))
    except importlib.metadata.PackageNotFoundError:
        pass
    try:
        from ament_index_python.packages import get_package_share_directory
        return Path(get_package_share_directory("example-robot-data")) / "robots"
    except Exception:   # no ament index, or the package is not in it
        pytest.skip("example-robot-data is not installed (pip install -e .[test], or "
                    "rosdep install for the ROS route)", allow_module_level=True)
