"""A model from a recorded run: robodyn-ros identify BAG --urdf FILE -o FILE

Reads /joint_states from a rosbag2 (MCAP or sqlite3, as ros2 bag record or robodyn-ros demo puma
--record writes it) and, when the drives report no effort, the controller's effort commands
(--effort-topic); filters and differentiates, estimates the base parameters (least squares, with
standard deviations) and the physically consistent full set, checks both on held-out data, and
writes a copy of the nominal URDF that carries the identified model (bodies, friction, armature)
for any node, with --json a report and --plot measured against predicted torques
(doc/identification.md).
"""
from __future__ import annotations

import argparse
import json
import sys
import warnings
from pathlib import Path

import numpy as np

from ..dynamics.friction import REST_BAND
from ..identification.identify import METHODS, IdentificationError, identify
from . import identify_currents
from .commands import refuse
from .identify_validation import plot_validation, print_validation, validate_runs


def parse_args(argv):
    parser = argparse.ArgumentParser(prog="robodyn-ros identify", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("bag", help="rosbag2 directory (or .mcap / .db3 file) of the run")
    parser.add_argument("--urdf", required=True, metavar="FILE",
                        help="the nominal URDF (or .xacro) of the arm")
    parser.add_argument("--root-link", metavar="LINK",
                        help="first link of the chain (default: the URDF's root)")
    parser.add_argument("--tip-link", metavar="LINK",
                        help="last link of the chain (default: the single leaf)")
    parser.add_argument("-o", "--output", required=True, metavar="FILE",
                        help="the identified URDF to write (a copy of the nominal one with the "
                        "identified model in it)")
    parser.add_argument("--json", metavar="FILE", help="write the identification report as JSON")
    parser.add_argument("--plot", metavar="FILE", help="measured and predicted torques (PNG)")
    parser.add_argument("--topic", default="/joint_states", help="joint states (default: %(default)s)")
    parser.add_argument("--effort-topic", metavar="TOPIC", help="the torques when the joint "
                        "states carry none: computed_torque_controller's controller_state (each "
                        "command paired with its state by stamp: record this one), or a "
                        "controller's Float64MultiArray command topic (paired by arrival)")
    parser.add_argument("--effort-joints", nargs="+", metavar="NAME",
                        help="joint order of --effort-topic (default: the model's)")
    parser.add_argument("--holdout", metavar="BAG", help="a second recording to check the model "
                        "on (default: the last quarter of BAG)")
    parser.add_argument("--cutoff", type=cutoff, default="auto", metavar="HZ|auto",
                        help="low-pass cut-off of the zero-phase filter; 'auto' tries cut-offs from twice "
                        "to forty times the motion's bandwidth (at most a fifth of the sample rate) and "
                        "keeps the one that predicts the end of the training data best (default: auto)")
    parser.add_argument("--max-gap", type=float, metavar="S",
                        help="an interval between two stamps longer than this splits the run; shorter "
                        "ones are resampled across (default: what a straight line bridges within 1 %% "
                        "at the motion's bandwidth, at least four sample intervals)")
    parser.add_argument("--edge-trim", type=float, metavar="S", help="time taken off each end of a "
                        "stretch as the filter's edge transient (default: 8 time constants of its "
                        "slowest pole, 3.3 / cutoff s)")
    parser.add_argument("--friction", action="append", metavar="[JOINT=]FORM", help="friction form of "
                        "every joint or of one (repeatable): '+'-joined viscous, coulomb (symmetric) or "
                        "asymmetric, the Coulomb term's shape band=V (linear within |velocity| < V, as "
                        "gravity compensation ramps it; band=0.01 unless another shape is named), sign or "
                        "tanh=V, and offset (default: asymmetric+band=0.01). What a URDF cannot carry goes "
                        "to the friction file beside the output: NAME.friction.yaml for NAME.urdf")
    parser.add_argument("--rest-band", type=float, default=REST_BAND, metavar="V",
                        help="a joint's samples slower than V (rad/s or m/s) are at rest, their friction "
                        "unknown: they are not fitted (Karnopp 1985; 0 fits every sample; default: %(default)g)")
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
    validation = parser.add_argument_group("validation runs")
    validation.add_argument("--validate", nargs="+", metavar="BAG", help="other runs to score the identified "
                            "model on, each read and processed as BAG is: the error per run, pooled and per joint")
    validation.add_argument("--prediction-topic", metavar="TOPIC", help="a topic of the validation runs "
                            "that carries the robot controller's own prediction of the efforts, in their unit "
                            "(e.g. a UR's target current written as JointState efforts), scored beside the "
                            "identified model's")
    validation.add_argument("--prediction-name", default="maker", metavar="NAME",
                            help="what to call that prediction in the table (default: %(default)s)")
    validation.add_argument("--validation-plot", metavar="FILE", help="the validation scores and efforts (PNG)")
    return parser.parse_args(argv)


def main(argv=None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    from ..dynamics import ModelError, RobotModel
    from ..dynamics.urdf import TipChosen
    from ..identification.bag import BagError, read_joint_states
    from ..dynamics.friction import friction_file
    from ..identification.urdf_write import write_identified_urdf

    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")      # the nominal file's own complaints: not ours
            model = RobotModel.from_urdf(args.urdf, root_link=args.root_link, tip_link=args.tip_link)
        print(f"nominal model: {model!r} from {args.urdf}")
        for tip in (w.message for w in caught if issubclass(w.category, TipChosen)):
            print(tip)

        def read(bag):
            return read_joint_states(bag, model.joint_names, topic=args.topic, effort_topic=args.effort_topic,
                                     effort_joints=args.effort_joints)

        recordings = [read(bag) for bag in [args.bag] + ([args.holdout] if args.holdout else [])]
        recordings, drives, gains = identify_currents.efforts_to_torques(
            args, model, recordings, read, friction_forms(args.friction, model.joint_names))
        identify_currents.warn_if_not_torques(model, recordings[0])
        recording = recordings[0]
        result = identify(model, recording, holdout=recordings[1] if args.holdout else None,
                          cutoff_hz=args.cutoff, effort_delay=effort_delay(args, recording), method=args.method,
                          prior_weight=args.prior_weight, payload_only=args.payload_only,
                          friction=friction_forms(args.friction, model.joint_names), max_gap=args.max_gap,
                          edge_trim=args.edge_trim, rest_band=args.rest_band)
        Path(args.output).parent.mkdir(parents=True, exist_ok=True)
        write_identified_urdf(args.urdf, model, result.standard_parameters, args.output,
                              root_link=args.root_link, tip_link=args.tip_link)
        result.friction.save(friction_file(args.output))
        drives_written = identify_currents.write_drives(drives, gains, args.output)
        validation = validate_runs(args, result, effort_delay, drives) if args.validate else None
    except (BagError, IdentificationError, ModelError, ValueError) as exc:
        return refuse("robodyn-ros identify", exc)
    print_report(result)
    print(f"identified model written to {args.output} ({args.urdf} is unchanged)"
          + (f", its drives to {drives_written}" if drives_written else ""))
    print(friction_note(friction_file(args.output)))
    if validation:
        print_validation(validation)
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        report = {**result.report(), **identify_currents.report(drives, gains),
                  **({"validation": validation.report()} if validation else {})}
        Path(args.json).write_text(json.dumps(report, indent=2))
        print(f"report: {args.json}")
    if args.plot:
        plot_torques(result, args.plot)
    if validation and args.validation_plot:
        plot_validation(validation, args.validation_plot)
    return 0


def friction_note(path) -> str:
    """Where the whole friction law went and who reads it: the nodes whose schema has a
    friction_file parameter (read from the schemas, so that the line follows them)."""
    from ..nodes.parameters import NODE_SCHEMAS, node_schema
    readers = [node for node in NODE_SCHEMAS
               if any(spec.name == "friction_file" for spec in node_schema(node))]
    return (f"its friction, the whole law (smooth Coulomb, offsets), to {path}: read by "
            f"{', '.join(readers) or 'no node'} (parameter friction_file); every other reader of the "
            "URDF takes its friction as a sign law, without offsets")


def effort_delay(args, recording):
    """--effort-delay, or half a sample for efforts that are held commands (its help)."""
    if args.effort_delay is not None:
        return args.effort_delay
    held = args.effort_topic is not None and recording.effort_source == args.effort_topic
    return 0.5 * float(np.median(np.diff(recording.t))) if held else 0.0


def cutoff(text):
    """--cutoff's value: 'auto' or a frequency in Hz."""
    if text == "auto":
        return text
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is neither a frequency in Hz nor 'auto'") from None


def friction_forms(specs, joints):
    """{joint: form spec} of the --friction options: JOINT=FORM for one joint, FORM for the rest."""
    every, forms = None, {}
    for spec in specs or ():
        head, sep, rest = spec.partition("=")
        if sep and head not in ("tanh", "band") and "+" not in head:
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
    print("RMS(tau - tau_hat) / RMS(tau) per joint, and ||tau - tau_hat|| / ||tau|| over all "
          "joints, in %")
    width = max(11, 1 + max(map(len, joints)))
    print(f"{'':24s}" + "".join(f"{j:>{width}s}" for j in joints) + f"{'all joints':>{width}s}")
    for (data, estimate), fit in result.fits.items():
        print(f"{data + ' / ' + estimate:24s}" + "".join(f"{100 * x:{width}.3g}" for x in fit.relative)
              + f"{100 * fit.stacked:{width}.3g}")
    print(f"{'residual RMS (base)':24s}" + "".join(f"{x:{width}.3g}" for x in result.least_squares.residual_rms))
    print(f"\n{result.base.count} base parameters ({result.method.upper()}), value ± std (%):")
    for expression, value, std, relative in zip(result.base.expressions(), result.least_squares.parameters,
                                                 result.least_squares.std, result.least_squares.relative_std):
        print(f"  {value:12.5g} ± {std:9.2g} ({relative:7.2g} %)  {expression}")
    print(f"smallest pseudo-inertia eigenvalue of the consistent estimate: "
          f"{np.min(result.consistent.min_eigenvalues):.3g} (>= 0: every body a rigid body)")


def plot_torques(result, path):
    """``torques_figure`` written to ``path``."""
    from .plots import save

    print(f"plot: {save(torques_figure(result), path)}")


def torques_figure(result):
    """Held-out torques measured and predicted by the identified and the nominal model, per joint
    (the package's plot style, ``apps.plots``)."""
    from .plots import REFERENCE, figure

    t, tau, predicted = result.held_out
    nominal = result.held_out_nominal
    joints = result.nominal.joint_names
    fig, axes = figure(len(joints), 1, size=(9, 1.8 * len(joints)), sharex=True,
                       title="held-out data: joint torques measured and predicted")
    for j, (ax, name) in enumerate(zip(axes[:, 0], joints)):
        ax.plot(t - t[0], tau[:, j], **REFERENCE, label="measured")
        ax.plot(t - t[0], predicted[:, j], color="C0", ls="--", label="identified")
        ax.plot(t - t[0], nominal[:, j], color="C1", ls=":", label="nominal")
        ax.set_ylabel(f"{name}\n(N m or N)")
    axes[0, 0].legend(loc="upper right", ncol=3)
    axes[-1, 0].set_xlabel("t (s)")
    return fig
