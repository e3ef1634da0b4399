"""Command groups of ``robodyn-ros``: a noun picks a module with ``main(argv)``, imported only when
asked for (so that ``robodyn-ros complexity`` never loads rclpy), and old spellings keep working for
one release with a one-line notice on stderr.

A group (``demo``, ``dev``) is a module with a ``COMMANDS`` table of its own, a ``SUMMARY`` and a
``main`` that dispatches over the table; its line in the help above it is generated from them."""
from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path


class RunFailed(RuntimeError):
    """A command's run ended without its result for a reason it states (a node that died, a
    start that did not come, a node that refused a request): ``robodyn-ros`` prints the reason in
    one line, after whatever the command printed of it (the nodes' logs), and exits 1."""


def refuse(prog: str, reason) -> int:
    """A command's refusal, ``PROG: REASON`` on one line of stderr (a reason over several lines,
    a YAML parser's, joined); the exit status to return, 2."""
    print(f"{prog}: {' '.join(str(reason).split())}", file=sys.stderr)
    return 2


def check_outputs(parser: argparse.ArgumentParser, outputs: Mapping[str, object]) -> None:
    """Refuse, before any work, an output file (option -> path; None: not asked for, '-': stdout)
    whose directory does not exist: found after the work, it would lose the work."""
    for option, path in outputs.items():
        if path not in (None, "", "-") and not Path(path).resolve().parent.is_dir():
            parser.error(f"{option} {path}: the directory {Path(path).resolve().parent} does not "
                         "exist")


def renamed(old: str, new: str) -> None:
    """The one-line notice an old spelling prints before it runs as the new one."""
    print(f"robodyn-ros: '{old}' is now '{new}'; the old spelling goes in the next release",
          file=sys.stderr)


def summary(module: str, text: str | None) -> str:
    """A command's line in its group's help: ``text``, or for a group (``text`` None) its summary
    and the names of its commands, read from its table, so that the line cannot drift from it."""
    if text is not None:
        return text
    group = importlib.import_module(module)
    return f"{group.SUMMARY}: {', '.join(group.COMMANDS)}"


def walk(commands: Mapping[str, tuple[str, str | None]], prefix=()) -> Iterator[tuple[str, ...]]:
    """Every command of ``commands`` as the words that name it, a group's commands after it."""
    for name, (module, text) in commands.items():
        yield (*prefix, name)
        if text is None:
            yield from walk(importlib.import_module(module).COMMANDS, (*prefix, name))


def dispatch(prog: str, description: str, commands: Mapping[str, tuple[str, str | None]], argv,
             old_spelling: Callable[[list[str]], list[str] | None] | None = None) -> int:
    """Run ``commands[argv[0]]``'s ``main(argv[1:])``; ``commands`` maps a noun to (module, help;
    None for a group). ``old_spelling(argv)`` may return the argv an old spelling stands for (it
    prints the notice)."""
    argv = list(argv)
    if old_spelling is not None and not (argv and argv[0] in ("-h", "--help")):
        argv = old_spelling(argv) or argv
    width = max(map(len, commands)) + 2
    parser = argparse.ArgumentParser(
        prog=prog, description=description, formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="\n".join(f"  {name:{width}s}{summary(module, text)}"
                         for name, (module, text) in commands.items()))
    parser.add_argument("command", choices=list(commands), metavar="COMMAND",
                        help=f"one of the commands below; '{prog} COMMAND -h' for its options")
    if not argv or argv[0] in ("-h", "--help"):
        parser.print_help()
        return 0 if argv else 2
    args = parser.parse_args(argv[:1])
    module = importlib.import_module(commands[args.command][0])
    return module.main(argv[1:]) or 0
