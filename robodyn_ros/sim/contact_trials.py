"""The controller's own loop against an arm in a MuJoCo contact scene, on the plant's clock, and
the scenes that judge collision isolation against MuJoCo's contact list (doc/collisions.md).

``Arm`` steps ``control.loop.ControlLoop`` (the node's core: the law, the momentum observer, the
detector, the reaction) at 1 kHz against a plant, the command of state k held over the next step
as arm_simulator's lockstep runs the node; ``demo collision`` and the isolation scenes share it.

An isolation scene (``Scene``) puts a sphere where one link's shape will be some time into a
motion of the Panda from the Cartesian demo's start — the hand, the wrist or the forearm; rigid or
soft; met at speed (an impact) or slowly (a push that grows over a second) — calibrates the
thresholds on the same motion without it, and runs it with a reaction. MuJoCo says which link
touched (the link the contact's body hangs from: the hand is the last link's) and with what force;
``isolate`` compares what the controller isolated (the last joint crossed) and located (the fit of
``control.contact_location`` among the links from the isolated one on), and what two other rules
would have: the first crossing with a fixed 10 ms window (the rule before), and the fit among
every link, where the residual is strongest. ROS-free; needs MuJoCo.
"""
from __future__ import annotations

import dataclasses
import warnings

import numpy as np

DT = 1e-3
GAIN = 50.0          # K_O, 1/s
MARGIN = 1.5         # thresholds over the calibration run's envelope
FLOOR = 0.5          # N m: the least static threshold
KP, KV = 100.0, 20.0
OLD_WINDOW = 0.01    # s: the window of the rule before (a later crossing within it moved it)
RADIUS = 0.03        # m, the obstacle
CONTACT_DEPTH = 0.002   # m: how far the shape's front is into the sphere at ``at``
SOFT = dict(solref=(0.05, 1.0), solimp=(0.5, 0.95, 0.02))
PANDA = "urdf/panda.urdf"
PANDA_START = np.array([0.0, -0.3, 0.0, -2.2, 0.0, 2.0, 0.8])   # the Cartesian demo's


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
        self.record = []

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


@dataclasses.dataclass(frozen=True)
class Scene:
    """A sphere where ``link``'s shape is ``at`` seconds into a quintic of ``duration`` seconds
    from PANDA_START by ``move`` (rad per joint), shifted by ``offset`` (m, world) so that this
    link meets it first; ``soft``: MuJoCo's soft contact (SOFT); the run lasts ``length`` s."""
    name: str
    link: str
    move: tuple
    duration: float
    at: float
    offset: tuple = (0.0, 0.0, 0.0)
    soft: bool = False
    length: float = 1.5


SWEEP = (0.6, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)      # the whole arm about the base: across its plane
REACH = (0.0, 0.4, 0.0, 0.4, 0.0, 0.0, 0.0)      # shoulder and elbow: in the arm's plane
ELBOW = (0.0, 0.0, 0.0, 0.6, 0.0, 0.0, 0.0)      # the elbow: the forearm in the arm's plane
FOLD = (0.0, 0.0, 0.0, 0.0, 0.0, -0.6, 0.0)      # the hand about the wrist (joint 6)
SCENES = (
    Scene("hand, rigid, impact", "panda_link7", REACH, 2.0, 1.0),
    Scene("hand, soft, impact", "panda_link7", REACH, 2.0, 1.0, soft=True),
    Scene("hand, soft, slow push", "panda_link7", REACH, 8.0, 2.5, soft=True, length=4.0),
    Scene("hand folding, rigid, impact", "panda_link7", FOLD, 2.0, 1.0),
    Scene("wrist, rigid, impact", "panda_link6", REACH, 2.0, 1.0),
    Scene("wrist, soft, impact", "panda_link6", REACH, 2.0, 1.0, soft=True),
    Scene("forearm, rigid, impact", "panda_link5", ELBOW, 2.0, 1.0),
    Scene("forearm, soft, impact", "panda_link5", ELBOW, 2.0, 1.0, soft=True),
    Scene("forearm, across, soft, slow push", "panda_link5", SWEEP, 8.0, 5.0, soft=True,
          length=6.5),
    Scene("hand, across, rigid, impact", "panda_link7", SWEEP, 2.0, 1.0),
    Scene("hand, across, soft, slow push", "panda_link7", SWEEP, 8.0, 2.5, soft=True, length=4.0),
    Scene("wrist, across, rigid, impact", "panda_link6", SWEEP, 2.0, 1.0),
    Scene("forearm, across, rigid, impact", "panda_link5", SWEEP, 2.0, 1.6, length=2.5),
)


def _moving_link(mj, body: int, moving: set) -> str:
    """The link whose joint moves ``body`` (a fixed hand: the last link)."""
    while mj.body(body).name not in moving and body > 0:
        body = int(mj.body_parentid[body])
    return mj.body(body).name


def _shapes(scene, link: str) -> list:
    """The geoms on ``link`` (or on a tool fixed to it)."""
    m = scene.mj
    moving = model_links(m)
    return [g for g in range(m.ngeom)
            if m.geom_contype[g] and _moving_link(m, int(m.geom_bodyid[g]), moving) == link]


def _reach(mujoco, m, d, g, u) -> float:
    """How far geom ``g`` reaches from its centre along the unit vector ``u``."""
    size, R = m.geom_size[g], d.geom_xmat[g].reshape(3, 3)
    local = np.abs(R.T @ u)
    if m.geom_type[g] == mujoco.mjtGeom.mjGEOM_BOX:
        return float(local @ size)
    if m.geom_type[g] == mujoco.mjtGeom.mjGEOM_SPHERE:
        return float(size[0])
    return float(size[0] * np.sqrt(max(0.0, 1.0 - local[2] ** 2)) + size[1] * local[2])


def run_scene(scene: Scene, reaction: str = "none") -> dict:
    """Calibrate on the free motion, run into the sphere with ``reaction``: what MuJoCo says was
    touched, and what each rule isolated (``isolate``)."""
    from robodyn_ros.control.collision import child_links, fit_thresholds
    from robodyn_ros.control.contact_location import link_shapes
    from robodyn_ros.plumbing.resources import find_share_file

    from .contact import ContactScene, Obstacle
    path = find_share_file(PANDA)
    xml = path.read_text()
    model = read_model(path)
    links = child_links(xml, model.joint_names)
    goal = PANDA_START + np.asarray(scene.move)
    free = Arm(model, ContactScene(model, DT, xml), settings(), links, PANDA_START)
    place, shapes = [], _shapes(free.plant, scene.link)

    def watch(arm):   # where the front of the link's fastest shape will be at ``at``
        m, d = arm.plant.mj, arm.plant.data
        if len(place) < 2 and arm.t >= scene.at - DT * (1 - len(place)):
            place.append(d.geom_xpos[shapes].copy())
            if len(place) == 2:
                moved = place[1] - place[0]
                i = int(np.argmax(np.linalg.norm(moved, axis=1)))
                u = moved[i] / np.linalg.norm(moved[i])
                place[1] = place[1][i] + u * (_reach(arm.plant._mujoco, m, d, shapes[i], u)
                                              + RADIUS - CONTACT_DEPTH)
    free.motion(goal, scene.duration, 0.0, watch, scene.length)
    _, r, qd, _, _ = free.arrays()
    thresholds = fit_thresholds(model.joint_names, r, qd, GAIN, MARGIN, floor=FLOOR)
    sphere = Obstacle(tuple(place[1] + np.asarray(scene.offset)), "sphere", (RADIUS,), **(SOFT if scene.soft else {}))
    plant = ContactScene(model, DT, xml, [sphere])
    arm = Arm(model, plant, settings(thresholds=thresholds, reaction=reaction), links,
              PANDA_START, shapes=link_shapes(model, xml))
    touched = {}

    def count(arm):
        for touch in arm.plant.touches:
            link = _moving_link(plant.mj, plant.mj.body(touch.link).id, set(links))
            touched[link] = touched.get(link, 0.0) + touch.force * DT
    arm.motion(goal, scene.duration, 0.0, count, scene.length)
    return isolate(scene, arm, thresholds, touched, links, xml)


def isolate(scene, arm, thresholds, touched, links, xml) -> dict:
    """The run's figures: the link MuJoCo's contacts pressed most (impulse), first contact,
    detection, and the link each rule isolated (None: not detected)."""
    from robodyn_ros.control.contact_location import link_shapes, locate
    t, r, qd, q, force = arm.arrays()
    plant, event = arm.plant, arm.loop.guard.event
    first = plant.first_contact
    result = {"scene": scene.name, "touched": max(touched, key=touched.get) if touched else None,
              "first_contact_s": None if first is None else first[0],
              "peak_force_n": float(force.max()),
              "detected_s": None if event is None else event.time,
              "following": None if event is None else event.link,
              "isolated_after_ms": None if event is None
              else (event.isolated_time - event.time) * 1e3,
              "moves": len(arm.moves), "window": None, "anywhere": None,
              "located": None if event is None else event.located}
    if event is None:
        return result
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


def model_links(m) -> set:
    """The links a joint moves in MuJoCo model ``m``."""
    return {m.body(m.jnt_bodyid[j]).name for j in range(m.njnt)}


def links_order(link: str) -> int:
    """A Panda link's place in the chain (panda_linkN: N)."""
    return int(link.removeprefix("panda_link"))


RULES = ("following", "located", "window", "anywhere")


def table(scenes=SCENES, reactions=("none", "stop", "float", "reflex")) -> tuple[list, str]:
    """Every scene with every reaction: the runs, and the table doc/collisions.md shows."""
    runs = [run_scene(s, reaction) | {"reaction": reaction} for s in scenes for reaction in reactions]
    short = lambda link: (link or "-").replace("panda_", "")   # noqa: E731
    lines = [f"{'scene':34s}{'reaction':9s}{'touched':>8s}{'delay':>7s}{'follows':>9s}{'after':>8s}"
             f"{'located':>9s}{'10 ms':>8s}{'anywhere':>9s}",
             f"{'':34s}{'':9s}{'':>8s}{'(ms)':>7s}{'':>9s}{'(ms)':>8s}"]
    for r in runs:
        delay = (r["detected_s"] - r["first_contact_s"]) * 1e3 if r["detected_s"] is not None \
            else float("nan")
        lines.append(f"{r['scene']:34s}{r['reaction']:9s}{short(r['touched']):>8s}{delay:7.0f}"
                     f"{short(r['following']):>9s}{r['isolated_after_ms'] or 0.0:8.0f}"
                     f"{short(r['located']):>9s}{short(r['window']):>8s}"
                     f"{short(r['anywhere']):>9s}")
    right = {rule: sum(r[rule] == r["touched"] for r in runs) for rule in RULES}
    lines.append("named the touched link: " + ", ".join(f"{rule} {n} of {len(runs)}"
                                                        for rule, n in right.items()))
    before = sum(links_order(r["following"]) <= links_order(r["touched"]) for r in runs
                 if r["following"] is not None)
    lines.append(f"following: at or before the touched link in {before} of {len(runs)}")
    return runs, "\n".join(lines)


if __name__ == "__main__":
    print(table()[1])
