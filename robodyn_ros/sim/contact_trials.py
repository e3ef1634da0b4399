"""The controller's own loop against an arm in a MuJoCo contact scene, on the plant's clock, and
the runs that judge collision isolation and location against MuJoCo's contact list
(doc/collisions.md).

``Arm`` steps ``control.loop.ControlLoop`` (the node's core: the law, the momentum observer, the
detector, the reaction) at 1 kHz against a plant, the command of state k held over the next step
as arm_simulator's lockstep runs the node; ``demo collision`` and the scenes share it.

``run_scene`` takes a ``contact_scenes.Scene`` — a sphere where one link's shape will be some time
into a motion of the Panda — calibrates the thresholds on the same motion without it, and runs it
with a reaction. MuJoCo says which link touched (the link a joint moves: a hand, a tool or a
payload fixed to the last link is the last link) and with what force; ``isolate`` compares what the
guard named — the link it located the contact on (``control.contact_location``), or the isolated
one (the last joint crossed) where it located none — with the link MuJoCo's contacts pressed most
at the state the guard last located at, and with the one they pressed most over the run; and
what two other rules would have named: the first crossing with a fixed 10 ms window (the rule
before), and the location among every link, where the residual is strongest. ROS-free; needs MuJoCo.
"""
from __future__ import annotations

import warnings

import numpy as np

from .contact_scenes import PANDA, PANDA_START, SCENES, Scene, attach, reach, scene_shapes

DT = 1e-3
GAIN = 50.0          # K_O, 1/s
MARGIN = 1.5         # thresholds over the calibration run's envelope
FLOOR = 0.5          # N m: the least static threshold
KP, KV = 100.0, 20.0
OLD_WINDOW = 0.01    # s: the window of the rule before (a later crossing within it moved it)
RADIUS = 0.03        # m, the obstacle
CONTACT_DEPTH = 0.002   # m: how far the shape's front is into the sphere at ``at``
SOFT = dict(solref=(0.05, 1.0), solimp=(0.5, 0.95, 0.02))


def settings(law="computed_torque", thresholds=None, reaction="none") -> dict:
    """The controller's parameters for a run (``thresholds`` None: observe only)."""
    config = {"control_law": law, "kp": KP, "kd": KV, "friction": False,
              "collision_observer_gain": [GAIN], "collision_reaction": reaction}
    if law == "adaptive_computed_torque":
        config["adapt"] = "payload"
    if thresholds is not None:
        config.update(collision_thresholds=thresholds.static.tolist(),
                      collision_thresholds_per_velocity=thresholds.per_velocity.tolist())
    return config


class Arm:
    """The loop against ``plant`` from ``start`` (rad), on the plant's clock: ``motion(goal,
    duration, settle)`` runs one quintic there. ``record``: per step t, r, q̇, q, the contact
    force; ``events``: the collisions detected, ``moves``: the standing one isolated further."""

    def __init__(self, model, plant, config, links, start, noise=None, seed=0, shapes=()):
        from robodyn_ros.control.joints import JointOrder
        from robodyn_ros.control.loop import ControlLoop
        self.model, self.plant, self.t = model, plant, 0.0
        self.loop = ControlLoop(model, JointOrder(model.joint_names), config, 0.1,
                                clock=lambda: self.t, steady=lambda: self.t, links=links,
                                shapes=shapes)
        self.events, self.moves = [], []
        self.loop.on_collision = self.events.append
        self.loop.on_isolation = self.moves.append
        self.q, self.qd = np.array(start, dtype=float), np.zeros(model.dof)
        self.noise, self._rng = noise, np.random.default_rng(seed)
        self.record, self.touches = [], []   # per step; the plant's contacts at the state

    def step(self):
        """One cycle at the plant's state (its contact force recorded with it), one plant step."""
        q, qd = self.q, self.qd
        if self.noise is not None:
            q = q + self._rng.normal(0.0, self.noise[0], q.size)
            qd = qd + self._rng.normal(0.0, self.noise[1], qd.size)
        self.loop.set_state(self.model.joint_names, q, qd, stamp=self.t)
        effort = self.loop.cycle().effort
        touches = getattr(self.plant, "touches", ())
        self.record.append((self.t, self.loop.guard.residual.copy(), qd.copy(), q.copy(),
                            sum(touch.force for touch in touches)))
        self.touches.append(touches)
        self.q, self.qd = self.plant.step(self.q, self.qd, effort)
        self.t += DT

    def motion(self, goal, duration, settle, each=None, length=None):
        """A quintic to ``goal`` over ``duration`` s, then ``settle`` s more (or ``length`` s in
        all); ``each(arm)`` after every step. Refused while a collision stands: the loop holds."""
        from robodyn_ros.control import JointTrajectory
        if self.loop.received is None:
            self.step()                # the first state: the loop starts holding it
        zero = np.zeros((1, self.model.dof))   # at rest at the end
        self.loop.set_trajectory(JointTrajectory(self.model.joint_names, np.array([duration]),
                                                 np.asarray(goal, float)[None], zero, zero))
        for _ in range(round((duration + settle if length is None else length) / DT)):
            self.step()
            if each is not None:
                each(self)

    def arrays(self, since=0):
        """t, r, q̇, q, force from step ``since`` on."""
        return tuple(np.array(x) for x in zip(*self.record[since:]))


def read_model(urdf):
    from robodyn_ros.dynamics import RobotModel
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # the PUMA data's link 3 inertia warns, rightly
        return RobotModel.from_urdf(urdf).scaled(friction=0.0)


def scene_urdf(scene: Scene) -> str:
    """The Panda's URDF text with the scene's attachment, if any."""
    from robodyn_ros.plumbing.resources import find_share_file
    xml = find_share_file(PANDA).read_text()
    return attach(xml, scene.attached) if scene.attached else xml


def run_scene(scene: Scene, reaction: str = "none") -> dict:
    """Calibrate on the free motion, run into the sphere with ``reaction``: what MuJoCo says was
    touched, and what each rule named (``isolate``)."""
    from robodyn_ros.control.collision import child_links, fit_thresholds
    from robodyn_ros.control.contact_location import link_shapes

    from .contact import ContactScene, Obstacle
    xml = scene_urdf(scene)
    model = read_model(xml)
    links = child_links(xml, model.joint_names)
    goal = PANDA_START + np.asarray(scene.move)
    free = Arm(model, ContactScene(model, DT, xml), settings(), links, PANDA_START)
    place, shapes = [], scene_shapes(free.plant, scene)

    def watch(arm):   # where the front of the fastest shape will be at ``at``
        m, d = arm.plant.mj, arm.plant.data
        if len(place) < 2 and arm.t >= scene.at - DT * (1 - len(place)):
            place.append(d.geom_xpos[shapes].copy())
            if len(place) == 2:
                moved = place[1] - place[0]
                i = int(np.argmax(np.linalg.norm(moved, axis=1)))
                u = moved[i] / np.linalg.norm(moved[i])
                place[1] = place[1][i] + u * (reach(arm.plant._mujoco, m, d, shapes[i], u)
                                              + RADIUS - CONTACT_DEPTH)
    free.motion(goal, scene.duration, 0.0, watch, scene.length)
    _, r, qd, _, _ = free.arrays()
    thresholds = fit_thresholds(model.joint_names, r, qd, GAIN, MARGIN, floor=FLOOR)
    sphere = Obstacle(tuple(place[1] + np.asarray(scene.offset)), "sphere", (RADIUS,),
                      **(SOFT if scene.soft else {}))
    plant = ContactScene(model, DT, xml, [sphere])
    arm = Arm(model, plant, settings(thresholds=thresholds, reaction=reaction), links,
              PANDA_START, shapes=link_shapes(model, xml))
    arm.motion(goal, scene.duration, 0.0, None, scene.length)
    return isolate(scene, arm, thresholds, links, xml)


def pressed_most(touches) -> str | None:
    """The link the contacts ``touches`` press most (None: none)."""
    force = {}
    for touch in touches:
        force[touch.link] = force.get(touch.link, 0.0) + touch.force
    return max(force, key=force.get) if force else None


def isolate(scene, arm, thresholds, links, xml) -> dict:
    """The run's figures: the link MuJoCo's contacts pressed most at the state the guard last
    located at (``touched``; at detection if it located none) and over the run (impulse), the
    URDF links whose shapes they touched, first contact, detection, the link the guard named
    (``named``: located, else isolated) and the link each rule isolated or located (None: not
    detected)."""
    from robodyn_ros.control.contact_location import link_shapes, locate
    t, r, qd, q, force = arm.arrays()
    plant, guard = arm.plant, arm.loop.guard
    event = guard.event
    first = plant.first_contact
    impulse, bodies = {}, set()
    for touches in arm.touches:
        for touch in touches:
            impulse[touch.link] = impulse.get(touch.link, 0.0) + touch.force * DT
            bodies.add(touch.body)
    result = {"scene": scene.name, "touched": None,
              "pressed_most": max(impulse, key=impulse.get) if impulse else None,
              "bodies": sorted(bodies),
              "first_contact_s": None if first is None else first[0],
              "peak_force_n": float(force.max()),
              "detected_s": None if event is None else event.time,
              "following": None if event is None else event.link,
              "isolated_after_ms": None if event is None
              else (event.isolated_time - event.time) * 1e3,
              "moves": len(arm.moves), "window": None, "anywhere": None,
              "located": None if event is None else event.located,
              "named": None if event is None else event.located or event.link}
    if event is None:
        return result
    at = guard.located_at if guard.located_at is not None else event.time
    result["touched"] = pressed_most(arm.touches[int(np.argmin(np.abs(t - at)))])
    h = np.array([thresholds.at(v) for v in qd])
    crossed = np.abs(r) > h
    k0 = int(np.flatnonzero(crossed.any(axis=1))[0])
    within = (t >= t[k0]) & (t <= t[k0] + OLD_WINDOW + 1e-9)
    joints = np.flatnonzero(crossed[within].any(axis=0))
    result["window"] = links[int(joints.max())]
    k = k0 + int(np.argmax((np.abs(r) / h)[k0:].max(axis=1)))   # the residual at its strongest
    joint = locate(arm.model, link_shapes(arm.model, xml), q[k], r[k])   # among every link
    result["anywhere"] = None if joint is None else links[joint]
    return result


def links_order(link: str) -> int:
    """A Panda link's place in the chain (panda_linkN: N)."""
    return int(link.removeprefix("panda_link"))


RULES = ("named", "following", "window", "anywhere")


def table(scenes=SCENES, reactions=("none", "stop", "float", "reflex")) -> tuple[list, str]:
    """Every scene with every reaction: the runs, and the table doc/collisions.md shows."""
    runs = [run_scene(s, reaction) | {"reaction": reaction} for s in scenes for reaction in reactions]
    short = lambda link: (link or "-").replace("panda_", "")   # noqa: E731
    lines = [f"{'scene':34s}{'reaction':9s}{'touched':>8s}{'most':>7s}{'delay':>6s}{'follows':>8s}"
             f"{'after':>6s}{'named':>7s}{'10 ms':>7s}{'anywhere':>9s}",
             f"{'':34s}{'':9s}{'':>8s}{'':>7s}{'(ms)':>6s}{'':>8s}{'(ms)':>6s}"]
    for r in runs:
        delay = (r["detected_s"] - r["first_contact_s"]) * 1e3 if r["detected_s"] is not None \
            else float("nan")
        lines.append(f"{r['scene']:34s}{r['reaction']:9s}{short(r['touched']):>8s}"
                     f"{short(r['pressed_most']):>7s}{delay:6.0f}{short(r['following']):>8s}"
                     f"{r['isolated_after_ms'] or 0.0:6.0f}{short(r['named']):>7s}"
                     f"{short(r['window']):>7s}{short(r['anywhere']):>9s}")
    for truth, what in (("touched", "at the last location"), ("pressed_most", "over the run")):
        right = {rule: sum(r[rule] == r[truth] for r in runs) for rule in RULES}
        lines.append(f"named the link pressed most {what}: " + ", ".join(
            f"{rule} {n} of {len(runs)}" for rule, n in right.items()))
    before = sum(links_order(r["following"]) <= links_order(r["touched"]) for r in runs
                 if r["following"] is not None and r["touched"] is not None)
    lines.append(f"following: at or before the touched link in {before} of {len(runs)}")
    return runs, "\n".join(lines)


if __name__ == "__main__":
    import sys

    from .contact_scenes import OBSTACLES, ON_THE_FLANGE
    chosen = {"scenes": SCENES, "obstacles": OBSTACLES, "flange": ON_THE_FLANGE}
    print(table(tuple(s for name in (sys.argv[1:] or ["scenes"]) for s in chosen[name]))[1])
