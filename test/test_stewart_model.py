"""The platform file: the paper's Appendix transcribed exactly, warnings for its known quirks, clear
errors for unusable files, the packaged-file lookup and the stewart-path study."""
import csv
import warnings
from pathlib import Path

import numpy as np
import pytest
import yaml

from robodyn_ros.plumbing.resources import find_share_file
from robodyn_ros.stewart import PlatformFileError, PlatformWarning, StewartPlatform
from robodyn_ros.apps import stewart_path as path_study
from robodyn_ros.spatial.rotations import rpy_matrix

CONFIG = Path(__file__).resolve().parents[1] / "config" / "stewart_dasgupta.yaml"


def load(tmp_path, data):
    path = tmp_path / "platform.yaml"
    path.write_text(yaml.safe_dump(data))
    return StewartPlatform.from_yaml(path)


@pytest.fixture
def good():
    return yaml.safe_load(CONFIG.read_text())


def test_paper_appendix_values():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sp = StewartPlatform.from_yaml(CONFIG)
    # Appendix of Dasgupta & Mruthyunjaya 1998, columns b1..b6, p1..p6.
    b = np.array([[0.6, 0.1, -0.3, -0.3, 0.20, 0.5], [0.2, 0.5, 0.3, -0.4, -0.30, -0.2],
                  [0.0, 0.1, 0.1, 0.0, -0.05, 0.0]]).T
    p = np.array([[0.3, 0.3, 0.0, -0.2, -0.15, 0.15], [0.0, 0.2, 0.3, 0.1, -0.20, -0.15],
                  [0.1, 0.0, 0.0, -0.1, -0.05, -0.05]]).T
    k1 = np.array([-0.8141, 0.2714, 0.0])
    assert np.array_equal(sp.b, b) and np.array_equal(sp.p, p)
    assert np.allclose(sp.k[0], k1 / np.linalg.norm(k1))
    assert np.allclose(sp.k[3], [1.0, 0.0, 0.0])
    assert np.all(sp.m_d == 3.0) and np.all(sp.m_u == 1.0) and sp.M == 40.0
    assert np.array_equal(sp.r_u0[5], [-0.6, -0.08, 0.08])
    assert np.array_equal(sp.I_d0[2][0], [0.010, 0.005, 0.007])
    assert np.array_equal(sp.I_u0[2][2], [0.002, 0.001, 0.003])
    assert np.array_equal(sp.R0, [0.04, 0.03, -0.06]) and sp.I_p[2, 2] == 0.100
    assert (sp.C_u, sp.C_p, sp.C_s) == (0.0001, 0.001, 0.0002)
    assert np.array_equal(sp.gravity, [0.0, 0.0, -9.81])
    messages = [str(w.message) for w in caught if issubclass(w.category, PlatformWarning)]
    assert any("fixed_axes[0]" in m and "not unit" in m for m in messages)
    assert any("leg.lower.inertia" in m and "eigenvalue" in m for m in messages)
    assert any("leg.upper.inertia" in m and "triangle" in m for m in messages)
    assert any("platform.inertia" in m and "triangle" in m for m in messages)


@pytest.mark.parametrize("change, element, reason", [
    (lambda d: d["base_points"].pop(), "base_points", "shape"),
    (lambda d: d["fixed_axes"].__setitem__(2, [0, 0, 0]), r"fixed_axes\[2\]", "zero length"),
    (lambda d: d["leg"]["upper"].__setitem__("mass", -1.0), "leg.upper.mass", ">= 0"),
    (lambda d: d["platform"].pop("mass"), "platform", "missing 'mass'"),
    (lambda d: d["friction"].__setitem__("C_p", "x"), "friction.C_p", "number"),
    (lambda d: d.__setitem__("gravty", [0, 0, -9.81]), "top level", "unknown keys"),
    (lambda d: d["platform"].__setitem__("inertia", [[1, 2, 0], [0, 1, 0], [0, 0, 1]]),
     "platform.inertia", "symmetric"),
    (lambda d: d.__setitem__("limits", {"leg_length": [0.9, 0.5]}), "limits.leg_length", "min"),
    (lambda d: d.__setitem__("limits", {"leg_length": [0.1, 0.3]}), "home", "outside limits"),
])
def test_bad_files_name_file_and_element(tmp_path, good, change, element, reason):
    change(good)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PlatformWarning)
        with pytest.raises(PlatformFileError, match=f"platform.yaml: {element}.*{reason}"):
            load(tmp_path, good)


def test_axis_parallel_to_its_leg_is_rejected(tmp_path, good):
    home = good["home"]
    leg = (rpy_matrix(home["rpy"]) @ np.array(good["platform_points"][4]) + home["position"]
           - np.array(good["base_points"][4]))
    good["fixed_axes"][4] = (leg / np.linalg.norm(leg)).tolist()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PlatformWarning)
        with pytest.raises(PlatformFileError, match=r"fixed_axes\[4\].*parallel to its leg"):
            load(tmp_path, good)


def test_unreadable_and_invalid_yaml(tmp_path):
    with pytest.raises(PlatformFileError, match="missing.yaml: cannot read"):
        StewartPlatform.from_yaml(tmp_path / "missing.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("base_points: [1, 2\n")
    with pytest.raises(PlatformFileError, match="bad.yaml: not valid YAML"):
        StewartPlatform.from_yaml(bad)


def test_per_leg_description_and_limits(tmp_path, good):
    leg = good.pop("leg")
    good["legs"] = [leg] * 6
    good["legs"][2] = {"lower": {**leg["lower"], "mass": 2.0}, "upper": leg["upper"]}
    good["limits"] = {"leg_length": [0.2, 1.5], "actuator_force": 5000.0}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PlatformWarning)
        sp = load(tmp_path, good)
    assert sp.m_d.tolist() == [3.0, 3.0, 2.0, 3.0, 3.0, 3.0]
    assert sp.leg_length_limits == (0.2, 1.5) and sp.force_limit == 5000.0


def test_packaged_config_is_found():
    assert find_share_file("config/stewart_dasgupta.yaml").samefile(CONFIG)
    with pytest.raises(FileNotFoundError, match="nothing.yaml"):
        find_share_file("config/nothing.yaml")


def test_stewart_path_cli_writes_csv_and_summary(tmp_path, capsys):
    out = tmp_path / "path1.csv"
    assert path_study.main(["--path", "I", "--csv", str(out)]) == 0
    rows = list(csv.DictReader(out.open()))
    assert len(rows) == 61 and float(rows[-1]["t"]) == pytest.approx(6.0)
    first = rows[0]
    for i in range(1, 7):
        F, F0, Fd = (float(first[f"{q}{i}"]) for q in ("F", "F0", "Fd"))
        assert Fd == pytest.approx(F - F0, abs=1e-6)
        assert float(first[f"frac{i}"]) == pytest.approx(Fd / F, rel=1e-6)
    for row in rows:   # both leg models and their difference; F is the file's (no_spin) model's
        for i in range(1, 7):
            F, F_ns, F_u, dF = (float(row[f"{q}{i}"]) for q in ("F", "F_no_spin", "F_universal",
                                                                  "dF"))
            assert F_ns == F and dF == pytest.approx(F_u - F_ns, abs=1e-6)
    worst = max(max(abs(float(r[f"dF{i}"])) / max(abs(float(r[f"F{j}"])) for j in range(1, 7))
                    for i in range(1, 7)) for r in rows)
    assert 0.01 < worst < 0.04    # the ~2 % of doc/stewart_models.md
    printed = capsys.readouterr().out
    assert "Path I:" in printed and "universal joints vs no_spin legs" in printed
    with pytest.raises(SystemExit):
        path_study.main(["--path", "IV"])


def test_the_study_on_the_shipped_platform_warns_of_nothing_and_on_a_users_file_of_each_quirk(
        tmp_path, capsys):
    # issue 46: four warnings about the package's own file, whose quirks are the paper's and known
    assert path_study.main(["--path", "I"]) == 0
    assert "warning" not in capsys.readouterr().err
    mine = tmp_path / "mine.yaml"
    mine.write_text(CONFIG.read_text())
    assert path_study.main(["--path", "I", "--platform", str(mine)]) == 0
    warned = [line for line in capsys.readouterr().err.splitlines() if "warning:" in line]
    assert len(warned) == 4 and all(str(mine) in line for line in warned)
