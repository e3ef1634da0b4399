"""Frames named by their URDF links (robodyn_ros.dynamics.frames): ``frame_pose``, ``frame_jacobian``,
``frame_motion`` and a task-space law's ``task_link`` give the link's frame exactly as the URDF
defines it, against Pinocchio reading the same file: its BODY frame of that link (``data.oMf``),
``getFrameJacobian`` and the classical acceleration at q̈ = 0 in LOCAL_WORLD_ALIGNED (our "world"),
LOCAL and the spatial acceleration (our "body"), all [v; ω] as ours. No placement is taken from our
own model: the links fixed to a chain link (tool0, ee_link, flange, panda_hand), to the base, and
the child links of joints about x or y (whose canonical joint frames are turned) must all come out
right. Then the names' rules: a joint's name keeps its canonical frame, a name that is both a link's
and a joint's names the link (ANYmal's LF_HAA), "tip" the tip; what a DH model calls its frames;
the refusals; the variants of a model keep the names; the laws on a named link against Pinocchio;
the impedance's rest under its own wrench (doc/control_laws.md); doc/dynamics.md's worked example.
"""
import re
import warnings
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest
from scipy.spatial.transform import Rotation

from robodyn_ros.control.task_space import CartesianImpedance, OperationalSpace
from robodyn_ros.dynamics import ModelError, RobotModel
from robodyn_ros.dynamics.inertial_parameters import standard_parameters, with_parameters
from pin_oracle import frame_motion  # noqa: E402 (test/ is on sys.path)
from test_task_space_laws import SMOOTH, START, settle, task_error
from test_vendor_descriptions import ROBOTS, PinChain, states

ROOT = Path(__file__).resolve().parents[1]
REL = 1e-12
# (file, root link, tip link, links that must be named, links that must not: above the root or
# behind a movable joint off the chain)
CASES = [
    (ROOT / "urdf/puma560.urdf", None, "tool0", ["base_link", "link_3", "link_6", "tool0"], []),
    (ROOT / "urdf/panda.urdf", None, "panda_hand_tcp",
     ["panda_link0", "panda_link4", "panda_link8", "panda_hand", "panda_hand_tcp"], []),
    (ROBOTS / "ur_description/urdf/ur5_robot.urdf", "base_link", "tool0",
     ["base_link", "base", "shoulder_link", "upper_arm_link", "wrist_3_link", "ee_link", "tool0"],
     ["world"]),
    (ROBOTS / "panda_description/urdf/panda.urdf", "panda_link0", "panda_link8",
     ["panda_link0", "panda_link7", "panda_link8", "panda_hand"],
     ["panda_leftfinger", "panda_rightfinger"]),
    # a link and a joint both named LF_HAA (and the others of the leg)
    (ROBOTS / "anymal_c_simple_description/urdf/anymal.urdf", "base", "LF_FOOT",
     ["base", "LF_HAA", "RF_HAA", "LF_HIP", "LF_THIGH", "LF_FOOT"], ["RF_HIP", "LH_FOOT"]),
]
IDS = [f"{path.parent.parent.name}/{path.stem}" for path, *_ in CASES]


def load(path, root, tip):
    with warnings.catch_warnings():   # left-out branches, missing limits, the PUMA's link 3
        warnings.simplefilter("ignore")
        model = RobotModel.from_urdf(path, root_link=root, tip_link=tip)
    return model, PinChain(path, model, root, tip)


@pytest.fixture(scope="module", params=CASES, ids=IDS)
def case(request):
    path, root, tip, named, unnamed = request.param
    return (*load(path, root, tip), named, unnamed)


def body_frame(p, link):
    return p.model.getFrameId(link, pin.BODY)


def scale(x):
    return REL * max(1.0, np.abs(x).max())


def test_every_link_frame_equals_pinocchios(case):
    """Pose, J, J q̇ and J̇ q̇ of every named link, world and body, at three states."""
    model, p, named, _ = case
    assert set(named) <= set(model.frames)
    data = p.model.createData()
    q, qd, _ = states(model, 31, 3)
    for link in model.frames:
        for reference in ("world", "body"):
            for i in range(3):
                ours = model.frame_motion(q[i], qd[i], link, reference)
                theirs = frame_motion(p, data, body_frame(p, link), q[i], qd[i], reference)
                for what, a, b in zip(("pose", "J", "J q̇", "J̇ q̇"), ours, theirs):
                    np.testing.assert_allclose(a, b, rtol=0, atol=scale(b),
                                               err_msg=f"{link} {reference} {what}")
        # the three functions are one
        np.testing.assert_array_equal(model.frame_pose(q[0], link),
                                      model.frame_motion(q[0], 0 * qd[0], link).pose)
        np.testing.assert_array_equal(model.frame_jacobian(q[0], link, "body"),
                                      model.frame_motion(q[0], qd[0], link, "body").jacobian)


def test_links_the_joints_do_not_place_are_refused_listing_the_names(case):
    model, _, named, unnamed = case
    for link in unnamed + ["flange_that_is_not_there"]:
        with pytest.raises(ModelError, match=rf"unknown link '{link}' of '{model.name}'.*'tip'") as info:
            model.frame_pose(np.zeros(model.dof), link)
        assert all(f"'{name}'" in str(info.value) for name in named + model.joint_names[:1])


def joint_axis(p, data, k):
    """Pinocchio's axis of our joint k, in our base, and its joint frame's origin."""
    joint = p.joints[k]
    J = pin.getJointJacobian(p.model, data, joint.id, pin.WORLD)[:, joint.idx_v]
    R = p.root[:3, :3].T
    return R @ J[3:], np.linalg.solve(p.root, data.oMi[joint.id].homogeneous)[:3, 3]


def test_a_joints_name_keeps_its_canonical_frame():
    """On the UR5 a joint's name is the frame with z along the joint's axis at its child link's
    origin (Pinocchio's axis and joint placement); for a joint about y (shoulder_lift_joint) that
    is not the child link's frame, which keeps the URDF's orientation."""
    model, p = load(*CASES[2][:3])
    data = p.model.createData()
    for q in states(model, 32, 3)[0]:
        pin.computeJointJacobians(p.model, data, p.q(q))
        for k, name in enumerate(model.joint_names):
            axis, origin = joint_axis(p, data, k)
            pose = model.frame_pose(q, name)
            np.testing.assert_allclose(pose[:3, 2], axis, rtol=0, atol=1e-12, err_msg=name)
            np.testing.assert_allclose(pose[:3, 3], origin, rtol=0, atol=1e-12, err_msg=name)
        joint, link = model.frame_pose(q, "shoulder_lift_joint"), model.frame_pose(q, "upper_arm_link")
        np.testing.assert_allclose(joint[:3, 3], link[:3, 3], rtol=0, atol=1e-12)
        assert np.abs(joint[:3, :3] - link[:3, :3]).max() > 0.5
    assert [model.frame_index(name) for name in model.joint_names] == list(range(model.dof))


def test_a_name_of_both_a_link_and_a_joint_names_the_link():
    """ANYmal's link LF_HAA (the hip actuator, fixed to the base) is the parent of the joint
    LF_HAA: the name gives the link, which no joint moves, not the joint's frame, which turns
    with the joint (about the same origin)."""
    model, p = load(*CASES[4][:3])
    assert "LF_HAA" in model.joint_names and "LF_HAA" in model.frames
    data = p.model.createData()
    q = np.array([1.0, 0.5, -0.7])
    pin.framesForwardKinematics(p.model, data, p.q(q))
    link = np.linalg.solve(p.root, data.oMf[body_frame(p, "LF_HAA")].homogeneous)
    joint = np.linalg.solve(p.root, data.oMf[p.model.getFrameId("LF_HAA", pin.JOINT)].homogeneous)
    np.testing.assert_allclose(model.frame_pose(q, "LF_HAA"), link, rtol=0, atol=1e-12)
    assert np.abs(link[:3, :3] - joint[:3, :3]).max() > 0.5
    assert not model.frame_jacobian(q, "LF_HAA").any()
    assert model.frame_index("LF_HAA") == -1


def test_the_tip_and_its_link_are_one_frame():
    """"tip", None and "" are the tip link's frame; ``frame_index`` (the node's reach bound) gives
    n for it, the carrying joint for a link before the tip, -1 for a link on the base."""
    model, _ = load(*CASES[2][:3])
    n = model.dof
    q = states(model, 34, 1)[0][0]
    for name in (None, "", "tip"):
        np.testing.assert_array_equal(model.frame_pose(q, name), model.frame_pose(q, "tool0"))
    assert [model.frame_index(name) for name in ("tip", "tool0", "ee_link", "base")] == [n, n, n - 1, -1]
    assert model.frame_names[0] == "tip" and set(model.frames) < set(model.frame_names)


def test_a_dh_model_names_its_joints_and_the_tip():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = RobotModel.from_yaml(ROOT / "config" / "puma560_dh.yaml")
    assert not model.frames
    assert model.frame_names == ["tip", *model.joint_names]
    with pytest.raises(ModelError, match="a model not loaded from a URDF has no link names"):
        model.frame_pose(np.zeros(model.dof), "tool0")
    with pytest.raises(ModelError, match="a frame is named by a string"):
        model.frame_pose(np.zeros(model.dof), 0)


def test_the_variants_of_a_model_keep_the_link_names():
    model, _ = load(*CASES[0][:3])
    q = states(model, 35, 1)[0][0]
    variants = (model.with_payload(2.0, [0.0, 0.0, 0.05]), model.scaled(mass=1.2),
                with_parameters(model, 1.1 * standard_parameters(model)))
    for variant in variants:
        assert dict(variant.frames).keys() == dict(model.frames).keys()
        np.testing.assert_array_equal(variant.frame_pose(q, "link_3"), model.frame_pose(q, "link_3"))


def test_a_link_frame_must_be_a_joint_and_a_pose():
    model, _ = load(*CASES[0][:3])
    for frames, said in (({"x": (6, np.eye(4))}, "joint index must be -1 .* to 5"),
                         ({"x": (0, np.eye(3))}, "pose must be a 4x4"),
                         ({"x": np.eye(4)}, r"expected \(joint index, 4x4 pose\)"),
                         ({"": (0, np.eye(4))}, "non-empty string")):
        with pytest.raises(ModelError, match=said):
            RobotModel(model.links, model.tip, frames=frames)


# ------------------------------------------------------------------ the laws on a named link

def pin_task(p, link, q, qd):
    """Pose, J (world), twist and J̇ q̇ of ``link`` by Pinocchio."""
    return frame_motion(p, p.model.createData(), body_frame(p, link), q, qd, "world")


LAW_LINKS = [(0, "tool0"), (2, "tool0"), (2, "ee_link"), (3, "panda_hand")]


@pytest.mark.parametrize("index,link", LAW_LINKS, ids=[f"{IDS[i]}:{link}" for i, link in LAW_LINKS])
def test_operational_space_on_a_named_link_closes_its_loop(index, link):
    """With task_link a URDF link, the closed loop obeys ẍ = ẍ_d + K_d ė + K_p e for that link as
    Pinocchio places it: ẍ = J q̈ + J̇ q̇ (Pinocchio's) with q̈ our forward dynamics of the law's
    torque (which agrees with Pinocchio's ABA: test_dynamics_pinocchio)."""
    model, p = load(*CASES[index][:3])
    model = model.scaled(friction=0.0)
    kp, kd = np.array([100.0, 120.0, 80.0, 60.0, 50.0, 40.0]), np.array([20.0, 22.0, 18.0, 15.0, 14.0, 12.0])
    law = OperationalSpace(model, {"task_kp": kp.tolist(), "task_kd": kd.tolist(), "task_link": link,
                                   "singularity_threshold": 1e-9})
    rng = np.random.default_rng(36)
    start = START.get(model.name, np.radians([0.0, -60.0, 90.0, -120.0, -90.0, 0.0]))
    for _ in range(3):
        q, qd = start + rng.uniform(-0.3, 0.3, model.dof), rng.uniform(-1, 1, model.dof)
        target, twist, acceleration = np.eye(4), rng.uniform(-1, 1, 6), rng.uniform(-3, 3, 6)
        target[:3, :3] = Rotation.from_rotvec(rng.uniform(-1, 1, 3)).as_matrix()
        target[:3, 3] = rng.uniform(-0.5, 0.5, 3)
        law.set_target(target[:3, 3], target[:3, :3], twist, acceleration)
        qdd = model.forward_dynamics(q, qd, law.compute(q, qd, q, qd, np.zeros(model.dof)))
        pose, J, v, bias = pin_task(p, link, q, qd)
        np.testing.assert_allclose(law.pose, pose, rtol=0, atol=1e-12)
        expected = acceleration + kd * (twist - v) + kp * task_error(target, pose)
        np.testing.assert_allclose(J @ qdd + bias, expected, rtol=0,
                                   atol=1e-8 * np.abs(expected).max())


@pytest.mark.parametrize("index,link", LAW_LINKS, ids=[f"{IDS[i]}:{link}" for i, link in LAW_LINKS])
def test_impedance_on_a_named_link_is_its_spring(index, link):
    """At rest, no posture task, no friction: τ = Jᵀ K e + g with Pinocchio's J, pose and g."""
    model, p = load(*CASES[index][:3])
    stiffness = np.array([500.0, 700.0, 900.0, 40.0, 60.0, 80.0])
    law = CartesianImpedance(model, {"stiffness": stiffness.tolist(), "task_link": link,
                                     "posture_kp": 0.0, "posture_kd": 0.0, "friction": False})
    rng, zero = np.random.default_rng(37), np.zeros(model.dof)
    q = rng.uniform(-1.5, 1.5, model.dof)
    pose, J, _, _ = pin_task(p, link, q, zero)
    target = pose.copy()
    target[:3, 3] += [0.02, -0.03, 0.01]
    target[:3, :3] = Rotation.from_rotvec([0.05, 0.1, -0.08]).as_matrix() @ pose[:3, :3]
    law.set_target(target[:3, 3], target[:3, :3])
    expected = J.T @ (stiffness * task_error(target, pose)) + p.gravity(q)
    np.testing.assert_allclose(law.compute(q, zero, q, zero, zero, 1e-3), expected, rtol=0,
                               atol=1e-10 * np.abs(expected).max())


def test_impedance_rests_at_the_target_plus_the_compliance_of_its_own_wrench():
    """doc/control_laws.md: with ``set_wrench(w)`` (the wrench the frame exerts) and nothing to
    press on, the frame comes to rest at x_d + K⁻¹ w (every axis within 3 %)."""
    model = SMOOTH["puma560"]
    stiffness = np.array([800.0, 800.0, 800.0, 80.0, 80.0, 80.0])    # the law's default
    w = np.array([8.0, -5.0, 6.0, 0.4, -0.3, 0.5])
    law = CartesianImpedance(model)
    law.set_wrench(w)
    q = settle(model, law, np.zeros(6))
    moved = -task_error(model.frame_pose(START["puma560"]), model.frame_pose(q))   # x − x_d
    ratio = moved / (w / stiffness)
    assert np.all(np.abs(ratio - 1.0) < 0.03), ratio


def test_the_worked_example_on_the_dynamics_page_runs(monkeypatch):
    """doc/dynamics.md's example, as written; its tool0 pose is Pinocchio's."""
    page = (ROOT / "doc" / "dynamics.md").read_text()
    section = page.split("## Frames", 1)[1]
    example = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    monkeypatch.chdir(ROOT)
    namespace = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        exec(compile(example, "doc/dynamics.md", "exec"), namespace)
    model, p = load(*CASES[0][:3])
    pose, J, twist, bias = pin_task(p, "tool0", namespace["q"], namespace["qd"])
    np.testing.assert_allclose(namespace["T"], pose, rtol=0, atol=1e-12)
    np.testing.assert_allclose(namespace["J"], J, rtol=0, atol=1e-12)
    np.testing.assert_allclose(namespace["xdd"], J @ namespace["qdd"] + bias, rtol=0, atol=1e-10)


def test_the_reach_bound_holds_for_every_named_frame(case):
    """``control.inverse_kinematics.reach`` bounds the distance from the first joint's axis to any
    named frame's origin: a frame offset from its joint away from the tip (the UR5's ee_link, 8 cm
    off wrist_3) was bounded without its offset, so a reachable target could be refused."""
    from robodyn_ros.control.inverse_kinematics import reach
    model, _, _, _ = case
    rng = np.random.default_rng(3)
    lower = np.where(np.isfinite(model.lower), model.lower, -np.pi)
    upper = np.where(np.isfinite(model.upper), model.upper, np.pi)
    for name in model.frame_names:
        origin, longest = reach(model, name)
        for q in rng.uniform(lower, upper, (50, model.dof)):
            assert np.linalg.norm(model.frame_pose(q, name)[:3, 3] - origin) <= longest + 1e-12, name
