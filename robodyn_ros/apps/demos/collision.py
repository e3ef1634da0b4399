"""``robodyn-ros demo collision``: the PUMA 560 meets an obstacle on the 004 motion; what the
momentum observer sees of it, how soon, where, and what each reaction does to the contact force.

The plant is MuJoCo (``sim.contact.ContactScene``: the MuJoCo engine's exact PUMA, the URDF's link
shapes, an obstacle added with MjSpec), whose contact list gives the true instant of first contact,
the link touched and the normal force: nothing of ours computes them. The controller is the
node's own control loop (``control.loop.ControlLoop``: computed torque, Kp = 100, Kv = 20, the
observer and detector of ``control.collision_guard``), stepped in this process at 1 kHz against
the plant with the command of state k held over the next step, as arm_simulator's lockstep runs
the node (doc/demo.md): the experiment measures the method, test_nodes_collision.py the wiring.

1. **False alarms.** Per scenario, thresholds are calibrated from collision-free passes of the 004
   motion there and back (``fit_thresholds``: margin over the envelope a + b|q̇|, a floor), then
   counted over ``--passes`` further passes, each scenario on a fresh arm:
   ``exact`` (the model is the plant), ``tool`` (the plant carries a 2 kg tool the model lacks,
   under ``adaptive_computed_torque`` whose estimates the observer follows; the first pass after
   picking it up is the law's learning pass: its detections are the tool seen as an external
   load, reported apart, and counting starts at the second pass) and ``noise`` (the measured q and
   q̇ noisy, as arm_simulator's position_noise and velocity_noise make them).
2. **Collisions.** A sphere where the forearm passes 2 s into the motion, rigid and soft (MuJoCo's
   solref / solimp: centimetres of give, a body's stand-in), once per reaction, with the exact
   model's thresholds: detection delay after first contact, the isolated link against the link
   touched, the contact force's peak before detection (the impact, which no reaction changes),
   after detection until separation, and the time in contact.
"""
from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from robodyn_ros.apps.progress import progress

from robodyn_ros.sim.contact_trials import DT, FLOOR, GAIN, KP, KV, MARGIN, read_model, settings

from .arm_loop import Q_GOAL, Q_START

DURATION = 3.0           # s of each quintic motion
SETTLE = 0.3             # s held after each
IN_THE_PATH = (0.286, 0.142, 0.999)   # m, world: the forearm's place 2 s into the motion
RADIUS = 0.04
SOFT = dict(solref=(0.05, 1.0), solimp=(0.5, 0.95, 0.02))
TOOL_MASS, TOOL_COM = 2.0, (0.0, 0.0, 0.1)
NOISE = (1e-5, 1e-3)     # rad, rad/s: a 19-bit encoder's step; its differentiated velocity
REACTIONS = ("none", "stop", "float", "reflex")
DETECTION_BOUND_MS = 5.0


def parse_args(argv):
    parser = argparse.ArgumentParser(prog="robodyn-ros demo collision", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    pass_arguments(parser, "per scenario")
    parser.add_argument("--obstacle", nargs="+", choices=("soft", "rigid"),
                        default=["soft", "rigid"], help="obstacles to run (default both)")
    parser.add_argument("--reaction", nargs="+", choices=REACTIONS, default=list(REACTIONS),
                        help="reactions to run (default all)")
    parser.add_argument("--plot", default="out/collision.png", metavar="FILE",
                        help="residual and contact-force plot (PNG; '' = none)")
    parser.add_argument("--json", metavar="FILE", help="write the results as JSON: reactions[NAME] "
                        "(the first obstacle's), by_obstacle, false_alarms")
    args = parser.parse_args(argv)
    if args.passes < 1 or args.calibration_passes < 1:
        parser.error("--passes and --calibration-passes must be >= 1")
    return args


def pass_arguments(parser, counted: str) -> None:
    """--passes and --calibration-passes, the observer's collision-free passes (the drive demo's
    too)."""
    parser.add_argument("--passes", type=int, default=20, metavar="N",
                        help=f"collision-free passes counted {counted} (default 20)")
    parser.add_argument("--calibration-passes", type=int, default=2, metavar="N",
                        help="collision-free passes the thresholds are fitted to (default 2)")


def count_false_alarms(arm, passes: int, one_pass, label: str = "") -> int:
    """Detections over ``passes`` collision-free passes of ``arm`` (``one_pass(arm)`` runs one),
    each reset after its pass; the pass shown as ``label``'s progress."""
    alarms = 0
    for k in range(passes):
        progress.show(f"  {label}: counting false alarms, pass {k + 1} / {passes}, {alarms} so far")
        one_pass(arm)
        alarms += len(arm.events)
        arm.events.clear()
        if arm.loop.collided:
            arm.loop.reset_collision()
    return alarms


def passes(arm, n, label=""):
    """``n`` passes of the 004 motion there and back, shown as ``label``'s progress."""
    for k in range(n):
        progress.show(f"  {label}: pass {k + 1} / {n}")
        arm.motion(np.radians(Q_GOAL), DURATION, SETTLE)
        arm.motion(np.radians(Q_START), DURATION, SETTLE)


def _arm(model, plant, config, links, noise=None, seed=0):
    from robodyn_ros.sim.contact_trials import Arm
    return Arm(model, plant, config, links, np.radians(Q_START), noise, seed)


def scenario(name, urdf, xml, links, args) -> dict:
    """Thresholds from fresh calibration passes, then the false alarms of ``args.passes``."""
    from robodyn_ros.control.collision import fit_thresholds
    from robodyn_ros.sim import make_engine
    model = read_model(urdf)
    tool = (TOOL_MASS, TOOL_COM, None) if name == "tool" else None
    law = "adaptive_computed_torque" if name == "tool" else "computed_torque"
    noise = NOISE if name == "noise" else None

    def arm(thresholds=None, seed=0):
        plant = make_engine("mujoco", model, DT, xml, payload=tool)
        return _arm(model, plant, settings(law, thresholds), links, noise, seed)

    learning = 1 if name == "tool" else 0   # the law's first pass with the tool is not counted
    calibration = arm()
    passes(calibration, learning, f"{name:6s}: the law's learning pass")
    start = len(calibration.record)
    passes(calibration, args.calibration_passes, f"{name:6s}: calibration")
    _, r, qd, _, _ = calibration.arrays(start)
    thresholds = fit_thresholds(model.joint_names, r, qd, GAIN, MARGIN, floor=FLOOR)
    counting = arm(thresholds, seed=1)
    passes(counting, learning, f"{name:6s}: the law's learning pass")
    learnt = len(counting.events)
    while counting.loop.collided:
        counting.loop.reset_collision()
    counting.events.clear()
    alarms = count_false_alarms(counting, args.passes, lambda arm: passes(arm, 1), f"{name:6s}")
    result = {"passes": args.passes, "false_alarms": alarms,
              "thresholds_static_nm": thresholds.static.round(4).tolist(),
              "thresholds_per_velocity_nms": thresholds.per_velocity.round(4).tolist(),
              "max_abs_residual_calibration_nm": np.abs(r).max(axis=0).round(4).tolist()}
    if name == "tool":
        result["detections_in_the_learning_pass"] = learnt
    progress.done(f"  {name:6s}: {alarms} false alarm(s) in {args.passes} passes; thresholds a = "
                  f"{np.round(thresholds.static, 2).tolist()} N m, b = "
                  f"{np.round(thresholds.per_velocity, 2).tolist()} N m s/rad"
                  + (f"; the learning pass: {learnt} detection(s)" if name == "tool" else ""))
    return result, thresholds


def collide(urdf, xml, links, thresholds, obstacle, reaction) -> dict:
    """One run into the obstacle with ``reaction``: the figures of the module docstring."""
    from robodyn_ros.sim.contact import ContactScene, Obstacle
    model = read_model(urdf)
    shape = Obstacle(IN_THE_PATH, "sphere", (RADIUS,), name=obstacle,
                     **(SOFT if obstacle == "soft" else {}))
    arm = _arm(model, ContactScene(model, DT, xml, [shape]),
               settings(thresholds=thresholds, reaction=reaction), links)
    arm.motion(np.radians(Q_GOAL), DURATION, 1.0)
    t, r, qd, _, force = arm.arrays()
    touched_at, touched, _ = arm.plant.first_contact or (None, None, None)
    event = arm.loop.guard.event
    detected = event.time if event is not None else None
    after = t > detected if detected is not None else np.zeros(len(t), bool)
    # separation: the first state after detection without contact (the end of the run otherwise)
    gone = np.flatnonzero(after & (force == 0.0))
    until = t[gone[0]] if gone.size else t[-1] + DT
    # the impact: from first contact to the force's first minimum after its peak (the arm's
    # momentum taken up), or separation; what no reaction changes
    k = int(np.argmax(force > 0.0)) if touched_at is not None else len(t)
    end = k
    while end + 1 < len(t) and force[end + 1] > 0.0 and not (
            force[end + 1] > force[end] and force[end] < force[k:end + 1].max()):
        end += 1
    clamp = (t > t[min(end, len(t) - 1)]) & (t < until)
    return {
        "first_contact_s": touched_at, "touched_link": touched,
        "detection_s": detected,
        "detection_delay_ms": None if detected is None or touched_at is None
        else (detected - touched_at) * 1e3,
        "isolated_link": event.link if event is not None else None,
        "peak_contact_force_n": float(force.max()),
        "impact_peak_n": float(force[k:end + 1].max()) if k < len(t) else 0.0,
        "impact_duration_ms": (end + 1 - k) * DT * 1e3 if k < len(t) else 0.0,
        "peak_force_after_detection_n": float(force[after & (t < until)].max())
        if (after & (t < until)).any() else 0.0,
        "peak_force_after_impact_n": float(force[clamp].max()) if clamp.any() else 0.0,
        "contact_time_s": float(np.count_nonzero(force > 0.0) * DT),
        "trace": {"t": t, "r": r, "threshold": thresholds.at(qd), "force": force},
    }


def main(argv=None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    from robodyn_ros.control.collision import child_links
    from robodyn_ros.plumbing.resources import find_share_file
    from robodyn_ros.sim.mujoco_engine import require_mujoco
    require_mujoco()
    urdf = find_share_file("urdf/puma560.urdf")
    xml = urdf.read_text()
    links = child_links(xml, read_model(urdf).joint_names)
    started = time.monotonic()
    print(f"PUMA 560 on MuJoCo with contacts, computed torque Kp = {KP:g}, Kv = {KV:g}, the 004 "
          f"motion; momentum observer K_O = {GAIN:g} 1/s, thresholds {MARGIN:g} x the envelope "
          f"of {args.calibration_passes} collision-free pass(es), floor {FLOOR:g} N m")
    print("false alarms (collision-free passes there and back):")
    false_alarms, thresholds = {}, None
    for name in ("exact", "tool", "noise"):
        false_alarms[name], fitted = scenario(name, urdf, xml, links, args)
        thresholds = thresholds or fitted   # the exact model's, for the collisions
    print(f"collisions ({', '.join(args.obstacle)} obstacle; reactions {', '.join(args.reaction)}):")
    by_obstacle = {}
    for obstacle in args.obstacle:
        by_obstacle[obstacle] = {}
        for reaction in args.reaction:
            progress.show(f"  {obstacle:5s} {reaction:7s}: the motion into the obstacle")
            run = by_obstacle[obstacle][reaction] = collide(urdf, xml, links, thresholds, obstacle,
                                                            reaction)
            progress.done(f"  {obstacle:5s} {reaction:7s}: " + (
                "not detected" if run["detection_delay_ms"] is None else
                f"detected {run['detection_delay_ms']:.0f} ms after first contact, isolated to "
                f"{run['isolated_link']} (touched: {run['touched_link']})"))
    print_table(by_obstacle)
    goals = judge(false_alarms, by_obstacle)
    for what, met in goals:
        print(f"goal: {what}: {'met' if met else 'NOT met'}")
    print(f"wall time {time.monotonic() - started:.1f} s")
    if args.plot:
        from pathlib import Path
        Path(args.plot).parent.mkdir(parents=True, exist_ok=True)
        plot(by_obstacle, args.plot)
        print(f"plot: {args.plot}")
    if args.json:
        import json
        strip = {o: {k: {f: v for f, v in run.items() if f != "trace"} for k, run in runs.items()}
                 for o, runs in by_obstacle.items()}
        json_doc = {"reactions": strip[args.obstacle[0]], "obstacle": args.obstacle[0],
                    "by_obstacle": strip, "false_alarms": false_alarms,
                    "goals": {what: met for what, met in goals}, "observer_gain": GAIN,
                    "margin": MARGIN, "floor_nm": FLOOR}
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(json_doc, f, indent=2)
        print(f"results: {args.json}")
    return 0 if all(met for _, met in goals) else 1


def judge(false_alarms, by_obstacle) -> list[tuple[str, bool]]:
    """Issue 28's goals, each judged on what ran."""
    runs = [run for runs in by_obstacle.values() for run in runs.values()]
    goals = [("0 false alarms in every scenario", all(s["false_alarms"] == 0
                                                     for s in false_alarms.values()))]
    if runs:
        goals.append((f"detection within {DETECTION_BOUND_MS:g} ms of first contact",
                      all(r["detection_delay_ms"] is not None
                          and 0.0 <= r["detection_delay_ms"] <= DETECTION_BOUND_MS for r in runs)))
        goals.append(("the isolated link is the one touched",
                      all(r["isolated_link"] == r["touched_link"] for r in runs)))
    for obstacle, runs in by_obstacle.items():
        if "none" not in runs:
            continue
        none = runs["none"]
        for reaction in sorted(set(runs) & {"float", "reflex"}):
            run = runs[reaction]
            goals.append((f"{obstacle}, {reaction}: the force after the impact <= half of none's, "
                          "a shorter contact",
                          run["peak_force_after_impact_n"] <= 0.5 * none["peak_force_after_impact_n"]
                          and run["contact_time_s"] < none["contact_time_s"]))
    return goals


def print_table(by_obstacle):
    print(f"\n{'obstacle':9s}{'reaction':9s}{'delay':>7s}{'touched':>9s}{'isolated':>9s}"
          f"{'impact':>9s}{'lasting':>9s}{'after det.':>11s}{'after impact':>13s}{'contact':>9s}")
    print(f"{'':18s}{'(ms)':>7s}{'':18s}{'(N)':>9s}{'(ms)':>9s}{'(N)':>11s}{'(N)':>13s}{'(s)':>9s}")
    for obstacle, runs in by_obstacle.items():
        for reaction, r in runs.items():
            delay = "-" if r["detection_delay_ms"] is None else f"{r['detection_delay_ms']:.0f}"
            print(f"{obstacle:9s}{reaction:9s}{delay:>7s}{str(r['touched_link']):>9s}"
                  f"{str(r['isolated_link']):>9s}{r['impact_peak_n']:>9.1f}"
                  f"{r['impact_duration_ms']:>9.0f}{r['peak_force_after_detection_n']:>11.1f}"
                  f"{r['peak_force_after_impact_n']:>13.1f}{r['contact_time_s']:>9.3f}")


def plot(by_obstacle, path):
    """Top: the isolated joint's |r| against its threshold through the collision (each obstacle,
    reaction none); bottom: the contact force per reaction."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    obstacles = list(by_obstacle)
    fig, axes = plt.subplots(2, len(obstacles), figsize=(7 * len(obstacles), 7), squeeze=False)
    for k, obstacle in enumerate(obstacles):
        runs = by_obstacle[obstacle]
        first = runs.get("none") or next(iter(runs.values()))
        tr, touched = first["trace"], first["first_contact_s"] or 0.0
        window = (tr["t"] > touched - 0.05) & (tr["t"] < touched + 0.1)
        ax = axes[0, k]
        joint = int(np.argmax(np.abs(tr["r"][window]).max(axis=0)))
        ax.plot(tr["t"][window], np.abs(tr["r"][window, joint]), label=f"|r| joint {joint + 1}")
        ax.plot(tr["t"][window], tr["threshold"][window, joint], "--", label="threshold")
        ax.axvline(touched, color="k", lw=0.8, label="first contact (MuJoCo)")
        ax.set_title(f"{obstacle} obstacle, reaction {'none' if 'none' in runs else '?'}")
        ax.set_ylabel("N m")
        ax.legend(fontsize=8)
        ax = axes[1, k]
        for reaction, run in runs.items():
            window = (run["trace"]["t"] > touched - 0.02) & (run["trace"]["t"] < touched + 0.5)
            ax.plot(run["trace"]["t"][window], run["trace"]["force"][window], label=reaction)
        ax.set_xlabel("t (s) from the start of the motion")
        ax.set_ylabel("contact force (N)")
        ax.legend(fontsize=8)
    fig.suptitle("PUMA 560 meets an obstacle: momentum observer, detection, reaction")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


if __name__ == "__main__":
    sys.exit(main())
