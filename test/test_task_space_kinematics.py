"""The kinematics of one frame (``RobotModel.frame_motion``, one compiled pass): pose, geometric
Jacobian in the base and in the frame itself, the twist J q̇ and J̇ q̇ — against Pinocchio on every
shipped URDF, on random URDFs (prismatic joints about any axis, fixed links lumped, massless links)
and on the vendor arms; against finite differences and the NumPy forward kinematics on DH and
modified-DH tables; against the planar two-link arm's closed form.

Frames: ours are the canonical joint frames (Pinocchio's joint frame of the same joint turned by
the loader's Q, about the same origin — checked) and the tip. Each is given to Pinocchio as an
operational frame on the joint that carries it, at the constant placement (Pinocchio's joint
frame -> ours) taken at one configuration; every comparison is at other configurations, so a
placement that is not constant (an origin that moves, a wrong chain) fails. World quantities:
LOCAL_WORLD_ALIGNED (J, classical acceleration at q̈ = 0); body: LOCAL (J, spatial acceleration
at q̈ = 0, which is d/dt(J_b) q̇).
"""
import warnings
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest
import yaml

from robodyn_ros.dynamics import RobotModel
from robodyn_ros.dynamics.frames import TIP
from robodyn_ros.dynamics.kinematics import link_frames
from test_control_laws import ARM_LINKS
from test_dynamics_pinocchio import CASES, IDS, Pin, states
from pin_oracle import frame_motion  # noqa: E402 (test/ is on sys.path)
from test_vendor_descriptions import CHAINS, IDS as VENDOR_IDS, ROBOTS, PinChain, load

ROOT = Path(__file__).resolve().parents[1]
REL = 1e-12


def frames_of(model):
    """(index in ``link_frames``, name) of the canonical frames: the joint frames by their joints'
    names (but a name that is also a link's, which names the link: test_frames_by_name), the tip."""
    joints = [(k, name) for k, name in enumerate(model.joint_names) if name not in model.frames]
    return [*joints, (model.dof, TIP)]


class PinFrames:
    """Our frames as operational frames of Pinocchio's model ``p`` (a ``Pin`` or a ``PinChain``);
    ``root`` is our base in Pinocchio's world."""

    def __init__(self, p, model, root=np.eye(4)):
        self.p = p
        q0 = np.random.default_rng(99).uniform(-np.pi, np.pi, model.dof)
        data = p.model.createData()
        pin.forwardKinematics(p.model, data, p.q(q0))
        ours = link_frames(model, q0)
        self.ids = {}
        for k, name in frames_of(model):
            joint = p.joints[min(k, model.dof - 1)].id
            placement = np.linalg.solve(data.oMi[joint].homogeneous, root @ ours[k])
            if k < model.dof:   # a joint frame: the same origin, only turned
                np.testing.assert_allclose(placement[:3, 3], 0.0, atol=1e-12)
            self.ids[k] = p.model.addFrame(pin.Frame(f"ours_{name}", joint, pin.SE3(placement),
                                                     pin.FrameType.OP_FRAME))
        self.data = p.model.createData()

    def motion(self, q, qd, k, reference):
        """(pose in our base, J, J q̇, J̇ q̇) of our frame k, as Pinocchio computes them."""
        return frame_motion(self.p, self.data, self.ids[k], q, qd, reference)


def check_against(oracle, model, seed, count=3, name=""):
    q, qd, _ = states(model, seed, count)
    for k, link in frames_of(model):
        for reference in ("world", "body"):
            for i in range(count):
                ours = model.frame_motion(q[i], qd[i], link, reference)
                theirs = oracle.motion(q[i], qd[i], k, reference)
                for what, a, b in zip(("pose", "J", "twist", "J̇q̇"), ours, theirs):
                    np.testing.assert_allclose(a, b, rtol=0, atol=REL * max(1.0, np.abs(b).max()),
                                               err_msg=f"{name} {link} {reference} {what}")


@pytest.mark.parametrize("name,xml,model", CASES, ids=IDS)
def test_frames_equal_pinocchios(name, xml, model):
    check_against(PinFrames(Pin(xml, model), model), model, 21, name=name)


@pytest.fixture(scope="module", params=CHAINS, ids=VENDOR_IDS)
def vendor(request):
    file, root, tip = request.param
    model = load(file, root, tip)
    return file, model, PinChain(ROBOTS / file, model, root, tip)


def test_vendor_frames_equal_pinocchios(vendor):
    file, model, p = vendor
    check_against(PinFrames(p, model, p.root), model, 22, name=file)


def dh_models():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")    # the PUMA data's link-3 inertia is not physical
        for table in ("puma560_dh", "stanford_dh", "planar2_dh"):
            yield table, RobotModel.from_yaml(ROOT / "config" / f"{table}.yaml")
    tool = np.eye(4)
    tool[:3, 3] = [0.05, -0.02, 0.12]
    tool[:3, :3] = [[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]
    for convention in ("standard", "modified"):   # with a prismatic joint and a tool
        yield f"arm_{convention}", RobotModel.from_dh(ARM_LINKS, convention, tool=tool)


DH = list(dh_models())


def vee(S):
    return np.array([S[2, 1] - S[1, 2], S[0, 2] - S[2, 0], S[1, 0] - S[0, 1]]) / 2.0


@pytest.mark.parametrize("name,model", DH, ids=[n for n, _ in DH])
def test_finite_differences_and_numpy_kinematics(name, model):
    """J q̇ is the derivative of the pose along q̇, J̇ q̇ that of J (central differences, h = 1e-6:
    error ~1e-9); the pose is the NumPy forward kinematics'; body = base quantities turned."""
    h = 1e-6
    q, qd, _ = states(model, 23, 3)
    for i in range(3):
        frames = link_frames(model, q[i])
        for k, link in frames_of(model):
            pose, J, twist, bias = model.frame_motion(q[i], qd[i], link)
            np.testing.assert_allclose(pose, frames[k], rtol=0, atol=1e-13)
            np.testing.assert_allclose(twist, J @ qd[i], rtol=0, atol=1e-13)
            ahead = model.frame_motion(q[i] + h * qd[i], qd[i], link)
            back = model.frame_motion(q[i] - h * qd[i], qd[i], link)
            dT = (ahead.pose - back.pose) / (2 * h)
            R = pose[:3, :3]
            np.testing.assert_allclose(twist[:3], dT[:3, 3], rtol=0, atol=1e-8, err_msg=name)
            np.testing.assert_allclose(twist[3:], vee(dT[:3, :3] @ R.T), rtol=0, atol=1e-8)
            dJ = (ahead.jacobian - back.jacobian) / (2 * h)
            np.testing.assert_allclose(bias, dJ @ qd[i], rtol=0, atol=1e-7, err_msg=name)
            body = model.frame_motion(q[i], qd[i], link, "body")
            turn = np.kron(np.eye(2), R.T)
            np.testing.assert_allclose(body.jacobian, turn @ J, rtol=0, atol=1e-13)
            np.testing.assert_allclose(body.twist, turn @ twist, rtol=0, atol=1e-13)
            dJb = (model.frame_jacobian(q[i] + h * qd[i], link, "body")
                   - model.frame_jacobian(q[i] - h * qd[i], link, "body")) / (2 * h)
            np.testing.assert_allclose(body.jdot_qd, dJb @ qd[i], rtol=0, atol=1e-7, err_msg=name)
            # joints beyond the frame do not move it
            assert not J[:, k + 1:].any()


def test_planar_closed_form():
    """The two-link planar arm: p = (l1 c1 + l2 c12, l1 s1 + l2 s12), J̇ q̇ = −(l1 c1 q̇1² +
    l2 c12 (q̇1 + q̇2)², l1 s1 q̇1² + l2 s12 (q̇1 + q̇2)²), no angular acceleration."""
    table = yaml.safe_load((ROOT / "config" / "planar2_dh.yaml").read_text())
    l1, l2 = (link["a"] for link in table["links"])
    model = dict(DH)["planar2_dh"]
    for q, qd in zip(*states(model, 24, 5)[:2]):
        c1, s1, c12, s12 = np.cos(q[0]), np.sin(q[0]), np.cos(q.sum()), np.sin(q.sum())
        w1, w12 = qd[0], qd.sum()
        pose, J, twist, bias = model.frame_motion(q, qd)
        np.testing.assert_allclose(pose[:3, 3], [l1 * c1 + l2 * c12, l1 * s1 + l2 * s12, 0.0],
                                   atol=1e-14)
        np.testing.assert_allclose(J, [[-l1 * s1 - l2 * s12, -l2 * s12], [l1 * c1 + l2 * c12, l2 * c12],
                                       [0, 0], [0, 0], [0, 0], [1, 1]], atol=1e-14)
        np.testing.assert_allclose(bias, [-(l1 * c1 * w1 ** 2 + l2 * c12 * w12 ** 2),
                                          -(l1 * s1 * w1 ** 2 + l2 * s12 * w12 ** 2), 0, 0, 0, 0],
                                   atol=1e-13)


def test_tip_jacobian_is_the_frame_jacobian_of_the_tip():
    _, _, model = CASES[0]
    for q in states(model, 25, 3)[0]:
        np.testing.assert_array_equal(model.jacobian(q), model.frame_jacobian(q))
        np.testing.assert_array_equal(model.frame_pose(q, "tip"), model.frame_pose(q))
        np.testing.assert_array_equal(model.frame_jacobian(q, model.joint_names[-1]),
                                      model.frame_jacobian(q, model.joint_names[-1], "world"))


def test_names_and_bad_arguments():
    _, _, model = CASES[0]
    n = model.dof
    assert model.frame_index() == model.frame_index(TIP) == n
    assert [model.frame_index(name) for name in model.joint_names] == list(range(n))
    with pytest.raises(ValueError, match=r"unknown link 'flange'.*'tip'.*joint_1"):
        model.frame_pose(np.zeros(n), "flange")
    with pytest.raises(ValueError, match="reference must be one of"):
        model.frame_jacobian(np.zeros(n), reference="base")
    with pytest.raises(ValueError, match="one value per joint"):
        model.frame_motion(np.zeros(n + 1), np.zeros(n + 1))
    with pytest.raises(ValueError, match="one state"):
        model.frame_motion(np.zeros((2, n)), np.zeros((2, n)))
