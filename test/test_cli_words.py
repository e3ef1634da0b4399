"""Every ``-h`` of ``robodyn-ros`` speaks to a user: every option has its help, and no help says
what only the code's readers know — a constant's name, a module's path, reStructuredText backticks,
an issue number, a paper by its number in doc/references.md instead of its authors and year, our
own machine. The README neither (paper codes, issue numbers, dated timings of our machines)."""
import pkgutil
import re
from pathlib import Path

import pytest

import robodyn_ros
from cli_parsers import every_command

ROOT = Path(__file__).resolve().parents[1]
COMMANDS = [(words, parser) for words, parser in every_command() if parser is not None]

#: upper-case words a user reads in the help: acronyms of the field, signals, ROS names
ACRONYMS = {
    "API", "BLAS", "CMAKE", "CPU", "CSV", "DDS", "GOAL", "HTML", "IEEE", "JSON", "MCAP", "MDH",
    "MUJOCO", "NONE", "PDF", "PNG", "PUMA", "ROS", "RSS", "RTDE", "SIGINT", "SIGTERM", "SRDF",
    "SROS2", "URDF", "XACRO", "XML", "YAML", "ABORTED", "CANCELED", "SUCCEEDED", "REJECTED",
}
#: placeholders of a command line's synopsis, in any help
PLACEHOLDERS = {"FILE", "DIR", "NAME", "COMMAND"}
#: environment variables a user sets
VARIABLES = {"ROS_DOMAIN_ID", "ROS_AUTOMATIC_DISCOVERY_RANGE", "NUMBA_CACHE_DIR",
             "LD_LIBRARY_PATH", "ROS_SECURITY_KEYSTORE", "ROS_SECURITY_ENABLE",
             "ROS_SECURITY_STRATEGY", "LOCALHOST"}
MODULES = {name.rpartition(".")[2] for _, name, _ in
           pkgutil.walk_packages(robodyn_ros.__path__, "robodyn_ros.")} | {"robodyn_ros"}
FILE_SUFFIXES = {"md", "yaml", "urdf", "srdf", "xacro", "png", "json", "csv", "xml", "launch",
                 "policy", "friction", "mcap", "db3", "npz"}
PAPER_CODE = re.compile(r"(?<![\w.])00[0-4](?![\w.])|§")
ISSUE = re.compile(r"\bissues?\s+#?\d+|#\d+\b", re.I)
MACHINE = re.compile(r"\b\d+-core\b|\bthis (?:project's )?machine\b|\b20\d\d-\d\d-\d\d\b")


def metavars(parser):
    """The placeholders the parser's own usage shows (FILE, BAG, ...), each word of them."""
    found = set()
    for action in parser._actions:
        names = action.metavar if isinstance(action.metavar, tuple) else (action.metavar,)
        for name in (*names, action.dest.upper()):
            if isinstance(name, str):
                found.update(re.findall(r"[A-Z][A-Z0-9_]*", name))
    return found


def jargon(text, placeholders=frozenset()):
    """What in ``text`` a user cannot read: one line per finding."""
    found = []
    if "`" in text:
        found.append("reStructuredText backticks: " + re.search(r"`[^`]*`?", text).group())
    found += [f"paper by number: ...{text[max(0, m.start() - 20):m.end() + 5]}..."
              for m in PAPER_CODE.finditer(text)]
    found += [f"issue number: {m.group()}" for m in ISSUE.finditer(text)]
    found += [f"our machine: {m.group()}" for m in MACHINE.finditer(text)]
    for m in re.finditer(r"\b([a-z_][a-z0-9_]*)\.([a-z_][a-z0-9_]*)\b", text):
        if m.group(1) in MODULES and m.group(2) not in FILE_SUFFIXES:
            found.append(f"module path: {m.group()}")
    found += [f"source file: {m.group()}" for m in re.finditer(r"(?<![\w.])[\w.]+\.py\b", text)
              if not m.group().endswith(".launch.py")]
    for m in re.finditer(r"\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*\b", text):
        word = m.group()
        if (("_" in word or len(word) >= 4 and not word[-1].isdigit())
                and word not in ACRONYMS | PLACEHOLDERS | VARIABLES | placeholders):
            found.append(f"constant: {word}")
    return found


@pytest.mark.parametrize("words, parser", COMMANDS, ids=[" ".join(w) for w, _ in COMMANDS])
def test_the_help_speaks_to_a_user(words, parser):
    assert jargon(parser.format_help(), metavars(parser)) == []


@pytest.mark.parametrize("words, parser", COMMANDS, ids=[" ".join(w) for w, _ in COMMANDS])
def test_every_option_has_help(words, parser):
    silent = [action.option_strings[0] if action.option_strings else action.dest
              for action in parser._actions if not action.help]
    silent += [choice.dest for action in parser._actions
               for choice in getattr(action, "_choices_actions", ()) if not choice.help]
    assert silent == [], f"robodyn-ros {' '.join(words)}: options without help"


def test_the_top_level_help_speaks_to_a_user(capsys):
    from robodyn_ros.apps.cli import main
    assert main(["-h"]) == 0
    assert jargon(capsys.readouterr().out) == []


def test_the_readme_cites_papers_by_authors_and_has_no_dated_timings():
    text = (ROOT / "README.md").read_text()
    found = [f"paper by number: {m.group()}" for m in PAPER_CODE.finditer(text)]
    found += [f"issue number: {m.group()}" for m in ISSUE.finditer(text)]
    found += [f"dated: {m.group()}" for m in re.finditer(r"\b20\d\d-\d\d-\d\d\b", text)]
    assert found == []


@pytest.mark.parametrize("text, finding", [
    ("inside RECOVERY s", "constant: RECOVERY"),
    ("less than SETTLE_TOLERANCE of", "constant: SETTLE_TOLERANCE"),
    ("(``control.collision.fit_thresholds``)", "reStructuredText backticks"),
    ("the goal (issue 20)", "issue number"),
    ("the experiment of 004 §5", "paper by number"),
    ("this is a 2-core machine", "our machine"),
    ("as arm_loop.py does", "source file"),
    ("see control.collision for it", "module path"),
])
def test_the_checker_finds_each_kind(text, finding):
    assert any(f.startswith(finding) for f in jargon(text)), jargon(text)
    assert jargon("a URDF file, doc/demo.md, puma560_sim.launch.py, NAME.friction.yaml, "
                  "the PUMA 560 at 1 kHz (Lee, Chung, Mudge & Turney 1982)") == []
