"""``robodyn-ros demo drive``: the Panda behind a drive like a Franka's (it adds gravity and
friction from its own model, and flags a torque that changes faster than 1000 N·m/s), on MuJoCo at
1 kHz: what ``drive_compensates`` and ``effort_rate_limit`` change.

The plant is MuJoCo (the MuJoCo engine's exact Panda) behind ``sim.drive.TorqueDrive``, whose
gravity and friction are MuJoCo's own bias force and damping, not our model's. The controller is
the node's own control loop (``control.loop.ControlLoop``), stepped in this process against the
plant with the command of state k held over the next step, as the collision demo runs it (the
experiment measures the method; test_drive_loop.py and the node tests the wiring).

1. **Tracking.** A rest-to-rest quintic (A to B, 2 s), then a goal (B to A, 2 s) preempted after
   1 s by one to C (1.5 s), each followed by 0.3 s at rest; per law (``computed_torque``,
   ``operational_space``): on a plain effort drive (the reference), behind the drive without
   ``drive_compensates`` (gravity counted twice), with it, and with it and ``effort_rate_limit``
   1000 (and, on our engine, behind a drive whose model is 5 % heavier than the controller's,
   with both): the largest and RMS joint error, the ratio to the plain drive's; then a set point
   ``STEP`` away from C, the drive's rate violations over the whole run (the errors of the step
   are not counted) and how many commands the controller limited.
2. **The observer** behind the drive (``computed_torque``, with the parameters): thresholds fitted
   to ``--calibration-passes`` collision-free passes A-B-A (the collision demo's rule), then the
   false alarms over ``--passes`` more, then a rigid sphere in the path of the hand (MuJoCo's
   contact list gives the first contact): the delay to detection.
"""
from __future__ import annotations

import argparse
import sys
import time
import warnings

import numpy as np

from robodyn_ros.apps.progress import progress

from .collision import count_false_alarms, pass_arguments

DT = 1e-3
RATE = 1000.0                            # N m/s: libfranka's kMaxTorqueRate
Q_A = (0.0, -0.5, 0.0, -2.0, 0.0, 1.5, 0.8)
Q_B = (0.8, 0.2, -0.5, -1.5, 0.5, 2.0, 0.0)
Q_C = (-0.5, -0.2, 0.3, -1.8, -0.3, 1.2, 1.2)
LAWS = {"computed_torque": {"kp": 100.0, "kd": 20.0},
        "operational_space": {"task_kp": 100.0, "task_kd": 20.0}}
GAIN, MARGIN, FLOOR = 50.0, 1.5, 0.5     # the collision demo's observer and threshold rule
RADIUS = 0.04
STEP = 0.05                              # rad, every joint: a set point away at the end
CONTACT_AT = 0.9                         # s into A to B: where the hand meets the sphere
DETECTION_BOUND_MS = 5.0
RATIO_BOUND = 1.1
DRIVE_MASS_SCALE = 1.05                  # our engine's drive: a model of the arm that is not ours
OURS = "drive 5 % heavier (ours), both"


def parse_args(argv):
    parser = argparse.ArgumentParser(prog="robodyn-ros demo drive", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    pass_arguments(parser, "for false alarms")
    parser.add_argument("--law", nargs="+", choices=tuple(LAWS), default=list(LAWS),
                        help="laws of the tracking table (default both)")
    parser.add_argument("--json", metavar="FILE", help="write the results as JSON")
    parser.add_argument("--plot", metavar="FILE", help="draw each drive's tracking error and the "
                        "rate of its commands against the drive's limit (PNG, PDF, ...)")
    args = parser.parse_args(argv)
    if args.passes < 0 or args.calibration_passes < 1:
        parser.error("--passes must be >= 0 and --calibration-passes >= 1")
    return args


class Arm:
    """The loop against the plant on the plant's clock; every command's joint error recorded."""

    def __init__(self, model, plant, config, links=None):
        from robodyn_ros.control.joints import JointOrder
        from robodyn_ros.control.loop import ControlLoop
        self.model, self.plant, self.t = model, plant, 0.0
        self.loop = ControlLoop(model, JointOrder(model.joint_names), config, 0.1,
                                clock=lambda: self.t, steady=lambda: self.t, links=links)
        self.events = []
        self.loop.on_collision = self.events.append
        self.q, self.qd = np.array(Q_A), np.zeros(model.dof)
        self.errors, self.commands = [], []

    def step(self):
        self.loop.set_state(self.model.joint_names, self.q, self.qd, stamp=self.t)
        command = self.loop.cycle().effort
        self.errors.append(self.loop.reference[0] - self.q)
        self.commands.append(np.array(command))
        self.q, self.qd = self.plant.step(self.q, self.qd, command)
        self.t += DT

    def run(self, seconds):
        for _ in range(round(seconds / DT)):
            self.step()

    def go(self, goal, duration):
        """A rest-to-rest quintic to ``goal`` from now (preempting any other)."""
        from robodyn_ros.control import JointTrajectory
        if self.loop.received is None:
            self.step()
        zero = np.zeros((1, self.model.dof))
        self.loop.set_trajectory(JointTrajectory(self.model.joint_names, np.array([duration]),
                                                 np.array(goal)[None], zero, zero))

    def motion(self):
        """The tracking motion of the module docstring; then a set point STEP away (its errors
        not counted: a step is no tracking)."""
        self.go(Q_B, 2.0)
        self.run(2.3)
        self.go(Q_A, 2.0)
        self.run(1.0)
        self.go(Q_C, 1.5)   # preempts the goal to A mid-motion
        self.run(1.8)
        tracked = len(self.errors)
        self.loop.set_reference(np.array(Q_C) + STEP)
        self.run(0.5)
        del self.errors[tracked:]

    def passes(self, n):
        for _ in range(n):
            for goal in (Q_B, Q_A):
                self.go(goal, 2.0)
                self.run(2.3)


def _model():
    from robodyn_ros.dynamics import RobotModel
    from robodyn_ros.plumbing.resources import find_share_file
    urdf = find_share_file("urdf/panda.urdf")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return RobotModel.from_urdf(urdf), urdf.read_text()


def _plant(model, xml, drive: bool, obstacles=None, engine="mujoco"):
    """MuJoCo's arm (among ``obstacles``), or ours whose drive's model is 5 % heavier."""
    from robodyn_ros.sim import make_engine
    from robodyn_ros.sim.contact import ContactScene
    from robodyn_ros.sim.drive import DRIVE_FRICTION, DRIVE_GRAVITY, attach_drive
    plant = (make_engine(engine, model, DT, xml) if obstacles is None
             else ContactScene(model, DT, xml, obstacles))
    if drive:
        attach_drive(plant, DRIVE_GRAVITY | DRIVE_FRICTION, np.full(model.dof, RATE),
                     mass_scale=DRIVE_MASS_SCALE if engine == "robodyn" else 1.0)
    return plant


def _config(law, aware: bool, thresholds=None, rate=True):
    config = {"control_law": law, **LAWS[law]}
    if aware:
        config["drive_compensates"] = ["gravity", "friction"]
    if aware and rate:
        config["effort_rate_limit"] = [RATE]
    if thresholds is not None:
        config.update(collision_observer_gain=[GAIN], collision_reaction="none",
                      collision_thresholds=thresholds.static.tolist(),
                      collision_thresholds_per_velocity=thresholds.per_velocity.tolist())
    return config


def tracking(model, xml, law) -> dict:
    """The motion on the plain drive, behind the drive unaware of it, and aware of it."""
    rows = {}
    for name, drive, aware, rate, engine in (
            ("plain effort drive", False, False, False, "mujoco"),
            ("drive, no drive_compensates", True, False, False, "mujoco"),
            ("drive, drive_compensates", True, True, False, "mujoco"),
            ("drive, drive_compensates + rate", True, True, True, "mujoco"),
            (OURS, True, True, True, "robodyn")):
        progress.show(f"  tracking: {law}, {name}")
        plant = _plant(model, xml, drive, engine=engine)
        arm = Arm(model, plant, _config(law, aware, rate=rate))
        arm.motion()
        e = np.abs(np.array(arm.errors))
        rows[name] = {"max_error_rad": float(e.max()), "rms_error_rad": float(np.sqrt((e ** 2).mean())),
                      "rate_violations": plant.drive.violations if drive else None,
                      "peak_command_rate_nm_s": plant.drive.peak_rate if drive else None,
                      "rate_limited_commands": arm.loop.rate_limits.count,
                      # for the plot, step by step from the start: the largest joint error
                      # while tracking, the largest command rate over the whole run (the step too)
                      "trace": {"error": e.max(axis=1),
                                "rate": np.abs(np.diff(np.array(arm.commands), axis=0)).max(axis=1) / DT}}
    plain = rows["plain effort drive"]["max_error_rad"]
    for row in rows.values():
        row["ratio_to_plain"] = row["max_error_rad"] / plain
    return rows


def observer(model, xml, args) -> dict:
    """False alarms over free passes behind the drive, then a contact's detection delay."""
    from robodyn_ros.control.collision import child_links, fit_thresholds
    from robodyn_ros.sim.contact import Obstacle
    calibration = Arm(model, _plant(model, xml, True), {**_config("computed_torque", True),
                                                        "collision_observer_gain": [GAIN]})
    record = []
    step = calibration.step

    def recorded():
        step()
        record.append((calibration.loop.guard.residual.copy(), calibration.qd.copy()))
    calibration.step = recorded
    progress.show(f"  observer: {args.calibration_passes} calibration pass(es)")
    calibration.passes(args.calibration_passes)
    r, qd = (np.array(v) for v in zip(*record))
    thresholds = fit_thresholds(model.joint_names, r, qd, GAIN, MARGIN, floor=FLOOR)
    counting = Arm(model, _plant(model, xml, True), _config("computed_torque", True, thresholds))
    alarms = count_false_alarms(counting, args.passes, lambda arm: arm.passes(1), "observer")
    progress.show("  observer: the contact")
    # the sphere where the hand's collision cylinder is CONTACT_AT s into A to B
    probe = Arm(model, _plant(model, xml, True), _config("computed_torque", True))
    probe.go(Q_B, 2.0)
    probe.run(CONTACT_AT)
    hand = model.frame_pose(probe.q, "panda_link7") @ np.array([0.0, 0.0, 0.098, 1.0])
    plant = _plant(model, xml, True, [Obstacle(tuple(hand[:3]), "sphere", (RADIUS,))])
    arm = Arm(model, plant, _config("computed_torque", True, thresholds),
              child_links(xml, model.joint_names))
    arm.go(Q_B, 2.0)
    arm.run(2.3)
    touched = plant.first_contact
    event = arm.events[0] if arm.events else None
    delay = None if touched is None or event is None else (event.time - touched[0]) * 1e3
    return {"passes": args.passes, "false_alarms": alarms,
            "thresholds_static_nm": thresholds.static.round(3).tolist(),
            "first_contact_s": None if touched is None else touched[0],
            "touched_link": None if touched is None else touched[1],
            "detection_delay_ms": delay, "isolated_link": None if event is None else event.link,
            "rate_violations": plant.drive.violations + counting.plant.drive.violations}


def main(argv=None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    from robodyn_ros.sim.mujoco_engine import require_mujoco
    require_mujoco()
    model, xml = _model()
    started = time.monotonic()
    print(f"Panda on MuJoCo at 1 kHz behind a drive adding MuJoCo's gravity and damping, "
          f"{RATE:g} N m/s rate limit; A-B rest to rest, then B-A preempted after 1 s by B-C")
    table = {law: tracking(model, xml, law) for law in args.law}
    progress.done(f"  tracking: {len(args.law)} law(s) x 5 drives, {time.monotonic() - started:.0f} s")
    print(f"\n{'law':19s}{'drive':34s}{'max |e|':>9s}{'rms |e|':>9s}{'x plain':>8s}"
          f"{'violations':>11s}{'peak rate':>10s}{'limited':>8s}")
    print(f"{'':53s}{'(rad)':>9s}{'(rad)':>9s}{'':19s}{'(N m/s)':>10s}")
    for law, rows in table.items():
        for name, row in rows.items():
            violations = "-" if row["rate_violations"] is None else str(row["rate_violations"])
            peak = "-" if row["peak_command_rate_nm_s"] is None else \
                f"{row['peak_command_rate_nm_s']:.0f}"
            print(f"{law:19s}{name:34s}{row['max_error_rad']:>9.4f}{row['rms_error_rad']:>9.4f}"
                  f"{row['ratio_to_plain']:>8.2f}{violations:>11s}{peak:>10s}"
                  f"{row['rate_limited_commands']:>8d}")
    seen = observer(model, xml, args)
    progress.done(f"  observer: {args.calibration_passes} calibration and {args.passes} counted "
                  "passes, the contact")
    delay = seen["detection_delay_ms"]
    print(f"\nobserver behind the drive (computed_torque, drive_compensates): "
          f"{seen['false_alarms']} false alarm(s) in {seen['passes']} passes; contact with "
          f"{seen['touched_link']} detected "
          + ("never" if delay is None else f"{delay:.0f} ms after first contact")
          + f" (isolated: {seen['isolated_link']}); drive rate violations {seen['rate_violations']}")
    aware = [rows["drive, drive_compensates + rate"] for rows in table.values()]
    goals = [
        ("without drive_compensates the error grows", all(
            rows["drive, no drive_compensates"]["max_error_rad"]
            > 2 * rows["plain effort drive"]["max_error_rad"] for rows in table.values())),
        (f"with it within {RATIO_BOUND}x of the plain drive",
         all(row["ratio_to_plain"] <= RATIO_BOUND for row in aware)),
        ("0 rate violations at 1000 N m/s", all(row["rate_violations"] == 0 for row in aware)
         and seen["rate_violations"] == 0),
        ("0 false alarms", seen["false_alarms"] == 0),
        (f"contact detected within {DETECTION_BOUND_MS:g} ms",
         delay is not None and 0.0 <= delay <= DETECTION_BOUND_MS)]
    for what, met in goals:
        print(f"goal: {what}: {'met' if met else 'NOT met'}")
    print(f"wall time {time.monotonic() - started:.1f} s")
    if args.plot:
        from robodyn_ros.apps.plots import save
        print(f"plot: {save(figure(table), args.plot)}")
    if args.json:
        import json
        untraced = {law: {name: {k: v for k, v in row.items() if k != "trace"}
                          for name, row in rows.items()} for law, rows in table.items()}
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({"tracking": untraced, "observer": seen,
                       "goals": {what: met for what, met in goals}}, f, indent=2)
        print(f"results: {args.json}")
    return 0 if all(met for _, met in goals) else 1


def figure(table):
    """Per law (a column): each drive's largest joint error over the run (top, log scale) and the
    rate of change of the commands sent (bottom), the drive's limit dashed."""
    from robodyn_ros.apps import plots

    fig, axes = plots.figure(2, len(table), size=(6.5 * len(table), 7.5), sharex=True, title=(
        "Panda behind a drive that adds gravity and damping and flags more than "
        f"{RATE:g} N m/s"))
    for k, (law, rows) in enumerate(table.items()):
        for name, row in rows.items():
            error, rate = row["trace"]["error"], row["trace"]["rate"]
            axes[0, k].semilogy(DT * np.arange(len(error)), np.maximum(error, 1e-9), label=name)
            axes[1, k].plot(DT * np.arange(1, len(rate) + 1), rate, label=name)
        axes[1, k].axhline(RATE, label="the drive's limit", **plots.LIMIT)
        axes[1, k].set_yscale("symlog", linthresh=RATE / 10)
        axes[1, k].set_ylim(bottom=0.0)
        axes[0, k].set_title(law)
        axes[0, k].set_ylabel("max over joints |q_d - q| (rad)")
        axes[1, k].set_ylabel("max over joints |du/dt| (N m/s)")
        axes[1, k].set_xlabel("t (s): A to B, B to A preempted for C, then a step")
        axes[0, k].legend()
    return fig
