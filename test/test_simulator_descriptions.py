"""Descriptions a simulator accepts, and ``robodyn-ros check-urdf``.

Every simulator-facing URDF in urdf/ must load in MuJoCo exactly as shipped (no placeholders, no
write-back), and MuJoCo's dynamics of it must be those of the data set it comes from: the PUMA's
raw data set (link 1 massless with 0.35 kg m^2 about its axis only, link 3 breaking the triangle
inequality, typed here from the YAML's comment) and the planar arm's slender rods. The YAML changes
to their inertias were chosen to leave M(q), C(q, qd) and g(q) unchanged; MuJoCo, which wrote none
of this, checks that. The Stanford arm's data set is kept as published (not a physical arm: see its
YAML) and is for dynamics tests only: check-urdf must say what a simulator refuses in it.
"""
from contextlib import nullcontext
from pathlib import Path

import numpy as np
import pytest
import yaml

from robodyn_ros.dynamics import RobotModel
from robodyn_ros.dynamics.urdf_export import dh_to_urdf
from robodyn_ros.apps import check_urdf as check_urdf_command
from robodyn_ros.sim import check_urdf

mujoco = pytest.importorskip("mujoco")
ROOT = Path(__file__).resolve().parents[1]
SIMULATOR_FACING = {"urdf/puma560.urdf": "config/puma560_dh.yaml",
                    "urdf/puma560_gazebo.urdf": "config/puma560_dh.yaml",
                    "urdf/planar2.urdf": "config/planar2_dh.yaml"}
DATA_ONLY = ["urdf/stanford.urdf"]
VENDOR = ["urdf/panda.urdf"]   # simulator-facing too, from a vendor, with no DH data set behind it
# the data sets as published, where the YAML changed them (the values its comments give)
RAW = {"config/puma560_dh.yaml": {0: {"mass": 0.0, "inertia": [0.0, 0.35, 0.0, 0.0, 0.0, 0.0]},
                                  2: {"inertia": [0.066, 0.086, 0.0125, 0.0, 0.0, 0.0]}},
       "config/planar2_dh.yaml": {0: {"inertia": [0.0, 1 / 6, 1 / 6, 0.0, 0.0, 0.0]},
                                  1: {"inertia": [0.0, 0.08, 0.08, 0.0, 0.0, 0.0]}}}


def raw_spec(yaml_rel):
    spec = yaml.safe_load((ROOT / yaml_rel).read_text())
    for index, values in RAW[yaml_rel].items():
        spec["links"][index].update(values)
    return spec


def raw_model(yaml_rel):
    with pytest.warns(UserWarning, match="triangle") if "puma" in yaml_rel else nullcontext():
        return RobotModel.from_urdf(dh_to_urdf(raw_spec(yaml_rel)),
                                    gravity=raw_spec(yaml_rel)["gravity"])


def test_every_urdf_is_either_simulator_facing_or_a_data_set():
    shipped = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "urdf").glob("*.urdf"))
    assert sorted([*SIMULATOR_FACING, *DATA_ONLY, *VENDOR]) == shipped


@pytest.mark.parametrize("urdf", VENDOR)
def test_a_vendor_urdf_loads_in_mujoco_and_passes_check_urdf(urdf):
    m = mujoco.MjModel.from_xml_path(str(ROOT / urdf))
    assert check_urdf_command.main([str(ROOT / urdf)]) == 0
    assert m.nv == RobotModel.from_urdf(str(ROOT / urdf)).dof


@pytest.mark.parametrize("urdf", sorted(SIMULATOR_FACING))
def test_simulator_facing_urdf_loads_in_mujoco_as_shipped_with_the_data_sets_dynamics(urdf):
    m = mujoco.MjModel.from_xml_path(str(ROOT / urdf))  # unmodified: MuJoCo's own checks
    assert check_urdf_command.main([str(ROOT / urdf)]) == 0
    truth = raw_model(SIMULATOR_FACING[urdf])
    assert m.nv == truth.dof
    m.opt.gravity = truth.gravity     # URDF carries no gravity; MuJoCo's default is -z
    m.dof_frictionloss[:] = 0.0       # Coulomb friction: not MuJoCo's (see doc/simulator.md)
    d = mujoco.MjData(m)
    rng = np.random.default_rng(3)
    n = truth.dof
    for _ in range(10):
        span = truth.upper - truth.lower
        q = rng.uniform(truth.lower + 0.1 * span, truth.upper - 0.1 * span)
        qd, qdd = rng.normal(size=n), rng.normal(size=n)
        d.qpos[:], d.qvel[:], d.qacc[:] = q, qd, qdd
        mujoco.mj_inverse(m, d)
        # URDF has no rotor inertia: MuJoCo's plain load has no armature, add it to its forces
        tau = truth.inverse_dynamics(q, qd, qdd, friction=False) + truth.viscous * qd
        np.testing.assert_allclose(d.qfrc_inverse + truth.armature * qdd, tau, rtol=0,
                                   atol=1e-12 * abs(tau).max())
        M = np.zeros((n, n))
        mujoco.mj_fullM(m, d, M)
        ours = truth.mass_matrix(q)
        np.testing.assert_allclose(M + np.diag(truth.armature), ours, rtol=0,
                                   atol=1e-12 * abs(ours).max())


def test_the_puma_changes_are_where_the_yaml_says():
    shipped = yaml.safe_load((ROOT / "config/puma560_dh.yaml").read_text())["links"]
    raw = raw_spec("config/puma560_dh.yaml")["links"]
    changed = {i: {k: (raw[i][k], shipped[i][k]) for k in ("mass", "inertia", "com")
                   if raw[i][k] != shipped[i][k]} for i in range(6)}
    assert {i: sorted(c) for i, c in changed.items() if c} == {0: ["inertia", "mass"],
                                                               2: ["inertia"]}
    assert shipped[0]["com"] == [0.0, 0.0, 0.0]  # on the joint-1 axis (y1 through the origin)
    # link 1 gives about its axis what link 3 gains about the axis perpendicular to y3
    assert raw[0]["inertia"][1] - shipped[0]["inertia"][1] == pytest.approx(0.004, abs=1e-15)
    gain = np.subtract(shipped[2]["inertia"], raw[2]["inertia"])
    np.testing.assert_allclose(gain, [0.004, 0.0, 0.004, 0.0, 0.0, 0.0], atol=1e-15)


def test_check_urdf_flags_the_raw_puma_links_1_and_3(tmp_path, capsys):
    raw = tmp_path / "puma560_raw.urdf"
    raw.write_text(dh_to_urdf(raw_spec("config/puma560_dh.yaml")))
    with pytest.raises(ValueError, match="link_1"):
        mujoco.MjModel.from_xml_path(str(raw))  # what check-urdf predicts, said by MuJoCo
    assert check_urdf_command.main([str(raw)]) == 1
    out = capsys.readouterr().out
    flagged = {link: problems for link, _, problems in check_urdf.check(raw.read_text())}
    assert sorted(flagged) == ["link_1", "link_3"]
    assert any("mass 0 is not positive" in p for p in flagged["link_1"])
    assert any("not positive definite" in p for p in flagged["link_1"])
    assert flagged["link_3"] == ["principal moments violate the triangle inequality "
                                 "(0.0125 + 0.066 < 0.086)"]
    assert "robodyn_ros's model accepts it" in out and "link 'link_3'" in out


def test_check_urdf_flags_the_stanford_data_set_and_mujoco_agrees(capsys):
    urdf = ROOT / "urdf/stanford.urdf"
    with pytest.raises(ValueError, match="positive eigenvalues"):
        mujoco.MjModel.from_xml_path(str(urdf))
    assert check_urdf_command.main([str(urdf)]) == 1
    assert [link for link, _, _ in check_urdf.check(urdf.read_text())] == ["link_5"]


@pytest.mark.parametrize("inertial, problem", [
    ("", "massless moving link"),
    ('<inertial><mass value="-1"/><inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/>'
     '</inertial>', "mass -1 is not positive"),
    ('<inertial><mass value="1"/><inertia ixx="1" iyy="1" izz="1" ixy="2" ixz="0" iyz="0"/>'
     '</inertial>', "not positive definite"),
])
def test_check_urdf_names_each_kind_of_body_a_simulator_refuses(inertial, problem):
    good = ('<inertial><mass value="1"/><inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" '
            'iyz="0"/></inertial>')
    urdf = (f'<robot name="r"><link name="base"/><link name="a">{inertial}</link>'
            f'<link name="b">{good}</link><link name="flange"/>'
            '<joint name="j1" type="revolute"><parent link="base"/><child link="a"/>'
            '<axis xyz="0 0 1"/><limit lower="-1" upper="1" effort="1" velocity="1"/></joint>'
            '<joint name="j2" type="continuous"><origin xyz="1 0 0"/><parent link="a"/>'
            '<child link="b"/><axis xyz="0 1 0"/></joint>'
            '<joint name="f" type="fixed"><parent link="b"/><child link="flange"/></joint></robot>')
    (found,) = check_urdf.check(urdf)  # the massless flange is fixed to b: lumped, accepted
    assert found[:2] == ("a", "j1") and any(problem in p for p in found[2])
    with pytest.raises(ValueError):
        mujoco.MjModel.from_xml_string(urdf)
