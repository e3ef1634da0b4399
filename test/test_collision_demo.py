"""``robodyn-ros demo collision`` end to end, shortened (one pass counted per scenario, the soft
obstacle): MuJoCo's contacts are the truth the figures are measured against, nothing of ours
computes them. The goals of issue 28 as the demo judges them."""
import json

import pytest

pytest.importorskip("mujoco")

from robodyn_ros.apps import demos  # noqa: E402


def test_the_collision_demo_detects_isolates_and_the_reactions_yield(tmp_path, capsys):
    out = tmp_path / "collision.json"
    status = demos.main(["collision", "--passes", "1", "--calibration-passes", "1", "--obstacle",
                         "soft", "--plot", str(tmp_path / "collision.png"), "--json", str(out)])
    result = json.loads(out.read_text())
    assert status == 0, result["goals"]
    reactions = result["reactions"]
    assert set(reactions) == {"none", "stop", "float", "reflex"}
    for run in reactions.values():
        assert 0.0 <= run["detection_delay_ms"] <= 5.0
        assert run["isolated_link"] == run["touched_link"] == "link_3"   # the forearm's shape
    none = reactions["none"]
    for name in ("float", "reflex"):
        assert reactions[name]["peak_force_after_impact_n"] <= 0.5 * none["peak_force_after_impact_n"]
        assert reactions[name]["contact_time_s"] < none["contact_time_s"]
    assert all(s["false_alarms"] == 0 for s in result["false_alarms"].values())
    assert (tmp_path / "collision.png").stat().st_size > 0
    # it said where it was, in whole lines, and every column of its table has a name (issue 46)
    printed = capsys.readouterr().out
    assert "\r" not in printed
    for reaction in ("none", "stop", "float", "reflex"):
        assert any(line.startswith(f"  soft  {reaction:7s}: detected") for line in printed.splitlines())
    header = next(line for line in printed.splitlines() if line.startswith("obstacle reaction"))
    assert header.split() == ["obstacle", "reaction", "delay", "touched", "isolated", "impact",
                              "lasting", "after", "det.", "after", "impact", "contact"]
