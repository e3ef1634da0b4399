"""``robodyn-ros demo puma``: the PUMA 560 computed-torque experiment of 004 §5 over real DDS.

Three processes per run, started without the launch system: ``arm_simulator`` and
``computed_torque_controller`` (each ``python -m`` of its node module, so each has its own
interpreter and GIL and every state and command crosses DDS on loopback, as it would between a
robot driver and a controller) and this process, which publishes the trajectory and records the
joint states.

The experiment (004 §5): Kp = 100, Kv = 20 on every joint, from (90, 0, 90, 0, 0, 0)° to
(45, 30, 0, 45, 60, 90)°; the paper samples every 0.01 s and reports errors below one 12-bit A/D
step, 4.26e-4 rad. It states neither the duration nor the profile of the motion; we use a
quintic rest-to-rest in joint space over 3 s (``--duration``), which is what the controller's
trajectory sampler makes of one JointTrajectory point with zero velocity and acceleration.
The arm model is 004's: rigid bodies plus the motor armature (Jm G²), no friction — the PUMA
data set's Coulomb friction is switched off in the simulator and in the controller alike.

Sampling: the simulator integrates RK4 at 1 kHz and publishes the state at the controller's
rate; the controller answers each state with one command (``rate: 0``), which the simulator
holds until its next sample — read, compute, write, as a ros2_control loop does, and the zero-
order hold of the paper. The simulator's clock (/clock) is the time base of every node and the
simulator runs step-locked (``lockstep``): it integrates the next period only once the command
answering the last state has arrived. A late answer (this is a 2-core machine running three
Python processes at 1 kHz) then slows the run down instead of silently applying the previous
command for one more period, which would add a loop delay the paper's setting does not have.
The real-time factor of each run is printed.

The plant is the simulator's ``--engine``: ``robodyn`` (our own forward dynamics, the model the
controller uses) or ``mujoco`` (MuJoCo on the same URDF, a rigid-body engine nobody here wrote;
``pip install robodyn_ros[mujoco]``).
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

from robodyn_ros.apps.progress import progress

from robodyn_ros.apps.demos.arm_loop import BOUND, CONTROLLER, KP, KV, Q_GOAL, Q_START, Loop
from ..processes import WATCHDOG, NodeProcesses, loopback_dds, param_list, plot_errors, run_all, write_outputs
from robodyn_ros.sim import ENGINES

def parse_args(argv):
    parser = argparse.ArgumentParser(prog="robodyn-ros demo puma", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rates", type=float, nargs="+", default=[1000.0, 100.0],
                        metavar="HZ", help="controller rates to run (default: 1000 100); each "
                        "must divide the simulator's 1000 Hz")
    parser.add_argument("--payload", type=float, default=0.0, metavar="KG",
                        help="also run every rate with an unmodelled payload of KG at the tip")
    parser.add_argument("--duration", type=float, default=3.0, metavar="S",
                        help="duration of the quintic motion (default 3 s)")
    parser.add_argument("--plot", default="out/puma560_tracking_error.png", metavar="FILE",
                        help="error plot (PNG; '' = none)")
    parser.add_argument("--json", metavar="FILE", help="write the results as JSON")
    parser.add_argument("--engine", choices=ENGINES, default="robodyn",
                        help="the simulator's engine (default: robodyn; mujoco needs the extra)")
    parser.add_argument("--urdf", metavar="FILE", help="robot description (default: the "
                        "package's urdf/puma560.urdf)")
    parser.add_argument("--record", type=Path, metavar="DIR", help="record each run into an "
                        "MCAP bag DIR/<run> (joint states, effort commands, controller state, "
                        "diagnostics)")
    args = parser.parse_args(argv)
    for rate in args.rates:
        if rate <= 0 or abs(1000.0 / rate - round(1000.0 / rate)) > 1e-9:
            parser.error(f"rate {rate:g} Hz does not divide the simulator's 1000 Hz")
    if args.payload < 0 or args.duration <= 0:
        parser.error("--payload must be >= 0 and --duration > 0")
    return args


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    loopback_dds()   # before anything imports rclpy
    args = parse_args(argv)
    if args.urdf:
        urdf = Path(args.urdf).resolve()
    else:
        from robodyn_ros.plumbing.resources import find_share_file
        urdf = find_share_file("urdf/puma560.urdf")
    runs = [(rate, payload) for payload in ([0.0, args.payload] if args.payload else [0.0])
            for rate in args.rates]
    taken = [str(_bag_path(args.record, *run)) for run in runs
             if args.record and _bag_path(args.record, *run).exists()]
    if taken:
        print(f"--record: {', '.join(taken)} exist already (a bag is never overwritten)",
              file=sys.stderr)
        return 2
    print(f"PUMA 560 computed-torque control, 004 §5: Kp = {KP:g}, Kv = {KV:g}, "
          f"{_degrees(Q_START)} -> {_degrees(Q_GOAL)} deg, quintic over {args.duration:g} s\n"
          f"plant: the simulator's {args.engine} engine; "
          f"simulator, controller and this recorder in separate processes over DDS "
          f"(ROS_DOMAIN_ID={os.environ.get('ROS_DOMAIN_ID', '0')}, "
          f"discovery {os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE']})")
    # fill numba's cache once here, so the node processes load it instead of compiling side by side
    from robodyn_ros.dynamics import warm_up
    warm_up()
    started = time.monotonic()
    results = run_all("robodyn_demo_", runs, lambda logs, rate, payload: run_once(
        urdf, rate, payload, args.duration, logs, engine=args.engine,
        bag=_bag_path(args.record, rate, payload) if args.record else None))
    wall = time.monotonic() - started
    print_table(results)
    print(f"wall time {wall:.1f} s")
    if args.record:
        print("bags: " + ", ".join(r["bag"] for r in results))
    write_outputs(args.plot, args.json, results, plot, {
        "bound_rad": BOUND, "engine": args.engine, "kp": KP, "kv": KV,
        "start_deg": Q_START, "goal_deg": Q_GOAL, "duration_s": args.duration, "wall_time_s": wall,
        "runs": [{k: v for k, v in r.items() if k not in ("t", "error")} for r in results]})
    nominal_ok = all(r["below_bound"] for r in results if r["payload_kg"] == 0.0)
    return 0 if nominal_ok else 1


def _degrees(values):
    return "(" + ", ".join(f"{v:g}" for v in values) + ")"


def _label(rate, payload):
    name = f"{rate / 1000:g} kHz" if rate >= 1000 else f"{rate:g} Hz"
    return name + (f" +{payload:g} kg" if payload else "")


def _bag_path(directory: Path, rate, payload) -> Path:
    return directory / _label(rate, payload).replace(" ", "_")


def run_once(urdf: Path, rate: float, payload: float, duration: float, logs: Path,
             engine: str = "robodyn", bag: Path | None = None) -> dict:
    label = _label(rate, payload)
    q_start, q_goal = np.radians(Q_START), np.radians(Q_GOAL)
    started = time.monotonic()
    with NodeProcesses(logs) as procs:
        procs.start("arm_simulator", "robodyn_ros.nodes.simulator", {
            "urdf_file": urdf, "rate": 1000.0, "publish_rate": float(rate),
            "initial_position": param_list(q_start), "payload_mass": float(payload),
            "friction_scale": 0.0, "lockstep": "true", "command_timeout": WATCHDOG,
            "engine": engine})
        procs.start(CONTROLLER, "robodyn_ros.nodes.controller", {
            "urdf_file": urdf, "use_sim_time": "true", "control_law": "computed_torque",
            "kp": KP, "kd": KV, "friction": "false", "rate": 0.0, "state_timeout": WATCHDOG})
        with Loop(procs, bag) as loop:
            loop.wait_until_ready(label)
            result = loop.motion(q_start, q_goal, duration, label, rate)
    wall = time.monotonic() - started
    progress.done(f"  {label:>16s}: done, {result['samples']} samples, max |e| = "
                  f"{max(result['max_error_rad'].values()):.2e} rad, "
                  f"real-time factor {result['realtime_factor']:.2f}, {wall:.1f} s wall")
    return {"label": label, "rate_hz": rate, "payload_kg": payload, **result, "wall_s": wall,
            **({"bag": str(bag)} if bag else {})}


def print_table(results):
    joints = results[0]["joints"]
    width = max(14, *(len(r["label"]) + 2 for r in results))
    print(f"\nmax |q_d - q| per joint (rad); bound {BOUND:.2e} rad = one 12-bit A/D step (004)")
    print(f"{'joint':8s}" + "".join(f"{r['label']:>{width}s}" for r in results))
    for j in joints:
        cells = []
        for r in results:
            e = r["max_error_rad"][j]
            cells.append(f"{e:.2e} {'ok' if e < BOUND else '>!'}".rjust(width))
        print(f"{j:8s}" + "".join(cells))
    print(f"{'all ok':8s}" + "".join(f"{'yes' if r['below_bound'] else 'NO':>{width}s}"
                                     for r in results))


def plot(results, path):
    panels = [(f"{name} (bound ±{BOUND:.2e} rad, dashed)", "q_d - q (rad)", BOUND)
              for name in results[0]["joints"]]
    plot_errors(path, results, panels,
                "PUMA 560, computed-torque control (004 §5, cf. Figs 3-8): position error",
                "t (s) from the start of the motion",
                symlog=[BOUND / 10] * 6 if any(r["payload_kg"] for r in results) else None)


if __name__ == "__main__":
    sys.exit(main())
