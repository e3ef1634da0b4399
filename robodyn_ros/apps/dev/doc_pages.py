"""Generated sections of the doc/ pages: the text between two HTML-comment markers is written by a
tool (``robodyn-ros dev perf-page``, ``robodyn-ros dev param-tables``) and the prose around it is the
page's own, so that no figure or table is copied by hand."""
from __future__ import annotations

import sys
from pathlib import Path


def splice(page: str, begin: str, end: str, section: str) -> str:
    """``page`` with the text from ``begin`` to ``end`` (markers included) replaced by
    ``section``, which carries the markers itself."""
    start, stop = page.find(begin), page.find(end)
    if start < 0 or stop < start:
        raise ValueError(f"the page has no '{begin}' ... '{end}' section")
    return page[:start] + section + page[stop + len(end):]


def update(path: str | Path, begin: str, end: str, section: str, check: bool) -> bool:
    """Write ``section`` into the page at ``path``; with ``check``, write nothing and say whether
    the page is stale. Returns True when the page is (or now is) up to date; a page that cannot
    be read, or has no such section, is a ValueError naming it."""
    path = Path(path)
    try:
        text = path.read_text()
    except OSError as exc:
        raise ValueError(f"{path}: {exc.strerror} (run it from the repository's top directory, "
                         "or name the page)") from None
    try:
        updated = splice(text, begin, end, section)
    except ValueError as exc:
        raise ValueError(f"{path}: {exc}") from None
    if updated == text:
        return True
    if check:
        print(f"{path} is stale: run the tool that generates it", file=sys.stderr)
        return False
    path.write_text(updated)
    print(f"{path}: updated")
    return True
