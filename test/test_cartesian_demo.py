"""``robodyn-ros demo cartesian --path circle`` end to end over real DDS (its own processes, step-locked at
1 kHz): on the simulated 7-joint Panda with an exact model, ``operational_space`` follows the
circle, sent as one ~/cartesian_trajectory, within 1e-4 m and 1e-3 rad (issue 21's goal); and
``cartesian_impedance``, pushed at the tip by the simulator after a short circle, gives way by
K⁻¹ w. One arm per run keeps each to about half a minute; the demo page has the PUMA's figures.
The path's derivatives are checked against finite differences here, without DDS."""
import json

import numpy as np
import pytest

from robodyn_ros.apps import demos
from robodyn_ros.apps.demos.cartesian import ORIENTATION_BOUND, POSITION_BOUND, PUSH, judged, path
from test_plots import assert_png


@pytest.mark.parametrize("kind", ["circle", "square"])
def test_the_paths_twist_and_acceleration_are_their_derivatives(kind):
    t, h = np.linspace(0.01, 3.99, 300), 1e-6
    p, v, a = path(kind, 0.1, 4.0, t)
    ahead, behind = path(kind, 0.1, 4.0, t + h), path(kind, 0.1, 4.0, t - h)
    np.testing.assert_allclose((ahead[0] - behind[0]) / (2 * h), v, atol=1e-8)
    np.testing.assert_allclose((ahead[1] - behind[1]) / (2 * h), a, atol=1e-7)
    ends = path(kind, 0.1, 4.0, np.array([0.0, 4.0]))
    np.testing.assert_allclose(ends[0], 0.0, atol=1e-15)        # a closed path from the start
    np.testing.assert_allclose(ends[1:], 0.0, atol=1e-15)       # at rest at both ends
    assert np.abs(p).max() == pytest.approx(0.2 if kind == "circle" else 0.1, rel=1e-3)


def test_operational_space_follows_the_circle_on_the_panda_within_the_bounds(tmp_path):
    out = tmp_path / "cartesian.json"
    status = demos.main(["cartesian", "--path", "circle", "--arm", "panda", "--law", "operational_space",
                        "--json", str(out), "--plot", str(tmp_path / "cartesian.png")])
    result = json.loads(out.read_text())
    (run,) = result["runs"]
    assert (run["arm"], run["law"], run["dof"]) == ("panda", "operational_space", 7)
    # 4.5 s of states at 1 kHz; the recorder (this process) may miss some on a loaded machine
    assert 4500 <= run["samples"] + run["missing_samples"] <= 4501 and run["samples"] > 3000
    assert 0.0 < run["max_position_error_m"] < POSITION_BOUND
    assert 0.0 < run["max_orientation_error_rad"] < ORIENTATION_BOUND
    assert set(run["exit_codes"].values()) == {0}
    assert result["goal_met"] and status == 0
    assert_png(tmp_path / "cartesian.png", 605, 990)


def test_a_push_moves_the_impedance_by_k_inverse_w_on_the_panda(tmp_path):
    out = tmp_path / "push.json"
    # the smallest, shortest circle that is still a path: the push after it is what is tested
    status = demos.main(["cartesian", "--path", "circle", "--arm", "panda", "--law",
                         "cartesian_impedance", "--size", "0.02", "--duration", "1", "--json", str(out)])
    result = json.loads(out.read_text())
    (run,) = result["runs"]
    push = run["push"]
    assert push["wrench"] == PUSH.tolist() and push["settled"]
    compliance = np.asarray(push["k_inverse_w_m"])
    np.testing.assert_allclose(compliance, PUSH[:3] / 800.0)   # K: the law's default, 800 N/m
    # Exact model and gravity, no friction: at rest the law's statics are exact (K e + w = 0, no
    # moment about the tip's origin, so no rotation), and what is left is the settling: the demo
    # stops when the tip moved < 1e-4 of K⁻¹ w in 0.1 s, leaving ~1e-4 to go (measured 0.9999).
    # 1 % is that residual a hundredfold, along the push and across it.
    assert push["ratio"] == pytest.approx(1.0, abs=0.01)
    np.testing.assert_allclose(push["displacement_m"], compliance,
                               atol=0.01 * np.linalg.norm(compliance))
    # the impedance alone is judged by its push (it was "goal met" with nothing judged)
    assert result["goal_met"] and status == 0
    assert set(run["exit_codes"].values()) == {0}


def test_each_law_is_judged_by_its_own_goal():
    path_ok = {"law": "operational_space", "within_bound": True, "push": None}
    unsettled = {"law": "cartesian_impedance", "within_bound": False,
                 "push": {"settled": False, "ratio": 0.6}}
    settled = {"law": "cartesian_impedance", "within_bound": False,
               "push": {"settled": True, "ratio": 0.9999}}
    # the impedance alone was "goal met" with nothing judged: its push is its goal
    assert [met for _, met in judged([unsettled])] == [False]
    assert [met for _, met in judged([settled])] == [True]
    assert [met for _, met in judged([path_ok, unsettled])] == [True, False]
