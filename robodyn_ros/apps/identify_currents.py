"""``robodyn-ros identify``'s options for arms whose joints report motor currents
(doc/identification.md, "Arms that measure currents"): what each joint's effort is and its drive
gain (``--drive-gains``), or the gains identified from a run with a known payload
(``--payload-run``, ``--payload-mass``, ``--payload-com``); the runs' currents made torques before
the identification, and the drives written beside the identified URDF.
"""
from __future__ import annotations

import dataclasses
import sys

import numpy as np


def add_arguments(parser):
    group = parser.add_argument_group("arms that measure currents")
    group.add_argument("--drive-gains", metavar="FILE|G1,...,Gn", help="what each joint's effort measures "
                       "and its drive gain (N m/A): a drives file (config/ur_drives.yaml for ur_robot_driver's "
                       "currents) or one gain per joint, every effort then a current (default: efforts in N m)")
    group.add_argument("--payload-run", metavar="BAG", help="a run with a payload of known mass fixed to the "
                       "tip, beside BAG without it: the drive gains are identified with the parameters "
                       "(Gautier & Briot's global identification)")
    group.add_argument("--payload-mass", type=float, metavar="KG", help="the payload's mass")
    group.add_argument("--payload-com", metavar="X,Y,Z", help="its centre of mass in the tip frame (m), if "
                       "known (default: identified)")


def efforts_to_torques(args, model, recordings, read, friction, progress=print):
    """(the recordings with torques as efforts, the drives (``dynamics.drives.JointDrives``), the
    DriveGainEstimate or None): the gains given, or identified from ``args.payload_run`` (read by
    ``read(bag)``) with the ``friction`` forms of the identification. ValueError (ModelError,
    IdentificationError) saying what to pass."""
    from ..dynamics.drives import JointDrives
    from ..identification.drive_gains import identify_drive_gains

    joints = model.joint_names
    drives = (JointDrives.torques_measured(joints) if args.drive_gains is None
              else JointDrives.parse(args.drive_gains, joints).in_order(joints))
    estimate = None
    if args.payload_run:
        if args.payload_mass is None:
            raise ValueError("--payload-run needs --payload-mass: the payload's known mass fixes the gains' scale")
        if not drives.measures_currents.any():
            drives = JointDrives.currents(joints, np.full(len(joints), np.nan), source="identified")
        estimate = identify_drive_gains(model, recordings[0], read(args.payload_run), args.payload_mass,
                                        _vector(args.payload_com, "--payload-com"),
                                        friction=friction, cutoff_hz=args.cutoff,
                                        max_gap=args.max_gap, edge_trim=args.edge_trim, progress=progress)
        drives = drives.with_gains(estimate.gains, estimate.std, f"identified from {args.bag} and "
                                   f"{args.payload_run} (payload {args.payload_mass:g} kg)")
        if estimate.statics:
            progress(estimate.statics_table())
        if estimate.warning():
            print(f"robodyn-ros identify: warning: {estimate.warning()}", file=sys.stderr)
    elif drives.unknown:
        raise ValueError(f"the drive gains of {drives.unknown} are unknown ({drives.source}): give them "
                         "(--drive-gains G1,...,Gn) or identify them from a run with a known payload "
                         "(--payload-run BAG --payload-mass KG)")
    if drives.measures_currents.any():
        progress(f"drives ({drives.source}):\n{drives.table()}")
        recordings = [dataclasses.replace(r, effort=_torques(drives, r, model)) for r in recordings]
    return recordings, drives, estimate


def warn_if_not_torques(model, recording):
    """The one line of ``identification.efforts.implausible_efforts``, on stderr."""
    from ..identification.efforts import implausible_efforts

    line = implausible_efforts(model, recording)
    if line:
        print(f"robodyn-ros identify: warning: {line}", file=sys.stderr)


def write_drives(drives, estimate, output):
    """The drives beside the identified URDF (when any joint measures currents): its path, or None."""
    from ..dynamics.drives import drives_file

    if not drives.measures_currents.any():
        return None
    note = "" if estimate is None else "gains ± std by the global identification (Gautier & Briot)"
    return drives.save(drives_file(output), note)


def report(drives, estimate):
    """The drives and the gains' identification for the JSON report."""
    out = {"drives": {"source": drives.source, "units": dict(zip(drives.joints, drives.units)),
                      "gains": dict(zip(drives.joints, drives.gains.tolist())),
                      "std": dict(zip(drives.joints, drives.std.tolist()))}}
    if estimate is not None:
        out["drive_gain_identification"] = estimate.report()
    return out


def _torques(drives, recording, model):
    """The recording's efforts as torques, its columns kept (``drives`` are in the model's order)."""
    effort = np.array(recording.effort, dtype=float)
    columns = [list(recording.joint_names).index(joint) for joint in model.joint_names]
    effort[:, columns] = drives.torques(effort[:, columns])
    return effort


def _vector(text, option):
    if text is None:
        return None
    try:
        values = [float(v) for v in text.split(",")]
    except ValueError:
        values = []
    if len(values) != 3 or not np.all(np.isfinite(values)):
        raise ValueError(f"{option} must be three numbers X,Y,Z (m), got {text!r}")
    return np.array(values)
