"""Friction at rest (issue 45, item 3): a joint that is still does not tell the sign of its
Coulomb friction, and the model identified carries the Coulomb term the laws use.

The truth is the PUMA 560 as published, Coulomb friction of 25-27 N m on joint 1 included, moving
along one period of a Fourier series, then still for 4 s, three times: while still its measured
velocity is noise of 1e-4 rad/s (a driver's at rest) and its friction a holding torque anywhere
within ±F_c (Karnopp 1985: at rest friction is whatever keeps the joint there); torque noise
0.5 N m. On a real UR10e, rest samples taken at the sign of that noise pulled joint 1's viscous
friction from 28.8 to 35.8 and its Coulomb from 19.9 to 15 N m; the package's identification
then (the sign law, every sample fitted) finds joint 1 at viscous 53.8 and Coulomb 10.5 / 3.4 N m
on this run (truth 5.8 and 24.7 / 27.2).
"""
import numpy as np
import pytest

from robodyn_ros.control.laws import GravityCompensation
from robodyn_ros.dynamics.friction import REST_BAND, FrictionForm, FrictionModel
from robodyn_ros.identification.identify import identify
from robodyn_ros.identification.synthetic import resting_run

START = np.radians([90, 0, 90, 0, 0, 0])
QUIET = {"progress": lambda line: None}
FRICTION = ("viscous", "coulomb_positive", "coulomb_negative")


@pytest.fixture(scope="module")
def run(nominal):
    return resting_run(nominal, START, 3, rest=4.0, noise=0.5, velocity_noise=1e-4, seed=1)


def found(result, joint):
    """{parameter: (value, σ)} of one joint's friction, as least squares found it."""
    values = dict(zip(result.base.expressions(), zip(result.least_squares.parameters, result.least_squares.std)))
    return {name: values[f"{joint}.{name}"] for name in FRICTION}


def truth_of(model, j):
    return dict(zip(FRICTION, (model.viscous[j], model.coulomb_positive[j], model.coulomb_negative[j])))


def test_rest_samples_leave_the_friction_where_the_motion_puts_it(nominal, run):
    result = identify(nominal, run, **QUIET)
    rest = result.processing["at_rest"]
    # every joint rests 12 of 42 s: its rows there (and where they reach through the filter) are out
    assert all(0.25 * result.samples["training"] < rest[j] < 0.6 * result.samples["training"] for j in rest)
    for j, joint in enumerate(nominal.joint_names):
        truth = truth_of(nominal, j)
        for name, (value, std) in found(result, joint).items():
            assert abs(value - truth[name]) < 3.5 * std, (joint, name, value, truth[name], std)
    joint_1 = found(result, "joint_1")
    assert all(abs(joint_1[name][0] / truth_of(nominal, 0)[name] - 1.0) < 0.02 for name in FRICTION)


def test_a_sign_law_fed_the_rest_noise_is_biased_and_the_rest_band_mends_it(nominal, run):
    """The same run with the sign law and every sample fitted (``rest_band=0``): the rest samples
    drag joint 1's viscous friction far up, as on the UR10e; the sign law with the rest band's
    samples left out finds the truth as the default does."""
    result = identify(nominal, run, friction="asymmetric+sign", rest_band=0.0, **QUIET)
    assert result.processing["at_rest"]["joint_1"] == 0
    viscous, std = found(result, "joint_1")["viscous"]
    assert viscous > 2.0 * nominal.viscous[0] and viscous - nominal.viscous[0] > 3 * std
    mended = found(identify(nominal, run, friction="asymmetric+sign", **QUIET), "joint_1")
    truth = truth_of(nominal, 0)
    assert all(abs(mended[name][0] - truth[name]) < 3.5 * mended[name][1] for name in FRICTION)


def test_the_identified_coulomb_term_is_the_gravity_compensation_laws(nominal):
    """The friction file of the default form and the law's compensation at coulomb_velocity = the
    band: one function, to rounding, inside the band and out."""
    forms = tuple(FrictionForm(band=REST_BAND) for _ in nominal.joint_names)
    values = tuple(np.array([v, p, m]) for v, p, m in zip(nominal.viscous, nominal.coulomb_positive,
                                                           nominal.coulomb_negative))
    friction = FrictionModel(tuple(nominal.joint_names), forms, values)
    law = GravityCompensation(nominal, {"coulomb_velocity": REST_BAND})
    rng = np.random.default_rng(3)
    qd = rng.uniform(-3 * REST_BAND, 3 * REST_BAND, (200, nominal.dof))
    np.testing.assert_allclose(friction.torques(qd), np.array([law.friction_compensation(v) for v in qd]),
                               rtol=1e-12, atol=1e-12)
    # the model the controller loads with that friction file: Newton–Euler's friction (its compiled
    # joint_friction, every law's and the observer's) is the file's, and gravity compensation keeps
    # the model's own band whatever its coulomb_velocity
    banded = nominal.with_friction(friction)
    q, qdd = rng.uniform(-2, 2, qd.shape), rng.uniform(-2, 2, qd.shape)
    newton_euler = banded.inverse_dynamics(q, qd, qdd) - banded.inverse_dynamics(q, qd, qdd, friction=False)
    np.testing.assert_allclose(newton_euler, friction.torques(qd), rtol=0, atol=1e-9)
    np.testing.assert_allclose(banded.friction_torques(qd), friction.torques(qd), rtol=1e-12, atol=1e-12)
    other = GravityCompensation(banded, {"coulomb_velocity": 0.2})
    np.testing.assert_allclose(np.array([other.friction_compensation(v) for v in qd]), friction.torques(qd),
                               rtol=1e-12, atol=1e-12)
    assert FrictionForm.parse("coulomb").band == 0.0                      # a file's spec: the sign law
    assert FrictionForm.parse("coulomb", band=REST_BAND).spec() == "viscous+coulomb+band=0.01"
    assert FrictionForm.parse("asymmetric+sign", band=REST_BAND).band == 0.0
