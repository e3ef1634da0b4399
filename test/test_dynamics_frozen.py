"""A RobotModel is frozen: its arrays are read-only copies, its links frozen, its attributes cannot be
rebound, so the NumPy-side algorithms (which read the links) and the compiled kernels (which read the
parameters packed from them) cannot come to disagree. Variants are new models.

The scenario of issue 9: after ``m.gravity[:] = 0; m.links[0].mass *= 2`` Newton–Euler (kernels) and
Lagrange–Euler (NumPy, links) disagreed by 29 N m with no error. Now both statements raise.
"""
import dataclasses
import warnings
from pathlib import Path

import numpy as np
import pytest

from robodyn_ros.dynamics import Link, ModelError, RobotModel
from robodyn_ros.dynamics.lagrange_euler import lagrange_euler

ROOT = Path(__file__).resolve().parents[1]
Q, QD, QDD = np.array([0.3, -0.8, 0.5, 0.2, -0.4, 1.1]), np.full(6, 0.7), np.full(6, -0.5)


def puma():
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*triangle inequality.*")
        return RobotModel.from_yaml(ROOT / "config/puma560_dh.yaml")


def assert_formulations_agree(model):
    ne = model.inverse_dynamics(Q, QD, QDD)
    np.testing.assert_allclose(lagrange_euler(model, Q, QD, QDD), ne, rtol=0,
                               atol=1e-10 * np.abs(ne).max())


MUTATIONS = {
    "gravity[:] = 0": lambda m: m.gravity.__setitem__(slice(None), 0.0),
    "links[0].mass *= 2": lambda m: setattr(m.links[0], "mass", m.links[0].mass * 2),
    "links[1].com[0] = 1": lambda m: m.links[1].com.__setitem__(0, 1.0),
    "links[2].inertia[0, 0] += 1": lambda m: m.links[2].inertia.__setitem__((0, 0), 1.0),
    "links[3].pre[0, 3] = 1": lambda m: m.links[3].pre.__setitem__((0, 3), 1.0),
    "tip[2, 3] = 1": lambda m: m.tip.__setitem__((2, 3), 1.0),
    "params[0, 12] = 9": lambda m: m.params.__setitem__((0, 12), 9.0),
    "armature[0] = 0": lambda m: m.armature.__setitem__(0, 0.0),
    "effort_limit[0] = 1": lambda m: m.effort_limit.__setitem__(0, 1.0),
    "gravity = zeros": lambda m: setattr(m, "gravity", np.zeros(3)),
    "links = links[:1]": lambda m: setattr(m, "links", m.links[:1]),
    "params = other": lambda m: setattr(m, "params", np.zeros((7, 27))),
    "del name": lambda m: delattr(m, "name"),
}


@pytest.mark.parametrize("mutate", MUTATIONS.values(), ids=MUTATIONS.keys())
def test_mutating_a_model_raises_and_changes_nothing(mutate):
    model = puma()
    before = model.inverse_dynamics(Q, QD, QDD)
    with pytest.raises((ValueError, AttributeError, TypeError)):
        mutate(model)
    np.testing.assert_array_equal(model.inverse_dynamics(Q, QD, QDD), before)
    assert_formulations_agree(model)


def test_the_issue_scenario_raises():
    model = puma()
    with pytest.raises(ValueError, match="read-only"):
        model.gravity[:] = 0
    with pytest.raises(dataclasses.FrozenInstanceError):
        model.links[0].mass *= 2
    assert_formulations_agree(model)


def test_construction_copies_what_the_caller_keeps():
    pre, com, inertia = np.eye(4), np.array([0.1, 0.0, 0.0]), np.diag([0.01, 0.02, 0.02])
    tip, gravity = np.eye(4), np.array([0.0, 0.0, -9.81])
    link = Link("j", pre=pre, mass=1.0, com=com, inertia=inertia)
    model = RobotModel([link], tip=tip, gravity=gravity)
    q = np.array([0.4])
    before = model.inverse_dynamics(q, q, q), model.link_frames(q)[-1]
    for array in (pre, com, inertia, tip, gravity):
        array[...] = 7.0
    np.testing.assert_array_equal(model.inverse_dynamics(q, q, q), before[0])
    np.testing.assert_array_equal(model.link_frames(q)[-1], before[1])
    assert model.links[0] is link and link.com[0] == 0.1


def test_name_lists_are_copies():
    model = puma()
    model.joint_names.append("joint_7")
    model.joint_types[0] = "prismatic"
    assert model.joint_names == [f"joint_{i}" for i in range(1, 7)]
    assert model.joint_types == ["revolute"] * 6


def test_a_replaced_link_is_validated_again():
    link = puma().links[1]
    with pytest.raises(ModelError, match="joint 'joint_2': negative mass"):
        dataclasses.replace(link, mass=-1.0)
    with pytest.raises(ModelError, match="joint 'joint_2': com"):
        dataclasses.replace(link, com=[0.0, 0.0])
    with pytest.raises(ModelError, match="expected a number"):
        dataclasses.replace(link, viscous="2e-1")


def test_variants_are_new_models_and_leave_the_original_alone():
    model = puma()
    before = model.inverse_dynamics(Q, QD, QDD)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*triangle inequality.*")
        heavy = model.with_payload(2.0, com=[0.0, 0.0, 0.1])
        light = model.scaled(mass=0.5, friction=0.0)
    np.testing.assert_array_equal(model.inverse_dynamics(Q, QD, QDD), before)
    for variant in (heavy, light):
        assert not np.allclose(variant.inverse_dynamics(Q, QD, QDD), before)
        assert_formulations_agree(variant)
