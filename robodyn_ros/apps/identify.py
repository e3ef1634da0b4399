"""``robodyn-ros identify BAG --urdf NOMINAL -o IDENTIFIED.urdf``: a model from a recorded run.

Reads /joint_states from a rosbag2 (MCAP or sqlite3, as ``ros2 bag record`` or ``robodyn-ros demo
--record`` writes it) and, when the drives report no effort, the controller's effort commands
(``--effort-topic``); filters and differentiates, estimates the base parameters (least squares, with
standard deviations) and the physically consistent full set, checks both on held-out data, and
writes a URDF that carries the identified model (bodies, friction, armature) for any node, with
``--json`` a report and ``--plot`` measured against predicted torques. doc/identification.md.
"""
from __future__ import annotations

import argparse
import json
import sys
import warnings
from pathlib import Path

import numpy as np

from ..identification.identify import CUTOFF_HZ, METHODS, IdentificationError, identify
from ..identification.samples import MAX_GAP
from . import identify_currents


def parse_args(argv):
    parser = argparse.ArgumentParser(prog="robodyn-ros identify", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("bag", help="rosbag2 directory (or .mcap / .db3 file) of the run")
    parser.add_argument("--urdf", required=True, help="the nominal URDF (or .xacro) of the arm")
    parser.add_argument("--root-link", help="first link of the chain (default: the URDF's root)")
    parser.add_argument("--tip-link", help="last link of the chain (default: the single leaf)")
    parser.add_argument("-o", "--output", required=True, help="the identified URDF to write")
    parser.add_argument("--json", metavar="FILE", help="write the identification report as JSON")
    parser.add_argument("--plot", metavar="FILE", help="measured and predicted torques (PNG)")
    parser.add_argument("--topic", default="/joint_states", help="joint states (default: %(default)s)")
    parser.add_argument("--effort-topic", metavar="TOPIC", help="the controller's effort commands "
                        "(Float64MultiArray), used as the torque when the joint states carry none")
    parser.add_argument("--effort-joints", nargs="+", metavar="NAME",
                        help="joint order of --effort-topic (default: the model's)")
    parser.add_argument("--holdout", metavar="BAG", help="a second recording to check the model "
                        "on (default: the last quarter of BAG)")
    parser.add_argument("--cutoff", type=float, default=CUTOFF_HZ, metavar="HZ",
                        help="low-pass cut-off of the zero-phase filter (default: %(default)g Hz)")
    parser.add_argument("--max-gap", type=float, default=MAX_GAP, metavar="S",
                        help="an interval between two stamps longer than this splits the run; shorter "
                        "ones are resampled across (default: %(default)g s)")
    parser.add_argument("--edge-trim", type=float, metavar="S", help="time taken off each end of a "
                        "stretch as the filter's edge transient (default: 8 time constants of its "
                        "slowest pole, 3.3 / cutoff s)")
    parser.add_argument("--friction", action="append", metavar="[JOINT=]FORM", help="friction form of "
                        "every joint or of one (repeatable): '+'-joined viscous, coulomb (symmetric) or "
                        "asymmetric, tanh=V (smooth Coulomb, velocity scale V), offset (default: "
                        "asymmetric). What a URDF cannot carry goes to OUTPUT's .friction.yaml")
    parser.add_argument("--effort-delay", type=float, metavar="S", help="time by which each torque "
                        "acts after its state's stamp (default: half a sample for --effort-topic, "
                        "whose commands are held until the next state; 0 for measured efforts)")
    parser.add_argument("--method", choices=METHODS, default="ols",
                        help="estimator of the base parameters (default: %(default)s)")
    parser.add_argument("--prior-weight", type=float, default=1e-6, metavar="W",
                        help="pull of the consistent estimate toward the nominal model (default: "
                        "%(default)g)")
    parser.add_argument("--payload-only", action="store_true",
                        help="the arm is known: estimate only a rigid body added to the last link")
    identify_currents.add_arguments(parser)
    return parser.parse_args(argv)


def main(argv=None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    from ..dynamics import ModelError, RobotModel
    from ..identification.bag import BagError, read_joint_states
    from ..dynamics.friction import friction_file
    from ..identification.urdf_write import write_identified_urdf

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")      # the nominal file's own complaints: not ours
            model = RobotModel.from_urdf(args.urdf, root_link=args.root_link, tip_link=args.tip_link)
        print(f"nominal model: {model!r} from {args.urdf}")
        def read(bag):
            return read_joint_states(bag, model.joint_names, topic=args.topic, effort_topic=args.effort_topic,
                                     effort_joints=args.effort_joints)

        recordings = [read(bag) for bag in [args.bag] + ([args.holdout] if args.holdout else [])]
        recordings, drives, gains = identify_currents.efforts_to_torques(
            args, model, recordings, read, friction_forms(args.friction, model.joint_names))
        identify_currents.warn_if_not_torques(model, recordings[0])
        recording = recordings[0]
        delay = args.effort_delay
        if delay is None:
            held = args.effort_topic is not None and recording.effort_source == args.effort_topic
            delay = 0.5 * float(np.median(np.diff(recording.t))) if held else 0.0
        result = identify(model, recording, holdout=recordings[1] if args.holdout else None,
                          cutoff_hz=args.cutoff, effort_delay=delay, method=args.method,
                          prior_weight=args.prior_weight, payload_only=args.payload_only,
                          friction=friction_forms(args.friction, model.joint_names), max_gap=args.max_gap,
                          edge_trim=args.edge_trim)
        Path(args.output).parent.mkdir(parents=True, exist_ok=True)
        write_identified_urdf(args.urdf, model, result.standard_parameters, args.output,
                              root_link=args.root_link, tip_link=args.tip_link)
        result.friction.save(friction_file(args.output))
        drives_written = identify_currents.write_drives(drives, gains, args.output)
    except (BagError, IdentificationError, ModelError, ValueError) as exc:
        print(f"robodyn-ros identify: {exc}", file=sys.stderr)
        return 2
    print_report(result)
    print(f"identified model written to {args.output}, its friction to {friction_file(args.output)}"
          + (f", its drives to {drives_written}" if drives_written else ""))
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps({**result.report(), **identify_currents.report(drives, gains)},
                                              indent=2))
        print(f"report: {args.json}")
    if args.plot:
        plot_torques(result, args.plot)
    return 0


def friction_forms(specs, joints):
    """{joint: form spec} of the --friction options: JOINT=FORM for one joint, FORM for the rest."""
    every, forms = None, {}
    for spec in specs or ():
        head, sep, rest = spec.partition("=")
        if sep and head != "tanh" and "+" not in head:
            forms[head] = rest
        else:
            every = spec
    return {**{joint: every for joint in joints}, **forms}


def print_report(result):
    """Samples, processing, the fit per joint (training and held out) and the base parameters with
    their spread."""
    joints = result.nominal.joint_names
    print()
    for name, account in result.accounts.items():
        print(f"{name}: {account.summary()}")
        if account.warning():
            print(f"robodyn-ros identify: warning: {name}: {account.warning()}", file=sys.stderr)
    print("processing: " + "; ".join(f"{k}: {v}" for k, v in result.processing.items()))
    print(f"cond(W_base) = {result.condition:.4g}; "
          f"states: {result.samples['training']} training, {result.samples['held-out']} held out")
    print("RMS(tau - tau_hat) / RMS(tau) per joint, and ||tau - tau_hat|| / ||tau|| stacked")
    width = max(11, 1 + max(map(len, joints)))
    print(f"{'':24s}" + "".join(f"{j:>{width}s}" for j in joints) + f"{'stacked':>{width}s}")
    for (data, estimate), fit in result.fits.items():
        print(f"{data + ' / ' + estimate:24s}" + "".join(f"{x:{width}.2e}" for x in fit.relative)
              + f"{fit.stacked:{width}.2e}")
    print(f"{'residual RMS (base)':24s}" + "".join(f"{x:{width}.3g}" for x in result.least_squares.residual_rms))
    print(f"\n{result.base.count} base parameters ({result.method.upper()}), value ± std (%):")
    for expression, value, std, relative in zip(result.base.expressions(), result.least_squares.parameters,
                                                 result.least_squares.std, result.least_squares.relative_std):
        print(f"  {value:12.5g} ± {std:9.2g} ({relative:7.2g} %)  {expression}")
    print(f"smallest pseudo-inertia eigenvalue of the consistent estimate: "
          f"{np.min(result.consistent.min_eigenvalues):.3g} (>= 0: every body a rigid body)")


def plot_torques(result, path):
    """Held-out torques measured and predicted by the identified and the nominal model, per joint."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    t, tau, predicted = result.held_out
    nominal = result.held_out_nominal
    joints = result.nominal.joint_names
    fig, axes = plt.subplots(len(joints), 1, sharex=True, figsize=(9, 1.8 * len(joints)), squeeze=False)
    for j, (ax, name) in enumerate(zip(axes[:, 0], joints)):
        ax.plot(t - t[0], tau[:, j], "k", lw=1.2, label="measured")
        ax.plot(t - t[0], predicted[:, j], "C1--", lw=1.0, label="identified")
        ax.plot(t - t[0], nominal[:, j], "C0:", lw=1.0, label="nominal")
        ax.set_ylabel(f"{name}\n(N·m or N)")
    axes[0, 0].legend(loc="upper right", ncol=3, fontsize="small")
    axes[0, 0].set_title("held-out data: joint torques measured and predicted")
    axes[-1, 0].set_xlabel("t (s)")
    fig.tight_layout()
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    print(f"plot: {path}")
