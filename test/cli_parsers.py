"""The command line's real parsers, reached as a user reaches them (``robodyn-ros WORDS ...``
through the dispatch tables and each command's ``main``) and stopped before any work: every command
builds its parser and calls ``parse_args`` first, so a ``parse_args`` that stops there gives the
parser, or the namespace a command line parses into, without running the command.

Used in this process (the words of the help, the commands the docs quote) and, through
``python -m test.cli_parsers WORDS ...``, in a process of its own (the walk's no-argument case of a
command that would start its work). The commands are found from the dispatch tables, recursively
through the groups, and from each parser's sub-commands (``collision calibrate``)."""
from __future__ import annotations

import argparse
import contextlib
import sys
from unittest import mock

from robodyn_ros.apps import cli, commands

PROG = "robodyn-ros"


class Parsed(Exception):
    """A command's parser reached: the parser and what it parsed (None: not asked to parse)."""

    def __init__(self, parser, namespace):
        super().__init__(parser.prog)
        self.parser, self.namespace = parser, namespace


def groups() -> set[str]:
    """The progs of the dispatching parsers: the top level and each group's."""
    return {PROG} | {f"{PROG} {' '.join(words)}" for words in commands.walk(cli.COMMANDS)
                     if cli_entry(words)[1] is None}


def cli_entry(words):
    """(module, help) of the command ``words`` in the dispatch tables."""
    table, entry = cli.COMMANDS, None
    for word in words:
        entry = table[word]
        if entry[1] is None:
            table = __import__(entry[0], fromlist=["COMMANDS"]).COMMANDS
    return entry


@contextlib.contextmanager
def stopped_at_the_parser(parse: bool):
    """Inside: a command's ``parse_args`` raises Parsed (after parsing when ``parse``, before it
    otherwise); a group's dispatching parser parses as it always does."""
    dispatching = groups()
    real = argparse.ArgumentParser.parse_args

    def parse_args(self, args=None, namespace=None):
        if self.prog in dispatching:
            return real(self, args, namespace)
        raise Parsed(self, real(self, args, namespace) if parse else None)

    with mock.patch.object(argparse.ArgumentParser, "parse_args", parse_args):
        yield


def reach(argv, parse=True):
    """The command ``robodyn-ros ARGV`` names, as Parsed; SystemExit where its parser refuses
    ``argv`` (its message on stderr); the exit status where a group answered itself (its help)."""
    with stopped_at_the_parser(parse):
        try:
            return cli.main(list(argv))
        except Parsed as parsed:
            return parsed


def subcommands(parser):
    """{name: parser} of ``parser``'s argparse sub-commands."""
    return {name: sub for action in parser._actions
            if isinstance(action, argparse._SubParsersAction)
            for name, sub in action.choices.items()}


def every_command():
    """(words, parser or None) of every command: the dispatch tables' (a group's parser is None),
    and below each command its parser's sub-commands."""
    found = []
    for words in commands.walk(cli.COMMANDS):
        if cli_entry(words)[1] is None:
            found.append((words, None))
            continue
        stack = [(words, reach([*words, "-h"], parse=False).parser)]
        while stack:
            words, parser = stack.pop(0)
            found.append((words, parser))
            stack.extend(((*words, name), sub) for name, sub in subcommands(parser).items())
    return found


if __name__ == "__main__":
    # robodyn-ros ARGV as a user runs it, stopped once its command has parsed ARGV: exit 0 and
    # "parsed: PROG" on stdout; a refusal exits as the command's parser exits
    reached = reach(sys.argv[1:])
    if not isinstance(reached, Parsed):
        sys.exit(reached)
    print(f"parsed: {reached.parser.prog}")
