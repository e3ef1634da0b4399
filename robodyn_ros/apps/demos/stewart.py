"""``robodyn-ros demo stewart``: the Stewart platform tracking the paper's Path I closed-loop over
real DDS (doc/stewart_closed_loop.md).

Two node processes per run (robodyn_ros.apps.processes, as the arm's demo): ``stewart_simulator``
(the platform's forward dynamics, RK4 at 1 kHz, step-locked, publishing the measured legs at the
control rate) and ``stewart_platform`` in ``control: computed_torque`` (forward kinematics of the
measured legs, the inverse dynamics at the measured state with Path I's acceleration + Kv e' + Kp e,
one force command per measurement), and this process, which sends Path I as one
MultiDOFJointTrajectory and records the simulator's true pose. Both nodes load the realisable
manipulator (config/stewart_dasgupta_realisable.yaml; the paper's inertias cannot be simulated).

The error is e = (t_d - t, log(R_d R^T)) per base axis, against the reference the controller
samples (the same knots, the same interpolation). The bound, per axis, is MARGIN times the error
the zero-order hold of a sampled law leaves with a perfect model (tracking.hold_error: M_F^-1 F'
T / (2 Kp), from the model along Path I, no simulation): the loop over DDS must be as good as the
sampled law on paper, which a lost sample or a period of extra delay (three times the error) is
not. ``--payload`` adds a run with an unmodelled payload, ``--universal-plant`` one whose legs are
exact universal joints, ``--noise`` one with noisy leg sensors.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

from robodyn_ros.apps.progress import progress

from ..processes import (
    WATCHDOG, NodeProcesses, loopback_dds, param_list, plot_errors, record, run_all, spin_until,
    write_outputs)

AXES = ("x", "y", "z", "rx", "ry", "rz")
UNITS = ("m", "m", "m", "rad", "rad", "rad")
MARGIN = 1.25         # on the hold's error: its transients at the blends' ends, the knots' interpolation
KP, KV = 100.0, 20.0
KNOT_STEP = 0.01       # s between the trajectory's knots
LEAD_IN = 0.5          # s of simulated time between sending Path I and its start
SETTLE = 0.5           # s recorded after the motion ends
STARTUP_TIMEOUT = 60.0
PLATFORM_FILE = "config/stewart_dasgupta_realisable.yaml"


def parse_args(argv):
    parser = argparse.ArgumentParser(prog="robodyn-ros demo stewart", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rate", type=float, default=100.0, metavar="HZ",
                        help="control rate (default 100 Hz); must divide the simulator's 1000 Hz")
    parser.add_argument("--until", type=float, default=None, metavar="S",
                        help="stop recording S seconds into Path I (default: its end + settling)")
    parser.add_argument("--payload", type=float, default=0.0, metavar="KG",
                        help="also run with an unmodelled point mass of KG at the platform's "
                        "centre of mass")
    parser.add_argument("--universal-plant", action="store_true",
                        help="also run with a plant of exact universal joints under the "
                        "controller's no_spin legs (doc/stewart_models.md)")
    parser.add_argument("--noise", type=float, nargs=2, default=None, metavar=("M", "M_S"),
                        help="also run with leg sensors of these standard deviations (length, "
                             "rate)")
    parser.add_argument("--plot", default="out/stewart_path_I_tracking_error.png", metavar="FILE",
                        help="error plot (PNG; '' = none)")
    parser.add_argument("--json", metavar="FILE", help="write the results as JSON")
    parser.add_argument("--record", type=Path, metavar="DIR", help="record each run into an MCAP "
                        "bag DIR/<run> (measured legs, platform pose, forces, diagnostics)")
    args = parser.parse_args(argv)
    if args.rate <= 0 or abs(1000.0 / args.rate - round(1000.0 / args.rate)) > 1e-9:
        parser.error(f"rate {args.rate:g} Hz does not divide the simulator's 1000 Hz")
    if args.payload < 0 or (args.until is not None and args.until <= 0):
        parser.error("--payload must be >= 0 and --until > 0")
    return args


def path_i():
    """Path I's knots every KNOT_STEP: times, positions, quaternions and the four rate arrays."""
    from robodyn_ros.spatial import rotations
    from robodyn_ros.apps.stewart_path import PAPER_PATHS
    path, _ = PAPER_PATHS["I"]
    s = path.sample(path.times(KNOT_STEP))
    quaternions = np.array([rotations.matrix_quaternion(R) for R in s.rotation])
    return (s.time, s.position, quaternions, s.linear_velocity, s.angular_velocity,
            s.linear_acceleration, s.angular_acceleration)


def main(argv=None) -> int:
    args = parse_args(argv)
    loopback_dds()   # before anything imports rclpy
    from robodyn_ros.plumbing.resources import find_share_file
    from robodyn_ros.stewart import StewartPlatform, warm_up
    from robodyn_ros.apps.stewart_path import PAPER_PATHS
    from robodyn_ros.stewart.tracking import hold_error
    platform_file = find_share_file(PLATFORM_FILE)
    sp = StewartPlatform.from_yaml(platform_file)
    warm_up(sp)   # fill numba's cache here, so the node processes load it
    bound = MARGIN * hold_error(sp, PAPER_PATHS["I"][0], 1.0 / args.rate, KP)
    runs = [("exact model", {})]
    if args.payload:   # at the platform's centre of mass: more mass, more inertia, same centre
        runs.append((f"+{args.payload:g} kg", {"payload_mass": args.payload,
                                              "payload_com": param_list(sp.R0)}))
    if args.universal_plant:
        runs.append(("universal plant", {"leg_model": "universal"}))
    if args.noise:
        runs.append(("noisy legs", {"length_noise": args.noise[0], "rate_noise": args.noise[1]}))
    print(f"Stewart platform, task-space computed torque on Path I (Dasgupta & Mruthyunjaya): "
          f"Kp = {KP:g}, Kv = {KV:g}, control at {args.rate:g} Hz, plant RK4 at 1 kHz\n"
          f"simulator, controller and this recorder in separate processes over DDS "
          f"(ROS_DOMAIN_ID={os.environ['ROS_DOMAIN_ID']}, discovery "
          f"{os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE']})")
    bags = {label: args.record / label.replace(" ", "_") for label, _ in runs} if args.record else {}
    taken = [str(bag) for bag in bags.values() if bag.exists()]
    if taken:
        print(f"--record: {', '.join(taken)} exist already (a bag is never overwritten)",
              file=sys.stderr)
        return 2
    knots = path_i()
    started = time.monotonic()
    results = run_all("robodyn_stewart_demo_", runs, lambda logs, label, simulator: run_once(
        label, platform_file, args.rate, knots, simulator, args.until, bound, logs,
        bags.get(label)))
    print_table(results, bound, args.rate)
    print(f"wall time {time.monotonic() - started:.1f} s")
    write_outputs(args.plot, args.json, results, plot, {
        "bound": dict(zip(AXES, bound.tolist())), "margin": MARGIN, "kp": KP, "kv": KV,
        "rate_hz": args.rate,
        "runs": [{k: v for k, v in r.items() if k not in ("t", "error", "bound")} for r in results]})
    return 0 if results[0]["below_bound"] else 1


def run_once(label, platform_file, rate, knots, simulator_params, until, bound,
             logs: Path, bag: Path | None = None) -> dict:
    from geometry_msgs.msg import PoseStamped, Transform, Twist
    from rclpy.experimental import EventsExecutor
    from rclpy.node import Node
    from rclpy.parameter import Parameter
    from std_msgs.msg import Float64MultiArray
    from trajectory_msgs.msg import MultiDOFJointTrajectory, MultiDOFJointTrajectoryPoint

    from robodyn_ros.nodes.common import stamp_parts, stamp_seconds
    from robodyn_ros.spatial import rotations
    from robodyn_ros.spatial.trajectory import PoseTrajectory

    times, positions, quaternions, *rates = knots
    duration = times[-1]
    end_of_record = duration + SETTLE if until is None else min(until, duration + SETTLE)
    started = time.monotonic()
    with NodeProcesses(logs) as procs:
        procs.start("stewart_simulator", "robodyn_ros.nodes.stewart_simulator", {
            "platform_file": platform_file, "rate": 1000.0, "publish_rate": rate,
            "initial_position": param_list(positions[0]),
            "initial_rpy": param_list([0.0, 0.0, -0.2]), "lockstep": "true",
            "command_timeout": WATCHDOG, **simulator_params})
        procs.start("stewart_platform", "robodyn_ros.nodes.stewart_platform", {
            "platform_file": platform_file, "use_sim_time": "true", "control": "computed_torque",
            "kp": KP, "kv": KV, "rate": 10.0, "measurement_timeout": 0.5})

        node = Node("stewart_demo", parameter_overrides=[Parameter("use_sim_time", value=True)])
        executor = EventsExecutor()
        executor.add_node(node)
        poses, commands = [], [0]
        node.create_subscription(
            PoseStamped, "/stewart_simulator/pose",
            lambda m: poses.append((stamp_seconds(m.header.stamp), _position(m.pose.position),
                                    _quaternion(m.pose.orientation))), 100)
        node.create_subscription(Float64MultiArray, "/stewart_platform/actuator_forces",
                                 lambda m: commands.__setitem__(0, commands[0] + 1), 100)
        publisher = node.create_publisher(MultiDOFJointTrajectory, "/stewart_platform/trajectory",
                                          10)
        recorder = None if bag is None else _recorder(node, bag, [
            ("/stewart_platform/legs_measured", "sensor_msgs/msg/JointState"),
            ("/stewart_simulator/pose", "geometry_msgs/msg/PoseStamped"),
            ("/stewart_platform/actuator_forces", "std_msgs/msg/Float64MultiArray"),
            ("/diagnostics", "diagnostic_msgs/msg/DiagnosticArray")])
        # recording: the simulator's topics heard first, so that the bag holds the whole run (the
        # controller answers nothing before it has the trajectory, sent below)
        ready = (lambda: True) if recorder is None else (lambda: all(
            count > 0 for topic, count in recorder.counts.items() if topic.startswith(
                ("/stewart_simulator", "/stewart_platform/legs"))))
        try:
            spin_until(executor, procs, lambda: len(poses) > 10 and ready()
                       and publisher.get_subscription_count() > 0, STARTUP_TIMEOUT,
                       f"{label}: waiting for the simulator and the controller")
            start = poses[-1][0] + LEAD_IN
            msg = MultiDOFJointTrajectory(joint_names=["platform"])
            msg.header.stamp.sec, msg.header.stamp.nanosec = stamp_parts(start)
            for i, tau in enumerate(times):
                point = MultiDOFJointTrajectoryPoint(transforms=[Transform()],
                                                     velocities=[Twist()], accelerations=[Twist()])
                point.time_from_start.sec, point.time_from_start.nanosec = stamp_parts(tau)
                tr = point.transforms[0]
                tr.translation.x, tr.translation.y, tr.translation.z = positions[i].tolist()
                tr.rotation.x, tr.rotation.y, tr.rotation.z, tr.rotation.w = \
                    quaternions[i].tolist()
                for twist, (linear, angular) in ((point.velocities[0], rates[0:2]),
                                                 (point.accelerations[0], rates[2:4])):
                    twist.linear.x, twist.linear.y, twist.linear.z = linear[i].tolist()
                    twist.angular.x, twist.angular.y, twist.angular.z = angular[i].tolist()
                msg.points.append(point)
            publisher.publish(msg)
            first = len(poses)
            realtime = record(executor, procs, lambda: poses[-1][0], start, end_of_record, label,
                              LEAD_IN)
        finally:
            if recorder is not None:
                recorder.close()
            node.destroy_node()
    # the controller's reference: the same knots through the same sampler
    reference = PoseTrajectory(times, positions, quaternions, *rates)
    # each simulated time once: until the first command time stands still and the state repeats
    recorded = [p for p, before in zip(poses[first:], poses[first - 1:])
                if before[0] < p[0] <= start + end_of_record]
    t = np.array([p[0] for p in recorded]) - start
    error = np.array([np.concatenate([
        reference.sample(tau).position - position,
        rotations.log_so3(reference.sample(tau).rotation @ rotations.quaternion_matrix(q).T)])
        for tau, (_, position, q) in zip(t, recorded)])
    max_error = np.abs(error).max(axis=0)
    below = bool(np.all(max_error < bound))
    wall = time.monotonic() - started
    progress.done(f"  {label:>16s}: done, {len(t)} samples, {commands[0]} commands, real-time "
                  f"factor {realtime:.2f}, {wall:.1f} s wall")
    return {"label": label, "simulator": {k: str(v) for k, v in simulator_params.items()},
            "max_error": dict(zip(AXES, max_error.tolist())), "below_bound": below,
            "samples": len(t), "commands": commands[0], "missing_samples": int(np.sum(np.round(np.diff(t) * rate) - 1)),
            "recorded_s": float(t[-1]), "realtime_factor": realtime, "wall_s": wall,
            **({"bag": str(bag)} if bag else {}),
            "t": t, "error": error, "bound": bound}


def _recorder(node, bag, topics):
    """A BagRecorder (the identify extra: rosbags, imported only when recording)."""
    from robodyn_ros.nodes.recorder import BagRecorder
    return BagRecorder(node, bag, topics)


def _position(p):
    return np.array([p.x, p.y, p.z])


def _quaternion(q):
    return np.array([q.x, q.y, q.z, q.w])


def print_table(results, bound, rate):
    width = max(14, *(len(r["label"]) + 2 for r in results))
    print(f"\nmax |e| per axis, e = (t_d - t, log(R_d R^T)) in the base frame; bound = "
          f"{MARGIN:g} x the error of the {rate:g} Hz hold with the exact model")
    print(f"{'axis':9s}{'bound':>10s}" + "".join(f"{r['label']:>{width}s}" for r in results))
    for axis, unit, b in zip(AXES, UNITS, bound):
        cells = [f"{r['max_error'][axis]:.2e} {'ok' if r['max_error'][axis] < b else '>!'}"
                 .rjust(width) for r in results]
        print(f"{axis + ' (' + unit + ')':9s}{b:10.2e}" + "".join(cells))
    print(f"{'all ok':19s}" + "".join(f"{'yes' if r['below_bound'] else 'NO':>{width}s}"
                                      for r in results))


def plot(results, path):
    bounds = results[0]["bound"]
    panels = [(f"{AXES[j]} (bound ±{bounds[j]:.1e} {UNITS[j]}, dashed)", f"error ({UNITS[j]})",
               bounds[j]) for j in range(6)]
    plot_errors(path, results, panels,
                "Stewart platform, task-space computed torque over DDS: Path I tracking error",
                "t (s) from the start of Path I", symlog=bounds if len(results) > 1 else None)


if __name__ == "__main__":
    sys.exit(main())
