"""ROS-Industrial descriptions as their makers lay them out (issue 45, item 6): several leaf links
(``base``, ``tool0``, ``ft_frame``, example-robot-data's ``ee_link``), the tool frame ``tool0``
behind ``flange``, the base's inertia on a ``base_link_inertia`` turned by π. Without a tip the
chain runs to ``tool0`` (else ``flange``) and says so in one line; the model equals Pinocchio's on
the same file, and example-robot-data's UR arms identify and control as published.

The ur_description-style file is written here from the UR5e's published kinematics (the joint
origins of ur_description's default_kinematics: d1 0.1625, a2 −0.425, a3 −0.3922, d4 0.1333,
d5 0.0997, d6 0.0996) with inertials of about its masses, each in a frame of its own.
"""
import json
import warnings

import numpy as np
import pinocchio as pin
import pytest

from robodyn_ros.apps.identify import main as identify_main
from robodyn_ros.control.joints import JointOrder
from robodyn_ros.control.loop import ControlLoop
from robodyn_ros.dynamics import ModelError, RobotModel
from robodyn_ros.dynamics.urdf import TipChosen
from robodyn_ros.identification.bag import write_joint_states
from robodyn_ros.identification.synthetic import synthetic_run
from robodyn_ros.sim import make_engine
from pin_oracle import configuration
from vendor_robots import robots_directory

PI, HALF = np.pi, np.pi / 2
# joint: (parent, child, xyz, rpy) of ur_description's UR5e
JOINTS = [("shoulder_pan_joint", "base_link_inertia", "shoulder_link", (0, 0, 0.1625), (0, 0, 0)),
          ("shoulder_lift_joint", "shoulder_link", "upper_arm_link", (0, 0, 0), (HALF, 0, 0)),
          ("elbow_joint", "upper_arm_link", "forearm_link", (-0.425, 0, 0), (0, 0, 0)),
          ("wrist_1_joint", "forearm_link", "wrist_1_link", (-0.3922, 0, 0.1333), (0, 0, 0)),
          ("wrist_2_joint", "wrist_1_link", "wrist_2_link", (0, -0.0997, 0), (HALF, 0, 0)),
          ("wrist_3_joint", "wrist_2_link", "wrist_3_link", (0, 0.0996, 0), (HALF, PI, PI))]
FIXED = [("base_link-base_link_inertia", "base_link", "base_link_inertia", (0, 0, 0), (0, 0, PI)),
         ("base_link-base_fixed_joint", "base_link", "base", (0, 0, 0), (0, 0, PI)),
         ("wrist_3-flange", "wrist_3_link", "flange", (0, 0, 0), (0, -HALF, -HALF)),
         ("flange-tool0", "flange", "tool0", (0, 0, 0), (HALF, 0, HALF)),
         ("wrist_3_link-ft_frame", "wrist_3_link", "ft_frame", (0, 0, 0), (PI, 0, 0))]
# link: (mass, com xyz, inertial rpy, principal moments)
INERTIALS = {"base_link_inertia": (4.0, (0, 0, 0), (0, 0, 0), (0.0044, 0.0044, 0.0072)),
             "shoulder_link": (3.761, (0, 0, 0), (0, 0, 0), (0.0102, 0.0102, 0.0067)),
             "upper_arm_link": (8.058, (-0.2125, 0, 0.138), (0, HALF, 0), (0.1339, 0.1339, 0.0151)),
             "forearm_link": (2.846, (-0.1961, 0, 0.007), (0, HALF, 0), (0.0312, 0.0312, 0.0041)),
             "wrist_1_link": (1.37, (0, 0, 0), (0, 0, 0), (0.0026, 0.0026, 0.0022)),
             "wrist_2_link": (1.3, (0, 0, 0), (0, 0, 0), (0.0026, 0.0026, 0.0022)),
             "wrist_3_link": (0.365, (0, 0, -0.0229), (0, 0, 0), (0.0001, 0.0001, 0.0002))}


def ur_description_layout():
    """A UR5e URDF laid out as ur_description's xacro expands it (with its ros2_control block)."""
    def xyz(v):
        return " ".join(f"{x:.17g}" for x in v)

    links = ["world", "base_link", "base", "flange", "tool0", "ft_frame"]
    parts = ['<?xml version="1.0" encoding="utf-8"?>', '<robot name="ur5e">']
    for name in links[1:]:
        parts.append(f'<link name="{name}"/>')
    for name, (mass, com, rpy, moments) in INERTIALS.items():
        parts.append(f'<link name="{name}"><inertial><mass value="{mass}"/><origin xyz="{xyz(com)}" '
                     f'rpy="{xyz(rpy)}"/><inertia ixx="{moments[0]}" ixy="0" ixz="0" iyy="{moments[1]}" '
                     f'iyz="0" izz="{moments[2]}"/></inertial></link>')
    for name, parent, child, origin, rpy in FIXED:
        parts.append(f'<joint name="{name}" type="fixed"><parent link="{parent}"/><child link="{child}"/>'
                     f'<origin xyz="{xyz(origin)}" rpy="{xyz(rpy)}"/></joint>')
    for name, parent, child, origin, rpy in JOINTS:
        parts.append(f'<joint name="{name}" type="revolute"><parent link="{parent}"/><child link="{child}"/>'
                     f'<origin xyz="{xyz(origin)}" rpy="{xyz(rpy)}"/><axis xyz="0 0 1"/>'
                     '<limit lower="-6.28" upper="6.28" effort="150" velocity="3.14"/>'
                     '<dynamics damping="0" friction="0"/></joint>')
    parts.append('<ros2_control name="ur5e" type="system"><hardware><plugin>ur_robot_driver/URPositionHardwareInterface'
                 '</plugin></hardware></ros2_control>')
    parts.append("</robot>")
    return "\n".join(parts)


def load_saying(path, **chain):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = RobotModel.from_urdf(path, **chain)
    return model, [str(w.message) for w in caught if issubclass(w.category, TipChosen)]


def pinocchio_agrees(path, model, tip="tool0", seed=1):
    """Our torques, mass matrix and tip pose against Pinocchio's on the same file."""
    p = pin.buildModelFromUrdf(str(path))
    data = p.createData()
    joints = [p.joints[p.getJointId(name)] for name in model.joint_names]
    rng = np.random.default_rng(seed)
    for _ in range(4):
        q, qd, qdd = (rng.uniform(-2, 2, model.dof) for _ in range(3))
        qp, v = configuration(p, joints, q), np.zeros(p.nv)
        order = [j.idx_v for j in joints]
        v[order] = qd
        a = np.zeros(p.nv)
        a[order] = qdd
        theirs = pin.rnea(p, data, qp, v, a)[order]
        np.testing.assert_allclose(model.inverse_dynamics(q, qd, qdd), theirs, rtol=0,
                                   atol=1e-10 * np.abs(theirs).max())
        pin.framesForwardKinematics(p, data, qp)
        np.testing.assert_allclose(model.frame_pose(q), data.oMf[p.getFrameId(tip, pin.BODY)].homogeneous,
                                   rtol=0, atol=1e-12)


def test_a_ur_description_layout_runs_to_tool0_and_says_so(tmp_path):
    path = tmp_path / "ur5e.urdf"
    path.write_text(ur_description_layout())
    model, said = load_saying(path)
    assert model.joint_names == [j[0] for j in JOINTS]
    assert len(said) == 1 and "\n" not in said[0]
    assert "'tool0'" in said[0] and "['base', 'ft_frame', 'tool0']" in said[0] and "tip_link" in said[0]
    pinocchio_agrees(path, model)
    # a tip named is taken without a word; flange is the tool frame where tool0 is absent
    assert load_saying(path, tip_link="ft_frame")[1] == []
    no_tool0 = ur_description_layout().replace('<link name="tool0"/>', "").replace(
        '<joint name="flange-tool0" type="fixed"><parent link="flange"/><child link="tool0"/>'
        '<origin xyz="0 0 0" rpy="1.5707963267948966 0 1.5707963267948966"/></joint>', "")
    assert "tool0" not in no_tool0
    path.write_text(no_tool0)
    model, said = load_saying(path)
    assert "'flange'" in said[0]
    pinocchio_agrees(path, model, tip="flange")


def test_leaves_without_a_tool_frame_are_still_refused_naming_them(tmp_path):
    path = tmp_path / "two_leaves.urdf"
    path.write_text(ur_description_layout().replace('"tool0"', '"tool_a"').replace('"flange"', '"mount"'))
    with pytest.raises(ModelError, match=r"several leaf links .*'tool_a'.* none of them tool0 or flange"):
        RobotModel.from_urdf(path)


@pytest.mark.parametrize("file", ["ur5_robot.urdf", "ur10_robot.urdf"])
def test_example_robot_data_urs_load_as_published(file):
    path = robots_directory() / "ur_description" / "urdf" / file
    model, said = load_saying(path)
    assert "['base', 'ee_link', 'tool0']" in said[0] and model.dof == 6
    pinocchio_agrees(path, model)


def test_a_published_ur_identifies_without_a_tip_link(tmp_path, capsys):
    path = robots_directory() / "ur_description" / "urdf" / "ur5_robot.urdf"
    model, _ = load_saying(path)
    truth = model.with_payload(1.5, com=(0.0, 0.01, 0.05))
    run = synthetic_run(truth, np.array([0.0, -1.2, 1.2, -1.5, -1.57, 0.0]), 12.0, noise=0.05)
    bag = write_joint_states(tmp_path / "run", run.t, run.joint_names, run.position, run.velocity, run.effort)
    out, report = tmp_path / "ur5_identified.urdf", tmp_path / "report.json"
    assert identify_main([str(bag), "--urdf", str(path), "-o", str(out), "--json", str(report)]) == 0
    printed = capsys.readouterr().out
    assert "tip_link 'tool0' (the tool frame)" in printed
    errors = json.loads(report.read_text())["relative_error_stacked"]
    assert errors["held-out/consistent"] < 0.01 < errors["held-out/nominal"]
    identified, said = load_saying(out)          # the identified file as published: the same chain
    assert said and identified.joint_names == model.joint_names
    np.testing.assert_allclose(identified.frame_pose(run.position[0]), model.frame_pose(run.position[0]), atol=1e-12)


def test_a_published_ur_is_controlled_as_published():
    """The controller's loop on example-robot-data's UR5 as published (no root or tip given),
    against our engine of the same file: computed torque brings it to its goal."""
    path = robots_directory() / "ur_description" / "urdf" / "ur5_robot.urdf"
    model, _ = load_saying(path)
    order = JointOrder(model.joint_names, model.joint_names)
    t, dt = [0.0], 1e-3
    loop = ControlLoop(model, order, {"control_law": "computed_torque", "kp": 100.0, "kd": 20.0}, 0.1,
                       clock=lambda: t[0], steady=lambda: t[0])
    engine = make_engine("robodyn", model, dt)
    q, qd = np.array([0.0, -1.2, 1.2, -1.5, -1.57, 0.0]), np.zeros(6)
    loop.set_state(order.names, q, qd, stamp=0.0)
    goal = q + 0.2
    loop.set_reference(goal)
    for _ in range(1500):
        loop.set_state(order.names, q, qd, stamp=t[0])
        q, qd = engine.step(q, qd, loop.cycle().effort)
        t[0] += dt
    np.testing.assert_allclose(q, goal, atol=1e-4)
