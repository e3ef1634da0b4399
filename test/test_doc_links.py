"""Every relative link in the README and doc/*.md points to a file of the repository (and, with an
anchor, to a heading of that file), and nothing in the repository points outside it."""
import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "doc").glob("*.md"))]
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")


def slug(heading):
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(path):
    text = re.sub(r"```.*?```", "", path.read_text(), flags=re.S)   # no headings in code
    return {slug(m.group(1)) for m in re.finditer(r"^#{1,6} +(.*?) *#*$", text, re.M)}


def links(path):
    text = re.sub(r"```.*?```", "", path.read_text(), flags=re.S)   # no links in code
    text = re.sub(r"`[^`\n]*`", "", text)
    return [m.group(1) for m in LINK.finditer(text)]


def broken_links(page, root=ROOT):
    """The relative links of ``page`` that name no file of ``root``, or no heading of it."""
    broken = []
    for target in links(page):
        if re.match(r"[a-z][a-z0-9+.-]*:", target):   # http:, https:, mailto:
            continue
        file, _, anchor = target.partition("#")
        path = (page.parent / file).resolve() if file else page
        if not path.is_file() or root not in path.parents:
            broken.append(f"{target}: no file {path}")
        elif anchor and path.suffix == ".md" and anchor not in anchors(path):
            broken.append(f"{target}: no heading '#{anchor}' in {path.name}")
    return broken


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_relative_links_resolve(page):
    assert broken_links(page) == []


def test_the_link_checker_sees_a_missing_file_and_a_wrong_anchor(tmp_path):
    (tmp_path / "a.md").write_text("# Title `x`\n\n## Why numba?\n\n```\n# not a heading\n```\n")
    page = tmp_path / "b.md"
    page.write_text("[ok](a.md#title-x) [ok](a.md#why-numba) [bad](a.md#nope) [gone](c.md) "
                    "`[not a link](d.md)` [web](https://example.org) ![up](../outside.md)\n")
    (tmp_path.parent / "outside.md").write_text("")
    assert anchors(tmp_path / "a.md") == {"title-x", "why-numba"}
    broken = broken_links(page, root=tmp_path)
    assert [b.split(":")[0] for b in broken] == ["a.md#nope", "c.md", "../outside.md"]


def repository_files():
    """Every file git tracks or would add (caches and build products are ignored)."""
    listed = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"],
                            cwd=ROOT, capture_output=True, text=True, check=True).stdout
    return [ROOT / name for name in sorted(set(listed.splitlines())) if (ROOT / name).is_file()]


# The one pointer allowed out: where `make` finds control_msgs' source to build it into the venv
# when it is missing (an optional build input, overridable with make CONTROL_MSGS=DIR).
ALLOWED = {("Makefile", "../shared")}


def test_nothing_in_the_repository_points_outside_it():
    this = Path(__file__).resolve()
    offending = []
    for path in repository_files():
        if path == this or path.suffix in (".png", ".json", ".pyc", ".nbi", ".nbc"):
            continue
        text = path.read_text(errors="replace")
        # the first map, a file of the workspace and not of this package, and that workspace's paths
        for needle in ("DESIGN" + ".md", "../shared", "/work/"):
            if needle in text and (str(path.relative_to(ROOT)), needle) not in ALLOWED:
                offending.append(f"{path.relative_to(ROOT)}: {needle}")
    assert offending == []
