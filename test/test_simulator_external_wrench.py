"""arm_simulator's external wrench (issue 21): a push w = [f; n] on the tip frame's origin, base
frame, enters the dynamics as τ_ext = J(q)ᵀ w after the effort clamp.

In the engines, without ROS: at rest under gravity compensation the first step's acceleration is
M⁻¹ Jᵀ w, also for a push beyond the effort limits (no actuator's, so none clamps it); MuJoCo's
own Jacobian of the tip body says which rows of ours are force and which moment. Then the node
over DDS: a WrenchStamped on ~/external_wrench moves the arm as ½ M⁻¹ Jᵀ w t², and one in another
frame or with NaN is refused and moves nothing.
"""
import warnings

import numpy as np
import pytest
from geometry_msgs.msg import WrenchStamped
from std_msgs.msg import Float64MultiArray

from robodyn_ros.dynamics import RobotModel
from robodyn_ros.sim import make_engine

from conftest import URDF, Q0, wait_for_subscriber

DT = 1e-5   # s: a step short enough that its mean acceleration is the acceleration at rest
Q = np.radians([0.0, -40.0, 30.0, 0.0, 45.0, 0.0])   # inside the PUMA's limits, not singular
PUSH = np.array([3.0, -2.0, 5.0, 0.5, 1.0, -0.2])    # N, N·m: within every effort limit
# beyond the limits at joints 2 (0.426 m × 500 N > 186.4 N·m), 3 and 5 (30 N·m > 20.1 N·m)
SHOVE = np.array([300.0, 0.0, 500.0, 0.0, 30.0, 0.0])


def frictionless_puma():
    with warnings.catch_warnings():   # the PUMA data's link-3 inertia is not physical
        warnings.simplefilter("ignore")
        return RobotModel.from_urdf(URDF).scaled(friction=0.0)   # no Coulomb jump as qd leaves 0


def engine(name, model):
    if name == "mujoco":
        pytest.importorskip("mujoco")
    with open(URDF) as f:
        return make_engine(name, model, DT, f.read())


@pytest.mark.parametrize("name", ["robodyn", "mujoco"])
@pytest.mark.parametrize("w", [PUSH, SHOVE], ids=["push", "beyond the effort limits"])
def test_the_first_step_accelerates_as_m_inverse_j_transpose_w(name, w):
    model = frictionless_puma()
    sim = engine(name, model)
    J, M = model.frame_jacobian(Q), model.mass_matrix(Q)
    expected = np.linalg.solve(M, J.T @ w)
    assert (np.abs(J.T @ w) > model.effort_limit).any() == (w is SHOVE)
    q, qd = sim.step(Q, np.zeros(6), model.gravity_torques(Q), w)
    # qd after one step = ∫ qdd: the acceleration at rest plus O(DT) from the motion it starts
    # (1e-10 of it, measured)
    np.testing.assert_allclose(qd / DT, expected, rtol=0, atol=1e-8 * np.abs(expected).max())
    np.testing.assert_allclose(q - Q, 0.5 * expected * DT ** 2, rtol=0,
                               atol=1e-5 * np.abs(expected).max() * DT ** 2)
    assert sim.clamped == 0   # the command g(q) is within the limits; the push is no command


def test_the_tip_jacobians_rows_are_mujocos_force_then_moment():
    # τ_ext = Jᵀ w needs J's rows in w's order, [f; n]: [v; ω] of the tip origin, as MuJoCo has it
    mujoco = pytest.importorskip("mujoco")
    model = frictionless_puma()
    sim = engine("mujoco", model)
    m, d = sim.mj, sim.data
    d.qpos[:] = Q
    mujoco.mj_kinematics(m, d)
    mujoco.mj_comPos(m, d)
    tip = m.nbody - 1   # the chain's last link (fixed links stay bodies)
    jacp, jacr = np.zeros((3, m.nv)), np.zeros((3, m.nv))
    mujoco.mj_jac(m, d, jacp, jacr, d.xpos[tip], tip)
    np.testing.assert_allclose(model.frame_jacobian(Q), np.vstack([jacp, jacr]), atol=1e-12)


def test_a_wrench_on_external_wrench_moves_the_arm_and_a_bad_one_is_refused(rig):
    model = frictionless_puma()
    sim = rig.simulator(friction_scale=0.0, command_timeout=30.0)
    command = rig.probe.create_publisher(Float64MultiArray, f"{rig.ns}/commands", 10)
    push = rig.probe.create_publisher(WrenchStamped, f"{rig.ns}/arm_simulator/external_wrench", 10)
    wait_for_subscriber(rig, command)
    wait_for_subscriber(rig, push)
    command.publish(Float64MultiArray(data=model.gravity_torques(Q0).tolist()))
    rig.spin_until(lambda: not sim._braked, what="the brake release")

    def send(w, frame_id=""):
        msg = WrenchStamped()
        msg.header.frame_id = frame_id
        f, n = msg.wrench.force, msg.wrench.torque
        f.x, f.y, f.z, n.x, n.y, n.z = map(float, w)
        push.publish(msg)

    for w, frame, reason in ((PUSH, "link_6", "frame_id 'link_6' is not the base frame 'base_link'"),
                             (np.r_[np.nan, PUSH[1:]], "", "not finite: [nan,"),
                             # finite but absurd: it made every later step fail and froze the arm
                             (np.r_[1e308, PUSH[1:]], "", "a component beyond 1e+06 N or N·m")):
        count = sim.refused.count
        send(w, frame)
        rig.spin_until(lambda: sim.refused.count > count, what="a refusal")
        assert reason in sim.refused.last_reason and sim.wrench is None
    before = sim.time_ns
    rig.spin_until(lambda: sim.time_ns > before + 0.05e9, what="50 ms simulated")
    assert np.isfinite(sim.q).all() and np.isfinite(sim.qd).all()
    np.testing.assert_allclose(sim.q, Q0, atol=1e-9)   # held by g(q): nothing was applied

    send(PUSH, "base_link")
    rig.spin_until(lambda: sim.wrench is not None, what="the push")
    q, start = sim.q.copy(), sim.time_ns   # the push acts from the next step on
    rig.spin_until(lambda: sim.time_ns >= start + 0.02e9, what="20 ms simulated")
    t = (sim.time_ns - start) * 1e-9
    expected = 0.5 * np.linalg.solve(model.mass_matrix(Q0), model.frame_jacobian(Q0).T @ PUSH) * t ** 2
    # the acceleration changes as the arm moves away from where g(q) holds it: 3e-5 of it over
    # 20 ms, growing as t², so 1 % allows a spin that a loaded machine makes 0.3 s long
    np.testing.assert_allclose(sim.q - q, expected, rtol=0, atol=0.01 * np.abs(expected).max())
    send(np.zeros(6))
    rig.spin_until(lambda: sim.wrench is None, what="the push removed")
