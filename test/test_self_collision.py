"""The shipped arms' collision shapes against themselves, by MuJoCo's contact list
(``sim/self_collision.py``), and the SRDF shipped beside each URDF.

No two non-adjacent links overlap at a pose the package ships (the demos' starts and goals, the
zero pose where it is within the limits); over poses sampled within the joint limits only the pairs
that can truly touch do (a hand or wrist folded onto the column, the upper arm or its own forearm),
and those are exactly the pairs the SRDF leaves for a planner to check. check-urdf reports an
overlap with its pair and depth, against a closed form.
"""
from pathlib import Path

import numpy as np
import pytest

from robodyn_ros.apps.check_urdf import main as check_urdf

pytest.importorskip("mujoco")
from robodyn_ros.sim.self_collision import SelfCollision, disabled_pairs  # noqa: E402 (mujoco)

ROOT = Path(__file__).resolve().parents[1]
Q004 = (np.radians([90.0, 0.0, 90.0, 0.0, 0.0, 0.0]), np.radians([45.0, 30.0, 0.0, 45.0, 60.0, 90.0]))
PUMA_POSES = [*Q004, np.zeros(6), np.radians([0.0, -40.0, 30.0, 0.0, 45.0, 0.0])]   # cartesian
# urdf: (poses shipped, the pairs that truly touch somewhere in the joint range)
ARMS = {
    "urdf/puma560.urdf": (PUMA_POSES, {("link_1", "link_5"), ("link_1", "link_6"),    # the trunk
                                       ("link_2", "link_5"), ("link_2", "link_6")}),  # upper arm
    "urdf/puma560_gazebo.urdf": (PUMA_POSES, {("link_1", "link_5"), ("link_1", "link_6"),
                                              ("link_2", "link_5"), ("link_2", "link_6")}),
    # the Panda's zero pose is outside joint 4's range, but the hand must clear the forearm there
    "urdf/panda.urdf": ([np.zeros(7), np.array([0.0, -0.3, 0.0, -2.2, 0.0, 2.0, 0.8])],
                        {("panda_hand", "panda_link1"), ("panda_hand", "panda_link2"),
                         ("panda_hand", "panda_link5"),   # turned into its forearm, folded
                         ("panda_link1", "panda_link5"), ("panda_link1", "panda_link6"), ("panda_link1", "panda_link7"),
                         ("panda_link2", "panda_link7")}),
    "urdf/planar2.urdf": ([np.zeros(2)], set()),
    # the boom's shortest extension (the zero pose retracts it into the shoulder: outside its range)
    "urdf/stanford.urdf": ([np.array([0.0, 0.0, 0.3048, 0.0, 0.0, 0.0]),
                            np.array([0.5, -0.5, 0.8, 1.0, 1.0, 1.0])],
                           {("link_1", "link_6")}),   # the flange into the column
}
SAMPLED = 300


@pytest.fixture(scope="module", params=sorted(ARMS))
def arm(request):
    rel = request.param
    return rel, SelfCollision((ROOT / rel).read_text()), ARMS[rel]


def test_no_shapes_overlap_at_the_shipped_poses(arm):
    rel, scene, (poses, _) = arm
    for q in poses:
        assert scene.overlaps(q) == [], f"{rel} at {np.round(q, 3).tolist()}"


def test_the_004_path_is_free_of_self_contact():
    scene = SelfCollision((ROOT / "urdf/puma560.urdf").read_text())
    for s in np.linspace(0.0, 1.0, 31):
        assert scene.overlaps(Q004[0] + s * (Q004[1] - Q004[0])) == []


def test_only_pairs_that_can_touch_overlap_over_the_joint_range(arm):
    rel, scene, (_, touching) = arm
    seen = scene.pairs_in_contact(scene.sample(SAMPLED, seed=40))   # not the SRDF's seed
    assert set(seen) <= touching, f"{rel}: {seen}"


def test_the_srdf_disables_adjacent_and_never_touching_pairs(arm):
    rel, scene, (_, touching) = arm
    disabled = disabled_pairs((ROOT / rel).with_suffix(".srdf").read_text())
    assert {p for p, why in disabled.items() if why == "Adjacent"} == set(scene.adjacent)
    every = {(a, b) for i, a in enumerate(scene.links) for b in scene.links[i + 1:]}
    # every pair of shaped links is either disabled or one that can touch, not both
    assert set(disabled) | touching == every and not set(disabled) & touching
    assert set(disabled.values()) <= {"Adjacent", "Never"}


def test_the_srdf_is_installed_beside_the_urdf():
    setup = (ROOT / "setup.py").read_text()
    assert 'glob("urdf/*.srdf")' in setup
    assert sorted(p.stem for p in ROOT.glob("urdf/*.srdf")) == sorted(Path(r).stem for r in ARMS)


# three links in a plane, joints about z, a small sphere at joint 2; a sphere of 0.2 m halfway
# along link 1 and one of 0.15 m halfway along link 3: with joints 2 and 3 at 90 deg link 3 runs
# back beside link 1, 0.3 m away, so the spheres' centres are 0.3 m apart and overlap by 0.35 - 0.3 = 50 mm
FOLDING = """<robot name="folding">
  <link name="base"/>
  <link name="a"><inertial><mass value="1"/><inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial>
    <collision><origin xyz="0.5 0 0"/><geometry><sphere radius="0.2"/></geometry></collision></link>
  <link name="b"><inertial><mass value="1"/><inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial>
    <collision><geometry><sphere radius="0.05"/></geometry></collision></link>
  <link name="c"><inertial><mass value="1"/><inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial>
    <collision><origin xyz="0.5 0 0"/><geometry><sphere radius="0.15"/></geometry></collision></link>
  <joint name="j1" type="revolute"><parent link="base"/><child link="a"/><axis xyz="0 0 1"/>
    <limit lower="-3" upper="3" effort="1" velocity="1"/></joint>
  <joint name="j2" type="revolute"><origin xyz="1 0 0"/><parent link="a"/><child link="b"/>
    <axis xyz="0 0 1"/><limit lower="-3" upper="3" effort="1" velocity="1"/></joint>
  <joint name="j3" type="revolute"><origin xyz="0.3 0 0"/><parent link="b"/><child link="c"/>
    <axis xyz="0 0 1"/><limit lower="-3" upper="3" effort="1" velocity="1"/></joint>
</robot>
"""


def test_check_urdf_reports_the_pair_and_its_depth(tmp_path, capsys):
    path = tmp_path / "folding.urdf"
    path.write_text(FOLDING)
    assert SelfCollision(FOLDING).adjacent == {("a", "b"), ("b", "c")}
    assert check_urdf([str(path), "--pose", "0,90,90", "--degrees", "--pose", "0,90,60",
                       "--degrees"]) == 1
    out = capsys.readouterr().out
    assert "pose [0.0, 0.0, 0.0] deg: no shapes overlap" in out
    assert "pose [0.0, 90.0, 90.0] deg: a and c overlap by 50.0 mm" in out
    assert "pose [0.0, 90.0, 60.0] deg: no shapes overlap" in out
    assert check_urdf([str(path)]) == 0


def test_check_urdf_refuses_a_pose_of_the_wrong_length(tmp_path, capsys):
    path = tmp_path / "folding.urdf"
    path.write_text(FOLDING)
    assert check_urdf([str(path), "--pose", "0,1"]) == 1
    assert "expected 3 values (j1, j2, j3)" in capsys.readouterr().err
