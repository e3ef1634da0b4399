"""``robodyn-ros identify --validate BAG...``: the identified model's score on other runs, printed
and plotted (the library's ``identification.validation`` does the work)."""
from __future__ import annotations

from pathlib import Path


def validate_runs(args, result, effort_delay, drives):
    """The ``Validation`` of ``result`` on the --validate bags, read as the identified run was
    (topic, effort topic, its currents made torques by ``drives``) and, with --prediction-topic,
    the robot controller's own prediction beside ours (in the unit of the measured efforts, made
    torques alike); scored in the efforts' own unit (a current-measured joint's in A);
    ``effort_delay(args, recording)``: the delay of each run's efforts."""
    import dataclasses

    import numpy as np

    from ..identification.bag import read_joint_states
    from ..identification.validation import read_prediction, validate
    from .identify_currents import torques_of

    joints = result.nominal.joint_names
    effort = {"effort_topic": args.effort_topic, "effort_joints": args.effort_joints}
    if args.prediction_topic:
        pairs = [read_prediction(bag, joints, args.topic, args.prediction_topic, **effort) for bag in args.validate]
        recordings, makers = [p[0] for p in pairs], [p[1] for p in pairs]
    else:
        recordings = [read_joint_states(bag, joints, topic=args.topic, **effort) for bag in args.validate]
        makers = None
    if drives.measures_currents.any():
        def torques(recording):
            return dataclasses.replace(recording, effort=torques_of(drives, recording, result.nominal))
        recordings, makers = [torques(r) for r in recordings], makers and [torques(m) for m in makers]
    return validate(result, recordings, makers, maker=args.prediction_name,
                    effort_delay=[effort_delay(args, recording) for recording in recordings], edge_trim=args.edge_trim,
                    scale=np.where(drives.measures_currents, drives.gains, 1.0))


def print_validation(validation):
    """ε in % per run and pooled, stacked and per joint, one row per predictor."""
    joints = validation.joints
    width = max(9, 1 + max(map(len, joints)))
    print("\nvalidation runs: ||tau - tau_hat|| / ||tau|| stacked and RMS(tau - tau_hat) / RMS(tau) per joint, in %")
    print(f"{'':36s}{'stacked':>{width}s}" + "".join(f"{j:>{width}s}" for j in joints))
    rows = [(f"{k + 1}: {Path(run.source).name}", run.fits) for k, run in enumerate(validation.runs)]
    if len(validation.runs) > 1:
        rows.append(("pooled", validation.pooled))
    for label, fits in rows:
        for name, fit in fits.items():
            print(f"{(label + ' / ' + name)[:35]:36s}{100 * fit.stacked:{width}.2f}"
                  + "".join(f"{100 * x:{width}.2f}" for x in fit.relative))


def plot_validation(validation, path):
    """``validation_figure`` written to ``path``."""
    from .plots import save

    print(f"validation plot: {save(validation_figure(validation), path)}")


def validation_figure(validation):
    """The score of each predictor per joint (pooled) above the efforts of every run, measured and
    predicted, one panel per joint (the package's plot style, ``apps.plots``)."""
    import numpy as np

    from .plots import REFERENCE, figure

    joints, names = validation.joints, list(validation.pooled)
    fig, axes = figure(len(joints) + 1, 1, size=(10, 1.8 * (len(joints) + 1)),
                       title=f"validation runs ({len(validation.runs)}): efforts measured and predicted")
    ax = axes[0, 0]
    x, width = np.arange(len(joints) + 1), 0.8 / len(names)
    for k, name in enumerate(names):
        fit = validation.pooled[name]
        ax.bar(x + (k - (len(names) - 1) / 2) * width, 100 * np.append(fit.stacked, fit.relative), width, label=name)
    ax.set_xticks(x, ["stacked"] + joints)
    ax.set_yscale("log")   # the nominal model's errors are often a hundred times the identified one's
    ax.set_ylabel("error, pooled (%)")
    ax.legend(ncol=len(names))
    start = 0.0
    for k, run in enumerate(validation.runs):
        t = run.t - run.t[0] + start
        for j, ax in enumerate(axes[1:, 0]):
            ax.plot(t, run.measured[:, j], **REFERENCE, label="measured" if k == 0 else None)
            for c, name in enumerate(names):
                ax.plot(t, run.predicted[name][:, j], color=f"C{c}", ls="--", label=name if k == 0 else None)
            if k:
                ax.axvline(start, color="0.6", lw=0.8)
        start = t[-1] + 0.5
    for j, ax in enumerate(axes[1:, 0]):
        ax.set_ylabel(f"{joints[j]}\n(N m, N or A)")
    axes[1, 0].legend(loc="upper right", ncol=len(names) + 1)
    axes[-1, 0].set_xlabel("t (s), the runs one after the other")
    return fig
