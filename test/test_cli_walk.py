"""Every command of ``robodyn-ros`` (found from the dispatch tables, through ``demo`` and ``dev``,
and from each parser's sub-commands), run as a user runs it, in a process of its own: with ``-h``,
with no arguments and with an argument it does not know. None ends in a traceback; ``-h`` prints
the command's usage and nothing on stderr; a refusal exits non-zero and ends with one line that
says what is wrong. None starts its work: an unknown argument is refused before any, and a command
that, given no arguments, would start it (a demo with its defaults) is stopped once it has parsed
them (``cli_parsers``), which is all the walk asks of it."""
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from cli_parsers import PROG, Parsed, every_command, reach

HERE = Path(__file__).resolve().parent
COMMANDS = [((), None), *every_command()]   # () : robodyn-ros itself
WRONG = "--no-such-option"
TIMEOUT = 300   # s: importing a demo's modules took 8 s on the loaded 2-core machine


def run(argv, stop_after_parsing=False):
    """(exit status, stdout, stderr) of ``robodyn-ros ARGV`` in a fresh interpreter."""
    entry = [str(HERE / "cli_parsers.py")] if stop_after_parsing else ["-m", "robodyn_ros.apps.cli"]
    done = subprocess.run([sys.executable, *entry, *argv], capture_output=True, text=True,
                          timeout=TIMEOUT, cwd=HERE.parent)
    return done.returncode, done.stdout, done.stderr


def refusal(line):
    """Whether ``line`` is a one-line refusal naming the command: argparse's 'PROG: error: ...',
    or a command's own 'robodyn-ros ...: reason'."""
    return line.startswith(PROG) and ": " in line


def no_arguments(words):
    """How ``robodyn-ros WORDS`` with no arguments is run: as is where it refuses them or answers
    with its help; stopped after parsing where it would start its work."""
    reached = reach(words)   # in this process, parse only
    return isinstance(reached, Parsed)


@pytest.mark.parametrize("words", [words for words, _ in COMMANDS],
                         ids=lambda words: " ".join(words) or "robodyn-ros")
def test_help_no_arguments_and_a_wrong_one_end_without_a_traceback(words, capsys):
    try:
        starts_work = no_arguments(list(words))
    except SystemExit:
        starts_work = False
    capsys.readouterr()
    with ThreadPoolExecutor(3) as pool:
        helped, bare, wrong = pool.map(lambda case: run(*case), [
            ([*words, "-h"],), (list(words), starts_work), ([*words, WRONG],)])
    for case, (status, out, err) in (("-h", helped), ("no arguments", bare), (WRONG, wrong)):
        assert "Traceback" not in out + err, f"{PROG} {' '.join(words)} {case}:\n{err}"
    status, out, err = helped
    assert status == 0 and f"usage: {PROG} {' '.join(words)}" in out and err == "", err
    status, out, err = bare
    if starts_work:
        assert status == 0 and out.startswith("parsed: "), err
    else:
        assert status != 0, out
        assert refusal(err.strip().splitlines()[-1]) if err.strip() else "usage:" in out, err
    status, out, err = wrong
    assert status == 2 and refusal(err.strip().splitlines()[-1]), (out, err)
    assert WRONG in err or "required" in err or "invalid choice" in err, err
