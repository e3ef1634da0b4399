"""``robodyn-ros demo adaptive --law adaptive_computed_torque`` end to end over real DDS: the simulated PUMA 560
picks up a 2 kg tool the controller's model lacks 1.5 s into the 004 motion; the adaptive law is back
within 004's bound inside half a second and stays within it for the rest of the pass, the return
motion included. One pass of one law keeps the run to about half a minute (the demo page has the
passes that follow, and test_adaptive_law.py the in-process runs of both laws)."""
import json

from robodyn_ros.apps import demos
from robodyn_ros.apps.demos.adaptive import RECOVERY
from robodyn_ros.apps.demos.arm_loop import BOUND

LAW = "adaptive_computed_torque"


def test_an_unknown_tool_picked_up_mid_motion_is_learnt_within_half_a_second(tmp_path):
    out = tmp_path / "adaptive.json"
    status = demos.main(["adaptive", "--law", LAW, "--payload", "2", "--pick-up-at", "1.5", "--passes", "1",
                        "--plot", str(tmp_path / "errors.png"), "--json", str(out)])
    result = json.loads(out.read_text())
    (first,) = result["passes"][LAW]
    assert sorted(first["max_error_rad"]) == [f"joint_{i}" for i in range(1, 7)]
    assert max(first["max_error_rad"].values()) > 2 * BOUND     # the pick-up did disturb the arm
    assert 0.0 < result["recovery_s"][LAW] <= RECOVERY          # and then never again
    assert first["missing_samples"] == 0
    assert abs(result["payload_estimate"][LAW]["mass_kg"] - 2.0) < 0.1
    assert set(result["exit_codes"][LAW].values()) == {0}
    assert (tmp_path / "errors.png").exists() and (tmp_path / "errors_estimate.png").exists()
    assert result["goal_met"] and status == 0
