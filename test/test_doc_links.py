"""Every relative link in the README and doc/*.md points to a file of the repository (and, with an
anchor, to a heading of that file), so does every path of the repository named in a comment of a
configuration file (config/*.yaml, the node schemas robodyn_ros/params/*.yaml), and nothing in the
repository points outside it."""
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
        problem = missing(path, anchor, root)
        if problem:
            broken.append(f"{target}: {problem}")
    return broken


def missing(path, anchor, root):
    """What is wrong with a reference to ``path`` (#``anchor``) from inside ``root``, or ''."""
    if not path.is_file() or root not in path.parents:
        return f"no file {path}"
    if anchor and path.suffix == ".md" and anchor not in anchors(path):
        return f"no heading '#{anchor}' in {path.name}"
    return ""


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


CONFIG_FILES = [*sorted((ROOT / "config").glob("*.yaml")),
                *sorted((ROOT / "robodyn_ros" / "params").glob("*.yaml"))]
COMMENT = re.compile(r"(?:^|\s)#(.*)$")
PATH = re.compile(r"(?<![\w./-])((?:[\w-]+/)+[\w-]+(?:\.[\w-]+)+)(?:#([\w-]+))?")


def comment_references(path, root=ROOT):
    """(path, anchor or '') named in the comments of ``path``: the paths whose first directory is
    one of ``root``'s own (models/DH/Puma560.py, a file of another project, is not ours)."""
    tops = {d.name for d in root.iterdir() if d.is_dir() and not d.name.startswith(".")}
    for line in path.read_text().splitlines():
        comment = COMMENT.search(line)
        if comment:
            for target, anchor in PATH.findall(comment.group(1)):
                if target.split("/")[0] in tops:
                    yield target.rstrip("."), anchor


def broken_comment_references(path, root=ROOT):
    return [f"{target}{'#' if anchor else ''}{anchor}: {problem}"
            for target, anchor in comment_references(path, root)
            if (problem := missing((root / target).resolve(), anchor, root))]


@pytest.mark.parametrize("config", CONFIG_FILES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_paths_named_in_configuration_comments_exist(config):
    assert broken_comment_references(config) == []


def test_the_comment_checker_sees_a_missing_file_and_a_wrong_anchor(tmp_path):
    (tmp_path / "doc").mkdir()
    (tmp_path / "doc" / "a.md").write_text("# Title\n")
    config = tmp_path / "c.yaml"
    config.write_text("# see doc/a.md and doc/a.md#title (not models/DH/Puma560.py)\n"
                      "key: value   # doc/nodes.md lists them; doc/a.md#nope\n"
                      "url: http://example.org/doc/x.md\n")
    assert [b.split(": ")[0] for b in broken_comment_references(config, root=tmp_path)] == [
        "doc/nodes.md", "doc/a.md#nope"]


def repository_files():
    """Every file git tracks or would add (caches and build products are ignored)."""
    listed = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"],
                            cwd=ROOT, capture_output=True, text=True, check=True).stdout
    return [ROOT / name for name in sorted(set(listed.splitlines())) if (ROOT / name).is_file()]


# The one pointer allowed out: the real robot's recording the identification test reads where the
# workspace keeps it (never copied into the repository: its licence is the data's own; the test
# skips, saying so, where it is absent). Nothing that builds or runs the package looks outside.
ALLOWED = {("test/test_identification_real_run.py", "../shared")}


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
