"""Where a contact is (``control/contact_location.py``, ``control/link_shapes.py``): the URDF's
collision primitives on the model's joints — a link fixed to a moving one (the hand, a tool at
the TCP) on that link's joint — their surfaces, and the fit of a force pressing on them to the
residual. The residuals here are made with the model's own frame Jacobian moved to the point
(v_p = v_o + ω × (p − o)), a second formulation of the locator's columns; the pushes come from
outside the arm along MuJoCo's rays (mj_ray: where a ray first meets the arm's geoms), which
nothing of ours computes. MuJoCo's contacts judge the whole guard in test_isolation_scenes.py."""
import numpy as np
import pytest

from robodyn_ros.control.collision import child_links
from robodyn_ros.control.contact_location import contact, link_shapes, locate
from robodyn_ros.control.link_shapes import closest, inside
from robodyn_ros.dynamics import RobotModel
from robodyn_ros.dynamics.link import ModelError
from robodyn_ros.plumbing.resources import find_share_file
from robodyn_ros.sim.contact_scenes import ATTACHMENTS, attach

PANDA = find_share_file("urdf/panda.urdf")
MODEL = RobotModel.from_urdf(str(PANDA))
START = np.array([0.0, -0.3, 0.0, -2.2, 0.0, 2.0, 0.8])
# every kind of primitive, on a two-joint arm, the last on a link fixed to the second
KINDS = """<robot name="kinds">
  <link name="base"/>
  <link name="a"><inertial><mass value="1"/><origin xyz="0.2 0 0"/>
    <inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial>
    <collision><origin xyz="0.2 0 0" rpy="0 1.5707963 0"/>
      <geometry><capsule radius="0.04" length="0.3"/></geometry></collision>
    <collision><origin xyz="0.05 0 0.02"/><geometry><sphere radius="0.06"/></geometry></collision>
  </link>
  <link name="b"><inertial><mass value="1"/><origin xyz="0.15 0 0"/>
    <inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial>
    <collision><origin xyz="0.15 0 0" rpy="0.3 1.5707963 0"/>
      <geometry><cylinder radius="0.03" length="0.25"/></geometry></collision></link>
  <link name="tool"><collision><origin xyz="0.05 0 0" rpy="0.2 0.1 0.4"/>
      <geometry><box size="0.1 0.04 0.06"/></geometry></collision></link>
  <joint name="j1" type="revolute"><parent link="base"/><child link="a"/><axis xyz="0 0 1"/>
    <limit effort="10" velocity="1" lower="-3" upper="3"/></joint>
  <joint name="j2" type="revolute"><parent link="a"/><child link="b"/><origin xyz="0.4 0 0"/><axis xyz="0 1 0"/>
    <limit effort="10" velocity="1" lower="-3" upper="3"/></joint>
  <joint name="mount" type="fixed"><parent link="b"/><child link="tool"/><origin xyz="0.3 0 0"/></joint>
</robot>"""


def test_the_shapes_ride_on_their_links():
    shapes = link_shapes(MODEL, PANDA.read_text())
    # a cylinder per link, two on the forearm, the hand's two boxes on the last link's joint
    assert [s.joint for s in shapes] == [0, 1, 2, 3, 4, 4, 5, 6, 6, 6]
    assert [s.link for s in shapes[-3:]] == ["panda_link7", "panda_hand", "panda_hand"]
    hand = shapes[8]   # its body box 0.06 x 0.2 x 0.065, as it is
    assert hand.kind == "box" and hand.size == pytest.approx((0.03, 0.1, 0.0325))
    # placed where the URDF puts it: the box's centre 32.5 mm out along the hand frame's z
    q = START
    centre = (MODEL.link_frames(q)[6] @ hand.pose)[:3, 3]
    expected = MODEL.frame_pose(q, "panda_hand") @ np.array([0.0, 0.0, 0.0325, 1.0])
    np.testing.assert_allclose(centre, expected[:3], atol=1e-12)
    # a tool two fixed joints past the flange (at the hand's TCP) rides on the last joint too
    urdf = attach(PANDA.read_text(), "tool")
    tool = [s for s in link_shapes(RobotModel.from_urdf(urdf), urdf) if s.link == "tool"]
    assert [(s.joint, s.kind) for s in tool] == [(6, "cylinder")]


def test_a_bad_shape_is_refused_naming_the_link():
    urdf = PANDA.read_text().replace('<box size="0.06 0.2 0.065" />', '<box size="0.06 0.2" />')
    with pytest.raises(ModelError, match="link 'panda_hand' collision 1 box size"):
        link_shapes(MODEL, urdf)
    flat = PANDA.read_text().replace('<box size="0.06 0.2 0.065" />', '<box size="0.06 0 0.065" />')
    with pytest.raises(ModelError, match="link 'panda_hand' collision 1 box size.* > 0"):
        link_shapes(MODEL, flat)
    no_mesh = PANDA.read_text().replace('<cylinder length="0.133" radius="0.07" />',
                                        '<mesh filename="link1.stl" />')
    assert [s.joint for s in link_shapes(MODEL, no_mesh)][0] == 1   # link 1's meshes skipped


def test_every_kind_is_sampled_on_its_surface_and_projected_onto_it():
    model = RobotModel.from_urdf(KINDS.replace("capsule", "cylinder"))   # urdfdom knows no capsule
    shapes = link_shapes(model, KINDS, spacing=0.01)
    assert [(s.link, s.kind, s.joint) for s in shapes] == [
        ("a", "capsule", 0), ("a", "sphere", 0), ("b", "cylinder", 1), ("tool", "box", 1)]
    rng = np.random.default_rng(5)
    for s in shapes:
        # on the surface, the normal out of it; the samples cover it (none further than spacing)
        assert np.all(inside(s, s.points - 1e-6 * s.normals) & ~inside(s, s.points + 1e-6 * s.normals)
                      | _edge(s, s.points)), s.kind
        fine = link_shapes(model, KINDS, spacing=0.002)[shapes.index(s)].points
        gap = np.min(np.linalg.norm(fine[:, None] - s.points[None], axis=2), axis=1)
        assert gap.max() < 0.01, s.kind
        # closest: on the surface, no nearer than any fine sample, its normal leads out
        x = s.pose[:3, 3] + rng.normal(0.0, 0.08, (300, 3))
        p, n = closest(s, x)
        assert np.all(inside(s, p, -1e-9) & ~inside(s, p, 1e-9)), s.kind
        assert np.all(~inside(s, p + 1e-4 * n, -1e-9)), s.kind
        nearest = np.min(np.linalg.norm(fine[None] - x[:, None], axis=2), axis=1)
        assert np.all(np.linalg.norm(p - x, axis=1) <= nearest + 1e-12), s.kind


def _edge(shape, points):
    """Points on an edge of a cylinder or box (where a face's normal is one of two)."""
    local = (points - shape.pose[:3, 3]) @ shape.pose[:3, :3]
    size = np.asarray(shape.size)
    if shape.kind == "box":
        return np.sum(np.isclose(np.abs(local), size), axis=1) > 1
    if shape.kind == "cylinder":
        return np.isclose(np.abs(local[:, 2]), size[1]) & np.isclose(np.hypot(*local[:, :2].T), size[0])
    return np.zeros(len(points), bool)


def point_torques(model, q, k, point, force):
    """τ of ``force`` at ``point`` on body k: the frame Jacobian of joint k's frame moved there."""
    J = model.frame_jacobian(q, model.joint_names[k])
    at_point = J[:3] + np.cross(J[3:].T, point - model.link_frames(q)[k][:3, 3]).T
    return at_point.T @ force


@pytest.mark.parametrize("attached", ["", *ATTACHMENTS])
def test_a_push_from_outside_is_named_on_the_link_it_meets(attached):
    """A push along a ray from outside the arm, where MuJoCo's mj_ray first meets its geoms: the
    link a joint moves that carries the geom met (the hand, the tool, the payload: the last link)
    is the one located, for every push on the links whose residual fixes the line of force (the
    joints up to it span the wrench: links 6 and 7 and what is fixed to them), and for nearly
    every one on the forearm. Before, a sample 5 to 10 mm off the line lost to a point of the
    link behind it on the line (main's locator on these pushes, with the hand, the tool, the
    payload: link 6 in 48 of 57, 41 of 49, 43 of 50; link 7 in 28 of 29, 37 of 38, 41 of 42)."""
    mujoco = pytest.importorskip("mujoco")
    from robodyn_ros.sim.contact import moving_link
    from robodyn_ros.sim.mujoco_engine import shapes_spec
    urdf = attach(PANDA.read_text(), attached) if attached else PANDA.read_text()
    model = RobotModel.from_urdf(urdf)
    links, shapes = child_links(urdf, model.joint_names), link_shapes(model, urdf)
    m = shapes_spec(urdf, 0).compile()
    d = mujoco.MjData(m)
    address = [m.jnt_qposadr[mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_JOINT, j)]
               for j in model.joint_names]
    rng = np.random.default_rng(7)
    met = np.zeros(1, np.int32)
    found, tried = {}, {}
    for _ in range(300):
        q = START + rng.uniform(-0.4, 0.4, 7)
        d.qpos[address] = q
        mujoco.mj_kinematics(m, d)
        body = rng.choice([b for b in range(1, m.nbody) if m.body_geomnum[b] > 0])
        u = rng.normal(size=3)
        u /= np.linalg.norm(u)
        start = d.xpos[body] + rng.normal(0.0, 0.05, 3) - 0.5 * u
        distance = mujoco.mj_ray(m, d, start, u, None, 1, -1, met)
        link = moving_link(m, int(m.geom_bodyid[met[0]])) if distance >= 0.0 else None
        if link not in links[4:]:
            continue
        k = links.index(link)
        point, push = start + distance * u, rng.uniform(20.0, 100.0) * u
        r = point_torques(model, q, k, point, push)
        assert not np.any(r[k + 1:])
        shape, located, force = contact(model, shapes, q, r)
        found[link] = found.get(link, 0) + (shape.joint == k)
        tried[link] = tried.get(link, 0) + 1
        if k >= 5:
            assert shape.joint == k, (link, m.body(m.geom_bodyid[met[0]]).name, q.tolist())
            # and where, and with what force (the search may stop on a shape's rim: mm off)
            assert np.linalg.norm(located - point) < 5e-3
            np.testing.assert_allclose(force, push, rtol=0.0, atol=0.02 * np.linalg.norm(push))
    assert tried["panda_link6"] > 20 and tried["panda_link7"] > 20
    assert found["panda_link5"] >= 0.8 * tried["panda_link5"]


def test_no_residual_no_location():
    shapes = link_shapes(MODEL, PANDA.read_text())
    assert locate(MODEL, shapes, START, np.zeros(7)) is None
    assert locate(MODEL, shapes, START, np.ones(7), first=7) is None
