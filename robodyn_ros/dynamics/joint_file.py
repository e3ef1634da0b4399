"""The YAML files that carry something per joint beside a URDF (friction, drives): one reader."""
from __future__ import annotations

from pathlib import Path

from .link import ModelError


def joint_entries(path, file_format, what, joints=None):
    """(data, [(joint, its entry dict)]) of the file at ``path`` whose ``format`` is ``file_format``
    and whose ``joints`` maps a name to an entry; ``joints``: the names wanted, in that order, each
    required (default: the file's). ModelError naming the file (a ``what`` file) and the joint."""
    import yaml

    try:
        data = yaml.safe_load(Path(path).read_text())
    except (OSError, yaml.YAMLError) as exc:
        raise ModelError(f"{path}: unreadable {what} file: {exc}") from None
    if not isinstance(data, dict) or data.get("format") != file_format or not isinstance(data.get("joints"), dict):
        raise ModelError(f"{path}: not a {what} file (format: {file_format}, joints: {{name: ...}})")
    entries = data["joints"]
    out = []
    for name in list(entries) if joints is None else list(joints):
        entry = entries.get(name)
        if not isinstance(entry, dict):
            raise ModelError(f"{path}: no {what} for joint {name!r} (the file has {list(entries)})")
        out.append((name, entry))
    return data, out
