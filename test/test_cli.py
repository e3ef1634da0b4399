"""``robodyn-ros`` is a command line of nouns: each demo its own command with its own options,
maintainers' tools under ``dev``, and the old spellings of 0.1 still run as the new ones, saying so
in one line on stderr."""
import pytest

from robodyn_ros.apps import demos
from robodyn_ros.apps.cli import COMMANDS, main


def run(argv, capsys):
    """Exit status, stdout and stderr of ``robodyn-ros ARGV`` (argparse exits on -h and errors)."""
    try:
        status = main(argv)
    except SystemExit as exc:
        status = exc.code
    out, err = capsys.readouterr()
    return status, out, err


def test_the_top_level_lists_the_users_commands_and_keeps_maintainers_tools_under_dev(capsys):
    status, out, _ = run(["-h"], capsys)
    assert status == 0
    assert "perf-page" not in COMMANDS and "param-tables" not in COMMANDS
    status, out, _ = run(["dev", "-h"], capsys)
    assert status == 0 and "perf-page" in out and "param-tables" in out


def test_the_top_level_line_of_a_group_names_each_of_its_commands(capsys):
    from robodyn_ros.apps import dev
    status, out, _ = run(["-h"], capsys)
    lines = {line.split()[0]: line for line in out.splitlines() if line.startswith("  ")}
    assert status == 0 and all(name in lines["demo"] for name in demos.COMMANDS), lines["demo"]
    assert all(name in lines["dev"] for name in dev.COMMANDS), lines["dev"]


@pytest.mark.parametrize("name", list(demos.COMMANDS))
def test_each_demo_has_its_own_help(name, capsys):
    status, out, err = run(["demo", name, "-h"], capsys)
    assert status == 0 and f"usage: robodyn-ros demo {name}" in out and err == ""


@pytest.mark.parametrize("argv, option", [
    (["demo", "stewart", "--rates", "100"], "--rates"),          # a puma option
    (["demo", "puma", "--universal-plant"], "--universal-plant"),  # a stewart option
    (["demo", "cartesian", "--pick-up-at", "1"], "--pick-up-at"),  # an adaptive option
    (["demo", "identify", "--arm", "panda"], "--arm"),             # a cartesian option
])
def test_an_option_of_another_demo_is_refused(argv, option, capsys):
    status, _, err = run(argv, capsys)
    assert status == 2 and "unrecognized arguments" in err and option in err


def test_an_unknown_demo_is_refused_with_the_list(capsys):
    status, _, err = run(["demo", "pumaa"], capsys)
    assert status == 2 and "invalid choice: 'pumaa'" in err and "puma" in err


@pytest.mark.parametrize("old, new_prog, notice", [
    (["demo", "--stewart", "-h"], "robodyn-ros demo stewart", "'demo --stewart' is now 'demo stewart'"),
    (["demo", "--identify", "-h"], "robodyn-ros demo identify",
     "'demo --identify' is now 'demo identify'"),
    (["demo", "--law", "adaptive_computed_torque", "-h"], "robodyn-ros demo adaptive",
     "'demo --law' is now 'demo adaptive --law'"),
    (["demo", "--cartesian", "square", "-h"], "robodyn-ros demo cartesian",
     "'demo --cartesian square' is now 'demo cartesian --path square'"),
    (["demo", "--rates", "100", "-h"], "robodyn-ros demo puma", "'demo' is now 'demo puma'"),
])
def test_an_old_demo_spelling_runs_the_new_command_with_a_one_line_notice(old, new_prog, notice,
                                                                         capsys):
    status, out, err = run(old, capsys)
    assert status == 0 and f"usage: {new_prog}" in out
    assert err.count("\n") == 1 and notice in err


def test_the_old_cartesian_spelling_keeps_its_path(capsys):
    argv = demos._old_spelling(["--cartesian=square", "--arm", "panda"])
    assert argv == ["cartesian", "--path", "square", "--arm", "panda"]


def test_an_old_dev_spelling_runs_with_a_notice(capsys, tmp_path):
    status, _, err = run(["param-tables", "--check"], capsys)
    assert status == 0, err
    assert "'param-tables' is now 'dev param-tables'" in err
