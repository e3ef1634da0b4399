"""Forward dynamics of the Stewart platform (accelerations from actuator forces) and its integrator, for
both leg models: forward after inverse dynamics is the identity, the platform-space mass matrix is the
bodies' kinetic energy (from differenced body poses), and an integrated motion under given forces keeps
the energy balance and converges at order 4."""
import dataclasses

import numpy as np
import pytest

from robodyn_ros.stewart import SingularPoseError, integrate
from robodyn_ros.spatial import rotations
from test_stewart_dynamics import axisymmetric_platform, pose_curve, random_state
from test_stewart_universal import PAPER, REALISABLE, energy_and_dissipation, load

LEG_MODELS = ("no_spin", "universal")


@pytest.mark.parametrize("leg_model", LEG_MODELS)
@pytest.mark.parametrize("path", [PAPER, REALISABLE])
def test_forward_after_inverse_dynamics_is_the_identity(path, leg_model):
    sp = load(path, leg_model)
    rng = np.random.default_rng(31)
    for _ in range(4):
        t, R, v, w, a, al = random_state(rng, scale=2.0)
        f_ext, m_ext = 20 * rng.standard_normal(3), 5 * rng.standard_normal(3)
        F = sp.inverse_dynamics(t, R, v, w, a, al, f_ext, m_ext).forces
        fd = sp.forward_dynamics(t, R, v, w, F, f_ext, m_ext)
        assert np.allclose(fd.linear_acceleration, a, rtol=0, atol=1e-10 * np.abs(a).max())
        assert np.allclose(fd.angular_acceleration, al, rtol=0, atol=1e-10 * np.abs(al).max())
        # and back: the accelerations it returns reproduce the forces
        back = sp.inverse_dynamics(t, R, v, w, fd.linear_acceleration, fd.angular_acceleration,
                                   f_ext, m_ext).forces
        assert np.allclose(back, F, rtol=0, atol=1e-9 * np.abs(F).max())


@pytest.mark.parametrize("leg_model", LEG_MODELS)
def test_mass_matrix_is_symmetric_positive_definite(leg_model):
    sp = load(REALISABLE, leg_model)
    rng = np.random.default_rng(32)
    for _ in range(4):
        t, R, v, w = random_state(rng)[:4]
        M = sp.forward_dynamics(t, R, v, w, np.zeros(6)).mass_matrix
        assert np.abs(M - M.T).max() < 1e-12 * np.abs(M).max()
        assert np.linalg.eigvalsh(M).min() > 0.0


def test_mass_matrix_is_the_bodies_kinetic_energy():
    """xi^T M xi / 2 is the kinetic energy of all bodies moving with the platform twist xi, computed
    from differenced body poses of the universal-joint legs (gravity off, at rest otherwise)."""
    sp = dataclasses.replace(load(REALISABLE), gravity=np.zeros(3))
    rng = np.random.default_rng(33)
    t, R = random_state(rng)[:2]
    M = sp.forward_dynamics(t, R, np.zeros(3), np.zeros(3), np.zeros(6)).mass_matrix
    for _ in range(5):
        xi = rng.standard_normal(6)
        curve = pose_curve(t, R, xi[:3], xi[3:], np.zeros(3), np.zeros(3))
        kinetic = energy_and_dissipation(sp, curve, 0.0, h=1e-3)[0]
        assert xi @ M @ xi / 2 == pytest.approx(kinetic, rel=1e-9)


def forcing(sp, t0, R0):
    """The forces holding the platform at rest at (t0, R0) plus a different 10 N wave on each leg (the
    rest is unstable: larger waves soon throw the platform about at metres per second)."""
    hold = sp.inverse_dynamics(t0, R0, *np.zeros((4, 3))).forces
    freq, phase = np.linspace(1.0, 3.5, 6), np.linspace(0.0, 2.5, 6)
    return lambda tau, *state: hold + 10.0 * np.sin(2 * np.pi * freq * tau + phase)


def platforms():
    yield "universal, off-axis legs", load(REALISABLE)
    axisymmetric = axisymmetric_platform()[0]
    yield "no_spin, axisymmetric legs", axisymmetric   # where the paper's legs are rigid bodies
    yield "universal, axisymmetric legs", dataclasses.replace(axisymmetric, leg_model="universal")


def energy_residual(sp, dt=2e-3, duration=0.25):
    """Integrates from rest under forcing(); returns the largest distance moved, the actuators' work
    and the energy-balance residual (both summed over the steps, absolute)."""
    t0, R0 = np.array([0.1, 0.0, 0.4]), rotations.rpy_matrix([0.0, 0.0, -0.2])
    motion = integrate(sp, t0, R0, np.zeros(3), np.zeros(3), forcing(sp, t0, R0), duration, dt)
    energy, dissipation = [], []
    for t, R, v, w in zip(motion.position, motion.rotation, motion.linear_velocity,
                          motion.angular_velocity):
        E, D, _ = energy_and_dissipation(sp, pose_curve(t, R, v, w, np.zeros(3), np.zeros(3)), 0.0)
        energy.append(E)
        dissipation.append(D)
    L = sp.inverse_kinematics(motion.position, motion.rotation).lengths
    work = np.sum(motion.forces * np.diff(L, axis=0), axis=1)
    lost = dt / 2 * (np.array(dissipation[1:]) + dissipation[:-1])   # trapezoid: O(dt^2)
    residual = np.diff(energy) - work + lost
    moved = np.linalg.norm(motion.position - t0, axis=1).max()
    return moved, np.abs(work).sum(), np.abs(residual).sum()


@pytest.mark.parametrize("name, sp", list(platforms()))
def test_integrated_motion_keeps_the_energy_balance(name, sp):
    """Under forces held over each step the actuators do sum F (L(t+dt) - L(t)) of work per step; the
    bodies' energy (from their poses and differenced velocities) grows by that minus the joints'
    dissipation. Without friction to the integrator's accuracy; with the friction of
    axisymmetric_platform (5 % of the work dissipated) to that of the trapezoidal rule for the
    dissipation."""
    frictionless = dataclasses.replace(sp, C_u=0.0, C_p=0.0, C_s=0.0)
    moved, work, residual = energy_residual(frictionless)
    print(f"{name}: moved {moved * 1e3:.1f} mm, work {work:.3g} J, energy residual "
          f"{residual / work:.2e} without friction", end="")
    assert moved > 0.01 and residual < 1e-6 * work            # ~5e-8 measured
    moved, work, residual = energy_residual(sp)
    print(f", {residual / work:.2e} with")
    assert residual < 1e-4 * work                               # ~3e-5 measured


def test_integrator_converges_at_order_four():
    sp = load(REALISABLE)
    t0, R0 = np.array([0.1, 0.0, 0.4]), rotations.rpy_matrix([0.0, 0.0, -0.2])
    law = forcing(sp, t0, R0)
    v0, w0 = np.array([0.1, -0.05, 0.02]), np.array([0.2, 0.1, -0.3])

    def end(dt):
        m = integrate(sp, t0, R0, v0, w0, lambda tau, *state: law(0.05), 0.2, dt)
        return np.concatenate([m.position[-1], m.rotation[-1].ravel(), m.linear_velocity[-1]])
    coarse, fine, finest = end(0.02), end(0.01), end(0.005)
    ratio = np.abs(coarse - fine).max() / np.abs(fine - finest).max()
    assert 13.0 < ratio < 19.0      # 2^4 for order 4


def test_singular_pose_and_bad_forces_are_refused():
    sp = dataclasses.replace(load(REALISABLE), p=np.zeros((6, 3)))
    with pytest.raises(SingularPoseError, match="singular"):
        sp.forward_dynamics(np.array([0.1, 0.0, 0.5]), np.eye(3), np.zeros(3), np.zeros(3),
                            np.zeros(6))
    with pytest.raises(ValueError, match="six finite"):
        load(REALISABLE).forward_dynamics(np.array([0.1, 0.0, 0.5]), np.eye(3), np.zeros(3),
                                          np.zeros(3), [0.0, np.nan, 0, 0, 0, 0])
