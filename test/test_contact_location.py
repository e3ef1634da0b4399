"""Where a contact is (``control/contact_location.py``): the URDF's collision shapes on the model's
joints, and the fit of a point force to the residual. The residuals here are made with the model's
own frame Jacobian moved to the point (v_p = v_o + ω × (p − o)), a second formulation of what
``locate`` builds column by column. MuJoCo's contacts judge it in test_isolation_scenes.py."""
import numpy as np
import pytest

from robodyn_ros.control.contact_location import link_shapes, locate
from robodyn_ros.dynamics import RobotModel
from robodyn_ros.dynamics.link import ModelError
from robodyn_ros.plumbing.resources import find_share_file

PANDA = find_share_file("urdf/panda.urdf")
MODEL = RobotModel.from_urdf(str(PANDA))
START = np.array([0.0, -0.3, 0.0, -2.2, 0.0, 2.0, 0.8])


def test_the_shapes_ride_on_their_links():
    shapes = link_shapes(MODEL, PANDA.read_text())
    # a cylinder per link, two on the forearm, the hand's two boxes on the last link
    assert [s.joint for s in shapes] == [0, 1, 2, 3, 4, 4, 5, 6, 6, 6]
    hand = shapes[8]   # its body box 0.06 x 0.2 x 0.065: the axis along the 0.2 m side
    assert hand.half == pytest.approx(0.1) and hand.radius == pytest.approx(np.hypot(0.06, 0.065) / 2)
    # placed where the URDF puts it: the box's centre 32.5 mm out along the hand frame's z
    q = START
    centre = (MODEL.link_frames(q)[6] @ hand.pose)[:3, 3]
    expected = MODEL.frame_pose(q, "panda_hand") @ np.array([0.0, 0.0, 0.0325, 1.0])
    np.testing.assert_allclose(centre, expected[:3], atol=1e-12)
    axis = (MODEL.link_frames(q)[6] @ hand.pose)[:3, 2]
    assert abs(axis @ MODEL.frame_pose(q, "panda_hand")[:3, 1]) == pytest.approx(1.0)


def test_a_bad_shape_is_refused_naming_the_link():
    urdf = PANDA.read_text().replace('<box size="0.06 0.2 0.065" />', '<box size="0.06 0.2" />')
    with pytest.raises(ModelError, match="link 'panda_hand' collision 1 box size"):
        link_shapes(MODEL, urdf)
    no_mesh = PANDA.read_text().replace('<cylinder length="0.133" radius="0.07" />',
                                        '<mesh filename="link1.stl" />')
    assert [s.joint for s in link_shapes(MODEL, no_mesh)][0] == 1   # link 1's meshes skipped


def test_a_point_force_is_located_on_its_link():
    shapes = link_shapes(MODEL, PANDA.read_text())
    rng = np.random.default_rng(40)
    found, tried = 0, 0
    for _ in range(20):
        q = START + rng.uniform(-0.5, 0.5, 7)
        frames = MODEL.link_frames(q)
        for shape in shapes:
            pose = frames[shape.joint] @ shape.pose
            point = pose[:3, 3] + shape.radius * pose[:3, 0]     # on its surface
            J = MODEL.frame_jacobian(q, MODEL.joint_names[shape.joint])
            at_point = J[:3] + np.cross(J[3:].T, point - frames[shape.joint][:3, 3]).T
            r = at_point.T @ rng.normal(0.0, 10.0, 3)
            assert not np.any(r[shape.joint + 1:])   # nothing after the link touched
            joint = locate(MODEL, shapes, q, r)
            # never before the link: a point there cannot explain the torque on this joint
            assert joint is not None and joint >= shape.joint - (abs(r[shape.joint]) < 1e-9)
            found += joint == shape.joint
            tried += 1
    # the rest are ties: a force along a line that meets a later link's shapes as well
    assert found / tried > 0.8, (found, tried)
    assert locate(MODEL, shapes, START, np.zeros(7)) is None
    assert locate(MODEL, shapes, START, np.ones(7), first=7) is None
