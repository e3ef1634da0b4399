"""Closed-form dynamics, derived by hand here, against RobotModel.

* Two-link planar arm in a vertical plane (Spong, Hutchinson & Vidyasagar, "Robot Modeling and
  Control", §7.4.2 / eq. 7.87): link lengths l_i, COM at lc_i from joint i along the link, inertia
  I_i about the COM (about the plane normal), angles measured from the base x axis, gravity along
  -y of the base:
      M11 = m1 lc1^2 + m2 (l1^2 + lc2^2 + 2 l1 lc2 cos q2) + I1 + I2
      M12 = m2 (lc2^2 + l1 lc2 cos q2) + I2,        M22 = m2 lc2^2 + I2
      h   = -m2 l1 lc2 sin q2,  C = [[h qd2, h (qd1 + qd2)], [-h qd1, 0]]
      g1  = (m1 lc1 + m2 l1) g cos q1 + m2 lc2 g cos(q1 + q2),   g2 = m2 lc2 g cos(q1 + q2)
  checked on a model built here with standard DH (COM at x = lc_i - l_i in the distal DH frame),
  with modified DH, and on the shipped config/planar2_dh.yaml (uniform rods: lc = l/2, I = m l^2/12).
* A 1-DOF pendulum with armature, viscous and asymmetric Coulomb friction:
      tau = (I + m lc^2 + Ja) qdd + m g lc cos q + b qd + Fc+ [qd > 0] - Fc- [qd < 0].
* A 1-DOF vertical slider: tau = m (qdd + g) (+ the tip force along the axis); horizontal: m qdd.

Tolerances: every quantity here is a handful of floating-point operations on numbers of order 1-100,
so both sides agree to a few ulps; 1e-12 relative (with an absolute floor of 1e-12) leaves room for
the different order of operations and would still catch any wrong term (the smallest term tested is
of order 1e-2).
"""
from pathlib import Path

import numpy as np
import pytest

from robodyn_ros.dynamics import RobotModel

ROOT = Path(__file__).resolve().parents[1]
G = 9.81
RTOL, ATOL = 1e-12, 1e-12


def close(actual, expected, rtol=RTOL, atol=ATOL):
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=atol)


# ------------------------------------------------------------------ two-link planar arm, by hand

class Planar2:
    """Spong's closed form for the two-link planar arm (see the module docstring)."""

    def __init__(self, m1, m2, l1, l2, lc1, lc2, I1, I2, g=G):
        self.__dict__.update(m1=m1, m2=m2, l1=l1, l2=l2, lc1=lc1, lc2=lc2, I1=I1, I2=I2, g=g)

    def M(self, q):
        c2 = np.cos(q[1])
        m11 = (self.m1 * self.lc1 ** 2 + self.m2 * (self.l1 ** 2 + self.lc2 ** 2 + 2 * self.l1 * self.lc2 * c2)
               + self.I1 + self.I2)
        m12 = self.m2 * (self.lc2 ** 2 + self.l1 * self.lc2 * c2) + self.I2
        m22 = self.m2 * self.lc2 ** 2 + self.I2
        return np.array([[m11, m12], [m12, m22]])

    def C(self, q, qd):
        h = -self.m2 * self.l1 * self.lc2 * np.sin(q[1])
        return np.array([[h * qd[1], h * (qd[0] + qd[1])], [-h * qd[0], 0.0]])

    def g_torque(self, q):
        c1, c12 = np.cos(q[0]), np.cos(q[0] + q[1])
        return np.array([(self.m1 * self.lc1 + self.m2 * self.l1) * self.g * c1 + self.m2 * self.lc2 * self.g * c12,
                         self.m2 * self.lc2 * self.g * c12])

    def tau(self, q, qd, qdd):
        return self.M(q) @ qdd + self.C(q, qd) @ qd + self.g_torque(q)

    def tip(self, q):
        return np.array([self.l1 * np.cos(q[0]) + self.l2 * np.cos(q[0] + q[1]),
                         self.l1 * np.sin(q[0]) + self.l2 * np.sin(q[0] + q[1])])

    def jacobian(self, q):
        s1, s12 = np.sin(q[0]), np.sin(q[0] + q[1])
        c1, c12 = np.cos(q[0]), np.cos(q[0] + q[1])
        return np.array([[-self.l1 * s1 - self.l2 * s12, -self.l2 * s12],
                         [self.l1 * c1 + self.l2 * c12, self.l2 * c12]])


# a deliberately lopsided arm: COM not at mid-link, inertia not that of a rod
ARM = dict(m1=3.7, m2=1.3, l1=0.9, l2=0.55, lc1=0.35, lc2=0.41, I1=0.21, I2=0.047)


def standard_dh_links(m1, m2, l1, l2, lc1, lc2, I1, I2):
    # DH frame i sits at the distal end of link i with x along the link: COM at x = lc - l.
    # The inertia about x (rod axis) and y is irrelevant in the plane; give them generic values that
    # still satisfy the triangle inequality, so that a wrong axis would show.
    return [dict(a=l1, alpha=0.0, mass=m1, com=[lc1 - l1, 0.0, 0.0], inertia=[0.02, I1 + 0.01, I1]),
            dict(a=l2, alpha=0.0, mass=m2, com=[lc2 - l2, 0.0, 0.0], inertia=[0.005, I2 + 0.002, I2])]


def modified_dh_links(m1, m2, l1, l2, lc1, lc2, I1, I2):
    # Craig: frame i on joint i, x along link i; link 2 is displaced by a_1 = l1; the tip by a tool.
    return [dict(a=0.0, alpha=0.0, mass=m1, com=[lc1, 0.0, 0.0], inertia=[0.02, I1 + 0.01, I1]),
            dict(a=l1, alpha=0.0, mass=m2, com=[lc2, 0.0, 0.0], inertia=[0.005, I2 + 0.002, I2])]


def planar_models():
    hand = Planar2(**ARM)
    std = RobotModel.from_dh(standard_dh_links(**ARM), gravity=(0.0, -G, 0.0))
    tool = np.eye(4)
    tool[0, 3] = ARM["l2"]
    mdh = RobotModel.from_dh(modified_dh_links(**ARM), convention="modified", gravity=(0.0, -G, 0.0),
                             tool=tool)
    # shipped: uniform rods (lc = l/2, I = m l^2 / 12), values written out from the file's comment
    shipped_hand = Planar2(m1=2.0, m2=1.5, l1=1.0, l2=0.8, lc1=0.5, lc2=0.4, I1=2.0 / 12, I2=1.5 * 0.64 / 12)
    shipped = RobotModel.from_yaml(ROOT / "config/planar2_dh.yaml")
    return [("standard", hand, std), ("modified", hand, mdh), ("planar2_dh.yaml", shipped_hand, shipped)]


PLANAR = planar_models()
PLANAR_IDS = [name for name, _, _ in PLANAR]


def states(seed, count=20):
    rng = np.random.default_rng(seed)
    return [(rng.uniform(-np.pi, np.pi, 2), rng.uniform(-3, 3, 2), rng.uniform(-10, 10, 2))
            for _ in range(count)]


@pytest.mark.parametrize("name,hand,model", PLANAR, ids=PLANAR_IDS)
def test_planar_inverse_dynamics(name, hand, model):
    for q, qd, qdd in states(1):
        close(model.inverse_dynamics(q, qd, qdd), hand.tau(q, qd, qdd))


@pytest.mark.parametrize("name,hand,model", PLANAR, ids=PLANAR_IDS)
def test_planar_mass_matrix_gravity_coriolis(name, hand, model):
    for q, qd, _ in states(2):
        close(model.mass_matrix(q), hand.M(q))
        close(model.mass_matrix(q, method="strobe"), hand.M(q))
        close(model.gravity_torques(q), hand.g_torque(q))
        close(model.coriolis_torques(q, qd), hand.C(q, qd) @ qd)
        # For this arm the body-Jacobian factorisation and Christoffel's give the same C: both are
        # skew-compatible and for two revolute joints in a plane the Christoffel symbols are the
        # only terms present (no body has an angular velocity off the plane normal).
        close(model.coriolis_matrix(q, qd), hand.C(q, qd))


@pytest.mark.parametrize("name,hand,model", PLANAR, ids=PLANAR_IDS)
def test_planar_forward_dynamics(name, hand, model):
    for q, qd, tau in states(3):
        expected = np.linalg.solve(hand.M(q), tau - hand.C(q, qd) @ qd - hand.g_torque(q))
        close(model.forward_dynamics(q, qd, tau), expected, rtol=1e-10)


@pytest.mark.parametrize("name,hand,model", PLANAR, ids=PLANAR_IDS)
def test_planar_kinematics_and_energy(name, hand, model):
    for q, qd, _ in states(4, 5):
        T = model.link_frames(q)[-1]
        close(T[:2, 3], hand.tip(q))
        close(T[2, 3], 0.0)
        J = model.jacobian(q)
        close(J[:2], hand.jacobian(q))
        close(J[2], 0.0)
        close(J[3:], [[0.0, 0.0], [0.0, 0.0], [1.0, 1.0]])
        kinetic, potential = model.energy(q, qd)
        close(kinetic, 0.5 * qd @ hand.M(q) @ qd)
        # potential m g y_com, zero at the base
        y1 = hand.lc1 * np.sin(q[0])
        y2 = hand.l1 * np.sin(q[0]) + hand.lc2 * np.sin(q[0] + q[1])
        close(potential, G * (hand.m1 * y1 + hand.m2 * y2))


@pytest.mark.parametrize("name,hand,model", PLANAR, ids=PLANAR_IDS)
def test_planar_tip_force(name, hand, model):
    # The tip pushes on the environment with force F (world x-y): the motors supply J^T F more.
    # The tip frame of all three models is parallel to the last link; its x axis along the link.
    rng = np.random.default_rng(5)
    for q, qd, qdd in states(5, 5):
        F = rng.uniform(-20, 20, 2)
        phi = q[0] + q[1]
        R = np.array([[np.cos(phi), -np.sin(phi)], [np.sin(phi), np.cos(phi)]])
        f_tip = R.T @ F                       # the same force in the tip frame
        n_z = rng.uniform(-5, 5)              # a pure moment about the plane normal
        wrench = [f_tip[0], f_tip[1], 0.0, 0.0, 0.0, n_z]
        expected = hand.tau(q, qd, qdd) + hand.jacobian(q).T @ F + n_z
        close(model.inverse_dynamics(q, qd, qdd, tip_wrench=wrench), expected)


def test_planar_static_values_by_hand():
    # the shipped arm held horizontal (q = 0): joint 1 carries m1 g l1/2 + m2 g (l1 + l2/2)
    model = RobotModel.from_yaml(ROOT / "config/planar2_dh.yaml")
    close(model.gravity_torques([0.0, 0.0]), [2.0 * G * 0.5 + 1.5 * G * (1.0 + 0.4), 1.5 * G * 0.4])
    # pointing straight up, no torque; folded back horizontally, joint 2 sees the opposite sign
    close(model.gravity_torques([np.pi / 2, 0.0]), [0.0, 0.0], atol=1e-13)
    close(model.gravity_torques([0.0, np.pi]), [2.0 * G * 0.5 + 1.5 * G * (1.0 - 0.4), -1.5 * G * 0.4])


# ------------------------------------------------------------------ 1-DOF pendulum

PEND = dict(m=2.3, l=0.8, lc=0.6, I=0.07, Ja=0.4, b=0.9, cp=1.7, cn=2.9)


def pendulum():
    p = PEND
    link = dict(a=p["l"], alpha=0.0, mass=p["m"], com=[p["lc"] - p["l"], 0.0, 0.0],
                inertia=[0.01, p["I"], p["I"]], armature=p["Ja"], viscous=p["b"], coulomb=[p["cp"], p["cn"]])
    return RobotModel.from_dh([link], gravity=(0.0, -G, 0.0))


def pendulum_tau(q, qd, qdd):
    p = PEND
    coulomb = p["cp"] if qd > 0 else (-p["cn"] if qd < 0 else 0.0)
    return ((p["I"] + p["m"] * p["lc"] ** 2 + p["Ja"]) * qdd + p["m"] * G * p["lc"] * np.cos(q)
            + p["b"] * qd + coulomb)


@pytest.mark.parametrize("qd", [-1.3, -1e-9, 0.0, 1e-9, 2.1])
def test_pendulum(qd):
    model = pendulum()
    rng = np.random.default_rng(6)
    for _ in range(10):
        q, qdd = rng.uniform(-np.pi, np.pi), rng.uniform(-5, 5)
        close(model.inverse_dynamics([q], [qd], [qdd]), [pendulum_tau(q, qd, qdd)])
        close(model.friction_torques([qd]), [pendulum_tau(q, qd, 0.0) - pendulum_tau(q, 0.0, 0.0)])
        close(model.inverse_dynamics([q], [qd], [qdd], friction=False),
              [pendulum_tau(q, 0.0, qdd)])
        # centrifugal force does no work on a single revolute joint
        close(model.coriolis_torques([q], [qd]), [0.0])
        close(model.mass_matrix([q]), [[PEND["I"] + PEND["m"] * PEND["lc"] ** 2 + PEND["Ja"]]])


def test_pendulum_period_of_small_oscillation():
    # hanging straight down (q = -pi/2) with no friction: omega^2 = m g lc / (I + m lc^2 + Ja)
    model = pendulum().scaled(friction=0.0)
    p = PEND
    q = -np.pi / 2 + 1e-4
    qdd = model.forward_dynamics([q], [0.0], [0.0])[0]
    omega2 = p["m"] * G * p["lc"] / (p["I"] + p["m"] * p["lc"] ** 2 + p["Ja"])
    # restoring acceleration -omega^2 (q + pi/2), up to the cubic term of sin: relative 1e-8
    assert qdd == pytest.approx(-omega2 * 1e-4, rel=1e-7)


# ------------------------------------------------------------------ 1-DOF prismatic

@pytest.mark.parametrize("theta", [0.0, 0.7])
def test_vertical_slider(theta):
    # a prismatic joint along the base z axis (standard DH: it slides along z_0), gravity -z; a fixed
    # DH angle theta turns the carriage about the axis, which must change nothing
    m = 4.2
    model = RobotModel.from_dh([dict(joint="prismatic", theta=theta, d=0.3, mass=m, com=[0.1, -0.2, 0.05],
                                      inertia=[0.03, 0.04, 0.05], armature=0.0)])
    rng = np.random.default_rng(7)
    for _ in range(10):
        q, qd, qdd = rng.uniform(-1, 1, 3)
        close(model.inverse_dynamics([q], [qd], [qdd]), [m * (qdd + G)])
        close(model.gravity_torques([q]), [m * G])
        close(model.mass_matrix([q]), [[m]])
        close(model.forward_dynamics([q], [qd], [m * G]), [0.0], atol=1e-12)
        # the carriage pushes up on the environment with 10 N (tip z = base z for alpha = 0)
        close(model.inverse_dynamics([q], [qd], [qdd], tip_wrench=[0, 0, 10.0, 1.0, 2.0, 3.0]),
              [m * (qdd + G) + 10.0])
        kinetic, potential = model.energy([q], [qd])
        close(kinetic, 0.5 * m * qd ** 2)
        close(potential, m * G * (0.3 + q + 0.05))


def test_horizontal_slider_feels_no_gravity():
    # alpha = pi/2 on a revolute-free arm: a slider along base z, with gravity along base x
    m = 1.7
    model = RobotModel.from_dh([dict(joint="prismatic", mass=m, com=[0, 0, 0.2], inertia=[0.01, 0.01, 0.01],
                                      armature=0.3, viscous=0.5, coulomb=0.2)], gravity=(-G, 0.0, 0.0))
    close(model.inverse_dynamics([0.4], [-2.0], [3.0]), [(m + 0.3) * 3.0 + 0.5 * -2.0 - 0.2])
