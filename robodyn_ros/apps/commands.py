"""Command groups of ``robodyn-ros``: a noun picks a module with ``main(argv)``, imported only when
asked for (so that ``robodyn-ros complexity`` never loads rclpy), and old spellings keep working for
one release with a one-line notice on stderr."""
from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable, Mapping


def renamed(old: str, new: str) -> None:
    """The one-line notice an old spelling prints before it runs as the new one."""
    print(f"robodyn-ros: '{old}' is now '{new}'; the old spelling goes in the next release",
          file=sys.stderr)


def dispatch(prog: str, description: str, commands: Mapping[str, tuple[str, str]], argv,
             old_spelling: Callable[[list[str]], list[str] | None] | None = None) -> int:
    """Run ``commands[argv[0]]``'s ``main(argv[1:])``; ``commands`` maps a noun to (module, help).
    ``old_spelling(argv)`` may return the argv an old spelling stands for (it prints the notice)."""
    argv = list(argv)
    if old_spelling is not None and not (argv and argv[0] in ("-h", "--help")):
        argv = old_spelling(argv) or argv
    width = max(map(len, commands)) + 2
    parser = argparse.ArgumentParser(
        prog=prog, description=description, formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="\n".join(f"  {name:{width}s}{text}" for name, (_, text) in commands.items()))
    parser.add_argument("command", choices=list(commands), metavar="COMMAND",
                        help=f"one of the commands below; '{prog} COMMAND -h' for its options")
    if not argv or argv[0] in ("-h", "--help"):
        parser.print_help()
        return 0 if argv else 2
    args = parser.parse_args(argv[:1])
    module = importlib.import_module(commands[args.command][0])
    return module.main(argv[1:]) or 0
