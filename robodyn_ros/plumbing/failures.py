"""The reason, in one line, of an exception nobody expected (a node's configure that failed with
something other than a refusal of its parameters), and where it comes from when a module could not
be loaded: the module missing from this installation, or another environment's ROS libraries found
first on ``LD_LIBRARY_PATH`` (a second venv's, a sourced workspace of another build, a process of
another environment that started this one and passed its library path on)."""
from __future__ import annotations

import os
import sys
from pathlib import Path

#: file names that mark a folder of ROS libraries (rcl, the message packages' type supports)
ROS_LIBRARIES = ("librcl*.so*", "lib*__rosidl_*.so*")


def reason(exc: BaseException) -> str:
    """``Type: message`` of ``exc`` and of what it was raised from or while handling (rclpy's
    UnsupportedTypeSupport hides the ImportError that names the library), on one line; for a
    failed import, where the libraries came from."""
    chain, seen = [], exc
    while seen is not None and seen not in chain:
        chain.append(seen)
        seen = seen.__cause__ or seen.__context__
    text = " <- ".join(f"{type(e).__name__}: {e}" for e in chain)
    if any(isinstance(e, ImportError) for e in chain):
        text += "; " + libraries_said()
    return " ".join(text.split())


def own_library_folders() -> set[Path]:
    """The folders this Python environment's ROS libraries are in: the venv's lib and the ROS
    wheels' ros_*.libs, and each ament prefix's lib (a ROS install, a sourced workspace)."""
    site = Path(sys.prefix) / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}" / \
        "site-packages"
    folders = {Path(sys.prefix) / "lib", *site.glob("ros_*.libs")}
    folders |= {Path(p) / "lib" for p in os.environ.get("AMENT_PREFIX_PATH", "").split(os.pathsep)
                if p}
    return {folder.resolve() for folder in folders}


def foreign_library_folders() -> list[str]:
    """The folders on LD_LIBRARY_PATH, in its order, that hold ROS libraries and are not this
    environment's."""
    own = own_library_folders()
    found = []
    for entry in os.environ.get("LD_LIBRARY_PATH", "").split(os.pathsep):
        folder = Path(entry)
        if entry and folder.is_dir() and folder.resolve() not in own and any(
                next(folder.glob(pattern), None) for pattern in ROS_LIBRARIES):
            found.append(entry)
    return found


def libraries_said() -> str:
    """What LD_LIBRARY_PATH has to do with a module that did not load."""
    foreign = foreign_library_folders()
    if not foreign:
        return (f"this installation ({sys.prefix}) lacks a module or library it needs: "
                "install it (doc/install.md)")
    return (f"LD_LIBRARY_PATH holds ROS libraries of another environment ({', '.join(foreign)}), "
            f"not this Python's ({sys.prefix}): start the node from one environment (unset "
            "LD_LIBRARY_PATH and _ROS_WHEELS_BOOTSTRAP_COMPLETE, or source one ROS setup only)")
