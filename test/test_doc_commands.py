"""Every ``robodyn-ros`` command the README and doc/*.md quote — the lines of their code blocks and
the inline code of their prose and tables — is a command the command line takes: parsed by the
command's own parser (through the dispatch tables, as a user's command line goes, stopped before
any work: cli_parsers), and run where that is cheap. A synopsis (``[--payload KG]``,
``--path circle|square``, ``--law NAME ...``) is read as one command with every option it shows,
the first of each choice and a value of the right type for each placeholder."""
import contextlib
import io
import os
import re
import shlex
from pathlib import Path

import pytest

from cli_parsers import PROG, Parsed, every_command, reach

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "doc").glob("*.md"))]
#: commands cheap enough to run here, in the repository, writing nothing: (words, required option)
CHEAP = [(("complexity",), None), (("check-urdf",), None), (("dev", "param-tables"), "--check"),
         (("dev", "perf-page"), "--check")]
#: every command's words -> its parser (None: a group)
PARSERS = dict(every_command())
PLACEHOLDER = re.compile(r"^(?:<[^>]+>|[A-Z][A-Z0-9_]*(?:\.[a-z0-9.]+)?)$")
FENCE = re.compile(r"^```[^\n]*\n(.*?)^```", re.S | re.M)
SPAN = re.compile(r"`(robodyn-ros(?:[^`\\]|\\.)*)`")


def code_lines(text):
    """The ``robodyn-ros`` lines of the code blocks, continuations joined, comments dropped."""
    found = []
    for block in FENCE.findall(text):
        block = re.sub(r"\s*\\\n\s*", " ", block)
        for line in block.splitlines():
            line = re.sub(r"^\s*(?:\$ )?(?:[A-Z_]+=\S+ )*(?:\.venv/bin/)?", "", line)
            if line.startswith(PROG + " ") or line == PROG:
                found.append(re.split(r"\s+#|\s*(?:&&|\||;|>|&$)", line)[0].strip())
    return found


def inline_commands(text):
    """The inline code spans of the prose and tables that start with ``robodyn-ros``."""
    text = FENCE.sub("", text)
    return [span.replace("\\|", "|").strip() for span in SPAN.findall(text)]


def quoted():
    """(page, command) for every quoted command, each page's once."""
    found = {}
    for page in PAGES:
        text = page.read_text()
        for command in code_lines(text) + inline_commands(text):
            found.setdefault((page.name, command), None)
    return list(found)


def action_of(parser, option):
    return next((a for a in parser._actions if option in a.option_strings), None)


def sample(action, token):
    """A value of ``action``'s kind for the placeholder ``token``."""
    if action is None:
        return token
    if action.choices:
        return token if token in action.choices else next(iter(action.choices))
    with contextlib.suppress(Exception):
        if action.type not in (None, str) and action.type("1") is not None:
            return "1"
    return token


def words_of(command):
    """A quoted command's words after robodyn-ros, a synopsis read as one command: brackets
    dropped (their options taken), the first of each choice, no ellipsis; a placeholder where a
    group's command goes (demo <name>) stands for its first command."""
    words = shlex.split(command)[1:]
    words = [w for word in words for w in re.split(r"(?<=\])|(?=\[)", word) if w]
    words = [w.strip("[]") for w in words if w.strip("[]") not in ("", "...", "…")]
    words = [w.split("|")[0] if "|" in w and not w.startswith("|") else w for w in words]
    for i, word in enumerate(words):
        group = tuple(words[:i])
        if PLACEHOLDER.match(word) and (group == () or PARSERS.get(group, 0) is None):
            words[i] = next(w[i] for w in PARSERS if len(w) > i and w[:i] == group)
    return words


def command_path(words):
    """The longest start of ``words`` that names a command."""
    return max((w for w in [(), *PARSERS] if tuple(words[:len(w)]) == w), key=len)


def as_argv(command):
    """The argv a quoted command (or synopsis) stands for: each placeholder a value of its
    option's kind."""
    words = words_of(command)
    parser = PARSERS.get(command_path(words))
    argv, option = [], None
    for word in words:
        if word.startswith("-"):
            option = word
            argv.append(word)
        elif PLACEHOLDER.match(word) and parser is not None:
            argv.append(sample(action_of(parser, option) if option else None, word))
        else:
            argv.append(word)
    return argv


def parses(argv):
    """None when ``robodyn-ros ARGV`` parses (or answers with its help) in its current spelling,
    else what it said."""
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            reached = reach(argv)
        except SystemExit as exc:
            reached = exc.code
    said = err.getvalue().strip().splitlines()
    if isinstance(reached, Parsed) or reached == 0:
        return next((line for line in said if "the old spelling goes" in line), None)
    return said[-1] if said else f"exit {reached}"


@pytest.mark.parametrize("page, command", quoted(), ids=lambda x: x if isinstance(x, str) else "")
def test_a_quoted_command_parses(page, command):
    words = words_of(command)
    if tuple(words) == command_path(words):
        return   # the command's name alone (`robodyn-ros identify` in prose): it exists
    argv = as_argv(command)
    assert parses(argv) is None, f"{page}: `{command}` (as {argv}): {parses(argv)}"


def cheap(command):
    """Whether a quoted command is concrete (no synopsis, no placeholder) and cheap to run."""
    words = tuple(shlex.split(command)[1:])
    concrete = not re.search(r"[\[\]|<>…]|\.\.\.", command) and not any(
        PLACEHOLDER.match(w) for w in words)
    return concrete and ("-h" in words or any(words[:len(w)] == w and (flag is None or flag in words)
                                              for w, flag in CHEAP))


@pytest.mark.parametrize("page, command", [(p, c) for p, c in quoted() if cheap(c)
                                           and len(words_of(c)) > len(command_path(words_of(c)))])
def test_a_cheap_quoted_command_runs(page, command, capsys):
    from robodyn_ros.apps.cli import main
    cwd = os.getcwd()
    os.chdir(ROOT)   # the docs name files relative to the repository
    try:
        status = main(shlex.split(command)[1:])
    except SystemExit as exc:
        status = exc.code
    finally:
        os.chdir(cwd)
    assert status in (0, 1), f"{page}: `{command}`: exit {status}\n{capsys.readouterr().err}"


def test_the_extraction_sees_blocks_spans_and_synopses():
    text = ("```bash\nROS_DOMAIN_ID=7 robodyn-ros demo puma --rates 100 \\\n  --duration 2  # a\n"
            "robodyn-ros identify run --urdf r.urdf -o i.urdf | tee log\n```\n"
            "run `robodyn-ros demo cartesian [--path circle\\|square]` or `ros2 run x`\n")
    assert code_lines(text) == ["robodyn-ros demo puma --rates 100 --duration 2",
                                "robodyn-ros identify run --urdf r.urdf -o i.urdf"]
    assert inline_commands(text) == ["robodyn-ros demo cartesian [--path circle|square]"]
    assert as_argv("robodyn-ros demo cartesian [--path circle|square] [--arm NAME ...]") == \
        ["demo", "cartesian", "--path", "circle", "--arm", "panda"]
    assert parses(["demo", "cartesian", "circle"]) is not None      # refused, as a user sees it
    assert parses(["demo", "puma", "--duration", "S"]) is not None
