"""``robodyn-ros demo drive`` end to end, shortened (one calibration pass, one pass counted,
computed torque): the Panda on MuJoCo behind a drive that adds MuJoCo's own gravity and damping.
The goals of issue 39 as the demo judges them."""
import json

import pytest

pytest.importorskip("mujoco")

from robodyn_ros.apps import demos  # noqa: E402
from test_plots import assert_png  # noqa: E402


def test_the_drive_demo_counts_gravity_once_keeps_the_rate_and_sees_only_the_contact(tmp_path):
    out = tmp_path / "drive.json"
    status = demos.main(["drive", "--passes", "1", "--calibration-passes", "1", "--law",
                         "computed_torque", "--json", str(out), "--plot", str(tmp_path / "drive.png")])
    result = json.loads(out.read_text())
    assert status == 0, result["goals"]
    rows = result["tracking"]["computed_torque"]
    assert rows["drive, no drive_compensates"]["ratio_to_plain"] > 10.0   # gravity twice
    assert rows["drive, drive_compensates + rate"]["ratio_to_plain"] <= 1.1
    assert rows["drive, drive_compensates"]["rate_violations"] > 0   # the set point's step
    assert rows["drive, drive_compensates + rate"]["rate_violations"] == 0
    assert rows["drive, drive_compensates + rate"]["rate_limited_commands"] > 0
    seen = result["observer"]
    assert seen["false_alarms"] == 0 and 0.0 <= seen["detection_delay_ms"] <= 5.0
    assert_png(tmp_path / "drive.png", 715, 825)
