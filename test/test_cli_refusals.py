"""A user's mistakes the walk of the command line (test_cli_walk.py) does not make: files that are
missing, broken or of the wrong kind, outputs into folders that do not exist, values out of range.
Each is refused in one line that names the file, the element or the option, with a non-zero exit,
before any long work; a run whose nodes fail ends in one line after their logs."""
import subprocess
import sys
from pathlib import Path

import pytest

from robodyn_ros.apps.cli import main

ROOT = Path(__file__).resolve().parents[1]
PLANAR = ROOT / "urdf" / "planar2.urdf"


def run(argv, capsys):
    """Exit status and stderr of ``robodyn-ros ARGV`` in this process (argparse exits)."""
    try:
        status = main(argv)
    except SystemExit as exc:
        status = exc.code
    return status, capsys.readouterr().err


def one_line(err, *words):
    """stderr's refusal: one line (after argparse's usage, if any), naming each of ``words``."""
    lines = [line for line in err.strip().splitlines() if line.startswith("robodyn-ros")]
    assert len(lines) == 1 and all(w in lines[0] for w in words), err
    return lines[0]


def broken(tmp_path, name, edit):
    path = tmp_path / name
    path.write_text(edit(PLANAR.read_text()))
    return str(path)


@pytest.mark.parametrize("name, edit, words", [
    ("cut.urdf", lambda text: text[:len(text) // 2], ["cut.urdf", "malformed XML", "line"]),
    ("revolut.urdf", lambda text: text.replace('type="revolute"', 'type="revolut"', 1),
     ["revolut.urdf", "joint_1", "Invalid joint type: revolut"]),
    ("missing.urdf", lambda text: text.replace('<child link="link_1"', '<child link="l2x"', 1),
     ["missing.urdf", "joint 'joint_1' names link 'l2x', which does not exist"]),
])
def test_check_urdf_refuses_a_broken_file_in_one_line(tmp_path, capsys, name, edit, words):
    status, err = run(["check-urdf", broken(tmp_path, name, edit)], capsys)
    assert status == 2
    one_line(err, "robodyn-ros check-urdf: ", *words)


def test_check_urdf_refuses_a_link_the_file_lacks(capsys):
    status, err = run(["check-urdf", str(ROOT / "urdf" / "panda.urdf"), "--tip-link", "nope"],
                      capsys)
    assert status == 2
    one_line(err, "--tip-link 'nope' is not a link of", "panda_hand_tcp")


def test_check_urdf_exits_1_when_our_model_refuses_the_chain(tmp_path, capsys):
    # a second leaf (a sensor fixed to link_1) and no tip named: the controller takes the
    # ROS-Industrial tool frame tool0 among them; with the tool frame named otherwise it refuses
    sensor = ('<link name="sensor"/><joint name="sensor_mount" type="fixed"><parent link="link_1"/>'
              '<child link="sensor"/></joint></robot>')
    assert main(["check-urdf", broken(tmp_path, "tool0.urdf", lambda text: text.replace("</robot>", sensor))]) == 0
    out = capsys.readouterr().out
    assert "tip_link 'tool0' (the tool frame)" in out, out   # which chain was judged, said
    two_leaves = broken(tmp_path, "two_leaves.urdf",
                        lambda text: text.replace('"tool0"', '"tcp"').replace("</robot>", sensor))
    assert main(["check-urdf", two_leaves]) == 1
    out = capsys.readouterr().out
    assert "model refuses it: " in out and "several leaf links" in out and "'tcp'" in out, out
    assert main(["check-urdf", two_leaves, "--tip-link", "tcp"]) == 0


def test_check_urdf_takes_a_pose_with_spaces_or_commas_and_says_how_in_its_help(capsys):
    from test_cli_words import COMMANDS
    (parser,) = [p for words, p in COMMANDS if words == ("check-urdf",)]
    assert "--pose 0 0.5 1 0 0 0" in " ".join(parser.format_help().split())
    urdf = str(ROOT / "urdf" / "puma560.urdf")
    said = []
    for pose in (["0", "0.5", "1", "0", "0", "0"], ["0,0.5,1,0,0,0"], ["0,0.5", "1", "0,0,0"]):
        main(["check-urdf", urdf, "--pose", *pose])
        said.append(capsys.readouterr().out.splitlines()[-1])
    assert len(set(said)) == 1 and "pose [0.0, 0.5, 1.0, 0.0, 0.0, 0.0]" in said[0], said
    status, err = run(["check-urdf", urdf, "--pose", "0,a"], capsys)
    assert status == 2 and "a pose is numbers separated by spaces or commas" in err


@pytest.mark.parametrize("argv, words", [
    (["urdf-from-dh", "/nowhere/table.yaml"], ["/nowhere/table.yaml", "cannot read"]),
    (["urdf-from-dh", str(PLANAR)], ["planar2.urdf", "malformed YAML"]),
    (["urdf-from-dh", str(ROOT / "config" / "puma560_dh.yaml"), "-o", "/nowhere/x.urdf"],
     ["--output /nowhere/x.urdf", "does not exist"]),
    (["check-urdf", str(PLANAR), "--srdf", "/nowhere/x.srdf"], ["--srdf", "does not exist"]),
    (["stewart-path", "--path", "I", "--platform", "/nowhere.yaml"], ["/nowhere.yaml"]),
    (["stewart-path", "--path", "I", "--platform", str(PLANAR)], ["planar2.urdf"]),
    (["stewart-path", "--path", "I", "--csv", "/nowhere/x.csv"], ["--csv", "does not exist"]),
    (["dev", "perf-page", "--results", "/nowhere.json"], ["/nowhere.json", "--results"]),
    (["dev", "param-tables", "--doc", "/nowhere"], ["/nowhere/", "No such file"]),
    (["dev", "fuzz", "--duration", "-1"], ["--duration"]),
    (["dev", "soak", "--interval", "0"], ["--interval"]),
    (["dev", "soak", "--json", "/nowhere/x.json"], ["--json", "does not exist"]),
    (["bench", "--json", "/nowhere/x.json"], ["--json", "does not exist"]),
    (["demo", "puma", "--urdf", "/nowhere.urdf"], ["--urdf /nowhere.urdf"]),
    (["demo", "collision", "--json", "/nowhere/x.json"], ["--json", "does not exist"]),
], ids=lambda x: " ".join(x) if x and x[0] in ("urdf-from-dh", "check-urdf", "stewart-path", "dev",
                                               "bench", "demo") else "")
def test_a_wrong_file_or_value_is_refused_before_any_work(capsys, argv, words):
    status, err = run(argv, capsys)
    assert status == 2
    one_line(err, *words)


def test_a_run_whose_nodes_fail_ends_in_one_line_after_their_logs():
    # the PUMA's demo on a two-joint arm: the simulator refuses the demo's six-joint start
    done = subprocess.run([sys.executable, "-m", "robodyn_ros.apps.cli", "demo", "puma", "--urdf",
                           str(PLANAR), "--rates", "1000", "--plot", ""],
                          capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert done.returncode == 1 and "Traceback" not in done.stdout + done.stderr, done.stderr
    assert "initial_position has 6 values" in done.stderr   # the node's log, reported
    assert done.stderr.strip().splitlines()[-1].startswith(
        "robodyn-ros: arm_simulator exited with status 1 (its log: "), done.stderr
