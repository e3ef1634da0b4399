"""Internal consistency of the dynamics core, on every shipped arm and on random arms.

Each check compares two computations that share as little code as possible:
  Newton–Euler (compiled kernel)      vs  Lagrange–Euler (4x4 matrices, plain NumPy)
  CRBA                                vs  strobed Newton–Euler; and vs 2 T / qd^T qd from energy()
  coriolis_matrix (Jacobian sums)     vs  coriolis_torques (Newton–Euler);  dM/dt - 2C skew
  gravity_torques                     vs  the gradient of energy()'s potential, by differences
  forward_dynamics / the integrators  vs  the energy balance (dE/dt = (tau - friction) . qd)
  tip wrench in Newton–Euler / L–E    vs  J^T [R f; R n] with J checked by differences of the FK
  standard DH YAML                    vs  modified DH built here by converting it  vs  the URDF
  with_payload / scaled               vs  the same models edited by hand

Tolerances. Newton–Euler and Lagrange–Euler do O(10^2..10^4) operations on O(1..10^3) numbers, so
they agree to ~1e-13 of the torque scale; 1e-10 leaves margin and would catch any missing term (the
smallest physical terms of the shipped arms are ~1e-4 of the scale). Finite differences are given
their truncation + rounding error budget where they are used.
"""
import dataclasses
import warnings
from pathlib import Path

import numpy as np
import pytest
import yaml

from robodyn_ros.dynamics import RobotModel
from robodyn_ros.dynamics.lagrange_euler import lagrange_euler
from robodyn_ros.dynamics.integrate import simulate_adaptive
from urdf_factory import box_inertia, random_urdf, remove_branch

ROOT = Path(__file__).resolve().parents[1]
SHIPPED_YAML = ["config/puma560_dh.yaml", "config/stanford_dh.yaml", "config/planar2_dh.yaml"]
SHIPPED_URDF = ["urdf/puma560.urdf", "urdf/puma560_gazebo.urdf", "urdf/stanford.urdf", "urdf/planar2.urdf"]
# URDF -> the DH YAML it describes (same arm, same parameters)
SAME_ARM = {"urdf/puma560.urdf": "config/puma560_dh.yaml", "urdf/puma560_gazebo.urdf": "config/puma560_dh.yaml",
            "urdf/stanford.urdf": "config/stanford_dh.yaml", "urdf/planar2.urdf": "config/planar2_dh.yaml"}
REL = 1e-10


def quiet(load, *args, **kwargs):
    """Load a model whose data rightly warns (PUMA link 3 and Stanford link 5 violate the triangle
    inequality in the published data)."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*triangle inequality.*")
        return load(*args, **kwargs)


def yaml_model(rel):
    return quiet(RobotModel.from_yaml, ROOT / rel)


def urdf_model(rel, gravity=(0.0, 0.0, -9.81)):
    return quiet(RobotModel.from_urdf, ROOT / rel, gravity=gravity)


def random_dh_specs(rng, n, massless=0.25):
    """Random DH links mixing revolute and prismatic joints; every joint has friction and armature
    except some; some links massless (never the last, so that M stays positive definite)."""
    links = []
    for i in range(n):
        mass = 0.0 if (i < n - 1 and rng.uniform() < massless) else rng.uniform(0.5, 6.0)
        links.append(dict(
            joint="prismatic" if rng.uniform() < 0.35 else "revolute",
            a=rng.uniform(-0.5, 0.5), alpha=rng.uniform(-np.pi, np.pi), d=rng.uniform(-0.5, 0.5),
            theta=rng.uniform(-np.pi, np.pi), mass=mass, com=list(rng.uniform(-0.3, 0.3, 3)),
            inertia=box_inertia(mass, rng).tolist(), armature=rng.choice([0.0, rng.uniform(0, 1)]),
            viscous=rng.uniform(0, 2), coulomb=list(rng.uniform(0, 1.5, 2))))
    return links


def random_dh_model(seed, n, convention):
    rng = np.random.default_rng(seed)
    tool = np.eye(4)
    tool[:3, :3] = np.linalg.qr(rng.standard_normal((3, 3)))[0] * np.array([1, 1, 1])
    if np.linalg.det(tool[:3, :3]) < 0:
        tool[:3, 0] *= -1
    tool[:3, 3] = rng.uniform(-0.2, 0.2, 3)
    g = rng.standard_normal(3)
    return RobotModel.from_dh(random_dh_specs(rng, n), convention=convention, tool=tool,
                              gravity=9.81 * g / np.linalg.norm(g))


def random_urdf_model(seed, n, **options):
    rng = np.random.default_rng(seed)
    arm = random_urdf(rng, n, friction=True, **options)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*left out the branches.*")
        return RobotModel.from_urdf(arm.xml, tip_link=arm.tip)


def all_models():
    models = [(rel, yaml_model(rel)) for rel in SHIPPED_YAML]
    models += [(rel, urdf_model(rel)) for rel in SHIPPED_URDF]
    for seed, (n, convention) in enumerate([(1, "standard"), (3, "standard"), (6, "standard"),
                                            (2, "modified"), (4, "modified"), (7, "modified")]):
        models.append((f"random-dh-{convention}-{n}-seed{seed}", random_dh_model(seed, n, convention)))
    for seed, (n, options) in enumerate([(1, {}), (2, dict(gripper=False)), (4, {}), (5, dict(branch=True)),
                                         (6, dict(fixed_in_chain=0.8, massless=0.5)),
                                         (3, dict(prismatic=0.9))]):
        models.append((f"random-urdf-{n}-seed{100 + seed}", random_urdf_model(100 + seed, n, **options)))
    return models


MODELS = all_models()
IDS = [name for name, _ in MODELS]


def random_states(model, seed, count):
    rng = np.random.default_rng(seed)
    n = model.dof
    return (rng.uniform(-np.pi, np.pi, (count, n)), rng.uniform(-2, 2, (count, n)),
            rng.uniform(-5, 5, (count, n)))


def scale_of(model, q, qd, qdd):
    """The torque scale of a state: the largest of the inertial, velocity and gravity terms."""
    M = model.mass_matrix(q)
    return max(1.0, np.max(np.abs(M @ qdd)), np.max(np.abs(model.coriolis_torques(q, qd))),
               np.max(np.abs(model.gravity_torques(q))))


def test_random_models_have_what_they_should():
    # the generator really produced the mixtures the tests claim to cover
    kinds = {t for _, m in MODELS if _.startswith("random") for t in m.joint_types}
    assert kinds == {"revolute", "prismatic"}
    assert any(link.mass == 0.0 for _, m in MODELS if _.startswith("random") for link in m.links)
    assert any(np.any(m.coulomb_positive != m.coulomb_negative) for _, m in MODELS)


# ------------------------------------------------------------------ Newton–Euler = Lagrange–Euler

@pytest.mark.parametrize("name,model", MODELS, ids=IDS)
def test_newton_euler_equals_lagrange_euler(name, model):
    q, qd, qdd = random_states(model, 1, 3)
    rng = np.random.default_rng(2)
    for k in range(len(q)):
        scale = scale_of(model, q[k], qd[k], qdd[k])
        ne = model.inverse_dynamics(q[k], qd[k], qdd[k])
        le = lagrange_euler(model, q[k], qd[k], qdd[k])
        np.testing.assert_allclose(ne, le, rtol=0, atol=REL * scale)
        ne0 = model.inverse_dynamics(q[k], qd[k], qdd[k], friction=False)
        le0 = lagrange_euler(model, q[k], qd[k], qdd[k], friction=False)
        np.testing.assert_allclose(ne0, le0, rtol=0, atol=REL * scale)
        w = rng.uniform(-20, 20, 6)
        wscale = scale + np.max(np.abs(model.jacobian(q[k]))) * np.max(np.abs(w))
        np.testing.assert_allclose(model.inverse_dynamics(q[k], qd[k], qdd[k], tip_wrench=w),
                                   lagrange_euler(model, q[k], qd[k], qdd[k], tip_wrench=w),
                                   rtol=0, atol=REL * wscale)


# ------------------------------------------------------------------ M(q)

@pytest.mark.parametrize("name,model", MODELS, ids=IDS)
def test_mass_matrix(name, model):
    q, qd, qdd = random_states(model, 3, 5)
    for k in range(len(q)):
        M = model.mass_matrix(q[k])
        scale = np.max(np.abs(M))
        np.testing.assert_array_equal(M, M.T)
        assert np.linalg.eigvalsh(M).min() > 1e-9 * scale, "M not positive definite"
        np.testing.assert_allclose(model.mass_matrix(q[k], method="strobe"), M, rtol=0, atol=1e-12 * scale)
        # inverse dynamics is affine in qdd with slope M
        tau0 = model.inverse_dynamics(q[k], qd[k], np.zeros(model.dof))
        tau = model.inverse_dynamics(q[k], qd[k], qdd[k])
        np.testing.assert_allclose(tau, M @ qdd[k] + tau0, rtol=0, atol=REL * scale_of(model, q[k], qd[k], qdd[k]))
        # kinetic energy from the Jacobians of energy(), independent of CRBA: T = qd^T M qd / 2
        kinetic, _ = model.energy(q[k], qd[k])
        assert kinetic == pytest.approx(0.5 * qd[k] @ M @ qd[k], rel=1e-12)


def test_mass_matrix_rejects_unknown_method():
    with pytest.raises(ValueError, match="unknown mass-matrix method"):
        MODELS[0][1].mass_matrix(np.zeros(6), method="aba")


# ------------------------------------------------------------------ C(q, qd)

@pytest.mark.parametrize("name,model", MODELS, ids=IDS)
def test_coriolis_matrix(name, model):
    q, qd, _ = random_states(model, 4, 3)
    h = 1e-5
    for k in range(len(q)):
        C = model.coriolis_matrix(q[k], qd[k])
        ctau = model.coriolis_torques(q[k], qd[k])
        M = model.mass_matrix(q[k])
        cscale = max(1.0, np.max(np.abs(C)) * np.max(np.abs(qd[k])))
        np.testing.assert_allclose(C @ qd[k], ctau, rtol=0, atol=REL * cscale)
        # dM/dt along qd by central differences: truncation h^2/6 |M'''| |qd|^3 ~ 1e-10 |M|,
        # rounding ~ eps |M| / h ~ 2e-11 |M|: tolerance 1e-8 of |M| |qd|
        Mdot = (model.mass_matrix(q[k] + h * qd[k]) - model.mass_matrix(q[k] - h * qd[k])) / (2 * h)
        S = Mdot - 2.0 * C
        tol = 1e-8 * np.max(np.abs(M)) * max(1.0, np.max(np.abs(qd[k])))
        np.testing.assert_allclose(S + S.T, 0.0, atol=tol)
        # and the symmetric part of C is half of dM/dt (the skew identity, stated the other way)
        np.testing.assert_allclose(C + C.T, Mdot, atol=tol)


# ------------------------------------------------------------------ g(q) = dV/dq

@pytest.mark.parametrize("name,model", MODELS, ids=IDS)
def test_gravity_is_gradient_of_potential(name, model):
    q, _, _ = random_states(model, 5, 3)
    h = 1e-6
    for k in range(len(q)):
        g = model.gravity_torques(q[k])
        grad = np.empty(model.dof)
        for j in range(model.dof):
            e = np.zeros(model.dof)
            e[j] = h
            grad[j] = (model.energy(q[k] + e, q[k] * 0)[1] - model.energy(q[k] - e, q[k] * 0)[1]) / (2 * h)
        # rounding eps |V| / h ~ 1e-10 |V|, truncation h^2 |V'''| ~ 1e-12 |V|
        V = max(1.0, abs(model.energy(q[k], q[k] * 0)[1]), np.max(np.abs(g)))
        np.testing.assert_allclose(g, grad, rtol=0, atol=1e-8 * V)


# ------------------------------------------------------------------ forward o inverse = identity

@pytest.mark.parametrize("name,model", MODELS, ids=IDS)
def test_forward_inverts_inverse(name, model):
    q, qd, qdd = random_states(model, 6, 6)
    w = np.random.default_rng(7).uniform(-10, 10, 6)
    for friction in (True, False):
        tau = model.inverse_dynamics(q, qd, qdd, tip_wrench=w, friction=friction)
        back = model.forward_dynamics(q, qd, tau, tip_wrench=w, friction=friction)
        for k in range(len(q)):
            M = model.mass_matrix(q[k])
            # backward error of a Cholesky solve ~ cond(M) eps
            tol = 1e-12 * np.linalg.cond(M) * max(1.0, np.max(np.abs(qdd[k])))
            np.testing.assert_allclose(back[k], qdd[k], rtol=0, atol=tol)
            single = model.forward_dynamics(q[k], qd[k], tau[k], tip_wrench=w, friction=friction)
            np.testing.assert_allclose(single, qdd[k], rtol=0, atol=tol)
            # and qdd -> tau the other way round
            t2 = model.inverse_dynamics(q[k], qd[k], single, tip_wrench=w, friction=friction)
            np.testing.assert_allclose(t2, tau[k], rtol=0, atol=1e-10 * max(1.0, np.max(np.abs(tau[k]))))


# ------------------------------------------------------------------ batch = loop

@pytest.mark.parametrize("name,model", MODELS, ids=IDS)
def test_batch_equals_loop(name, model):
    q, qd, qdd = random_states(model, 8, 7)
    W = np.random.default_rng(9).uniform(-5, 5, (7, 6))
    exact = dict(rtol=1e-14, atol=1e-13)   # the same kernel on the same numbers
    tau = model.inverse_dynamics(q, qd, qdd)
    assert tau.shape == (7, model.dof)
    tau_w = model.inverse_dynamics(q, qd, qdd, tip_wrench=W)
    tau_w1 = model.inverse_dynamics(q, qd, qdd, tip_wrench=W[0])      # one wrench for all rows
    M = model.mass_matrix(q)
    assert M.shape == (7, model.dof, model.dof)
    Ms = model.mass_matrix(q, method="strobe")
    qdd_f = model.forward_dynamics(q, qd, tau)
    qdd_w = model.forward_dynamics(q, qd, tau_w, tip_wrench=W)
    c = model.coriolis_torques(q, qd)
    g = model.gravity_torques(q)
    for k in range(7):
        np.testing.assert_allclose(tau[k], model.inverse_dynamics(q[k], qd[k], qdd[k]), **exact)
        np.testing.assert_allclose(tau_w[k], model.inverse_dynamics(q[k], qd[k], qdd[k], tip_wrench=W[k]), **exact)
        np.testing.assert_allclose(tau_w1[k], model.inverse_dynamics(q[k], qd[k], qdd[k], tip_wrench=W[0]), **exact)
        np.testing.assert_allclose(M[k], model.mass_matrix(q[k]), **exact)
        np.testing.assert_allclose(Ms[k], model.mass_matrix(q[k], method="strobe"), **exact)
        np.testing.assert_allclose(qdd_f[k], model.forward_dynamics(q[k], qd[k], tau[k]), **exact)
        np.testing.assert_allclose(qdd_w[k], model.forward_dynamics(q[k], qd[k], tau_w[k], tip_wrench=W[k]),
                                   **exact)
        np.testing.assert_allclose(c[k], model.coriolis_torques(q[k], qd[k]), **exact)
        np.testing.assert_allclose(g[k], model.gravity_torques(q[k]), **exact)


def test_batch_shape_errors():
    model = MODELS[0][1]
    with pytest.raises(ValueError):
        model.inverse_dynamics(np.zeros((3, 6)), np.zeros((3, 6)), np.zeros((2, 6)))
    with pytest.raises(ValueError):
        model.inverse_dynamics(np.zeros(5), np.zeros(5), np.zeros(5))
    with pytest.raises(ValueError):
        model.inverse_dynamics(np.zeros(6), np.zeros(6), np.zeros(6), tip_wrench=np.zeros(3))


# ------------------------------------------------------------------ tip wrench = J^T w

def fd_jacobian(model, q, h=1e-6):
    """Tip Jacobian [v; w] in the world frame by central differences of the forward kinematics."""
    J = np.zeros((6, model.dof))
    for j in range(model.dof):
        e = np.zeros(model.dof)
        e[j] = h
        Tp, Tm = model.link_frames(q + e)[-1], model.link_frames(q - e)[-1]
        J[:3, j] = (Tp[:3, 3] - Tm[:3, 3]) / (2 * h)
        W = (Tp[:3, :3] - Tm[:3, :3]) / (2 * h) @ model.link_frames(q)[-1][:3, :3].T
        J[3:, j] = [W[2, 1], W[0, 2], W[1, 0]]
    return J


@pytest.mark.parametrize("name,model", MODELS, ids=IDS)
def test_tip_wrench_is_jacobian_transpose(name, model):
    q, qd, qdd = random_states(model, 10, 3)
    rng = np.random.default_rng(11)
    for k in range(len(q)):
        J = model.jacobian(q[k])
        np.testing.assert_allclose(J, fd_jacobian(model, q[k]), rtol=0, atol=1e-8 * max(1.0, np.max(np.abs(J))))
        R = model.link_frames(q[k])[-1][:3, :3]
        w = rng.uniform(-30, 30, 6)
        expected = J.T @ np.concatenate([R @ w[:3], R @ w[3:]])
        tol = REL * max(1.0, scale_of(model, q[k], qd[k], qdd[k]), np.max(np.abs(expected)))
        ne = (model.inverse_dynamics(q[k], qd[k], qdd[k], tip_wrench=w)
              - model.inverse_dynamics(q[k], qd[k], qdd[k]))
        np.testing.assert_allclose(ne, expected, rtol=0, atol=tol)
        le = (lagrange_euler(model, q[k], qd[k], qdd[k], tip_wrench=w)
              - lagrange_euler(model, q[k], qd[k], qdd[k]))
        np.testing.assert_allclose(le, expected, rtol=0, atol=tol)
        # a wrench held statically by the joint forces: forward dynamics sees the difference
        tau = model.inverse_dynamics(q[k], qd[k], qdd[k], tip_wrench=w)
        np.testing.assert_allclose(model.forward_dynamics(q[k], qd[k], tau - expected), qdd[k], rtol=0,
                                   atol=1e-12 * np.linalg.cond(model.mass_matrix(q[k])) * 5)


# ------------------------------------------------------------------ energy balance

def without_coulomb(model):
    links = [dataclasses.replace(link, coulomb_positive=0.0, coulomb_negative=0.0) for link in model.links]
    return quiet(RobotModel, links, model.tip, model.gravity, model.name)


def torque_profile(model, q0):
    """tau(t) = gravity at q0 plus sinusoids, with its time derivative."""
    g0 = model.gravity_torques(q0)
    amp = 0.3 * (np.abs(g0) + 1.0)
    omega = np.linspace(2.0, 5.0, model.dof)

    def tau(t, q=None, qd=None):
        return g0 + amp * np.sin(omega * t)

    def tau_rate(t):
        return amp * omega * np.cos(omega * t)
    return tau, tau_rate


@pytest.mark.parametrize("rel", ["config/puma560_dh.yaml", "config/stanford_dh.yaml", "random-urdf"])
def test_power_balance_along_simulated_motion(rel):
    # Coulomb friction is discontinuous at qd = 0 (a velocity may cross zero): keep viscous friction
    # and armature, drop Coulomb, so that the adaptive integrator sees a smooth system.
    if rel == "random-urdf":
        model = without_coulomb(random_urdf_model(7, 4))
    else:
        model = without_coulomb(yaml_model(rel))
    q0 = np.full(model.dof, 0.3)
    qd0 = np.linspace(-0.5, 0.5, model.dof)
    tau, tau_rate = torque_profile(model, q0)
    t, q, qd = simulate_adaptive(model, q0, qd0, tau, duration=0.8, rtol=1e-11, atol=1e-12)
    assert t[-1] == pytest.approx(0.8) and len(t) > 10
    B = model.viscous
    qdd = np.array([model.forward_dynamics(q[k], qd[k], tau(t[k])) for k in range(len(t))])
    taus = np.array([tau(tk) for tk in t])
    P = np.einsum("ij,ij->i", taus - B * qd, qd)                      # power into the arm's energy
    Pdot = (np.einsum("ij,ij->i", np.array([tau_rate(tk) for tk in t]), qd)
            + np.einsum("ij,ij->i", taus - 2 * B * qd, qdd))
    E = np.array([sum(model.energy(q[k], qd[k])) for k in range(len(t))])
    # (1) the integral of the power (trapezoid with Hermite end corrections: error O(h^4))
    h = np.diff(t)
    work = np.cumsum(h / 2 * (P[:-1] + P[1:]) + h ** 2 / 12 * (Pdot[:-1] - Pdot[1:]))
    scale = np.sum(h * np.abs(P[:-1])) + np.max(np.abs(E))
    np.testing.assert_allclose(E[1:] - E[0], work, rtol=0, atol=1e-8 * scale)
    # (2) pointwise: dE/dt by central differences of energy() along the state's own velocity
    #     (rounding eps |E| / h ~ 1e-10 |E|, truncation h^2 |E'''| ~ 1e-12)
    eps = 1e-6
    for k in range(0, len(t), max(1, len(t) // 15)):
        Ep = sum(model.energy(q[k] + eps * qd[k], qd[k] + eps * qdd[k]))
        Em = sum(model.energy(q[k] - eps * qd[k], qd[k] - eps * qdd[k]))
        assert (Ep - Em) / (2 * eps) == pytest.approx(P[k], abs=1e-7 * scale)


# ------------------------------------------------------------------ standard DH = modified DH = URDF

def rx(a):
    c, s = np.cos(a), np.sin(a)
    return np.array([[1, 0, 0], [0, c, -s], [0, s, c]])


def inertia3(value):
    v = np.asarray(value, dtype=float)
    if v.shape == (6,):
        xx, yy, zz, xy, yz, xz = v
        return np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]])
    if v.shape == (3,):
        return np.diag(v)
    return v


def standard_to_modified(doc):
    """Craig's table of the same arm: link i takes alpha_{i-1}, a_{i-1} from the standard row i-1
    and d_i, theta_i from row i. Standard frame i = MDH frame i Tx(a_i) Rx(alpha_i), so the body
    given in standard frame i moves into MDH frame i through that transform; the tool takes the
    last Tx(a_n) Rx(alpha_n)."""
    std = doc["links"]
    mdh = []
    for i, row in enumerate(std):
        prev = std[i - 1] if i > 0 else dict(a=0.0, alpha=0.0)
        R = rx(row.get("alpha", 0.0))
        com = R @ np.asarray(row.get("com", [0, 0, 0]), dtype=float) + [row.get("a", 0.0), 0.0, 0.0]
        new = dict(row)
        new.update(a=prev.get("a", 0.0), alpha=prev.get("alpha", 0.0), com=com.tolist(),
                   inertia=(R @ inertia3(row.get("inertia", [0, 0, 0])) @ R.T).tolist())
        mdh.append(new)
    tool = np.eye(4)
    tool[:3, :3] = rx(std[-1].get("alpha", 0.0))
    tool[0, 3] = std[-1].get("a", 0.0)
    return mdh, tool


@pytest.mark.parametrize("rel", SHIPPED_YAML)
def test_standard_modified_dh_and_urdf_agree(rel):
    doc = yaml.safe_load((ROOT / rel).read_text())
    std = yaml_model(rel)
    mdh_links, tool = standard_to_modified(doc)
    mdh = quiet(RobotModel.from_dh, mdh_links, convention="modified", gravity=doc["gravity"], tool=tool)
    # URDF carries no gravity: the planar arm's (along -y) must be given to the loader
    urdfs = [(u, urdf_model(u, gravity=doc["gravity"])) for u, y in SAME_ARM.items() if y == rel]
    assert urdfs
    q, qd, qdd = random_states(std, 12, 6)
    w = np.random.default_rng(13).uniform(-10, 10, 6)
    for k in range(len(q)):
        scale = scale_of(std, q[k], qd[k], qdd[k])
        ref = std.inverse_dynamics(q[k], qd[k], qdd[k], tip_wrench=w)
        np.testing.assert_allclose(mdh.link_frames(q[k])[-1], std.link_frames(q[k])[-1], atol=1e-12)
        np.testing.assert_allclose(mdh.inverse_dynamics(q[k], qd[k], qdd[k], tip_wrench=w), ref,
                                   rtol=0, atol=REL * scale)
        for name, model in urdfs:
            assert model.joint_names == std.joint_names
            np.testing.assert_allclose(model.link_frames(q[k])[-1], std.link_frames(q[k])[-1], atol=1e-12,
                                       err_msg=f"{name}: tool frame")
            np.testing.assert_allclose(model.mass_matrix(q[k]), std.mass_matrix(q[k]), rtol=0,
                                       atol=REL * np.max(np.abs(std.mass_matrix(q[k]))),
                                       err_msg=f"{name}: mass matrix differs from {rel}")
            np.testing.assert_allclose(model.inverse_dynamics(q[k], qd[k], qdd[k], tip_wrench=w), ref,
                                       rtol=0, atol=REL * scale, err_msg=f"{name}: torques differ from {rel}")


def test_urdf_keeps_the_rotational_inertia_of_a_massless_link():
    # The PUMA's link 1 has no measured mass but 0.35 kg m^2 about its axis (config/puma560_dh.yaml,
    # urdf/puma560.urdf: mass 0, izz 0.35). A body of zero mass still has that inertia: qdd_1 must
    # see it. Written out: M_11 at q = 0 of the YAML model minus that of the URDF model must be 0.
    q = np.zeros(6)
    std = yaml_model("config/puma560_dh.yaml")
    urdf = urdf_model("urdf/puma560.urdf")
    # the DH data itself carries it: M11 with link 1 alone is 0.35 + armature
    only_link1 = RobotModel.from_dh([dict(alpha=np.pi / 2, mass=0.0, inertia=[0.0, 0.35, 0.0])])
    assert only_link1.mass_matrix([0.0])[0, 0] == pytest.approx(0.35, rel=1e-12)
    assert urdf.mass_matrix(q)[0, 0] == pytest.approx(std.mass_matrix(q)[0, 0], rel=1e-12)
    # the same for any URDF: a massless link with an inertia about the joint axis
    xml = """<robot name="flywheel"><link name="base"/>
      <link name="wheel"><inertial><mass value="0"/>
        <inertia ixx="0.1" iyy="0.1" izz="0.35" ixy="0" iyz="0" ixz="0"/></inertial></link>
      <joint name="j" type="continuous"><parent link="base"/><child link="wheel"/><axis xyz="0 0 1"/></joint>
    </robot>"""
    assert RobotModel.from_urdf(xml).mass_matrix([0.0])[0, 0] == pytest.approx(0.35, rel=1e-12)


# ------------------------------------------------------------------ URDF specifics

def test_branch_is_left_out_with_a_warning_naming_it():
    rng = np.random.default_rng(21)
    arm = random_urdf(rng, 4, branch=True, friction=True)
    with pytest.warns(UserWarning, match="camera_pan"):
        with_branch = RobotModel.from_urdf(arm.xml, tip_link=arm.tip)
    without = RobotModel.from_urdf(remove_branch(arm.xml), tip_link=arm.tip)
    assert with_branch.joint_names == arm.movable == without.joint_names
    q, qd, qdd = random_states(without, 22, 4)
    np.testing.assert_allclose(with_branch.inverse_dynamics(q, qd, qdd), without.inverse_dynamics(q, qd, qdd),
                               rtol=1e-13, atol=1e-12)


def test_fixed_links_are_lumped_into_their_chain_link():
    # The body of a link rigidly attached to a chain link moves with it: the total mass the chain
    # carries is the sum of every <inertial> mass except the root's and those fixed to the root.
    rng = np.random.default_rng(23)
    arm = random_urdf(rng, 5, fixed_in_chain=0.7, massless=0.4)
    model = RobotModel.from_urdf(arm.xml, tip_link=arm.tip)
    # (a flange before the first movable joint, "flange_0", is part of the fixed base)
    assert "flange_0" in arm.links_with_mass, "the seed should put a fixed link on the base"
    moving = sum(m for link, m in arm.links_with_mass.items() if link != "flange_0")
    assert sum(link.mass for link in model.links) == pytest.approx(moving, rel=1e-13)
    # the tip can be a chain link with the gripper beyond it: same dynamics, another tip frame
    last = arm.movable[-1].replace("joint", "link")
    shorter = RobotModel.from_urdf(arm.xml, tip_link=last)
    q, qd, qdd = random_states(model, 24, 3)
    np.testing.assert_allclose(shorter.inverse_dynamics(q, qd, qdd), model.inverse_dynamics(q, qd, qdd),
                               rtol=1e-13, atol=1e-12)
    assert not np.allclose(shorter.link_frames(q[0])[-1], model.link_frames(q[0])[-1])


# ------------------------------------------------------------------ with_payload and scaled

def test_with_payload_equals_the_arm_with_the_payload_added_by_hand():
    doc = yaml.safe_load((ROOT / "config/puma560_dh.yaml").read_text())
    rng = np.random.default_rng(31)
    tool = np.eye(4)
    tool[:3, :3] = rx(0.4) @ np.array([[0, -1, 0], [1, 0, 0], [0, 0, 1]])
    tool[:3, 3] = [0.01, -0.02, 0.15]
    mass, com_tip, I_tip = 2.5, np.array([0.03, -0.01, 0.08]), box_inertia(2.5, rng)
    base = quiet(RobotModel.from_dh, doc["links"], tool=tool)
    loaded = quiet(base.with_payload, mass, com_tip, I_tip)
    # by hand, in DH frame 6 (tip = frame 6 . tool): parallel-axis theorem about the joint COM
    last = dict(doc["links"][-1])
    m6, c6, I6 = last["mass"], np.array(last["com"], dtype=float), inertia3(last["inertia"])
    R, p = tool[:3, :3], tool[:3, 3]
    cp, Ip = R @ com_tip + p, R @ I_tip @ R.T
    m = m6 + mass
    c = (m6 * c6 + mass * cp) / m

    def shift(mi, ci):
        d = ci - c
        return mi * (d @ d * np.eye(3) - np.outer(d, d))
    last.update(mass=m, com=c.tolist(), inertia=(I6 + shift(m6, c6) + Ip + shift(mass, cp)).tolist())
    by_hand = quiet(RobotModel.from_dh, doc["links"][:-1] + [last], tool=tool)
    q, qd, qdd = random_states(base, 32, 5)
    np.testing.assert_allclose(loaded.inverse_dynamics(q, qd, qdd), by_hand.inverse_dynamics(q, qd, qdd),
                               rtol=0, atol=1e-10 * 100)
    # and the payload does change the torques (by its weight at least)
    assert np.max(np.abs(loaded.gravity_torques(q) - base.gravity_torques(q))) > 1.0
    # a point payload at the tip origin: the arm must hold its weight up, so the static torques gain
    # J^T [0, 0, m g] (the same as the tip pushing up on the world with m g)
    point = quiet(base.with_payload, mass)
    for k in range(len(q)):
        J = base.jacobian(q[k])
        np.testing.assert_allclose(point.gravity_torques(q[k]) - base.gravity_torques(q[k]),
                                   J[:3].T @ np.array([0.0, 0.0, mass * 9.81]), rtol=0, atol=1e-10 * 100)


def test_scaled():
    model = yaml_model("config/puma560_dh.yaml")
    s = quiet(model.scaled, mass=1.7, friction=0.4, armature=2.5)
    q, qd, qdd = random_states(model, 33, 5)
    rigid = model.inverse_dynamics(q, qd, qdd, friction=False) - model.armature * qdd
    fric = model.friction_torques(qd)
    expected = 1.7 * rigid + 0.4 * fric + 2.5 * model.armature * qdd
    np.testing.assert_allclose(s.inverse_dynamics(q, qd, qdd), expected, rtol=0, atol=1e-10 * 1000)
    # the armature and friction of the YAML scale as stated, written out for joint 2
    assert s.armature[1] == pytest.approx(2.5 * 2.324814845)
    assert s.viscous[1] == pytest.approx(0.4 * 9.496868641825001)
    assert s.coulomb_negative[1] == pytest.approx(0.4 * 7.654864999999999)
    assert s.name == model.name and s.dof == model.dof
