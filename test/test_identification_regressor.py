"""The joint-torque regressor: Y @ π equals our inverse dynamics (friction included) on the shipped
arms, DH tables and random URDF chains (prismatic joints, any axis, fixed links lumped, massless
links), single and batched, compiled and interpreted; and its rigid-body columns equal Pinocchio's
``computeJointTorqueRegressor`` on the same URDF once its parameters are turned into our frames.

Frames: Pinocchio's body parameters are in the child link's frame; ours in the canonical joint frame,
the same frame turned by the loader's Q where a joint's axis is not z, about the same origin. T maps
Pinocchio's parameters to ours, body by body (h' = Qᵀh, I' = Qᵀ I Q), so Y_pin = Y_ours T.
"""
import warnings

import numpy as np
import pinocchio as pin
import pytest

from robodyn_ros.dynamics import RobotModel
from robodyn_ros.dynamics import ModelError
from robodyn_ros.identification import parameter_names, regressor, standard_parameters, with_parameters
from test_dynamics_pinocchio import CASES, IDS, Pin, states
from urdf_factory import random_urdf

REL = 1e-10


def friction_cases():
    for seed in range(6):
        rng = np.random.default_rng(500 + seed)
        arm = random_urdf(rng, 2 + seed, prismatic=0.4, friction=True, fixed_in_chain=0.4)
        yield f"friction-{seed}", RobotModel.from_urdf(arm.xml, tip_link=arm.tip)
    for table in ("config/puma560_dh.yaml", "config/stanford_dh.yaml", "config/planar2_dh.yaml"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield table, RobotModel.from_yaml(table)


def moving_states(model, seed, count=50):
    """Random states with every joint moving (some at rest: Coulomb's zero at zero velocity)."""
    q, qd, qdd = states(model, seed, count)
    qd[::7] = 0.0
    return q, qd, qdd


@pytest.mark.parametrize("name, model", list(friction_cases()) + [(n, m) for n, _, m in CASES],
                         ids=lambda x: x if isinstance(x, str) else "")
@pytest.mark.parametrize("offset", [False, True])
def test_regressor_times_parameters_is_inverse_dynamics(name, model, offset):
    pi = standard_parameters(model, offset)
    q, qd, qdd = moving_states(model, 7)
    expected = model.inverse_dynamics(q, qd, qdd)
    scale = max(1.0, np.abs(expected).max())
    Y = regressor(model, q, qd, qdd, offset)                   # a batch
    assert Y.shape == (len(q), model.dof, len(pi)) == (len(q), model.dof, len(parameter_names(model, offset)))
    np.testing.assert_allclose(Y @ pi, expected, rtol=0, atol=REL * scale)
    for k in range(0, len(q), 9):                              # one state: the same rows
        np.testing.assert_array_equal(regressor(model, q[k], qd[k], qdd[k], offset), Y[k])


def test_offset_and_drive_columns_are_what_they_say():
    model = next(m for n, m in friction_cases() if n == "config/stanford_dh.yaml")
    n = model.dof
    q, qd, qdd = np.zeros(n), np.array([1.0, -2.0, 0.0, 3.0, -1.0, 0.5]), np.arange(1.0, n + 1)
    Y = regressor(model, q, qd, qdd, offset=True)
    drive = Y[:, 10 * n:].reshape(n, n, 5)
    for j in range(n):
        others = np.delete(drive[j], j, axis=0)
        assert not others.any()                              # joint j's drive acts on joint j only
        assert drive[j, j].tolist() == [qdd[j], qd[j], float(qd[j] > 0), -float(qd[j] < 0), 1.0]


def to_our_frames(pinocchio, model, q):
    """T (10n x 10n) with π_ours = T π_pin: each body's parameters turned from Pinocchio's joint
    frame into ours (the same origin; checked)."""
    data = pinocchio.model.createData()
    pin.forwardKinematics(pinocchio.model, data, pinocchio.q(q))
    frames = model.link_frames(q)
    n = model.dof
    T = np.zeros((10 * n, 10 * n))
    for i, joint in enumerate(pinocchio.joints):
        theirs = data.oMi[joint.id]
        np.testing.assert_allclose(theirs.translation, frames[i][:3, 3], atol=1e-12)
        Q = theirs.rotation.T @ frames[i][:3, :3]
        for k in range(10):          # the map is linear: column k is the image of unit vector k
            e = np.zeros(10)
            e[k] = 1.0
            xx, xy, yy, xz, yz, zz = e[4:]
            h, I = Q.T @ e[1:4], Q.T @ np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]]) @ Q
            T[10 * i:10 * i + 10, 10 * i + k] = [e[0], *h, I[0, 0], I[0, 1], I[1, 1], I[0, 2],
                                                  I[1, 2], I[2, 2]]
    return T


@pytest.mark.parametrize("name, xml, model", CASES, ids=IDS)
def test_rigid_body_columns_equal_pinocchios(name, xml, model):
    pinocchio = Pin(xml, model, armature=False)
    n = model.dof
    for q, qd, qdd in zip(*states(model, 11, 3)):
        Y_pin = pin.computeJointTorqueRegressor(pinocchio.model, pinocchio.data, pinocchio.q(q), qd,
                                                qdd).reshape(n, 10 * n)   # (10,) for one joint
        Y = regressor(model, q, qd, qdd)[:, :10 * n] @ to_our_frames(pinocchio, model, q)
        scale = max(1.0, np.abs(Y_pin).max())
        np.testing.assert_allclose(Y, Y_pin, rtol=0, atol=REL * scale)


def test_bad_arguments_are_refused():
    _, _, model = CASES[0]
    n = model.dof
    with pytest.raises(ValueError, match="one value per joint"):
        regressor(model, np.zeros(n + 1), np.zeros(n + 1), np.zeros(n + 1))
    with pytest.raises(ValueError, match=f"batches of shape \\(N, {n}\\)"):
        regressor(model, np.zeros((4, n)), np.zeros((4, n)), np.zeros((3, n)))


@pytest.mark.parametrize("name, model", list(friction_cases())[:6], ids=lambda x: x if isinstance(x, str) else "")
def test_with_parameters_inverts_standard_parameters(name, model):
    rng = np.random.default_rng(5)
    pi = standard_parameters(model)
    pi = pi * rng.uniform(0.5, 1.5, pi.size)        # another arm of the same kinematics
    other = with_parameters(model, pi)
    np.testing.assert_allclose(standard_parameters(other), pi, rtol=1e-12, atol=1e-12)
    q, qd, qdd = moving_states(model, 2)
    np.testing.assert_allclose(other.inverse_dynamics(q, qd, qdd), regressor(model, q, qd, qdd) @ pi,
                               rtol=1e-10, atol=1e-10)
    with pytest.raises(ModelError, match="first moment .* with zero mass"):
        with_parameters(model, np.where(np.arange(pi.size) == 0, 0.0, pi))
