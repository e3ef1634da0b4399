"""``robodyn-ros stewart-path``: the study of section 5 of Dasgupta & Mruthyunjaya 1998 on its test
manipulator. Writes a CSV (t, F, F0, Fd per leg, dynamic fractions, condition number, and the forces
of both leg models with their difference) and plots like Figures 4-10 (leg forces T/S/D, dynamic
fractions, condition number). The summary compares the paper's no_spin legs with exact universal
joints (doc/stewart_models.md)."""
from __future__ import annotations

import argparse
import csv
import sys
import warnings

import dataclasses

import numpy as np

from ..stewart.model import LEG_MODELS, PlatformWarning, StewartPlatform
from ..stewart.trajectory import LinearParabolicPath
from ..stewart.warmup import warm_up

# Section 5: (path, sampling step d tau).
PAPER_PATHS = {
    "I": (LinearParabolicPath((0.1, 0.0, 0.4), (0.0, 0.0, -0.2), (0.3, 0.0, 0.6), (0.0, 0.0, 0.2),
                              tau_f=6.0, V=0.08, Omega=0.08), 0.1),
    "II": (LinearParabolicPath((0.1, 0.0, 0.4), (0.0, 0.0, -0.2), (0.3, 0.0, 0.6), (0.0, 0.0, 0.2),
                               tau_f=0.6, V=0.8, Omega=0.8), 0.01),
    "III": (LinearParabolicPath((0.4, 1.4, 1.2), (0.1, 0.2, 0.0), (0.8, 1.8, 1.8), (0.3, 0.4, 0.0),
                                tau_f=6.0, V=0.2, Omega=0.08), 0.1),
}
DEFAULT_PLATFORM = "config/stewart_dasgupta.yaml"


def run(sp: StewartPlatform, name: str):
    """(times, InverseDynamicsResult) along the paper's path `name`."""
    path, dtau = PAPER_PATHS[name]
    sample = path.sample(path.times(dtau))
    return sample.time, sp.inverse_dynamics(*sample.pose_args())


def both_leg_models(sp: StewartPlatform, name: str):
    """Forces along path `name` with the paper's no_spin legs and with universal joints: (F, F_u)."""
    forces = [run(dataclasses.replace(sp, leg_model=m), name)[1].forces
              for m in ("no_spin", "universal")]
    return tuple(forces)


def write_csv(stream, times, r, no_spin, universal):
    """F, F0, Fd, frac are those of the platform's own leg model."""
    cols = (["t"] + [f"{q}{i}" for q in ("F", "F0", "Fd", "frac") for i in range(1, 7)] + ["cond"]
            + [f"{q}{i}" for q in ("F_no_spin", "F_universal", "dF") for i in range(1, 7)])
    out = csv.writer(stream)
    out.writerow(cols)
    table = np.column_stack([times, r.forces, r.static_forces, r.dynamic_forces,
                             r.dynamic_fraction, r.condition_number, no_spin, universal,
                             universal - no_spin])
    for row in table:
        out.writerow([f"{x:.10g}" for x in row])


def plot(filename, name, times, r):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise SystemExit("--plot needs matplotlib: pip install 'robodyn_ros[plot]' "
                         "(or pip install matplotlib)") from None
    fig = plt.figure(figsize=(11, 8.5))
    grid = fig.add_gridspec(3, 4)
    for i in range(6):
        ax = fig.add_subplot(grid[i // 3, i % 3 + (i // 3) * 0])
        ax.plot(times, r.forces[:, i], "k-", label="T: F")
        ax.plot(times, r.static_forces[:, i], "b--", label="S: F0")
        ax.plot(times, r.dynamic_forces[:, i], "r:", label="D: Fd")
        ax.set_title(f"leg {i + 1}", fontsize=9)
        ax.tick_params(labelsize=7)
        if i == 0:
            ax.legend(fontsize=7)
        if i % 3 == 0:
            ax.set_ylabel("force (N)", fontsize=8)
    ax = fig.add_subplot(grid[0:2, 3])
    frac = np.clip(r.dynamic_fraction, -1.5, 1.5)  # F crossing zero makes Fd/F explode (paper too)
    for i in range(6):
        ax.plot(times, frac[:, i], label=f"leg {i + 1}")
    ax.set_title("dynamic fraction Fd/F (clipped)", fontsize=9)
    ax.tick_params(labelsize=7)
    ax.legend(fontsize=7)
    ax = fig.add_subplot(grid[2, :])
    ax.semilogy(times, r.condition_number, "k-")
    ax.set_title("condition number of H", fontsize=9)
    ax.set_xlabel("time (s)", fontsize=8)
    ax.tick_params(labelsize=7)
    fig.suptitle(f"Path {name}: Dasgupta & Mruthyunjaya 1998 test manipulator", fontsize=11)
    fig.tight_layout()
    fig.savefig(filename, dpi=70)
    plt.close(fig)


def summary(name, times, r):
    frac = np.abs(r.dynamic_fraction)
    frac = frac[np.abs(r.forces) > 0.05 * np.nanmax(np.abs(r.forces))]  # away from zero crossings
    peak = int(np.argmax(r.condition_number))
    return (f"Path {name}: {len(times)} samples; max |F| {np.nanmax(np.abs(r.forces)):.4g} N, "
            f"max |F0| {np.nanmax(np.abs(r.static_forces)):.4g} N; dynamic fraction median "
            f"{np.median(frac):.1%}, max {np.max(frac):.1%} (where |F| > 5% of its max); condition "
            f"number {np.min(r.condition_number):.4g}..{r.condition_number[peak]:.4g} "
            f"(peak at t = {times[peak]:.3g} s, max |F| there {np.nanmax(np.abs(r.forces[peak])):.4g} N)")


def compare_leg_models(name, times, no_spin, universal):
    """Largest difference of the universal-joint forces from the no_spin ones, absolute and relative
    to the largest leg force at that time."""
    gap = np.abs(universal - no_spin).max(axis=1)
    rel = gap / np.abs(no_spin).max(axis=1)
    worst = int(np.nanargmax(rel))
    return (f"Path {name}, universal joints vs no_spin legs: max |F_universal - F_no_spin| "
            f"{np.nanmax(gap):.4g} N; relative to the largest leg force {np.nanmedian(rel):.2%} "
            f"median, {rel[worst]:.2%} max (at t = {times[worst]:.3g} s)")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="robodyn-ros stewart-path",
        description="Paths I-III of Dasgupta & Mruthyunjaya 1998 on their test manipulator: "
                    "actuator forces F, static forces F0, Fd = F - F0, dynamic fractions and the "
                    "condition number of H.")
    parser.add_argument("--path", required=True, choices=sorted(PAPER_PATHS))
    parser.add_argument("--platform", help="platform YAML (default: the packaged "
                                           f"{DEFAULT_PLATFORM})")
    parser.add_argument("--leg-model", choices=LEG_MODELS,
                        help="leg model of the F, F0, Fd columns (default: the file's leg_model)")
    parser.add_argument("--csv", help="write the table here ('-' for stdout)")
    parser.add_argument("--plot", help="write the figure here (PNG, PDF, ...; needs matplotlib)")
    args = parser.parse_args(argv)
    shipped = args.platform is None
    if shipped:
        from ..plumbing.resources import find_share_file
        args.platform = find_share_file(DEFAULT_PLATFORM)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sp = StewartPlatform.from_yaml(args.platform, leg_model=args.leg_model)
    for w in caught:
        # the paper's platform as printed: its quirks are known (the file's header and
        # doc/references.md), and none changes the inverse dynamics this study computes
        if not (shipped and issubclass(w.category, PlatformWarning)):
            print(f"robodyn-ros stewart-path: warning: {w.message}", file=sys.stderr)
    warm_up(sp, notify=lambda message: print(message, file=sys.stderr))
    times, r = run(sp, args.path)
    no_spin, universal = both_leg_models(sp, args.path)
    if args.csv == "-":
        write_csv(sys.stdout, times, r, no_spin, universal)
    elif args.csv:
        with open(args.csv, "w", newline="") as f:
            write_csv(f, times, r, no_spin, universal)
    if args.plot:
        plot(args.plot, args.path, times, r)
    report = sys.stderr if args.csv == "-" else sys.stdout
    print(summary(args.path, times, r) + f" [leg model {sp.leg_model}]", file=report)
    print(compare_leg_models(args.path, times, no_spin, universal), file=report)
    return 0
