"""Finding the package's data files (config/, urdf/, launch/) wherever the package runs from, and
``package://PACKAGE/PATH`` URIs, as ROS names a package's files."""
from __future__ import annotations

import sys
from pathlib import Path

PACKAGE = "robodyn_ros"
PACKAGE_URI = "package://"


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


def shipped(name: str) -> Path:
    """The path of a robot description shipped with the package: ``shipped("puma560")`` is
    urdf/puma560.urdf wherever the package is installed; a name with a suffix is a file of urdf/
    or config/ (``shipped("puma560_dh.yaml")``, ``shipped("panda.srdf")``). FileNotFoundError
    naming the shipped descriptions when there is no such one."""
    relpaths = [f"urdf/{name}", f"config/{name}"] if Path(name).suffix else [f"urdf/{name}.urdf"]
    for relpath in relpaths:
        try:
            return find_share_file(relpath)
        except FileNotFoundError:
            pass
    names = sorted(p.stem for share in _share_directories() for p in (share / "urdf").glob("*.urdf"))
    raise FileNotFoundError(f"no shipped description {name!r}; the package ships "
                            f"{', '.join(dict.fromkeys(names)) or 'none here'} (urdf/), and "
                            "DH tables in config/ (e.g. puma560_dh.yaml)")


def resolve_uri(uri: str) -> Path:
    """The file a ``package://PACKAGE/PATH`` URI names: for this package wherever it runs from
    (``find_share_file``), for another the share directory the ament index gives it.
    FileNotFoundError saying why not."""
    package, _, relpath = uri[len(PACKAGE_URI):].partition("/")
    if package == PACKAGE:
        return find_share_file(relpath)
    try:
        from ament_index_python.packages import get_package_share_directory
        share = Path(get_package_share_directory(package))
    except ImportError:
        raise FileNotFoundError(f"{uri}: package {package} is found through the ament index, which "
                                "is not installed here (source a ROS workspace)") from None
    except (LookupError, OSError):
        raise FileNotFoundError(f"{uri}: package {package} is not in the ament index "
                                "(AMENT_PREFIX_PATH): source its workspace") from None
    if not (share / relpath).is_file():
        raise FileNotFoundError(f"{uri}: no file {relpath} in {share}")
    return share / relpath
