"""Finding the package's data files (config/, urdf/, launch/) wherever the package runs from."""
from __future__ import annotations

import sys
from pathlib import Path

PACKAGE = "robodyn_ros"


def find_share_file(relpath) -> Path:
    """Path of `relpath` (e.g. "config/stewart_dasgupta.yaml") in, by order of preference:
    (a) the source checkout next to the package (editable installs, running from the repo);
    (b) sys.prefix/share/robodyn_ros (pip install of the wheel, which installs the data_files there);
    (c) the ament index (colcon install on a ROS machine), when ament_index_python is importable.
    Raises FileNotFoundError listing the places searched."""
    relpath = Path(relpath)
    searched = []
    for share in _share_directories():
        path = share / relpath
        if path.is_file():
            return path
        searched.append(str(path))
    raise FileNotFoundError(f"{relpath} not found; looked in: " + ", ".join(searched))


def _share_directories():
    """Candidate share directories, lazily: the ament index is only asked when the others fail."""
    yield Path(__file__).resolve().parents[2]
    yield Path(sys.prefix) / "share" / PACKAGE
    try:
        from ament_index_python.packages import get_package_share_directory
    except ImportError:
        return
    try:
        yield Path(get_package_share_directory(PACKAGE))
    except (LookupError, OSError):  # not in the index, or AMENT_PREFIX_PATH unset
        return
