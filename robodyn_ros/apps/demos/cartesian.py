"""``robodyn-ros demo cartesian [--path circle|square] [--arm NAME ...] [--law NAME ...] [--json FILE]``: a
Cartesian path followed by a task-space law over DDS, on the PUMA 560 and on a 7-joint arm.

For each arm (``puma560``: urdf/puma560.urdf; ``panda``: urdf/panda.urdf, the Franka Emika Panda)
and each law (``operational_space`` with its defaults, K_p = 100/s², K_d = 2 √K_p;
``cartesian_impedance`` with its defaults, K = 800 N/m and 80 N·m/rad, ζ = 1), one simulator and
one controller run step-locked at 1 kHz, as ``robodyn-ros demo puma`` runs them (doc/demo.md): the
simulator with the controller's exact model and no friction (``friction_scale`` 0: Coulomb friction
flips sign inside a sample while the torque is held, which no sampled law compensates), the
controller answering every state (``rate: 0``). The tip starts at rest in a configuration away
from singularities and draws a circle (``--size`` the radius) or a square (``--size`` the side) in
the base's y-z plane through its start, orientation held, over ``--duration`` s: the circle's
angle and each side of the square follow a quintic rest-to-rest profile. The path is sent once, as
a MultiDOFJointTrajectory on ``~/cartesian_trajectory``: a point every 1 ms, where the controller
samples it, with the path's twist and acceleration. This process records /joint_states and
compares the forward kinematics of each state with the path at its stamp: the table gives the
largest position error (m) and orientation error (rad, the angle of R_d Rᵀ).

The goal (issue 21): with an exact model, ``operational_space`` tracks the circle within 1e-4 m and
1e-3 rad at 1 kHz. The exit status is 0 when every ``operational_space`` run stayed within both.
An impedance tracks with an error of K⁻¹ times the force the motion needs: it is no tracking law,
its figures are there for comparison. Its statics are what it is for: after the path, this process
pushes the simulated tip (PUSH on the simulator's ``~/external_wrench``, which the controller knows
nothing of) and waits until the tip settles (it moved less than SETTLE_TOLERANCE of K⁻¹ w in the
last SETTLE_WINDOW s); the table and the JSON's ``push`` give the steady displacement from the path's
end against K⁻¹ w, and their ratio (1 for the law's Jᵀ K e at rest: K e + w = 0).
"""
from __future__ import annotations

import argparse
import bisect
import sys
import time

import numpy as np

from robodyn_ros.apps.progress import progress

from robodyn_ros.apps.demos.arm_loop import CONTROLLER, STARTUP_TIMEOUT, Loop
from robodyn_ros.apps.processes import NodeProcesses, loopback_dds, param_list, record, run_all, write_outputs

RATE = 1000.0
LAWS = ("operational_space", "cartesian_impedance")
#: urdf/ file and a start within the joint limits from which both paths stay away from
#: singularities (the smallest eigenvalue of J M⁻¹ Jᵀ above 0.03 on the PUMA) and the limits (rad)
ARMS = {"puma560": ("urdf/puma560.urdf", np.radians([0.0, -40.0, 30.0, 0.0, 45.0, 0.0])),
        "panda": ("urdf/panda.urdf", np.array([0.0, -0.3, 0.0, -2.2, 0.0, 2.0, 0.8]))}
POSITION_BOUND, ORIENTATION_BOUND = 1e-4, 1e-3   # m, rad: the goal for operational_space
LEAD_IN = 1.0   # s (simulated) between sending the path and its start
SETTLE = 0.5    # s recorded after the path ends
PLANE = np.array([[0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])   # the path's plane: base y and z
#: [f; n] (N, N·m, base frame) on the tip after an impedance's path: 10 N normal to the path's
#: plane, 12.5 mm at K = 800 N/m, well inside both arms' reach and effort limits
PUSH = np.array([10.0, 0.0, 0.0, 0.0, 0.0, 0.0])
# the settled displacement over K⁻¹w: 1 but for what settling leaves (0.9999 measured)
PUSH_RATIO_TOLERANCE = 0.01
SETTLE_WINDOW = 0.1       # s (simulated): the tip has settled when it moved less than
SETTLE_TOLERANCE = 1e-4   # this fraction of K⁻¹ w over the last window
PUSH_TIMEOUT = 10.0       # s (simulated) to settle, at most


def parse_args(argv):
    parser = argparse.ArgumentParser(prog="robodyn-ros demo cartesian", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--path", choices=("circle", "square"), default="circle",
                        help="the path (default: %(default)s)")
    parser.add_argument("--arm", nargs="+", choices=sorted(ARMS), default=sorted(ARMS),
                        help="arms to run (default: all)")
    parser.add_argument("--law", nargs="+", choices=LAWS, default=list(LAWS),
                        help="task-space laws to run (default: both)")
    parser.add_argument("--size", type=float, default=0.1, metavar="M",
                        help="the circle's radius or the square's side (default: %(default)g m)")
    parser.add_argument("--duration", type=float, default=4.0, metavar="S",
                        help="time to go round once (default: %(default)g s)")
    parser.add_argument("--json", metavar="FILE", help="write the results as JSON: runs[k] with "
                        "max_position_error_m and max_orientation_error_rad, and push for "
                        "cartesian_impedance")
    parser.add_argument("--plot", metavar="FILE", help="draw the path each run drew against the "
                        "one commanded, and the position error over time (PNG, PDF, ...)")
    args = parser.parse_args(argv)
    if not 0.0 < args.size <= 0.3 or args.duration <= 0.0:
        parser.error("--size must be in (0, 0.3] m and --duration > 0")
    return args


def quintic(u):
    """s, ds/du, d²s/du² of the rest-to-rest quintic at u in [0, 1] (clamped)."""
    u = np.clip(u, 0.0, 1.0)
    return (u ** 3 * (10 - 15 * u + 6 * u * u), 30 * u * u * (1 - u) ** 2,
            60 * u * (1 - u) * (1 - 2 * u))


def path(kind, size, duration, t):
    """Offsets from the start in the plane's axes, and their first and second derivatives, at the
    times ``t`` (s from the start; held at the ends): three (K, 2) arrays."""
    t = np.asarray(t, dtype=float)
    if kind == "circle":
        s, ds, dds = quintic(t / duration)
        theta, w, dw = 2 * np.pi * s, 2 * np.pi * ds / duration, 2 * np.pi * dds / duration ** 2
        c, n = np.cos(theta), np.sin(theta)
        p = size * np.stack([c - 1.0, n], axis=-1)          # from the start, round the centre
        v = size * w[:, None] * np.stack([-n, c], axis=-1)
        a = size * (dw[:, None] * np.stack([-n, c], axis=-1) - (w * w)[:, None] * np.stack([c, n], -1))
        return p, v, a
    corners = size * np.array([[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0], [0.0, 0.0]])
    side = duration / 4
    k = np.clip((t // side).astype(int), 0, 3)
    s, ds, dds = quintic((t - k * side) / side)
    d = corners[k + 1] - corners[k]
    return (corners[k] + s[:, None] * d, (ds / side)[:, None] * d,
            (dds / side ** 2)[:, None] * d)


def trajectory_message(kind, size, duration, start_pose, start, frame):
    """The path as a MultiDOFJointTrajectory: a point every 1/RATE s from ``start`` (simulated s)."""
    from geometry_msgs.msg import Transform, Twist
    from trajectory_msgs.msg import MultiDOFJointTrajectory, MultiDOFJointTrajectoryPoint

    from robodyn_ros.nodes.common import stamp_parts
    from robodyn_ros.spatial.rotations import matrix_quaternion

    times = np.arange(round(duration * RATE) + 1) / RATE
    p, v, a = (x @ PLANE for x in path(kind, size, duration, times))
    p = p + start_pose[:3, 3]
    x, y, z, w = matrix_quaternion(start_pose[:3, :3]).tolist()
    msg = MultiDOFJointTrajectory(joint_names=[frame])
    msg.header.stamp.sec, msg.header.stamp.nanosec = stamp_parts(start)
    for i, t in enumerate(times):
        transform, twist, acceleration = Transform(), Twist(), Twist()
        transform.translation.x, transform.translation.y, transform.translation.z = p[i].tolist()
        r = transform.rotation
        r.x, r.y, r.z, r.w = x, y, z, w
        twist.linear.x, twist.linear.y, twist.linear.z = v[i].tolist()
        acceleration.linear.x, acceleration.linear.y, acceleration.linear.z = a[i].tolist()
        point = MultiDOFJointTrajectoryPoint(transforms=[transform], velocities=[twist],
                                             accelerations=[acceleration])
        point.time_from_start.sec, point.time_from_start.nanosec = stamp_parts(t)
        msg.points.append(point)
    return msg


def main(argv=None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    loopback_dds()   # before anything imports rclpy
    from robodyn_ros.control.task_space import warm_up as warm_up_laws
    from robodyn_ros.dynamics import warm_up

    print(f"a {args.path} of {args.size:g} m in the base's y-z plane over {args.duration:g} s, "
          "orientation held; step-locked at 1 kHz over DDS, exact model, no friction")
    warm_up()        # numba's cache filled here once: the nodes load it instead of compiling
    warm_up_laws()
    started = time.monotonic()
    results = run_all("robodyn_cartesian_", [(arm, law) for arm in args.arm for law in args.law],
                      lambda logs, arm, law: run_one(logs, arm, law, args))
    wall = time.monotonic() - started
    print_table(results, args.path)
    print_push(results)
    goals = judged(results)
    ok = all(met for _, met in goals)
    print(f"wall time {wall:.1f} s; " + "; ".join(
        f"goal ({what}): {'met' if met else 'NOT met'}" for what, met in goals))
    write_outputs(args.plot, args.json, results, lambda runs, to: plot(runs, to, args), {
        "path": args.path, "size_m": args.size, "duration_s": args.duration,
        "bound_position_m": POSITION_BOUND, "bound_orientation_rad": ORIENTATION_BOUND,
        "goal_met": ok, "wall_time_s": wall,
        "runs": [{k: v for k, v in r.items() if k != "trace"} for r in results]})
    return 0 if ok else 1


def judged(results) -> list[tuple[str, bool]]:
    """Each goal the runs can be judged by, and whether it was met: operational_space's path
    bounds, cartesian_impedance's push at x_d + K⁻¹w."""
    goals = []
    if any(r["law"] == "operational_space" for r in results):
        goals.append((f"operational_space within {POSITION_BOUND:g} m and {ORIENTATION_BOUND:g} rad",
                      all(r["within_bound"] for r in results if r["law"] == "operational_space")))
    if any(r["push"] for r in results):
        goals.append((f"cartesian_impedance pushed to x_d + K⁻¹w within {PUSH_RATIO_TOLERANCE:g}",
                      all(r["push"]["settled"] and abs(r["push"]["ratio"] - 1.0) <= PUSH_RATIO_TOLERANCE
                          for r in results if r["push"])))
    return goals


def run_one(logs, arm, law, args) -> dict:
    import warnings

    from geometry_msgs.msg import WrenchStamped
    from trajectory_msgs.msg import MultiDOFJointTrajectory

    from robodyn_ros.dynamics import RobotModel
    from robodyn_ros.plumbing.resources import find_share_file
    from robodyn_ros.spatial.rotations import log_so3

    urdf = find_share_file(ARMS[arm][0])
    q0 = ARMS[arm][1]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # the PUMA data's link-3 inertia is not physical
        model = RobotModel.from_urdf(urdf)
    home = model.frame_pose(q0)
    label = f"{arm} {law}"
    started = time.monotonic()
    with NodeProcesses(logs) as procs:
        procs.start("arm_simulator", "robodyn_ros.nodes.simulator", {
            "urdf_file": urdf, "rate": RATE, "publish_rate": RATE,
            "initial_position": param_list(q0), "friction_scale": 0.0, "lockstep": "true",
            "command_timeout": 5.0})
        procs.start(CONTROLLER, "robodyn_ros.nodes.controller", {
            "urdf_file": urdf, "use_sim_time": "true", "control_law": law, "friction": "false",
            # rclpy takes the controller's executor for about a second (wall) to convert the
            # path's 4,000 points into Python objects: step-locked, the simulation waits for it
            # (within the timeouts, here and in the simulator)
            "rate": 0.0, "state_timeout": 5.0})
        with Loop(procs, name="cartesian_demo") as loop:
            publisher = loop.node.create_publisher(MultiDOFJointTrajectory,
                                                   f"/{CONTROLLER}/cartesian_trajectory", 1)
            pusher = loop.node.create_publisher(WrenchStamped, "/arm_simulator/external_wrench", 1)
            loop.wait_until_ready(label)
            loop.spin_until(lambda: publisher.get_subscription_count() > 0
                            and pusher.get_subscription_count() > 0, STARTUP_TIMEOUT,
                            f"{label}: the controller's cartesian_trajectory and the simulator's "
                            "external_wrench")
            start = round((loop.now + LEAD_IN) * RATE) / RATE
            publisher.publish(trajectory_message(args.path, args.size, args.duration, home,
                                                 start, "tip"))
            first = len(loop.states)
            realtime = record(loop.executor, procs, lambda: loop.now, start,
                              args.duration + SETTLE, label, LEAD_IN)
            states = [(t, q) for t, _, q in loop.states[first:]
                      if start <= t <= start + args.duration + SETTLE]
            push = (push_until_settled(loop, pusher, model, home[:3, 3], label)
                    if law == "cartesian_impedance" else None)
    t = np.array([s for s, _ in states]) - start
    p = path(args.path, args.size, args.duration, t)[0] @ PLANE + home[:3, 3]
    position, orientation, drawn = [], [], []
    for k, (_, q) in enumerate(states):
        pose = model.frame_pose(q)
        drawn.append(pose[:3, 3])
        position.append(np.linalg.norm(p[k] - pose[:3, 3]))
        orientation.append(np.linalg.norm(log_so3(home[:3, :3] @ pose[:3, :3].T)))
    result = {"arm": arm, "law": law, "dof": model.dof,
              "max_position_error_m": float(max(position)),
              "max_orientation_error_rad": float(max(orientation)),
              "samples": len(t), "missing_samples": int(np.sum(np.round(np.diff(t) * RATE) - 1)),
              "realtime_factor": realtime, "wall_s": time.monotonic() - started,
              "exit_codes": procs.exit_codes, "push": push,
              # in the path's plane, from the start (m): for the plot
              "trace": {"t": t, "commanded": (p - home[:3, 3]) @ PLANE.T,
                        "drawn": (np.array(drawn) - home[:3, 3]) @ PLANE.T,
                        "position_error": np.array(position)}}
    result["within_bound"] = bool(result["max_position_error_m"] < POSITION_BOUND
                                  and result["max_orientation_error_rad"] < ORIENTATION_BOUND)
    progress.done(f"  {label:>30s}: done, {len(t)} samples, real-time factor {realtime:.2f}")
    return result


def plot(results, path, args):
    """Per arm: the path drawn by each law against the one commanded, in the path's plane (top),
    and the tip's position error over time (bottom, a log scale; the goal's bound dashed)."""
    from robodyn_ros.apps import plots

    arms = list(dict.fromkeys(r["arm"] for r in results))
    fig, axes = plots.figure(2, len(arms), size=(5.5 * len(arms), 9.0), title=(
        f"a {args.path} of {args.size:g} m over {args.duration:g} s: the path drawn and commanded"))
    for k, arm in enumerate(arms):
        runs = [r for r in results if r["arm"] == arm]
        top, bottom = axes[0, k], axes[1, k]
        top.plot(*runs[0]["trace"]["commanded"].T, label="commanded", **plots.REFERENCE)
        for r in runs:
            top.plot(*r["trace"]["drawn"].T, "--", label=f"drawn: {r['law']}")
            bottom.semilogy(r["trace"]["t"], np.maximum(r["trace"]["position_error"], 1e-9),
                            label=r["law"])
        bottom.axhline(POSITION_BOUND, label="operational_space's bound", **plots.LIMIT)
        top.set_aspect("equal", adjustable="datalim")
        top.set_title(arm)
        top.set_xlabel("base y from the start (m)")
        top.set_ylabel("base z from the start (m)")
        bottom.set_xlabel("t (s) from the start of the path")
        bottom.set_ylabel("|p_d - p| (m)")
        top.legend()
        bottom.legend()
    plots.save(fig, path)


def push_until_settled(loop, publisher, model, target, label) -> dict:
    """PUSH on the tip (``publisher``: the simulator's ~/external_wrench) until it settles, and the
    tip's steady displacement from ``target`` (the path's end, where it rests unpushed) against
    K⁻¹ w, K the law's default translational stiffness."""
    from geometry_msgs.msg import WrenchStamped

    from robodyn_ros.control.task_space import CartesianImpedance

    msg = WrenchStamped()   # frame_id empty: the base frame
    f, n = msg.wrench.force, msg.wrench.torque
    f.x, f.y, f.z, n.x, n.y, n.z = PUSH.tolist()
    publisher.publish(msg)
    pushed_at = loop.now
    compliance = PUSH[:3] / CartesianImpedance.defaults["stiffness"][0]   # K⁻¹ w

    def tip(state):
        return model.frame_pose(state[2])[:3, 3]

    def settled():
        t = loop.now
        if t < pushed_at + 2 * SETTLE_WINDOW:   # a window wholly after the push
            return False
        earlier = loop.states[bisect.bisect_left(loop.states, t - SETTLE_WINDOW, key=lambda s: s[0])]
        return (np.linalg.norm(tip(loop.states[-1]) - tip(earlier))
                < SETTLE_TOLERANCE * np.linalg.norm(compliance))

    loop.spin_until(lambda: settled() or loop.now > pushed_at + PUSH_TIMEOUT,
                    10 * PUSH_TIMEOUT + 30, f"{label}: the push")
    displacement = tip(loop.states[-1]) - target
    return {"wrench": PUSH.tolist(), "displacement_m": displacement.tolist(),
            "k_inverse_w_m": compliance.tolist(),
            "ratio": float(displacement @ compliance / (compliance @ compliance)),
            "settled": bool(settled()), "settle_time_s": loop.now - pushed_at}


def print_table(results, kind):
    print(f"\n{kind}: largest error against the path (bounds {POSITION_BOUND:g} m, "
          f"{ORIENTATION_BOUND:g} rad for operational_space)")
    print(f"{'arm':10s}{'law':22s}{'position (m)':>15s}{'orientation (rad)':>20s}{'samples':>10s}"
          f"{'missing':>9s}")
    for r in results:
        mark = ("  ok" if r["within_bound"] else "  >!") if r["law"] == "operational_space" else ""
        print(f"{r['arm']:10s}{r['law']:22s}{r['max_position_error_m']:>15.2e}"
              f"{r['max_orientation_error_rad']:>20.2e}{r['samples']:>10d}"
              f"{r['missing_samples']:>9d}{mark}")


def print_push(results):
    pushed = [r for r in results if r["push"]]
    if not pushed:
        return
    print(f"\npush: {PUSH[:3].tolist()} N on the tip (base frame) of cartesian_impedance, until it "
          "settles")
    print(f"{'arm':10s}{'displacement (m)':>18s}{'K⁻¹ w (m)':>12s}{'ratio':>9s}"
          f"{'settled after (s)':>19s}")
    for r in pushed:
        p = r["push"]
        along = np.asarray(p["k_inverse_w_m"]) / np.linalg.norm(p["k_inverse_w_m"])
        print(f"{r['arm']:10s}{np.asarray(p['displacement_m']) @ along:>18.4e}"
              f"{np.linalg.norm(p['k_inverse_w_m']):>12.4e}{p['ratio']:>9.4f}"
              f"{p['settle_time_s']:>19.2f}{'' if p['settled'] else '  not settled'}")


if __name__ == "__main__":
    sys.exit(main())
