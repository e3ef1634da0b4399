"""Collision isolation and location judged on MuJoCo's contact list (``sim/contact_trials.py``,
``sim/contact_scenes.py``): the Panda meets a sphere with its hand, wrist or forearm, rigid or
soft, at speed or in a slow push, with a tool or a payload fixed to the hand; the observer and
detector are the controller's own loop, the link touched is MuJoCo's (the link a joint moves: a
contact on the hand, the tool or the payload is one on the last link). No DDS.

A force on link k gives the joints after k no torque, so the isolated link — the child of the last
joint that has crossed while the event lasts — is at or before the link touched, in every scene;
it is the touched link itself when that link's own joint feels the force. A slow push crosses the
joints one by one over hundreds of milliseconds: the isolation follows them out (a fixed 10 ms
window after detection left it at the shoulder). A force on the hand passes close to joint 7's
axis, which runs through the hand: joint 7 does not cross, and the hand is isolated as link 6 or
5 "or after it". The guard names the link it locates the contact on — the point on the links'
shapes where a force pressing in explains the residual and that the obstacle can reach — and
that is the touched link in every scene here: before, the location took a point of the wrist
behind the hand on the same line of force, and the isolation alone named the hand in none.
"""
import pytest

pytest.importorskip("mujoco")
from robodyn_ros.sim.contact_scenes import OBSTACLES, ON_THE_FLANGE, SCENES  # noqa: E402
from robodyn_ros.sim.contact_trials import run_scene  # noqa: E402 (needs mujoco)

ORDER = [f"panda_link{i}" for i in range(1, 8)]
BY_NAME = {s.name: s for s in SCENES}
DETECTION_BOUND = 0.010   # s after MuJoCo's first contact
REACTIONS = ("none", "stop", "float", "reflex")
# scene: (the link MuJoCo's contacts press at the guard's last location, the one they press most
# over the run, the link isolated, whether the isolation moved on); the guard names the first
EXPECTED = {
    "forearm, across, soft, slow push": ("panda_link5", "panda_link5", "panda_link5", True),
    "hand, soft, slow push": ("panda_link7", "panda_link7", "panda_link6", True),
    # the sphere meets the flange first, then the wrist takes most of the push
    "wrist, rigid, impact": ("panda_link7", "panda_link6", "panda_link6", True),
    "hand, rigid, impact": ("panda_link7", "panda_link7", "panda_link6", True),
    "forearm, rigid, impact": ("panda_link5", "panda_link5", "panda_link4", False),
    "hand, across, rigid, impact": ("panda_link7", "panda_link7", "panda_link6", True),
    "wrist, across, rigid, impact": ("panda_link6", "panda_link6", "panda_link5", True),
}


def judged(run):
    """What every run must show: detection soon after MuJoCo's first contact, an isolation never
    past the link touched, and the touched link named."""
    assert 0.0 <= run["detected_s"] - run["first_contact_s"] <= DETECTION_BOUND
    assert ORDER.index(run["following"]) <= ORDER.index(run["touched"])
    assert run["named"] == run["touched"], run


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_isolation_follows_the_contact(name):
    run = run_scene(BY_NAME[name], "none")
    touched, most, isolated, moved = EXPECTED[name]
    assert (run["touched"], run["pressed_most"]) == (touched, most)
    judged(run)
    assert run["following"] == isolated
    assert (run["moves"] > 0) == moved   # each move reported as it happened


def test_a_slow_push_is_followed_out_past_the_old_window():
    run = run_scene(BY_NAME["forearm, across, soft, slow push"], "none")
    # the 10 ms window after detection had stopped at the upper arm; the forearm's own joint
    # crossed most of a second later
    assert run["window"] == "panda_link3" and run["isolated_after_ms"] > 100.0


@pytest.mark.parametrize("scene", OBSTACLES, ids=[s.name for s in OBSTACLES])
def test_an_obstacle_at_hand_or_forearm_height_is_named_with_every_reaction(scene):
    """demo collision --arm panda's scene: 16 runs. The isolation names the hand link 5 or 6 in
    every run (joint 7 never crosses); the guard names link 7."""
    for reaction in REACTIONS:
        run = run_scene(scene, reaction)
        judged(run)
        assert run["touched"] == scene.link
        if scene.link == "panda_link7":
            assert run["following"] in ("panda_link5", "panda_link6")


@pytest.mark.parametrize("scene", ON_THE_FLANGE, ids=[s.name for s in ON_THE_FLANGE])
def test_a_tool_or_a_payload_on_the_flange_is_the_last_link(scene):
    """A tool at the hand's TCP and a 1 kg box held in it, links fixed to the hand the URDF does
    not ship (the model carries them): MuJoCo's contact is on them, and the guard names the link
    they are fixed to."""
    run = run_scene(scene, "stop")
    assert scene.body in run["bodies"] and run["pressed_most"] == "panda_link7"
    judged(run)
