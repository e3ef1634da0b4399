"""From a log to a bag (issue 46, item 5): ``robodyn-ros bag from-csv|from-npz|from-text`` writes a
real rosbag2 that ``identification.bag.read_joint_states`` (what ``identify`` and ``collision
calibrate`` read) gives back value for value and stamp for stamp; bad logs are refused in one line
naming the file, the column and the line; and doc/identification.md's route from the Panda run of
Gaz et al. (2019) to a model runs as written (skipped, saying so, where the workspace beside the
checkout has no real_id folder)."""
import gzip
import json
import re
import shlex
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from robodyn_ros.apps.bag import main as bag_main
from robodyn_ros.identification.bag import read_joint_states
from robodyn_ros.identification.logs import UR_JOINTS

ROOT = Path(__file__).resolve().parents[1]
DATA = next((p / "shared" / "real_id" for p in ROOT.parents if (p / "shared" / "real_id").is_dir()),
            ROOT.parent / "shared" / "real_id")
PANDA_FILES = [DATA / f"panda_exciting_traj_{q}.txt.gz" for q in ("time", "positions", "velocity", "torques")]
PAPER_RELATIVE_ERROR = 0.0141


def rtde_log(rows=400, seed=0):
    """An RTDE-like log: irregular stamps of 2 ms +- jitter from a controller's clock far from 0,
    the six joints' q, qd, currents, targets, and unrelated columns around them."""
    rng = np.random.default_rng(seed)
    t = 5321.25 + np.cumsum(rng.uniform(0.0015, 0.0025, rows))
    columns = {"timestamp": t, "robot_mode": np.full(rows, 7.0)}
    for name in ("target_q", "actual_q", "actual_qd", "actual_current", "target_current",
                 "target_moment"):
        for i in range(6):
            columns[f"{name}_{i}"] = rng.normal(size=rows)
    return columns


def write_table(path, columns, delimiter=" "):
    names = list(columns)
    table = np.column_stack([columns[n] for n in names])
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "wt") as f:
        f.write(delimiter.join(names) + "\n")
        for row in table:
            f.write(delimiter.join(repr(float(x)) for x in row) + "\n")
    return path


def block(columns, name, n=6):
    return np.column_stack([columns[f"{name}_{i}"] for i in range(n)])


@pytest.mark.parametrize("delimiter, suffix", [(" ", ".csv"), (",", ".csv.gz")])
def test_an_rtde_log_becomes_the_bag_its_columns_say(tmp_path, delimiter, suffix, capsys):
    log = rtde_log()
    path = write_table(tmp_path / f"robot_data{suffix}", log, delimiter)
    bag = tmp_path / "ur_run"
    assert bag_main(["from-csv", str(path), "-o", str(bag),
                     "--effort-topic", "/target_moment=target_moment_{i}"]) == 0
    assert "400 samples of 6 joints" in capsys.readouterr().out
    recording = read_joint_states(bag)
    assert recording.joint_names == list(UR_JOINTS)
    np.testing.assert_array_equal(recording.time_ns, np.round(log["timestamp"] * 1e9).astype(np.int64))
    np.testing.assert_array_equal(recording.position, block(log, "actual_q"))
    np.testing.assert_array_equal(recording.velocity, block(log, "actual_qd"))
    np.testing.assert_array_equal(recording.effort, block(log, "actual_current"))   # as the driver
    # the command topic, paired with its state exactly (received at the state's own time)
    commanded = read_joint_states(bag, effort_topic="/target_moment")
    assert commanded.dropped == 0
    np.testing.assert_array_equal(commanded.effort, block(log, "target_moment"))


def test_columns_by_pattern_list_and_name_and_what_a_log_lacks(tmp_path):
    rng = np.random.default_rng(1)
    t = np.arange(200) * 1e-3
    joints = ["a", "b"]
    q, tau = rng.normal(size=(200, 2)), rng.normal(size=(200, 2))
    log = {"time_ms": t * 1e3, "q_a": q[:, 0], "q_b": q[:, 1], "tau1": tau[:, 0], "tau2": tau[:, 1]}
    path = write_table(tmp_path / "log.csv", log, ",")
    # {joint} and a comma list; no velocity column: the default is left out, not refused
    assert bag_main(["from-csv", str(path), "-o", str(tmp_path / "by_name"), "--joints", *joints,
                     "--time", "time_ms", "--time-unit", "ms", "--position", "q_{joint}",
                     "--effort", "tau1,tau2"]) == 0
    recording = read_joint_states(tmp_path / "by_name", min_samples=2)
    np.testing.assert_allclose(recording.t, t, atol=1e-9)
    np.testing.assert_array_equal(recording.position, q)
    np.testing.assert_array_equal(recording.effort, tau)
    assert recording.velocity is None


def test_npz_arrays_whole_or_per_joint(tmp_path):
    rng = np.random.default_rng(2)
    t, q, qd = np.arange(150) * 2e-3, rng.normal(size=(150, 3)), rng.normal(size=(150, 3))
    np.savez(tmp_path / "run.npz", time=t, position=q, velocity=qd)
    assert bag_main(["from-npz", str(tmp_path / "run.npz"), "-o", str(tmp_path / "whole"),
                     "--joints", "j1", "j2", "j3", "--storage", "sqlite3"]) == 0
    recording = read_joint_states(tmp_path / "whole", min_samples=2)
    np.testing.assert_array_equal(recording.position, q)
    np.testing.assert_array_equal(recording.velocity, qd)
    assert recording.effort is None and (tmp_path / "whole" / "whole.db3").is_file()
    np.savez(tmp_path / "split.npz", t=t, **{f"q{j}": q[:, j - 1] for j in (1, 2, 3)})
    assert bag_main(["from-npz", str(tmp_path / "split.npz"), "-o", str(tmp_path / "split"),
                     "--joints", "j1", "j2", "j3", "--time", "t", "--position", "q{j}"]) == 0
    np.testing.assert_array_equal(read_joint_states(tmp_path / "split", min_samples=2).position, q)


def test_text_files_one_value_per_line_or_a_table(tmp_path):
    rng = np.random.default_rng(3)
    t, q, tau = np.cumsum(rng.uniform(5e-4, 2e-3, 120)), rng.normal(size=(120, 7)), rng.normal(size=(120, 7))
    with gzip.open(tmp_path / "q.txt", "wt") as f:           # gzipped under a plain name
        f.write("\n".join(repr(float(x)) for x in q.ravel()))  # row-major, one per line
    np.savetxt(tmp_path / "time.txt", t)
    np.savetxt(tmp_path / "tau.txt", tau)                     # a table
    assert bag_main(["from-text", "-o", str(tmp_path / "run"),
                     "--urdf", "package://robodyn_ros/urdf/panda.urdf", "--time", str(tmp_path / "time.txt"),
                     "--position", str(tmp_path / "q.txt"), "--effort", str(tmp_path / "tau.txt")]) == 0
    recording = read_joint_states(tmp_path / "run", min_samples=2)
    assert recording.joint_names == [f"panda_joint{i}" for i in range(1, 8)]
    np.testing.assert_array_equal(recording.position, q)
    np.testing.assert_array_equal(recording.effort, tau)


def refusal(capsys, argv):
    assert bag_main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert "Traceback" not in err and len(err.splitlines()) == 1, err
    return err


def test_bad_logs_are_refused_naming_the_file_the_column_and_the_line(tmp_path, capsys):
    log = rtde_log(50)
    path = write_table(tmp_path / "log.csv", log, ",")
    out = str(tmp_path / "bag")
    err = refusal(capsys, ["from-csv", str(path), "-o", out, "--position", "actual_p_{i}"])
    assert str(path) in err and "'actual_p_0'" in err and "actual_q_0" in err   # the columns like it
    # a value that is no number: its line and column
    text = path.read_text().splitlines()
    cells = text[4].split(",")
    cells[list(log).index("actual_qd_2")] = "nan?"
    path.write_text("\n".join(text[:4] + [",".join(cells)] + text[5:]) + "\n")
    err = refusal(capsys, ["from-csv", str(path), "-o", out])
    assert "line 5" in err and "'actual_qd_2'" in err and "nan?" in err
    # a time that goes back
    log["timestamp"][20] = log["timestamp"][18]
    write_table(path, log, ",")
    err = refusal(capsys, ["from-csv", str(path), "-o", out])
    assert "'timestamp'" in err and "row 21" in err and "goes back" in err
    # files of different lengths, one named by the other
    np.savetxt(tmp_path / "t.txt", np.arange(10) * 1e-3)
    np.savetxt(tmp_path / "q.txt", np.zeros((9, 2)))
    err = refusal(capsys, ["from-text", "-o", out, "--joints", "a", "b", "--time", str(tmp_path / "t.txt"),
                           "--position", str(tmp_path / "q.txt")])
    assert str(tmp_path / "q.txt") in err and "9 samples" in err and "10" in err
    # NaN in an array, a bag that exists already, a malformed --effort-topic
    np.savez(tmp_path / "nan.npz", time=np.arange(5.0), position=np.array([[0.0], [1], [np.nan], [3], [4]]))
    err = refusal(capsys, ["from-npz", str(tmp_path / "nan.npz"), "-o", out, "--joints", "a"])
    assert "row 3" in err and "'position'" in err
    (tmp_path / "exists").mkdir()
    write_table(path, rtde_log(50), ",")
    assert "exists" in refusal(capsys, ["from-csv", str(path), "-o", str(tmp_path / "exists")])
    assert "TOPIC=COLUMNS" in refusal(capsys, ["from-csv", str(path), "-o", out, "--effort-topic", "x"])
    assert not Path(out).exists()


def doc_commands(marker):
    """The commands of the bash block after ``marker`` in doc/identification.md, as a shell
    would split them (continued lines joined)."""
    page = (ROOT / "doc" / "identification.md").read_text()
    code = re.search(r"```bash\n(.*?)```", page.split(marker, 1)[1], re.S).group(1)
    return [shlex.split(line) for line in code.replace("\\\n", " ").splitlines() if line.strip()]


@pytest.mark.skipif(not all(f.is_file() for f in PANDA_FILES),
                    reason=f"the Panda run of Gaz et al. 2019 is not in {DATA} (its README says "
                           "where it comes from)")
def test_the_documented_route_from_the_panda_logs_to_a_model(tmp_path):
    for f in PANDA_FILES:                           # the run's four files in the user's directory
        (tmp_path / f.name).symlink_to(f)
    commands = doc_commands("<!-- the Panda route:")
    assert [c[:2] for c in commands] == [["robodyn-ros", "bag"], ["robodyn-ros", "identify"]]
    for argv in commands:                           # as written, from that directory
        done = subprocess.run([sys.executable, "-m", "robodyn_ros.apps.cli", *argv[1:]], cwd=tmp_path,
                              capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, f"{shlex.join(argv)}:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
    report = json.loads((tmp_path / "report.json").read_text())
    account = report["accounts"]["run"]
    assert account["recorded"] == 20544 and account["used"] >= 0.99 * 20544
    assert report["relative_error_stacked"]["held-out/consistent"] <= PAPER_RELATIVE_ERROR
    for name in ("panda_identified.urdf", "panda_identified.friction.yaml", "torques.png"):
        assert (tmp_path / name).stat().st_size > 0
