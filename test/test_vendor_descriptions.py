"""Vendor robot descriptions as their makers publish them (example-robot-data, from PyPI: UR, Panda,
Talos, ANYmal, Kinova), loaded as they are, compared with Pinocchio reading the same files.

Each case is a serial chain cut out of a published file by root and tip link. Pinocchio builds the
whole tree with its own (C++ urdfdom) parser; the chain is cut out of it independently: every joint
off the chain stays at its neutral position and at rest, and the bodies behind it are zeroed, since
our loader leaves out branches through movable joints (a gripper's fingers, the other legs).
Gravity is ours, turned into Pinocchio's world frame when the root link is not the file's root.
Pinocchio parses URDF's <dynamics damping friction> into ``model.damping`` and ``model.friction``
but its rnea does not apply them, so our friction torques are compared with those values apart.
"""
import warnings
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest

from robodyn_ros.dynamics import RobotModel
from vendor_robots import robots_directory
from pin_oracle import configuration  # noqa: E402 (test/ is on sys.path)

REL = 1e-12


ROBOTS = robots_directory()
# (file, root_link, tip_link): what each case exercises
CHAINS = [
    # encoding="utf-8" declaration; the root link is below the file's root ("world")
    ("ur_description/urdf/ur5_robot.urdf", "base_link", "tool0"),
    ("ur_description/urdf/ur10_robot.urdf", None, "wrist_3_link"),
    # a tree: the fingers (prismatic) are left out; <dynamics damping="0.003">
    ("panda_description/urdf/panda.urdf", "panda_link0", "panda_link8"),
    # <dynamics damping="1.0" friction="1.0">; the gripper beyond the tip is left out
    ("talos_data/robots/talos_left_arm.urdf", None, "arm_left_7_link"),
    # one leg of a quadruped; encoding="utf-8"
    ("anymal_c_simple_description/urdf/anymal.urdf", "base", "LF_FOOT"),
    # continuous joints; encoding="utf-8"
    ("kinova_description/robots/kinova.urdf", None, "j2s6s200_end_effector"),
]
IDS = [f"{Path(f).stem}:{tip}" for f, _, tip in CHAINS]


def load(file, root, tip):
    with warnings.catch_warnings():   # left-out branches, missing limits: warned, rightly
        warnings.simplefilter("ignore")
        return RobotModel.from_urdf(ROBOTS / file, root_link=root, tip_link=tip)


class PinChain:
    """Pinocchio's model of a URDF file, with our gravity, seen through the chain root -> tip:
    the other joints stay at their neutral position and at rest, the bodies behind them zeroed."""

    def __init__(self, path, model, root, tip):
        self.model = pin.buildModelFromUrdf(str(path))
        self.joints = [self.model.joints[self.model.getJointId(name)]
                       for name in model.joint_names]
        assert all(j.id < self.model.njoints for j in self.joints), "Pinocchio lacks a joint"
        self.v = [j.idx_v for j in self.joints]
        for j in set(range(1, self.model.njoints)) - {j.id for j in self.joints}:
            self.model.inertias[j] = pin.Inertia.Zero()
        self.data = self.model.createData()
        pin.framesForwardKinematics(self.model, self.data, pin.neutral(self.model))
        root = root or self.model.frames[1].name     # the file's root link
        self.root = self.data.oMf[self.model.getFrameId(root, pin.BODY)].homogeneous.copy()
        self.model.gravity.linear = self.root[:3, :3] @ model.gravity
        self.tip = self.model.getFrameId(tip, pin.BODY)

    def q(self, q):
        return configuration(self.model, self.joints, q)

    def v_(self, v):
        out = np.zeros(self.model.nv)
        out[self.v] = v
        return out

    def rnea(self, q, qd, qdd):
        return pin.rnea(self.model, self.data, self.q(q), self.v_(qd), self.v_(qdd))[self.v]

    def crba(self, q):
        M = pin.crba(self.model, self.data, self.q(q)).copy()
        M = np.triu(M) + np.triu(M, 1).T     # Pinocchio fills the upper triangle
        return M[np.ix_(self.v, self.v)]

    def gravity(self, q):
        return pin.computeGeneralizedGravity(self.model, self.data, self.q(q))[self.v]

    def friction(self, qd):
        """URDF's <dynamics>: viscous damping and Coulomb friction, as Pinocchio parsed them."""
        return self.model.damping[self.v] * qd + self.model.friction[self.v] * np.sign(qd)

    def tip_pose(self, q):
        """The tip frame in the root link's frame."""
        pin.framesForwardKinematics(self.model, self.data, self.q(q))
        return np.linalg.solve(self.root, self.data.oMf[self.tip].homogeneous)


@pytest.fixture(scope="module", params=CHAINS, ids=IDS)
def case(request):
    file, root, tip = request.param
    model = load(file, root, tip)
    return file, model, PinChain(ROBOTS / file, model, root, tip)


def states(model, seed, count=4):
    rng = np.random.default_rng(seed)
    n = model.dof
    return (rng.uniform(-np.pi, np.pi, (count, n)), rng.uniform(-2, 2, (count, n)),
            rng.uniform(-5, 5, (count, n)))


def scale(x):
    return REL * max(1.0, np.max(np.abs(x)))


def test_the_cases_are_what_they_claim():
    """Declared encodings, trees, <dynamics> values and continuous joints are really there (else
    the tests below would prove less than they say)."""
    heads = {f: (ROBOTS / f).read_bytes()[:60] for f, _, _ in CHAINS}
    assert b'encoding="utf-8"' in heads["ur_description/urdf/ur5_robot.urdf"]
    assert b'encoding="utf-8"' in heads["anymal_c_simple_description/urdf/anymal.urdf"]
    talos = pin.buildModelFromUrdf(str(ROBOTS / "talos_data/robots/talos_left_arm.urdf"))
    assert np.all(talos.damping == 1.0) and np.all(talos.friction == 1.0)
    panda = load(*CHAINS[2])
    assert panda.dof == 7 and pin.buildModelFromUrdf(str(ROBOTS / CHAINS[2][0])).nv == 9
    kinova = pin.buildModelFromUrdf(str(ROBOTS / CHAINS[5][0]))
    assert kinova.nq > kinova.nv


def test_inverse_dynamics(case):
    file, model, p = case
    q, qd, qdd = states(model, 1)
    for k in range(len(q)):
        theirs = p.rnea(q[k], qd[k], qdd[k])
        np.testing.assert_allclose(model.inverse_dynamics(q[k], qd[k], qdd[k], friction=False),
                                   theirs, rtol=0, atol=scale(theirs), err_msg=file)
        # with URDF's <dynamics damping friction>, applied as Pinocchio parsed them
        theirs = theirs + p.friction(qd[k])
        np.testing.assert_allclose(model.inverse_dynamics(q[k], qd[k], qdd[k]), theirs,
                                   rtol=0, atol=scale(theirs), err_msg=file)


def test_friction_torques_are_the_urdf_values(case):
    file, model, p = case
    _, qd, _ = states(model, 5)
    for v in (*qd, -qd[0]):
        np.testing.assert_allclose(model.friction_torques(v), p.friction(v), rtol=0, atol=1e-15,
                                   err_msg=file)


def test_mass_matrix_and_gravity(case):
    file, model, p = case
    q, _, _ = states(model, 2)
    for k in range(len(q)):
        M = p.crba(q[k])
        np.testing.assert_allclose(model.mass_matrix(q[k]), M, rtol=0, atol=scale(M), err_msg=file)
        g = p.gravity(q[k])
        np.testing.assert_allclose(model.gravity_torques(q[k]), g, rtol=0, atol=scale(g),
                                   err_msg=file)


def test_tip_frame(case):
    file, model, p = case
    q, _, _ = states(model, 4, 3)
    for k in range(len(q)):
        np.testing.assert_allclose(model.link_frames(q[k])[-1], p.tip_pose(q[k]), rtol=0,
                                   atol=1e-12, err_msg=file)
