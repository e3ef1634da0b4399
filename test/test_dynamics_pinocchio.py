"""Agreement with Pinocchio (an independent implementation, with its own URDF parser) on every shipped
URDF and on random URDFs: revolute, continuous and prismatic joints about arbitrary unit axes, fixed
links inside the chain and beyond the tip, massless links.

Pinocchio has no Coulomb or viscous friction: we compare with friction=False. Our armature is given
to Pinocchio as ``model.armature`` (which its rnea, crba and aba include); the forward dynamics are
also compared with the armature zeroed on both sides. Pinocchio's continuous joints take (cos q, sin q)
as configuration, so q is mapped joint by joint (by name). Gravity: ours, given to Pinocchio.

Tolerance: the issue asks for <= 1e-9 relative on the shipped robots; both libraries agree to about
1e-14 of the torque (or inertia) scale, so 1e-10 of the scale is used throughout.
"""
import dataclasses
import warnings
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest

from robodyn_ros.dynamics import RobotModel
from urdf_factory import random_urdf
from pin_oracle import configuration  # noqa: E402 (test/ is on sys.path)

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = ["urdf/puma560.urdf", "urdf/puma560_gazebo.urdf", "urdf/stanford.urdf", "urdf/planar2.urdf"]
REL = 1e-10


def load_shipped(rel):
    xml = (ROOT / rel).read_text()
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*triangle inequality.*")
        return xml, RobotModel.from_urdf(ROOT / rel)


def load_random(seed):
    rng = np.random.default_rng(1000 + seed)
    n = 1 + seed % 7
    # vary the mixture: some arms mostly prismatic, some with many fixed links or massless links
    arm = random_urdf(rng, n, prismatic=[0.3, 0.6, 0.1, 0.9][seed % 4], continuous=0.25,
                      massless=0.3, fixed_in_chain=[0.2, 0.6][seed % 2], gripper=seed % 3 != 0,
                      root_inertial=seed % 2 == 0)
    return arm.xml, RobotModel.from_urdf(arm.xml, tip_link=arm.tip)


CASES = [(rel, *load_shipped(rel)) for rel in SHIPPED] + \
        [(f"random-{seed}", *load_random(seed)) for seed in range(20)]
IDS = [name for name, _, _ in CASES]


class Pin:
    """Pinocchio's model of the same URDF, with our gravity and armature, and a q mapping."""

    def __init__(self, xml, model, armature=True):
        self.model = pin.buildModelFromXML(xml)
        self.model.gravity.linear = model.gravity
        self.data = self.model.createData()
        assert self.model.nv == model.dof, "Pinocchio sees other movable joints"
        self.joints = [self.model.joints[self.model.getJointId(name)] for name in model.joint_names]
        assert [j.idx_v for j in self.joints] == list(range(model.dof)), "joint order differs"
        self.model.armature = np.array(model.armature) if armature else np.zeros(model.dof)

    def q(self, q):
        return configuration(self.model, self.joints, q)

    def rnea(self, q, qd, qdd):
        return pin.rnea(self.model, self.data, self.q(q), qd, qdd).copy()

    def crba(self, q):
        M = pin.crba(self.model, self.data, self.q(q)).copy()
        return np.triu(M) + np.triu(M, 1).T     # Pinocchio fills the upper triangle

    def gravity(self, q):
        return pin.computeGeneralizedGravity(self.model, self.data, self.q(q)).copy()

    def aba(self, q, qd, tau):
        return pin.aba(self.model, self.data, self.q(q), qd, tau).copy()

    def tip_pose(self, q, link):
        pin.framesForwardKinematics(self.model, self.data, self.q(q))
        return self.data.oMf[self.model.getFrameId(link)].homogeneous.copy()


def states(model, seed, count=4):
    rng = np.random.default_rng(seed)
    n = model.dof
    return (rng.uniform(-np.pi, np.pi, (count, n)), rng.uniform(-2, 2, (count, n)),
            rng.uniform(-5, 5, (count, n)))


def test_random_cases_cover_the_joint_kinds():
    kinds = set()
    for name, xml, _ in CASES:
        p = pin.buildModelFromXML(xml)
        kinds |= {j.shortname() for j in p.joints[1:]}
    assert any("Prismatic" in k and "Unaligned" in k for k in kinds), kinds
    assert any("Revolute" in k and "Unaligned" in k for k in kinds), kinds
    assert any("Unbounded" in k or "RUB" in k for k in kinds), kinds      # continuous


@pytest.mark.parametrize("name,xml,model", CASES, ids=IDS)
def test_inverse_dynamics(name, xml, model):
    p = Pin(xml, model)
    q, qd, qdd = states(model, 1)
    for k in range(len(q)):
        ours = model.inverse_dynamics(q[k], qd[k], qdd[k], friction=False)
        theirs = p.rnea(q[k], qd[k], qdd[k])
        np.testing.assert_allclose(ours, theirs, rtol=0, atol=REL * max(1.0, np.max(np.abs(theirs))),
                                   err_msg=name)


@pytest.mark.parametrize("name,xml,model", CASES, ids=IDS)
def test_mass_matrix_and_gravity(name, xml, model):
    p = Pin(xml, model)
    q, _, _ = states(model, 2)
    for k in range(len(q)):
        M = p.crba(q[k])
        np.testing.assert_allclose(model.mass_matrix(q[k]), M, rtol=0, atol=REL * np.max(np.abs(M)), err_msg=name)
        g = p.gravity(q[k])
        np.testing.assert_allclose(model.gravity_torques(q[k]), g, rtol=0, atol=REL * max(1.0, np.max(np.abs(g))),
                                   err_msg=name)


@pytest.mark.parametrize("name,xml,model", CASES, ids=IDS)
def test_forward_dynamics(name, xml, model):
    q, qd, tau = states(model, 3)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*triangle inequality.*")
        bare = RobotModel([dataclasses.replace(link, armature=0.0) for link in model.links], model.tip,
                          model.gravity, model.name)
    for ours, armature in ((model, True), (bare, False)):
        p = Pin(xml, model, armature=armature)
        for k in range(len(q)):
            theirs = p.aba(q[k], qd[k], tau[k])
            cond = np.linalg.cond(p.crba(q[k]))
            np.testing.assert_allclose(ours.forward_dynamics(q[k], qd[k], tau[k], friction=False), theirs,
                                       rtol=0, atol=1e-13 * cond * max(1.0, np.max(np.abs(theirs))),
                                       err_msg=f"{name} armature={armature}")


@pytest.mark.parametrize("name,xml,model", CASES, ids=IDS)
def test_tip_frame(name, xml, model):
    p = Pin(xml, model)
    from urdf_parser_py.urdf import URDF
    tip = [link for link in ("palm", "tool0") if f'name="{link}"' in xml]
    if not tip:
        # the only leaf of the tree
        robot = URDF.from_xml_string(xml)
        parents = {j.parent for j in robot.joints}
        tip = [link.name for link in robot.links if link.name not in parents]
    q, _, _ = states(model, 4, 3)
    for k in range(len(q)):
        np.testing.assert_allclose(model.link_frames(q[k])[-1], p.tip_pose(q[k], tip[0]), rtol=0, atol=1e-12)
