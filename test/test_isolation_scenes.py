"""Collision isolation judged on MuJoCo's contact list (``sim/contact_trials.py``): the Panda meets
a sphere with its hand, wrist or forearm, rigid or soft, at speed or in a slow push; the observer
and detector are the controller's own loop, the link touched is MuJoCo's. No DDS.

A force on link k gives the joints after k no torque, so the isolated link — the child of the last
joint that has crossed while the event lasts — is at or before the link touched, in every scene;
it is the touched link itself when that link's own joint feels the force. A slow push crosses the
joints one by one over hundreds of milliseconds: the isolation follows them out (a fixed 10 ms
window after detection left it at the shoulder). A force on the hand passes close to joint 7's
axis, which runs through the hand: joint 7 does not cross, and the hand is isolated as link 6 "or
after it". The location — the point on the links' shapes, at or after the isolated one, where a
force best explains the residual — names the touched link in most scenes (doc/collisions.md).
"""
import pytest

pytest.importorskip("mujoco")
from robodyn_ros.sim.contact_trials import SCENES, run_scene  # noqa: E402 (needs mujoco)

ORDER = [f"panda_link{i}" for i in range(1, 8)]
BY_NAME = {s.name: s for s in SCENES}
DETECTION_BOUND = 0.010   # s after MuJoCo's first contact
# scene: (the link MuJoCo's contacts press, the link isolated, whether the isolation moved on,
# the link located)
EXPECTED = {
    "forearm, across, soft, slow push": ("panda_link5", "panda_link5", True, "panda_link5"),
    "hand, soft, slow push": ("panda_link7", "panda_link6", True, "panda_link6"),
    "wrist, rigid, impact": ("panda_link6", "panda_link6", True, "panda_link6"),
    "hand, rigid, impact": ("panda_link7", "panda_link6", True, "panda_link6"),
    "forearm, rigid, impact": ("panda_link5", "panda_link4", False, "panda_link5"),
    "hand, across, rigid, impact": ("panda_link7", "panda_link6", True, "panda_link7"),
    "wrist, across, rigid, impact": ("panda_link6", "panda_link5", True, "panda_link6"),
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_isolation_follows_the_contact(name):
    run = run_scene(BY_NAME[name], "none")
    touched, isolated, moved, located = EXPECTED[name]
    assert run["touched"] == touched
    assert 0.0 <= run["detected_s"] - run["first_contact_s"] <= DETECTION_BOUND
    # never past the link touched: at or before it, in chain order
    assert ORDER.index(run["following"]) <= ORDER.index(run["touched"])
    assert run["following"] == isolated
    assert (run["moves"] > 0) == moved   # each move reported as it happened
    assert run["located"] == located


def test_a_slow_push_is_followed_out_past_the_old_window():
    run = run_scene(BY_NAME["forearm, across, soft, slow push"], "none")
    # the 10 ms window after detection had stopped at the upper arm; the forearm's own joint
    # crossed most of a second later
    assert run["window"] == "panda_link3" and run["isolated_after_ms"] > 100.0
