"""Base parameters: the counts known for real arms (Franka Panda 43 inertial, Gaz et al. 2019; a
UR-type 6R 36), the PUMA's (36: joint 1 vertical leaves only its Izz, joint 2's origin on axis 1
hides m₂ and m₂c_z), torques reproduced by the base set on states the choice never saw, and the base
parameters recovered from noiseless torques by least squares."""
import warnings

import numpy as np
import pytest

from robodyn_ros.dynamics import RobotModel
from robodyn_ros.identification import regressor, standard_parameters
from robodyn_ros.dynamics.base_parameters import base_parameters
from test_dynamics_pinocchio import CASES
from vendor_robots import robots_directory

ROBOTS = robots_directory()
ARMS = {
    "panda": (ROBOTS / "panda_description/urdf/panda.urdf", "panda_link0", "panda_link8"),
    "ur5": (ROBOTS / "ur_description/urdf/ur5_robot.urdf", "base_link", "tool0"),
    "puma560": ("urdf/puma560.urdf", None, None),
}


def load(name):
    path, root, tip = ARMS[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return RobotModel.from_urdf(path, root_link=root, tip_link=tip)


@pytest.mark.parametrize("name, inertial, total", [("panda", 43, 69), ("ur5", 36, 58), ("puma560", 36, 58)])
def test_base_parameter_counts(name, inertial, total):
    model = load(name)
    assert base_parameters(model, inertial_only=True).count == inertial
    # drives: per joint viscous and two Coulomb columns, the armature where it is not one with a
    # body's inertia (joint 1 about a fixed axis: its armature and Izz are one parameter; likewise
    # joint 2 of an arm whose joint 2 origin lies on axis 1)
    assert base_parameters(model).count == total


def test_puma_regrouping_is_the_textbook_one():
    base = base_parameters(load("puma560"))
    lines = base.expressions()
    assert lines[0].startswith("joint_1.Izz + joint_2.Iyy")     # Khalil: ZZR1 = ZZ1 + YY2 + ...
    assert lines[0].endswith("joint_1.armature")
    assert any(line.startswith("joint_2.Ixx - joint_2.Iyy") for line in lines)   # XXR2 = XX2 - YY2 ...
    table = base.table()
    assert "58 base parameters of 84" in table
    assert "no effect on any joint torque: joint_1.m, joint_1.mx" in table


@pytest.mark.parametrize("name, xml, model", CASES[:8], ids=[c[0] for c in CASES[:8]])
def test_base_set_reproduces_the_torques_and_is_recovered_from_them(name, xml, model):
    base = base_parameters(model, offset=True)
    pi = standard_parameters(model, offset=True)
    rng = np.random.default_rng(42)
    q, qd, qdd = rng.uniform(-3, 3, (3, 400, model.dof))
    Y = regressor(model, q, qd, qdd, offset=True).reshape(-1, len(pi))
    W = base.base_regressor(Y)
    tau = Y @ pi
    np.testing.assert_allclose(W @ base.from_standard(pi), tau, rtol=0,
                               atol=1e-11 * max(1.0, np.abs(tau).max()))
    # every base column is needed: W has full column rank, and least squares gives back π_base
    assert np.linalg.matrix_rank(W) == base.count
    estimate = np.linalg.lstsq(W, tau, rcond=None)[0]
    truth = base.from_standard(pi)
    np.testing.assert_allclose(estimate, truth, rtol=0, atol=1e-8 * max(1.0, np.abs(truth).max()))


def test_qr_and_svd_agree_and_the_gap_is_wide():
    base = base_parameters(load("panda"))
    s = base.singular_values / base.singular_values[0]
    assert s[base.count - 1] > 1e-4 and s[base.count] < 1e-12
