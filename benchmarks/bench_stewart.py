"""Stewart-platform inverse dynamics: time per pose (single call and batched) and the floating-point
operations of one step, counted by running the very kernels on counting scalars, against the 4889
flops Dasgupta & Mruthyunjaya 1998 report (section 4.5: 6 x 694 per leg + 273 platform + 452 system).

    python benchmarks/bench_stewart.py [--json]
"""
import json
import sys
import time
import types
import warnings

import numpy as np
from numba.core.registry import CPUDispatcher

from robodyn_ros.dynamics.counting import Counted, Tally
from robodyn_ros.resources import find_share_file
from robodyn_ros.stewart import StewartPlatform, kernel
from robodyn_ros.stewart.path_study import PAPER_PATHS
from robodyn_ros.stewart.poses import pack_pose

PAPER_FLOPS = {"per leg": 694, "platform": 273, "final system": 452, "total": 4889}


class Scalar(Counted):
    """Counted plus what the Stewart kernels also use: reversed division, abs, sqrt (tallied apart),
    comparisons by value."""

    __slots__ = ()

    def _new(self, value):
        return Scalar(value, self.tally)

    def __rtruediv__(self, other):
        self._count(other, "mul")
        return self._new(self._other(other) / self.value)

    def __abs__(self):
        return self._new(abs(self.value))

    def sqrt(self):   # np.sqrt on an object calls this
        self.tally.sqrt = getattr(self.tally, "sqrt", 0) + 1
        return self._new(np.sqrt(self.value))

    def __eq__(self, other):
        return self.value == self._other(other)

    def __ne__(self, other):
        return self.value != self._other(other)

    __hash__ = None


def pure_python_kernels():
    """The kernel module's functions as plain Python calling each other (not the compiled
    dispatchers), so that they run on object arrays of Scalar."""
    ns = dict(vars(kernel))
    for name, obj in vars(kernel).items():
        if isinstance(obj, CPUDispatcher):
            f = obj.py_func
            ns[name] = types.FunctionType(f.__code__, ns, f.__name__, f.__defaults__, f.__closure__)
    return ns


def _counted(values, tally):
    out = np.empty(len(values), dtype=object)
    out[:] = [Scalar(v, tally) for v in values]
    return out


def _flops(tally):
    return {"mul_div": tally.mul, "add_sub": tally.add, "sqrt": getattr(tally, "sqrt", 0),
            "trivial (operand 0 or +-1)": tally.trivial_mul + tally.trivial_add,
            "total": tally.mul + tally.add + getattr(tally, "sqrt", 0)}


def count_flops(sp, pose):
    """Flops of one inverse-dynamics step at `pose`, split like the paper's count, plus the condition
    number (which the paper does not count) and a check that the counted run gives the same forces."""
    ns = pure_python_kernels()
    sections = {}

    tally = Tally()
    ns["leg_dynamics"](sp.packed, 0, _counted(pose, tally), False)
    sections["per leg (section 2)"] = _flops(tally)

    ik = sp.inverse_kinematics(*_unpack(pose)[:2])
    H = np.vstack([ik.directions.T, np.cross(ik.q, ik.directions).T]).tolist()
    tally = Tally()
    ns["condition_number"](np.array([[Scalar(v, tally) for v in row] for row in H], object),
                           np.empty((6, 6), object), np.empty(6, object))
    sections["condition number (Jacobi SVD, not in the paper's count)"] = _flops(tally)

    tally = Tally()
    rhs = np.random.default_rng(0).random((6, 2)).tolist()
    ns["solve"](np.array([[Scalar(v, tally) for v in row + r] for row, r in zip(H, rhs)], object), 2)
    sections["final system, 2 right-hand sides (F and F0)"] = _flops(tally)

    tally = Tally()
    out = np.empty((kernel.OUT_ROWS, 6), dtype=object)
    ns["inverse_dynamics_one"](sp.packed, _counted(pose, tally), False, out)
    total = _flops(tally)
    rest = {k: total[k] - 6 * sections["per leg (section 2)"][k]
            - sections["condition number (Jacobi SVD, not in the paper's count)"][k]
            - sections["final system, 2 right-hand sides (F and F0)"][k]
            for k in ("mul_div", "add_sub", "sqrt", "total")}
    sections["platform and assembly of H, c, c0 (the remainder)"] = rest
    sections["whole step"] = total
    sections["whole step without the condition number"] = {
        k: total[k] - sections["condition number (Jacobi SVD, not in the paper's count)"][k]
        for k in total}
    forces = np.array([x.value for x in out[kernel.O_F]])
    assert np.allclose(forces, sp.inverse_dynamics(*_unpack(pose)).forces, rtol=1e-12)
    return sections


def _unpack(pose):
    return (pose[0:3], pose[3:12].reshape(3, 3), pose[12:15], pose[15:18], pose[18:21],
            pose[21:24], pose[24:27], pose[27:30])


def _best(f, repeat=5, number=2000):
    best = np.inf
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(number):
            f()
        best = min(best, (time.perf_counter() - t0) / number)
    return best


def run(json_out=False):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sp = StewartPlatform.from_yaml(find_share_file("config/stewart_dasgupta.yaml"))
    path, _ = PAPER_PATHS["I"]
    sample = path.sample(np.linspace(0.0, path.tau_f, 100_000))
    args = sample.pose_args()
    one = [a[len(sample.time) // 2] for a in args]
    pose = pack_pose(*one, None, None)
    out = np.empty((kernel.OUT_ROWS, 6))
    sp.inverse_dynamics(*one)
    sp.inverse_dynamics(*args)   # compile or load the cache before timing

    single_api = _best(lambda: sp.inverse_dynamics(*one))
    single_kernel = _best(lambda: kernel.inverse_dynamics_one(sp.packed, pose, False, out))
    batch = min(_best(lambda: sp.inverse_dynamics(*args), repeat=1, number=1) for _ in range(5))
    flops = count_flops(sp, pose)
    figures = {
        "single pose, StewartPlatform.inverse_dynamics (us)": round(single_api * 1e6, 2),
        "single pose, compiled kernel alone (us)": round(single_kernel * 1e6, 2),
        "batched, 100000 poses of Path I (poses/s)": round(len(sample.time) / batch),
        "flops per step (ours, counted)": flops,
        "flops per step (paper, MATLAB flops)": PAPER_FLOPS,
    }
    if json_out:
        print(json.dumps(figures, indent=2))
    else:
        for key, value in figures.items():
            if isinstance(value, dict):
                print(f"{key}:")
                for k, v in value.items():
                    print(f"    {k}: {v}")
            else:
                print(f"{key}: {value}")
    return figures


if __name__ == "__main__":
    run(json_out="--json" in sys.argv[1:])
