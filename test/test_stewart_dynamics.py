"""Inverse dynamics of the Stewart platform against physics derived independently of the paper's
per-leg elimination: Fichter's statics, the power balance along a trajectory, the principle of virtual
power, and the joint equations the constraint forces must satisfy."""
import dataclasses
import warnings
from pathlib import Path

import numpy as np
import pytest

from robodyn_ros.stewart import StewartPlatform
from robodyn_ros.spatial import rotations

CONFIG = Path(__file__).resolve().parents[1] / "config" / "stewart_dasgupta.yaml"


def paper_platform():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the paper's k1 and inertias warn by design
        return StewartPlatform.from_yaml(CONFIG)


def skew(v):
    return np.array([[0, -v[2], v[1]], [v[2], 0, -v[0]], [-v[1], v[0], 0]])


def deriv(f, x, h):
    """Five-point central difference of f at x (error O(h^4))."""
    return (f(x - 2 * h) - 8 * f(x - h) + 8 * f(x + h) - f(x + 2 * h)) / (12 * h)


def random_state(rng, scale=1.0):
    """A pose near the paper's Path I start and a generous twist and acceleration."""
    t = np.array([0.2, 0.0, 0.5]) + 0.05 * rng.standard_normal(3)
    R = rotations.rpy_matrix(0.2 * rng.standard_normal(3))
    return (t, R, scale * 0.3 * rng.standard_normal(3), scale * 0.5 * rng.standard_normal(3),
            scale * 2.0 * rng.standard_normal(3), scale * 3.0 * rng.standard_normal(3))


def fichter_forces(sp, t, R, v, w, a, al, f_ext, m_ext):
    """Massless legs are two-force members pushing the platform with F_i s_i at its point i; solve
    the platform's Newton-Euler equations (moments about the reference point) for F."""
    q = sp.p @ R.T
    S = q + t - sp.b
    s = S / np.linalg.norm(S, axis=1)[:, None]
    Rc = R @ sp.R0
    a_c = a + np.cross(al, Rc) + np.cross(w, np.cross(w, Rc))
    I = R @ sp.I_p @ R.T
    force = sp.M * a_c - sp.M * sp.gravity - R @ f_ext
    moment = (np.cross(Rc, sp.M * a_c) + I @ al + np.cross(w, I @ w)
              - np.cross(Rc, sp.M * sp.gravity) - R @ m_ext)
    G = np.vstack([s.T, np.cross(q, s).T])
    return np.linalg.solve(G, np.concatenate([force, moment]))


def test_massless_legs_reproduce_fichter_statics():
    sp = paper_platform()
    light = sp.massless_legs()
    rng = np.random.default_rng(1)
    for _ in range(5):
        state = random_state(rng)
        f_ext, m_ext = 20 * rng.standard_normal(3), 5 * rng.standard_normal(3)
        expected = fichter_forces(sp, *state, f_ext, m_ext)
        r = light.inverse_dynamics(*state, f_ext, m_ext)
        assert np.allclose(r.forces, expected, rtol=0, atol=1e-9 * np.abs(expected).max())
        # F0 of the full model is by definition the same statics (eq. 41).
        full = sp.inverse_dynamics(*state, f_ext, m_ext)
        assert np.allclose(full.static_forces, expected, rtol=0, atol=1e-9 * np.abs(expected).max())
        assert np.allclose(r.dynamic_forces, 0.0, atol=1e-9 * np.abs(expected).max())


def axisymmetric_platform():
    """The paper's geometry and friction with legs whose centres of mass lie on the leg axis and whose
    inertias are symmetric about it: then the paper's no-spin leg (W.s = 0) is an exact rigid-body
    model whatever k_i, and its energy can be written down independently."""
    base = paper_platform()
    lower = {"mass": 3.0, "com": [0.4, 0.0, 0.0], "inertia": np.diag([0.002, 0.03, 0.03]).tolist()}
    upper = {"mass": 1.0, "com": [-0.6, 0.0, 0.0], "inertia": np.diag([0.001, 0.02, 0.02]).tolist()}
    data = {"base_points": base.b.tolist(), "fixed_axes": base.k.tolist(),
            "platform_points": base.p.tolist(), "leg": {"lower": lower, "upper": upper},
            "platform": {"mass": 40.0, "com": base.R0.tolist(), "inertia": base.I_p.tolist()},
            "friction": {"C_u": 0.01, "C_p": 5.0, "C_s": 0.02}}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return StewartPlatform.from_dict(data), lower, upper


class SmoothMotion:
    """A smooth platform motion with analytic derivatives of position and RPY angles."""

    amp_t, f_t, ph_t = np.array([0.06, 0.05, 0.04]), np.array([2.0, 3.0, 2.5]), np.array([0, 1, .5])
    amp_r, f_r, ph_r = np.array([0.1, 0.08, 0.2]), np.array([2.0, 1.5, 2.0]), np.array([.3, 0, 1])
    centre_t, centre_r = np.array([0.2, 0.0, 0.5]), np.zeros(3)

    def coords(self, tau, amp, f, ph, centre, order):
        arg = f * tau + ph
        return [centre + amp * np.sin(arg), amp * f * np.cos(arg), -amp * f**2 * np.sin(arg)][order]

    def position(self, tau, order=0):
        return self.coords(tau, self.amp_t, self.f_t, self.ph_t, self.centre_t, order)

    def theta(self, tau, order=0):
        return self.coords(tau, self.amp_r, self.f_r, self.ph_r, self.centre_r, order)

    def rotation(self, tau):
        return rotations.rpy_matrix(self.theta(tau))

    def state(self, tau):
        th, thd, thdd = (self.theta(tau, k) for k in range(3))
        return (self.position(tau), self.rotation(tau), self.position(tau, 1),
                rotations.rpy_angular_velocity(th, thd), self.position(tau, 2),
                rotations.rpy_angular_acceleration(th, thd, thdd))


def energy_terms(sp, lower, upper, motion, tau, h):
    """Kinetic + potential energy, friction dissipation and leg rates at tau, from positions of the
    bodies only (velocities by differencing)."""
    g = sp.gravity

    def geometry(x):
        R, t = motion.rotation(x), motion.position(x)
        S = sp.p @ R.T + t - sp.b
        L = np.linalg.norm(S, axis=1)
        s = S / L[:, None]
        p_d = sp.b + lower["com"][0] * s
        p_u = sp.b + (L + upper["com"][0])[:, None] * s
        p_c = t + R @ sp.R0
        return L, s, p_d, p_u, p_c, R

    L, s, p_d, p_u, p_c, R = geometry(tau)
    Ld, sd, v_d, v_u, v_c, Rd = (deriv(lambda x, k=k: geometry(x)[k], tau, h) for k in range(6))
    W = np.cross(s, sd)                      # the leg turns without spinning about its axis
    omega_x = Rd @ R.T
    omega = np.array([omega_x[2, 1], omega_x[0, 2], omega_x[1, 0]])
    I_leg = lower["inertia"][1][1] + upper["inertia"][1][1]  # transverse moments about the COMs
    kinetic = (0.5 * lower["mass"] * np.sum(v_d**2) + 0.5 * upper["mass"] * np.sum(v_u**2)
               + 0.5 * I_leg * np.sum(W**2)
               + 0.5 * sp.M * v_c @ v_c + 0.5 * omega @ (R @ sp.I_p @ R.T) @ omega)
    potential = -g @ (lower["mass"] * p_d.sum(0) + upper["mass"] * p_u.sum(0) + sp.M * p_c)
    dissipation = (sp.C_u * np.sum(W**2) + sp.C_s * np.sum((W - omega)**2)
                   + sp.C_p * np.sum(Ld**2))
    return kinetic + potential, dissipation, Ld


@pytest.mark.parametrize("printed", [False, True])
def test_power_balance_along_a_trajectory(printed):
    """Sum F_i L'_i + external power = d(KE + PE)/dt + friction dissipation. The printed eq. (16)
    double-counts m_u L^2 in the upper leg inertia and must violate the balance."""
    sp, lower, upper = axisymmetric_platform()
    motion = SmoothMotion()
    f_ext, m_ext = np.array([5.0, -3.0, 10.0]), np.array([1.0, 0.5, -2.0])
    errors, scale = [], 0.0
    for tau in np.linspace(0.1, 2.0, 8):
        state = motion.state(tau)
        F = sp.inverse_dynamics(*state, f_ext, m_ext, printed_eq16=printed).forces
        _, dissipation, Ld = energy_terms(sp, lower, upper, motion, tau, 1e-4)
        dE = deriv(lambda x: energy_terms(sp, lower, upper, motion, x, 1e-4)[0], tau, 1e-3)
        t, R, v, w = state[:4]
        p_in = F @ Ld + (R @ f_ext) @ v + (R @ m_ext) @ w
        errors.append(p_in - dE - dissipation)
        scale = max(scale, np.abs(F * Ld).sum())
    rel = np.abs(errors).max() / scale
    print(f"relative power residual {rel:.2e}")
    if printed:
        assert rel > 1e-4  # three orders above the correct model's residual
    else:
        assert rel < 1e-9


def leg_frame(k, s):
    y = np.cross(k, s)
    y /= np.linalg.norm(y)
    return np.column_stack([s, y, np.cross(s, y)])


def pose_curve(t, R, v, w, a, al):
    """A motion through (t, R) with velocity (v, w) and acceleration (a, al) at tau = 0."""
    def at(x):
        return t + v * x + 0.5 * a * x**2, rotations.exp_so3(w * x + 0.5 * al * x**2) @ R
    return at


def test_virtual_power_with_general_leg_inertia():
    """For every virtual twist of the platform, the actuator forces' virtual power equals that of the
    bodies' inertia, gravity, friction and external loads (the paper's model: legs turn with W, no
    spin, inertias about the centres of mass). Leg rates come from differencing the leg vectors: a
    path independent of eqs. (5)-(9) and of the per-leg elimination."""
    sp = paper_platform()
    rng = np.random.default_rng(7)
    state = random_state(rng)
    t, R, v, w, a, al = state
    f_ext, m_ext = np.array([3.0, 4.0, -5.0]), np.array([0.5, -1.0, 0.2])
    F = sp.inverse_dynamics(*state, f_ext, m_ext).forces
    curve = pose_curve(*state)
    g, h = sp.gravity, 1e-3

    def legs(x):
        tx, Rx = curve(x)
        S = sp.p @ Rx.T + tx - sp.b
        L = np.linalg.norm(S, axis=1)
        return L, S / L[:, None]

    L, s = legs(0.0)
    Ld = deriv(lambda x: legs(x)[0], 0.0, h)
    Ldd = deriv(lambda x: deriv(lambda y: legs(y)[0], x, h), 0.0, h)
    W = np.cross(s, deriv(lambda x: legs(x)[1], 0.0, h))
    A = deriv(lambda x: np.cross(legs(x)[1], deriv(lambda y: legs(y)[1], x, h)), 0.0, h)
    q = sp.p @ R.T
    Rc = R @ sp.R0
    a_c = a + np.cross(al, Rc) + np.cross(w, np.cross(w, Rc))
    I_c = R @ sp.I_p @ R.T

    lhs, rhs = np.zeros((6, 6)), np.zeros(6)
    for j, twist in enumerate(np.eye(6)):
        dt, dphi = twist[:3], twist[3:]
        power = ((sp.M * (a_c - g)) @ (dt + np.cross(dphi, Rc))
                 + (I_c @ al + np.cross(w, I_c @ w)) @ dphi - (R @ f_ext) @ dt - (R @ m_ext) @ dphi)
        for i in range(6):
            T = leg_frame(sp.k[i], s[i])
            r_d = T @ sp.r_d0[i]
            r_u = T @ sp.r_u0[i] + L[i] * s[i]
            a_d = np.cross(A[i], r_d) + np.cross(W[i], np.cross(W[i], r_d))
            a_u = (Ldd[i] * s[i] + np.cross(A[i], r_u) + np.cross(W[i], np.cross(W[i], r_u))
                   + 2 * Ld[i] * np.cross(W[i], s[i]))
            I_d, I_u = T @ sp.I_d0[i] @ T.T, T @ sp.I_u0[i] @ T.T
            dS = np.cross(dphi, q[i]) + dt
            dL = s[i] @ dS
            dW = np.cross(s[i], dS) / L[i]
            power += (sp.m_d[i] * (a_d - g) @ np.cross(dW, r_d)
                      + sp.m_u[i] * (a_u - g) @ (dL * s[i] + np.cross(dW, r_u))
                      + ((I_d + I_u) @ A[i] + np.cross(W[i], (I_d + I_u) @ W[i])) @ dW
                      + sp.C_u * W[i] @ dW + sp.C_s * (W[i] - w) @ (dW - dphi)
                      + sp.C_p * Ld[i] * dL)
            lhs[j, i] = dL
        rhs[j] = power
    expected = np.linalg.solve(lhs, rhs)
    assert np.allclose(F, expected, rtol=0, atol=1e-6 * np.abs(expected).max())
    # and the leg inertia matters here: the massless-leg statics are far off
    assert np.abs(expected - fichter_forces(sp, *state, f_ext, m_ext)).max() > 1.0


def test_constraint_forces_satisfy_every_body_equation():
    """Eqs. (17), (18), (23) and the lower part's Newton equation for each leg, and the platform's
    Newton-Euler equations with the legs' forces -F_s, all hold with the returned reactions."""
    sp = paper_platform()
    rng = np.random.default_rng(3)
    state = random_state(rng)
    t, R, v, w, a, al = state
    f_ext, m_ext = np.array([1.0, 2.0, 3.0]), np.array([0.3, -0.2, 0.1])
    r = sp.inverse_dynamics(*state, f_ext, m_ext, constraint_forces=True)
    c = r.constraint
    ik = sp.inverse_kinematics(t, R, v, w, a, al)
    g = sp.gravity
    total_force, total_moment = np.zeros(3), np.zeros(3)
    for i in range(6):
        s, W, A, L = ik.directions[i], ik.angular_velocity[i], ik.angular_acceleration[i], \
            ik.lengths[i]
        Ld, Ldd = ik.rates[i], ik.accelerations[i]
        T = leg_frame(sp.k[i], s)
        r_d, r_u = T @ sp.r_d0[i], T @ sp.r_u0[i] + L * s
        a_d = np.cross(A, r_d) + np.cross(W, np.cross(W, r_d))
        a_u = (Ldd * s + np.cross(A, r_u) + np.cross(W, np.cross(W, r_u))
               + 2 * Ld * np.cross(W, s))
        I_d, I_u = T @ sp.I_d0[i] @ T.T, T @ sp.I_u0[i] @ T.T
        F_s, F_p, F_u = c.spherical[i], c.prismatic[i], c.universal[i]
        M_p, M_u = c.prismatic_moment[i], c.universal_moment[i]
        r_p = sp.prismatic_point * s
        f = sp.C_s * (W - w)
        scale = np.abs(r.forces).max()
        eq17 = (-sp.m_d[i] * np.cross(r_d, a_d) + sp.m_d[i] * np.cross(r_d, g) - I_d @ A
                - np.cross(W, I_d @ W) + M_u * s - np.cross(r_p, F_p) - M_p - sp.C_u * W)
        eq18 = (-sp.m_u[i] * np.cross(r_u, a_u) + sp.m_u[i] * np.cross(r_u, g) - I_u @ A
                - np.cross(W, I_u @ W) + np.cross(L * s, F_s) + np.cross(r_p, F_p) + M_p - f)
        eq23 = -sp.m_u[i] * a_u + sp.m_u[i] * g + F_p + F_s - sp.C_p * Ld * s
        lower = -sp.m_d[i] * a_d + sp.m_d[i] * g - F_p + F_u + sp.C_p * Ld * s
        for residual in (eq17, eq18, eq23, lower):
            assert np.abs(residual).max() < 1e-9 * scale
        assert np.isclose(F_p @ s, r.forces[i], rtol=1e-12, atol=1e-9)   # F is the axial part
        assert abs(c.prismatic_constraint[i] @ s) < 1e-9 * scale
        total_force -= F_s
        total_moment += np.cross(ik.q[i], -F_s) + f
    Rc = R @ sp.R0
    a_c = a + np.cross(al, Rc) + np.cross(w, np.cross(w, Rc))
    I_c = R @ sp.I_p @ R.T
    newton = total_force + sp.M * g + R @ f_ext - sp.M * a_c
    euler = (total_moment + np.cross(Rc, sp.M * (g - a_c)) + R @ m_ext - I_c @ al
             - np.cross(w, I_c @ w))
    assert np.abs(np.concatenate([newton, euler])).max() < 1e-9 * scale


def test_relabelling_legs_permutes_forces():
    sp = paper_platform()
    order = [3, 0, 5, 1, 4, 2]
    state = random_state(np.random.default_rng(11))
    r = sp.inverse_dynamics(*state, constraint_forces=True)
    rp = sp.with_legs(order).inverse_dynamics(*state, constraint_forces=True)
    assert np.allclose(rp.forces, r.forces[order], rtol=1e-12, atol=1e-9)
    assert np.allclose(rp.static_forces, r.static_forces[order], rtol=1e-12, atol=1e-9)
    assert np.allclose(rp.constraint.universal, r.constraint.universal[order], atol=1e-9)
    assert np.isclose(rp.condition_number, r.condition_number, rtol=1e-9)


def test_batch_equals_single_poses():
    sp = paper_platform()
    rng = np.random.default_rng(5)
    states = [random_state(rng) for _ in range(4)]
    batch = sp.inverse_dynamics(*(np.array(x) for x in zip(*states)), constraint_forces=True)
    for n, state in enumerate(states):
        one = sp.inverse_dynamics(*state)   # the single-pose route
        assert np.array_equal(batch.forces[n], one.forces)
        assert np.array_equal(batch.static_forces[n], one.static_forces)
        assert batch.condition_number[n] == one.condition_number
        with_constraints = sp.inverse_dynamics(*state, constraint_forces=True)
        assert np.array_equal(batch.constraint.prismatic_moment[n],
                              with_constraints.constraint.prismatic_moment)


def test_condition_number_is_ratio_of_extreme_singular_values():
    sp = paper_platform()
    t, R = random_state(np.random.default_rng(2))[:2]
    r = sp.inverse_dynamics(t, R, *np.zeros((4, 3)))
    ik = sp.inverse_kinematics(t, R)
    H = np.vstack([ik.directions.T, np.cross(ik.q, ik.directions).T])
    sv = np.linalg.svd(H, compute_uv=False)
    assert np.isclose(r.condition_number, sv[0] / sv[-1], rtol=1e-10)


def test_singular_pose_is_flagged_not_turned_into_forces():
    """All six legs meet at the platform's reference point: no leg force can balance a moment."""
    sp = dataclasses.replace(paper_platform(), p=np.zeros((6, 3)))
    r = sp.inverse_dynamics(np.array([0.1, 0.0, 0.5]), np.eye(3), *np.zeros((4, 3)))
    assert r.singular and r.condition_number > 1e12
    assert np.all(np.isnan(r.forces)) and np.all(np.isnan(r.static_forces))


def test_near_singular_path_iii_forces_grow_with_condition_number():
    """Path III crosses a singularity: near it the forces are of order 1e5 N as in the paper."""
    from robodyn_ros.apps.stewart_path import PAPER_PATHS
    sp = paper_platform()
    path, dtau = PAPER_PATHS["III"]
    r = sp.inverse_dynamics(*path.sample(path.times(dtau)).pose_args())
    peak = np.argmax(r.condition_number)
    assert r.condition_number[peak] > 10 * np.median(r.condition_number)
    assert np.abs(r.forces[peak]).max() > 1e5
    assert np.argmax(np.abs(r.forces).max(axis=1)) == peak


def test_single_pose_path_equals_batch_and_interpreted_reference():
    """The single-pose API (caller's arrays straight into one compiled call), the batch path and the
    same kernels run interpreted (robodyn_ros.plumbing.kernels.interpreted: the Python source, not the compiled
    code) agree: single and batch bit for bit, the interpreted run to rounding."""
    from robodyn_ros.plumbing.kernels import interpreted
    from robodyn_ros.stewart import kernel
    sp = paper_platform()
    rng = np.random.default_rng(21)
    states = [random_state(rng, scale=2.0) for _ in range(5)]
    wrenches = [(20 * rng.standard_normal(3), 5 * rng.standard_normal(3)) for _ in states]
    ns = interpreted(kernel)
    for printed in (False, True):
        batch = sp.inverse_dynamics(*(np.array(x) for x in zip(*states)),
                                    np.array([w[0] for w in wrenches]),
                                    np.array([w[1] for w in wrenches]), printed_eq16=printed)
        for n, (state, wrench) in enumerate(zip(states, wrenches)):
            one = sp.inverse_dynamics(*state, *wrench, printed_eq16=printed)
            assert isinstance(one.condition_number, float) and one.singular is False
            for field in ("forces", "static_forces", "leg_lengths", "leg_rates",
                          "leg_accelerations", "x", "D"):
                assert getattr(one, field).shape == (6,)
                assert np.array_equal(getattr(one, field), getattr(batch, field)[n]), field
            assert one.condition_number == batch.condition_number[n]
            pose = np.concatenate([state[0], state[1].ravel(), *state[2:], *wrench])
            out = np.empty((kernel.OUT_ROWS, 1, 6))
            cond = ns["inverse_dynamics_one"](sp.packed, pose, printed, out)
            assert np.isclose(cond, one.condition_number, rtol=1e-12)
            scale = np.abs(one.forces).max()
            assert np.allclose(out[kernel.O_F, 0], one.forces, rtol=0, atol=1e-12 * scale)
            assert np.allclose(out[kernel.O_F0, 0], one.static_forces, rtol=0, atol=1e-12 * scale)
    # the other spellings of one pose take the general path and give the same numbers
    t, R, v, w, a, al = states[0]
    one = sp.inverse_dynamics(t, R, v, w, a, al)
    as_lists = sp.inverse_dynamics(t.tolist(), R.tolist(), v.tolist(), w.tolist(), a.tolist(),
                                   al.tolist(), None, [0.0, 0.0, 0.0])
    assert np.array_equal(as_lists.forces, one.forces)
    assert np.array_equal(sp.inverse_dynamics(t, np.asfortranarray(R), v, w, a, al).forces,
                          one.forces)
    # the fast path (machine code without numba's dispatch) reads any layout right, and an array
    # of another dtype or rank is converted or refused by the general path, never misread
    strided = np.zeros(6)[::2]
    strided[:] = t
    read_only = R.copy()
    read_only.flags.writeable = False
    assert np.array_equal(sp.inverse_dynamics(strided, read_only, v, w, a, al).forces, one.forces)
    t32, al32 = t.astype(np.float32), al.astype(np.float32)
    assert np.array_equal(sp.inverse_dynamics(t32, R, v, w, a, al32).forces,
                          sp.inverse_dynamics(t32.astype(float), R, v, w, a,
                                              al32.astype(float)).forces)
    for wrong in ((t.reshape(1, 3), R), (t, R.ravel())):
        with pytest.raises(ValueError, match="expected"):
            sp.inverse_dynamics(*wrong, v, w, a, al)


def test_interpreted_kernels_call_interpreted_helpers_all_the_way_down():
    """interpreted(kernel) rebinds the ``inline`` helpers as well as the kernels, so that a whole step
    runs on counting scalars (which the compiled code cannot take) and, counted, gives the compiled
    forces: the benchmark's flop count (which checks that itself) runs end to end."""
    from robodyn_ros.apps.benchmarks.stewart import count_flops
    from robodyn_ros.plumbing.kernels import interpreted
    from robodyn_ros.stewart import kernel, universal
    assert interpreted(kernel)["leg_frame"] is not kernel.leg_frame
    assert interpreted(universal)["leg_frame"] is interpreted(kernel)["leg_frame"]
    state = random_state(np.random.default_rng(5))
    pose = np.concatenate([state[0], state[1].ravel(), *state[2:], np.zeros(6)])
    sections = count_flops(paper_platform(), pose)
    assert sections["per leg (section 2)"]["total"] > 0


def test_single_pose_shape_errors_are_reported():
    sp = paper_platform()
    t, R, v, w, a, al = random_state(np.random.default_rng(8))
    with pytest.raises(ValueError, match="does not match one pose"):
        sp.inverse_dynamics(t, R, v[:2], w, a, al)
    with pytest.raises(ValueError, match="does not match one pose"):
        sp.inverse_dynamics(t, R, v, w, a, al, np.zeros((2, 3)))
    with pytest.raises(ValueError, match="rotation_matrix"):
        sp.inverse_dynamics(t, R[:2], v, w, a, al)
    with pytest.raises(ValueError, match="rotation_matrix"):
        sp.inverse_dynamics(t, R.ravel(), v, w, a, al)


@pytest.mark.parametrize("log_cond", [0, 2, 4, 6, 8, 10, 12, 15])
def test_condition_number_near_singularity(log_cond):
    """The compiled Jacobi against LAPACK's SVD on matrices of prescribed singular values, graded or
    clustered, on H itself and on the R of its QR (as a pose computes it): sigma_min is found to
    eps * sigma_max absolute, so the ratio to ~eps * cond relative (a Gram-matrix eigenvalue route
    would lose everything beyond cond ~1e8)."""
    from robodyn_ros.stewart import kernel
    rng = np.random.default_rng(log_cond)
    work = np.empty((6, 6)), np.empty(6), np.empty((3, 3))
    for spectrum in (np.logspace(0, -log_cond, 6), [1, 1, 1, 1, 1, 10.0**-log_cond],
                     [1, 10.0**-log_cond, 1, 10.0**-log_cond, 0.5, 0.5]):
        for _ in range(20):
            Q1 = np.linalg.qr(rng.standard_normal((6, 6)))[0]
            Q2 = np.linalg.qr(rng.standard_normal((6, 6)))[0]
            H = Q1 @ np.diag(spectrum) @ Q2
            sv = np.linalg.svd(H, compute_uv=False)
            expected = sv[0] / sv[-1]
            Hw = np.hstack([H, np.zeros((6, 2))])
            kernel.triangularize(Hw, 8)
            for got in (kernel.condition_number(H, *work), kernel.condition_number(Hw, *work)):
                # a few eps * cond (the former update of the norms was off by 100 % at 1e12)
                assert abs(got / expected - 1) < 1e-14 + 2e-15 * expected, (spectrum, got, expected)
