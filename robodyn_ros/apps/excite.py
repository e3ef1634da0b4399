"""``robodyn-ros excite``: an excitation trajectory for identifying an arm's dynamic parameters
(Swevers et al. 1997: finite Fourier series optimised for cond(W_base) within the joints' limits),
written as a control_msgs/action/FollowJointTrajectory goal in YAML:

  robodyn-ros excite --urdf urdf/puma560.urdf -o excite.yaml
  ros2 action send_goal /computed_torque_controller/follow_joint_trajectory \\
      control_msgs/action/FollowJointTrajectory "$(cat excite.yaml)"

The arm must stand at rest at the start pose (--start) when the goal begins; the motion ends at
rest there. Each point carries positions, velocities and accelerations, so the controller's
sampler (and a stock joint_trajectory_controller) follows a quintic through them.
"""
from __future__ import annotations

import argparse
import os
import sys

import numpy as np
import yaml

from ..control.joints import JointOrder
from ..dynamics import RobotModel
from ..dynamics.link import ModelError
from ..nodes.parameters import node_schema
from ..identification.excitation import (GOAL_RATE, LIMIT_KINDS, ExcitationError, goal_document,
                                         limit_fractions, optimise_excitation, predicted_std)

ARGUMENT_BYTES = 128 * 1024   # Linux's limit on one command-line argument (MAX_ARG_STRLEN)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="robodyn-ros excite", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--urdf", required=True, help="the arm's URDF (or .xacro)")
    parser.add_argument("--joints", nargs="+", metavar="NAME",
                        help="the goal's joint names, in the order of --start and --accel-limit "
                             "(default: the chain's order); every joint of the chain once")
    parser.add_argument("--torque-noise", type=float, default=0.1, metavar="NM",
                        help="white torque noise (N m) for the predicted σ of the base parameters "
                             "(default %(default)g: the Panda run's residual RMS, doc/identification.md)")
    parser.add_argument("--record-rate", type=float, default=1000.0, metavar="HZ",
                        help="the joint states' rate of the recording the prediction assumes "
                             "(default %(default)g)")
    parser.add_argument("--start", nargs="+", type=float, metavar="Q",
                        help="the pose it starts and ends at rest at (rad or m, --joints order; "
                             "default: the middle of each joint's range)")
    parser.add_argument("--period", type=float, default=10.0,
                        help="period T_f of the series, s (default 10: 0.1 Hz, Swevers')")
    parser.add_argument("--periods", type=int, default=1,
                        help="periods run back to back, to average the measurements period by "
                             "period (default 1)")
    parser.add_argument("--harmonics", type=int, default=5, help="harmonics L (default 5)")
    parser.add_argument("--samples", type=int, default=100,
                        help="samples M of a period where cond(W_base) and the limits are "
                             "evaluated (default 100)")
    parser.add_argument("--rate", type=float, default=GOAL_RATE,
                        help=f"points of the goal per second (default {GOAL_RATE:g}: the quintic "
                             "through each point's q, q̇, q̈ follows the series to 1e-10 rad, and "
                             "a 10 s goal fits in one command-line argument)")
    parser.add_argument("--starts", type=int, default=5,
                        help="random starts of the optimisation (default 5)")
    parser.add_argument("--seed", type=int, default=0, help="of the random starts (default 0)")
    parser.add_argument("--accel-limit", nargs="+", type=float, default=[10.0], metavar="A",
                        help="acceleration limit, one value or one per joint (rad/s² or m/s², "
                             "--joints order; URDF has none; default 10)")
    parser.add_argument("--margin", type=float, default=0.1,
                        help="safety margin: the fraction of every limit left unused (default 0.1)")
    parser.add_argument("-o", "--output", required=True, help="the goal's YAML file")
    parser.add_argument("--plot", metavar="FILE", help="draw the motion over a period and how much "
                        "of each joint's limits it uses (PNG, PDF, ...; needs matplotlib)")
    return parser


def _per_joint(parser, order: JointOrder, values, what: str) -> np.ndarray:
    """``values`` in --joints order as a chain-order vector (one value: every joint)."""
    if len(values) == 1 and what != "--start":
        return np.full(order.dof, values[0])
    if len(values) != order.dof:
        parser.error(f"{what} needs {order.dof} values, one per joint of {list(order.names)}"
                     + ("" if what == "--start" else ", or one for all")
                     + f"; got {len(values)}")
    return order.to_chain(values)


def main(argv=None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    for name, value, low in (("--periods", args.periods, 1), ("--starts", args.starts, 1),
                             ("--rate", args.rate, 1e-9)):
        if not value >= low or not np.isfinite(value):
            parser.error(f"{name} must be {'an integer >= 1' if low == 1 else 'positive'}, "
                         f"got {value}")
    if not os.path.isdir(os.path.dirname(os.path.abspath(args.output))):
        parser.error(f"-o {args.output}: its directory does not exist")
    try:
        model = RobotModel.from_urdf(args.urdf)
    except ModelError as exc:
        parser.error(str(exc))
    try:
        order = JointOrder(model.joint_names, args.joints or ())
    except ValueError as exc:
        parser.error(f"--joints: {exc}")
    start = None if args.start is None else _per_joint(parser, order, args.start, "--start")
    acceleration = _per_joint(parser, order, args.accel_limit, "--accel-limit")
    print(f"{model.name}: {model.dof} joints, {args.harmonics} harmonics of {args.period:g} s, "
          f"{args.samples} samples, {args.starts} starts (seed {args.seed})", file=sys.stderr)
    try:
        result = optimise_excitation(
            model, start, period=args.period, harmonics=args.harmonics, samples=args.samples,
            acceleration_limit=acceleration, margin=args.margin, starts=args.starts,
            seed=args.seed, progress=lambda line: print(line, file=sys.stderr, flush=True))
    except ExcitationError as exc:
        parser.error(str(exc))
    trajectory = result.series.joint_trajectory(args.rate, args.periods, order.names)
    print(report(result, trajectory, args, order, write_goal(args.output, trajectory)))
    print(uncertainty(model, result, args))
    if args.plot:
        from .plots import save
        print(f"plot: {save(usage_figure(model, result.series, acceleration, args.margin), args.plot)}")
    return 0


def usage_figure(model, series, acceleration_limit, margin):
    """The motion over one period as the fraction of each joint's limits it uses at each instant
    (position from the middle of the range, velocity, acceleration, effort: ±1 at a limit, the
    margin's bound dashed), and the largest use of each per joint."""
    from . import plots

    times, fractions = limit_fractions(model, series, acceleration_limit)
    fig, axes = plots.figure(len(LIMIT_KINDS) + 1, 1, size=(9.0, 11.0), title=(
        f"{model.name}: excitation over one period ({series.period:g} s), as fractions of the "
        "limits"))
    for kind, values, ax in zip(LIMIT_KINDS, fractions, axes[:-1, 0]):
        for j, name in enumerate(model.joint_names):
            ax.plot(times, values[:, j], label=name)
        for bound in (1.0 - margin, -(1.0 - margin)):
            ax.axhline(bound, **plots.LIMIT)
        ax.set_ylim(-1.05, 1.05)
        ax.set_ylabel(f"{kind}\n(fraction of limit)")
    axes[0, 0].legend(ncol=min(model.dof, 7), loc="upper center", bbox_to_anchor=(0.5, 1.3))
    axes[-2, 0].set_xlabel("t (s)")
    ax, width = axes[-1, 0], 0.8 / len(LIMIT_KINDS)
    positions = np.arange(model.dof)
    for k, (kind, values) in enumerate(zip(LIMIT_KINDS, fractions)):
        ax.bar(positions + (k - 1.5) * width, np.abs(values).max(axis=0), width, label=kind)
    ax.axhline(1.0 - margin, **plots.LIMIT)
    ax.set_xticks(positions, model.joint_names)
    ax.set_ylim(0.0, 1.3)
    ax.set_ylabel("largest use\n(fraction of limit)")
    ax.legend(ncol=len(LIMIT_KINDS), loc="upper center")
    return fig


def write_goal(path, trajectory) -> int:
    """``trajectory`` as a FollowJointTrajectory goal's YAML (every float in full: it reads back
    exactly) into ``path``; its size in bytes."""
    text = yaml.safe_dump(goal_document(trajectory), default_flow_style=None, sort_keys=False,
                          width=120)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return len(text.encode())


def report(result, trajectory, args, order: JointOrder, size: int) -> str:
    """What was written: cond, the limits' use per joint, the duration and the file's size."""
    count = len(trajectory.times)
    lines = [f"cond(W_base) {result.cond:.4g} (best random start {result.cond_start:.4g}) over "
             f"{args.samples} samples of a period; optimised in {result.seconds:.1f} s",
             f"largest use of each limit at 1 kHz (margin {args.margin:g}: at most "
             f"{1.0 - args.margin:.3g}; positions from the middle of the range, 1 at a limit):",
             f"  {'joint':16s}" + "".join(f"{kind:>14s}" for kind in LIMIT_KINDS)]
    for k, j in zip(order.names, order.index):
        lines.append(f"  {k:16s}" + "".join(f"{result.usage[kind][j]:14.3f}" for kind in LIMIT_KINDS))
    lines.append(f"{args.output}: {count} points over {trajectory.times[-1]:g} s "
                 f"({args.periods} x {args.period:g} s) at {args.rate:g} Hz, {size / 1024:.0f} KiB; "
                 f"start and end at rest at {np.round(trajectory.positions[0], 4).tolist()}")
    if size > ARGUMENT_BYTES:
        fits = args.rate * ARGUMENT_BYTES / size
        lines.append(f"note: {size / 1024:.0f} KiB is more than one command-line argument may hold "
                     f"on Linux ({ARGUMENT_BYTES // 1024} KiB), so \"$(cat {args.output})\" fails "
                     f"with 'Argument list too long'; about --rate {np.floor(fits):g} or less fits")
    most = next(s.default for s in node_schema("computed_torque_controller")
                if s.name == "max_trajectory_points")
    if count > most:
        lines.append(f"note: {count} points are more than computed_torque_controller's default "
                     f"max_trajectory_points ({most}): lower --rate or raise that parameter")
    return "\n".join(lines)


def uncertainty(model, result, args) -> str:
    """The base parameters' relative σ that identify would report on this motion (predicted_std)."""
    from ..dynamics.base_parameters import base_parameters

    _, relative = predicted_std(model, result.series, args.torque_noise, args.record_rate, args.periods)
    names = base_parameters(model).expressions()
    known = np.flatnonzero(np.isfinite(relative))       # a nominal value of 0 has no relative σ
    worst = known[np.argsort(relative[known])[::-1][:3]]
    return (f"predicted relative σ of the {len(known)} of {len(names)} base parameters whose nominal value is not 0, "
            f"for {args.periods} period(s) recorded at {args.record_rate:g} Hz with {args.torque_noise:g} N·m of "
            f"white torque noise: median {np.median(relative[known]):.2g} %, {int(np.sum(relative[known] > 10.0))} "
            "above 10 %; largest " + "; ".join(f"{relative[k]:.3g} % {names[k].split(' ')[0]}" for k in worst))


if __name__ == "__main__":
    sys.exit(main())
