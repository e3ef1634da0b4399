"""One DH-table parser: RobotModel.from_yaml and the URDF exporter (robodyn-ros urdf-from-dh) read a
table through the same code, so they accept the same tables and refuse the others with the same
ModelError (the command: its one-line refusal), naming the file, the link (numbered from 1) and its
joint. Formerly the exporter refused ``mass: "2e-1"`` and ``inertia: [Ixx, Iyy, Izz]`` that the
model loader accepted, and ignored an unknown key that the loader refused, with other error types
and other link numbers.
"""
import contextlib
import io
import warnings
from pathlib import Path

import numpy as np
import pytest
import yaml

from robodyn_ros.dynamics import ModelError, RobotModel
from robodyn_ros.apps.urdf_from_dh import main
from robodyn_ros.dynamics.urdf_export import dh_to_urdf

ROOT = Path(__file__).resolve().parents[1]


def planar2():
    return yaml.safe_load((ROOT / "config/planar2_dh.yaml").read_text())


def write(tmp_path, doc, name="arm_dh.yaml"):
    path = tmp_path / name
    path.write_text(doc if isinstance(doc, str) else yaml.safe_dump(doc))
    return path


def load_model(path, tmp_path):
    return RobotModel.from_yaml(path)


def export(path, tmp_path):
    """The command as a user runs it; its refusal (one line, exit 2) raised as the library's."""
    said = io.StringIO()
    with contextlib.redirect_stderr(said):
        status = main([str(path), "-o", str(tmp_path / "out.urdf")])
    refusal = said.getvalue().strip().splitlines()
    if status:
        assert status == 2 and len(refusal) == 1, refusal
        raise ModelError(refusal[0].removeprefix("robodyn-ros urdf-from-dh: "))
    return status


READERS = {"RobotModel.from_yaml": load_model, "urdf-from-dh": export}


@pytest.mark.parametrize("read", READERS.values(), ids=READERS.keys())
@pytest.mark.parametrize("old, new, fragments", [
    # PyYAML (YAML 1.1) reads an exponent without a dot as a string: refused, with the hint
    ("mass: 1.5", "mass: 2e-1", ["mass", "expected a number", "'2e-1'", "2.0e-1"]),
    ("mass: 1.5", "masss: 1.5", ["unknown keys", "'masss'"]),
    ("limits: {lower", "limits: {lowr", ["unknown limit keys", "'lowr'"]),
    ("com: [-0.4, 0.0, 0.0]", "com: [-0.4, 0.0]", ["com must be [x, y, z]"]),
    ("joint: revolute", "joint: spherical", ["joint must be one of", "'spherical'"]),
    ("inertia: [0.000075, 0.08, 0.08, 0.0, 0.0, 0.0]", "inertia: [0.0, 0.08]", ["inertia must be 3x3"]),
    ("mass: 1.5", "mass: -1.5", ["negative mass -1.5"]),
])
def test_both_readers_refuse_the_same_table_the_same_way(tmp_path, read, old, new, fragments):
    text = (ROOT / "config/planar2_dh.yaml").read_text()
    second = text.index("  - name: joint_2")
    assert old in text[second:]
    path = write(tmp_path, text[:second] + text[second:].replace(old, new, 1))
    with pytest.raises(ModelError) as info:
        read(path, tmp_path)
    message = str(info.value)
    for fragment in [str(path), "link 2, joint 'joint_2'"] + fragments:
        assert fragment in message, f"{fragment!r} not in {message!r}"


@pytest.mark.parametrize("read", READERS.values(), ids=READERS.keys())
def test_both_readers_refuse_an_unknown_top_level_key(tmp_path, read):
    doc = planar2()
    doc["gravitiy"] = [0.0, 0.0, -9.81]
    path = write(tmp_path, doc)
    with pytest.raises(ModelError, match=r"arm_dh\.yaml: .*unknown top-level keys \['gravitiy'\]"):
        read(path, tmp_path)


@pytest.mark.parametrize("read", READERS.values(), ids=READERS.keys())
def test_both_readers_name_a_missing_or_malformed_file(tmp_path, read):
    with pytest.raises(ModelError, match="nothere.yaml"):
        read(tmp_path / "nothere.yaml", tmp_path)
    with pytest.raises(ModelError, match=r"bad\.yaml: malformed YAML"):
        read(write(tmp_path, "links: [\n  - {a: 1\n", "bad.yaml"), tmp_path)


def test_principal_moments_are_accepted_by_both_and_mean_the_diagonal(tmp_path):
    three, six = planar2(), planar2()
    for link in three["links"]:
        link["inertia"] = link["inertia"][:3]
    assert six["links"][0]["inertia"][3:] == [0.0, 0.0, 0.0]
    assert dh_to_urdf(three) == dh_to_urdf(six)
    a = RobotModel.from_yaml(write(tmp_path, three, "three.yaml"))
    b = RobotModel.from_yaml(write(tmp_path, six, "six.yaml"))
    for x, y in zip(a.links, b.links):
        np.testing.assert_array_equal(x.inertia, y.inertia)


def test_the_exporter_alone_needs_every_limit(tmp_path):
    """URDF requires all four limits; a model does not (a missing one is no limit)."""
    doc = planar2()
    del doc["links"][1]["limits"]["velocity"]
    path = write(tmp_path, doc)
    assert RobotModel.from_yaml(path).velocity_limit[1] == np.inf
    with pytest.raises(ModelError, match=r"arm_dh\.yaml: link 2, joint 'joint_2': limits lack a finite "
                                         r"\['velocity'\]"):
        export(path, tmp_path)


@pytest.mark.parametrize("table", ["config/puma560_dh.yaml", "config/stanford_dh.yaml"])
def test_the_exported_urdf_loads_as_the_same_model(table):
    """The table through the model loader, and through the exporter and the URDF loader: the same
    dynamics, armature and asymmetric Coulomb friction included, and the same tool frame."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*triangle inequality.*")
        direct = RobotModel.from_yaml(ROOT / table)
        doc = yaml.safe_load((ROOT / table).read_text())
        via_urdf = RobotModel.from_urdf(dh_to_urdf(doc), gravity=direct.gravity)
    assert via_urdf.joint_names == direct.joint_names
    rng = np.random.default_rng(5)
    q, qd, qdd = (rng.uniform(-1.0, 1.0, (20, direct.dof)) for _ in range(3))
    expected = direct.inverse_dynamics(q, qd, qdd)
    np.testing.assert_allclose(via_urdf.inverse_dynamics(q, qd, qdd), expected, rtol=1e-12,
                               atol=1e-12 * np.abs(expected).max())
    for k in range(3):
        np.testing.assert_allclose(via_urdf.link_frames(q[k])[-1], direct.link_frames(q[k])[-1],
                                   atol=1e-14)
