"""Stewart-platform inverse dynamics (issue 5): time per pose through the public API, single and
batched, and the floating-point operations of one step, counted by running the very kernels on counting
scalars, against the 4889 flops Dasgupta & Mruthyunjaya 1998 report (section 4.5: 6 x 694 per leg + 273
platform + 452 system).

    robodyn-ros bench stewart [--json FILE]
"""
import warnings

import numpy as np

from ...plumbing import kernels
from ...dynamics.counting import Counted, Tally, counted
from ...plumbing.kernels import interpreted
from ...plumbing.resources import find_share_file
from ...stewart import StewartPlatform, kernel
from ..stewart_path import PAPER_PATHS
from .dynamics import one_core
from .timing import figure, per_call

ROBOT = "Stewart platform (Dasgupta & Mruthyunjaya test manipulator)"
PAPER_FLOPS = {"per leg": 694, "platform": 273, "final system": 452, "total": 4889}
SINGLE_TARGET_US = 3.0       # issue 13
BATCH_TARGET = 1_000_000     # poses/s, every core of a 2-core machine (issue 13)
COND_SECTION = "condition number (one-sided Jacobi on R, not in the paper's count)"


def _flops(tally):
    return {"mul_div": tally.mul, "add_sub": tally.add, "sqrt": tally.sqrt,
            "trivial (operand 0 or +-1)": tally.trivial_mul + tally.trivial_add,
            "total": tally.mul + tally.add + tally.sqrt}


def _pose_vector(t, R, v, w, a, al):
    return np.concatenate([t, np.ravel(R), v, w, a, al, np.zeros(6)])


def count_flops(sp, pose):
    """Flops of one inverse-dynamics step at the pose vector `pose`, split like the paper's count, plus
    the condition number (which the paper does not count); checks that the counted run gives the
    compiled forces."""
    ns = interpreted(kernel)
    sections = {}

    tally = Tally()
    ns["leg_dynamics"](sp.packed, 0, counted(pose, tally), False)
    sections["per leg (section 2)"] = _flops(tally)

    ik = sp.inverse_kinematics(pose[0:3], pose[3:12].reshape(3, 3))
    H = np.vstack([ik.directions.T, np.cross(ik.q, ik.directions).T])
    tally = Tally()
    Hw = counted(np.hstack([H, np.random.default_rng(0).random((6, 2))]), tally)
    ns["triangularize"](Hw, 8)
    ns["back_substitute"](Hw, 2)
    sections["final system, 2 right-hand sides (F and F0)"] = _flops(tally)

    tally = Tally()   # R as a step has it: the zeros below the diagonal are plain floats
    R = np.array([[Counted(x.value, tally) if isinstance(x, Counted) else x for x in row]
                  for row in Hw[:, :6]], dtype=object)
    ns["condition_number"](R, np.empty((6, 6), object), np.empty(6, object), np.empty((3, 3), object))
    cond_name = COND_SECTION
    sections[cond_name] = _flops(tally)

    tally = Tally()
    out = np.empty((kernel.OUT_ROWS, 1, 6), dtype=object)
    ns["inverse_dynamics_one"](sp.packed, counted(pose, tally), False, out)
    total = _flops(tally)
    parts = ("per leg (section 2)", cond_name, "final system, 2 right-hand sides (F and F0)")
    sections["platform and assembly of H, c, c0 (the remainder)"] = {
        k: total[k] - 6 * sections[parts[0]][k] - sections[parts[1]][k] - sections[parts[2]][k]
        for k in ("mul_div", "add_sub", "sqrt", "total")}
    sections["whole step"] = total
    sections["whole step without the condition number"] = {
        k: total[k] - sections[cond_name][k] for k in total}
    forces = np.array([x.value for x in out[kernel.O_F, 0]])
    compiled = np.empty((kernel.OUT_ROWS, 1, 6))
    kernel.inverse_dynamics_one(sp.packed, pose, False, compiled)
    assert np.allclose(forces, compiled[kernel.O_F, 0], rtol=1e-12, atol=1e-9)
    return sections


def run(batch=100_000):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # the paper's k1 and inertias warn by design
        sp = StewartPlatform.from_yaml(find_share_file("config/stewart_dasgupta.yaml"))
    path, _ = PAPER_PATHS["I"]
    sample = path.sample(np.linspace(0.0, path.tau_f, batch))
    args = sample.pose_args()
    one = tuple(np.ascontiguousarray(a[batch // 2]) for a in args)
    pose = _pose_vector(*one)
    out = np.empty((kernel.OUT_ROWS, 1, 6))
    sp.inverse_dynamics(*one)
    sp.inverse_dynamics(*args)   # compile or load the cache before timing
    rows = []

    best, median = per_call(lambda: sp.inverse_dynamics(*one))
    row = figure("inverse dynamics, single pose, API (us)", best * 1e6, median * 1e6,
                 target=f"<= {SINGLE_TARGET_US:g} us",
                 note="StewartPlatform.inverse_dynamics(t, R, v, w, a, alpha) as a user calls it, "
                      "result object included")
    row["met"] = bool(best * 1e6 <= SINGLE_TARGET_US)
    rows.append(row)

    best, median = per_call(lambda: kernel.inverse_dynamics_one(sp.packed, pose, False, out))
    rows.append(figure("  of which the compiled kernel alone (us)", best * 1e6, median * 1e6))

    best, median = per_call(lambda: sp.inverse_dynamics(*args), number=1, repeat=7)
    row = figure(f"inverse dynamics, batched (poses/s, {kernels.CORES} cores)", batch / best,
                 batch / median, unit="poses/s", target=f">= {BATCH_TARGET:,} poses/s",
                 note=f"{batch} poses of Path I in one call, NumPy packing included")
    row["met"] = bool(batch / best >= BATCH_TARGET)
    rows.append(row)
    best, median = per_call(one_core(lambda: sp.inverse_dynamics(*args)), number=1, repeat=7)
    rows.append(figure("  the same batch on one core (poses/s)", batch / best, batch / median,
                       unit="poses/s"))

    flops = count_flops(sp, pose)
    total = {name: counts["total"] for name, counts in flops.items()}
    ours = total["whole step without the condition number"]
    row = figure("flops per pose, counted (paper: 4889)", ours, ours, unit="flops",
                 peer=PAPER_FLOPS["total"], target="<= 4889 (paper)",
                 note=f"per leg {total['per leg (section 2)']} (paper 694), platform + H "
                      f"{total['platform and assembly of H, c, c0 (the remainder)']} (paper 273), "
                      f"system with F and F0 {total['final system, 2 right-hand sides (F and F0)']}"
                      " (paper 452 for F alone); the condition number, which the paper does not "
                      f"count, adds {total[COND_SECTION]}"
                      f" (whole step {total['whole step']})")
    row["ratio"] = ours / PAPER_FLOPS["total"]
    row["met"] = bool(ours <= PAPER_FLOPS["total"])
    row["sections"] = flops
    rows.append(row)
    return {"robot": ROBOT, "rows": rows}


if __name__ == "__main__":
    from . import _print
    _print("stewart", run())
