"""``robodyn-ros demo identify``: from a model that misses 004's bound to one that meets it, over DDS.

The simulated PUMA 560 is not the controller's model (``plant_parameters``: link masses and
inertias off by 15-30 %, centres of mass moved, a 2 kg tool at the flange, armature and viscous
friction off, none of the nominal Coulomb friction). One simulator and one controller run
throughout, as on a robot; this process plays the user:

1. the 004 motion with the nominal model, measured (its error table);
2. back to the start, then an excitation trajectory (``robodyn-ros excite``: a Fourier series
   optimised for cond(W_base) within the limits) through ``~/follow_joint_trajectory``, recorded
   into an MCAP bag as ``ros2 bag record`` would;
3. ``identify`` on that bag: the identified URDF, its report and a torque plot;
4. the controller given the identified model as a user gives it one: the new URDF published on
   /robot_description, then deactivate, cleanup, configure, activate (``ros2 lifecycle set``);
5. the 004 motion again, measured. The goal: every joint back within 4.26e-4 rad at 1 kHz.

Why no Coulomb friction in the plant: computed torque cannot hold a joint on a Coulomb step at
rest — with the plant's own model (exact Coulomb compensation at the measured q̇) the loop chatters
at ~2e-2 rad on this motion —, so the plant has none and the identification has to find that the
nominal model's 25 N·m on joint 1 are not there.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import shutil
import sys
import time
import warnings
from pathlib import Path

import numpy as np

from robodyn_ros.apps.progress import progress

from .arm_loop import BOUND, CONTROLLER, KP, KV, LEAD_IN, Q_GOAL, Q_START, STARTUP_TIMEOUT, Loop, recorder
from robodyn_ros.apps.processes import (WATCHDOG, NodeProcesses, loopback_dds, param_list, plot_errors,
                                        record, run_all)

MASS_SCALE = (1.0, 1.25, 0.8, 1.3, 0.85, 1.2)          # links 2-6; link 1 has no nominal mass
COM_SHIFT = ((0.0, 0.0, 0.0), (0.02, -0.01, 0.01), (-0.01, 0.02, 0.0), (0.0, 0.01, -0.02),
             (0.01, 0.0, 0.01), (0.0, -0.01, 0.0))     # m, in each joint frame
LINK_1 = (8.0, (0.0, 0.0, 0.3), (0.25, 0.25, 0.35))   # kg, COM (m), inertia about it (kg m^2)
TOOL = (2.0, (0.0, 0.0, 0.08), (0.004, 0.004, 0.002))  # kg, COM in the tip frame, inertia
ARMATURE_SCALE, VISCOUS_SCALE = 1.1, 1.4
MOVE = 3.0            # s: the 004 motion and the return to its start
EFFORT_TOPIC = f"/{CONTROLLER}/controller_state"   # the command paired with its state by stamp
GOAL_TIME = 2         # s after the excitation's end within which its goal must be met


def plant_model(nominal):
    """The simulated arm (module docstring): the nominal PUMA with other bodies, drives and a tool.
    Link 1, massless with only a rotor inertia in the data set (no rigid body a simulator takes
    from a URDF), gets a body whose axial inertia is the rotor's."""
    links = []
    for i, link in enumerate(nominal.links):
        if i == 0:
            mass, com, inertia = LINK_1[0], np.array(LINK_1[1]), np.diag(LINK_1[2])
        else:
            mass, com = link.mass * MASS_SCALE[i], link.com + np.array(COM_SHIFT[i])
            inertia = link.inertia * MASS_SCALE[i]
        links.append(dataclasses.replace(
            link, mass=mass, com=com, inertia=inertia, armature=link.armature * ARMATURE_SCALE,
            viscous=link.viscous * VISCOUS_SCALE, coulomb_positive=0.0, coulomb_negative=0.0))
    arm = type(nominal)(links, nominal.tip, nominal.gravity, nominal.name)
    return arm.with_payload(TOOL[0], com=TOOL[1], inertia=np.diag(TOOL[2]))


def parse_args(argv):
    parser = argparse.ArgumentParser(prog="robodyn-ros demo identify", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=Path("out/identify"), metavar="DIR",
                        help="where the plant and identified URDFs, the bag, the report and the "
                        "plots go (default: %(default)s)")
    parser.add_argument("--json", metavar="FILE", help="write the results as JSON")
    parser.add_argument("--plot", metavar="FILE", help="the tracking error of the 004 motion "
                        "before and after identification (PNG; default: tracking_error.png in "
                        "--out; '' for none)")
    parser.add_argument("--period", type=float, default=10.0, metavar="S",
                        help="period of the excitation's Fourier series (default: %(default)g s)")
    parser.add_argument("--periods", type=int, default=2, metavar="K",
                        help="periods of excitation recorded (default: %(default)d; the last "
                        "quarter of the record is held out)")
    parser.add_argument("--starts", type=int, default=2, metavar="N",
                        help="random starts of the excitation's optimisation (default: %(default)d)")
    parser.add_argument("--seed", type=int, default=0, help="of the excitation's random starts")
    args = parser.parse_args(argv)
    if args.period <= 0 or args.periods < 1 or args.starts < 1:
        parser.error("--period must be > 0, --periods and --starts >= 1")
    return args


def main(argv=None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    loopback_dds()   # before anything imports rclpy
    from robodyn_ros.dynamics import RobotModel, warm_up
    from robodyn_ros.identification import standard_parameters
    from robodyn_ros.identification.excitation import optimise_excitation
    from robodyn_ros.identification.urdf_write import identified_urdf
    from robodyn_ros.plumbing.resources import find_share_file

    nominal_urdf = find_share_file("urdf/puma560.urdf")
    with warnings.catch_warnings():   # the data set's link-3 inertia is not a physical body
        warnings.simplefilter("ignore")
        nominal = RobotModel.from_urdf(nominal_urdf)
    bag = args.out / "excitation"
    if bag.exists():
        print(f"{bag} exists already (a bag is never overwritten): give another --out", file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    plant_urdf = args.out / "puma560_plant.urdf"
    plant = plant_model(nominal)
    plant_urdf.write_text(identified_urdf(nominal_urdf, nominal, standard_parameters(plant)))
    print(f"plant: {plant_urdf} (the nominal PUMA 560 with other bodies, drives and a "
          f"{TOOL[0]:g} kg tool; doc/identification.md)")
    q_start = np.radians(Q_START)
    print(f"excitation: a Fourier series of period {args.period:g} s from rest at "
          f"{tuple(Q_START)} deg, optimised for cond(W_base) ({args.starts} starts)")
    excitation = optimise_excitation(nominal, q_start, period=args.period, starts=args.starts,
                                     seed=args.seed, progress=lambda line: print(f"  {line}"))
    print(f"  cond(W_base) = {excitation.cond:.4g} (best random start {excitation.cond_start:.4g})")
    warm_up()
    started = time.monotonic()
    (result,) = run_all("robodyn_identify_", [()], lambda logs: run(
        logs, args, nominal, nominal_urdf, plant_urdf, excitation.series, bag))
    result["wall_time_s"] = time.monotonic() - started
    print_tables(result)
    plot_path = args.out / "tracking_error.png" if args.plot is None else args.plot
    if plot_path:
        plot(result["runs_data"], plot_path)
        print(f"plot: {plot_path}")
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(
            {k: v for k, v in result.items() if k not in ("runs_data",)}, indent=2))
        print(f"results: {args.json}")
    return 0 if result["identified"]["below_bound"] else 1


def run(logs, args, nominal, nominal_urdf, plant_urdf, series, bag) -> dict:
    from robodyn_ros.identification.bag import read_joint_states
    from robodyn_ros.identification.identify import identify
    from robodyn_ros.apps.identify import plot_torques, print_report
    from robodyn_ros.identification.urdf_write import write_identified_urdf

    q_start, q_goal = np.radians(Q_START), np.radians(Q_GOAL)
    out = {}
    with NodeProcesses(logs) as procs:
        procs.start("arm_simulator", "robodyn_ros.nodes.simulator", {
            "urdf_file": plant_urdf, "rate": 1000.0, "publish_rate": 1000.0,
            "initial_position": param_list(q_start), "lockstep": "true",
            # lockstep: simulated time stands still while the controller is reconfigured
            "command_timeout": WATCHDOG})
        procs.start(CONTROLLER, "robodyn_ros.nodes.controller", {
            "use_sim_time": "true", "control_law": "computed_torque", "kp": KP, "kd": KV,
            "friction": "true", "rate": 0.0, "state_timeout": WATCHDOG})
        with Loop(procs, name="identify_demo") as loop:
            user = User(loop)
            user.publish_description(Path(nominal_urdf).read_text())
            loop.wait_until_ready("nominal model")
            print("\n1. the 004 motion, controller on the nominal model")
            out["nominal"] = loop.motion(q_start, q_goal, MOVE, "nominal model", 1000.0)
            moved(out["nominal"], "nominal model")
            moved(loop.motion(q_goal, q_start, MOVE, "back to the start", 1000.0), "back to the start")
            print(f"\n2. excitation, {args.periods} x {series.period:g} s through "
                  f"~/follow_joint_trajectory, recorded into {bag}")
            user.excite(series.joint_trajectory(rate=100.0, periods=args.periods), bag)
            print("\n3. identify")
            recording = read_joint_states(bag, nominal.joint_names, effort_topic=EFFORT_TOPIC)
            # the command of state k acts from state k to k + 1: half a period after its stamp
            result = identify(nominal, recording, effort_delay=0.5e-3)
            print_report(result)
            identified_urdf = args.out / "puma560_identified.urdf"
            write_identified_urdf(nominal_urdf, nominal, result.standard_parameters, identified_urdf)
            (args.out / "identification.json").write_text(json.dumps(result.report(), indent=2))
            plot_torques(result, args.out / "torques_held_out.png")
            print(f"identified model: {identified_urdf}, report: {args.out / 'identification.json'}")
            print("\n4. the controller reconfigured with the identified model")
            user.publish_description(identified_urdf.read_text())
            user.reconfigure()
            # activate holds the measured position, which the nominal model let sag: the start first
            moved(loop.motion(loop.states[-1][2], q_start, MOVE, "to the start", 1000.0), "to the start")
            print("\n5. the 004 motion, controller on the identified model")
            out["identified"] = loop.motion(q_start, q_goal, MOVE, "identified model", 1000.0)
            moved(out["identified"], "identified model")
            out["identification"] = {k: v for k, v in result.report().items()
                                     if k in ("fit", "cond_W_base", "samples", "min_pseudo_inertia_eigenvalue")}
    logs_kept = args.out / "logs"
    logs_kept.mkdir(exist_ok=True)
    for name in procs.pids:
        shutil.copy(procs.log(name), logs_kept / f"{name}.log")
    print(f"node logs: {logs_kept}")
    out["runs_data"] = [{"label": f"{key} model", "t": out[key]["t"], "error": out[key]["error"]}
                        for key in ("nominal", "identified")]
    for key in ("nominal", "identified"):
        out[key] = {k: v for k, v in out[key].items() if k not in ("t", "error")}
    out["exit_codes"] = procs.exit_codes
    return out


def moved(result, label):
    """End a motion's progress line with its largest error."""
    progress.done(f"  {label:>16s}: done, max |q_d - q| = "
                  f"{max(result['max_error_rad'].values()):.2e} rad, real-time factor "
                  f"{result['realtime_factor']:.2f}")


class User:
    """What a user does to a running controller: publish /robot_description (latched, as
    robot_state_publisher does), send a FollowJointTrajectory goal, change its lifecycle state."""

    def __init__(self, loop):
        from lifecycle_msgs.srv import ChangeState
        from std_msgs.msg import String

        from robodyn_ros.nodes.description import DESCRIPTION_QOS

        self.loop = loop
        self._description = loop.node.create_publisher(String, "/robot_description", DESCRIPTION_QOS)
        self._change_state = loop.node.create_client(ChangeState, f"/{CONTROLLER}/change_state")

    def publish_description(self, xml):
        from std_msgs.msg import String
        self._description.publish(String(data=xml))

    def change_state(self, label):
        from lifecycle_msgs.msg import Transition
        from lifecycle_msgs.srv import ChangeState

        ids = {"configure": Transition.TRANSITION_CONFIGURE, "cleanup": Transition.TRANSITION_CLEANUP,
               "activate": Transition.TRANSITION_ACTIVATE, "deactivate": Transition.TRANSITION_DEACTIVATE}
        self.loop.spin_until(self._change_state.service_is_ready, STARTUP_TIMEOUT,
                             f"{CONTROLLER}/change_state")
        future = self._change_state.call_async(ChangeState.Request(
            transition=Transition(id=ids[label])))
        self.loop.spin_until(future.done, STARTUP_TIMEOUT, f"{label} {CONTROLLER}")
        if not future.result().success:
            raise RuntimeError(f"{CONTROLLER} refused to {label}: see its log "
                               f"{self.loop.procs.log(CONTROLLER)}")
        print(f"  {label}: ok")

    def reconfigure(self):
        """deactivate, cleanup, configure, activate: configure loads the model last published.
        The controller keeps its subscriptions and its action through cleanup (parked), so what
        this process sends once the new configuration commands reaches it."""
        commands = self.loop.commands
        for transition in ("deactivate", "cleanup", "configure", "activate"):
            self.change_state(transition)
        answered = commands[0]
        self.loop.spin_until(lambda: commands[0] > answered + 10, STARTUP_TIMEOUT,
                             "the reconfigured controller")

    def excite(self, trajectory, bag):
        """Send ``trajectory`` as a FollowJointTrajectory goal while recording the loop into
        ``bag``; back when it has ended."""
        from rclpy.action import ActionClient

        from robodyn_ros.nodes.messages import FollowJointTrajectory, trajectory_message

        bag_recorder = recorder(self.loop.node, bag)
        try:
            self.loop.spin_until(lambda: min(bag_recorder.counts.values()) > 0, STARTUP_TIMEOUT,
                                 "the recorder's topics")
            start = self.loop.now + LEAD_IN
            msg = trajectory_message(trajectory, start)
            end = start + float(trajectory.times[-1])
            client = ActionClient(self.loop.node, FollowJointTrajectory,
                                  f"/{CONTROLLER}/follow_joint_trajectory")
            self.loop.spin_until(client.server_is_ready, STARTUP_TIMEOUT, "the action server")
            goal = FollowJointTrajectory.Goal(trajectory=msg)
            # on the nominal model the arm may not settle within the default tolerances:
            # the goal then ends (aborted) instead of waiting for ever
            goal.goal_time_tolerance.sec = GOAL_TIME
            sent = client.send_goal_async(goal)
            self.loop.spin_until(sent.done, STARTUP_TIMEOUT, "the goal's acceptance")
            if not sent.result().accepted:
                raise RuntimeError("the controller rejected the excitation goal: see its log "
                                   f"{self.loop.procs.log(CONTROLLER)}")
            outcome = sent.result().get_result_async()
            record(self.loop.executor, self.loop.procs, lambda: self.loop.now, start,
                   end - start + GOAL_TIME, "excitation", LEAD_IN)
            self.loop.spin_until(outcome.done, STARTUP_TIMEOUT, "the goal's result")
            result = outcome.result().result
            progress.done(f"  {'excitation':>16s}: goal ended: error_code {result.error_code} "
                          f"{result.error_string!r}")
        finally:
            bag_recorder.close()


def plot(runs, path):
    """The 004 motion's error per joint with the nominal and the identified model, the bound
    dashed (a symmetric log scale: the two differ by three decades)."""
    panels = [(f"joint_{j + 1}", "q_d - q (rad)", BOUND) for j in range(runs[0]["error"].shape[1])]
    plot_errors(path, runs, panels, "PUMA 560 unlike its model: the 004 motion before and after "
                "identification", "t (s) from the start of the motion", symlog=[BOUND / 100] * len(panels))


def print_tables(result):
    joints = result["nominal"]["joints"]
    print(f"\nmax |q_d - q| per joint (rad) on the 004 motion at 1 kHz; bound {BOUND:.2e} rad")
    print(f"{'joint':8s}{'nominal model':>18s}{'identified model':>20s}")
    for j in joints:
        cells = [result[k]["max_error_rad"][j] for k in ("nominal", "identified")]
        print(f"{j:8s}" + "".join(f"{e:.2e} {'ok' if e < BOUND else '>!'}".rjust(w)
                                  for e, w in zip(cells, (18, 20))))
    print(f"{'all ok':8s}{'yes' if result['nominal']['below_bound'] else 'NO':>18s}"
          f"{'yes' if result['identified']['below_bound'] else 'NO':>20s}")
    print(f"wall time {result['wall_time_s']:.1f} s")
