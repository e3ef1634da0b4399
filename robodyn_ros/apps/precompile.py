"""Compile every numba kernel of the package into numba's cache now, so that no node start waits
for it: about a minute and a half of CPU from an empty cache, shared among the cores
(doc/performance.md has the figures); a second run only loads the cache (a few seconds).

The kernel groups are independent, so each is compiled by a worker process of its own, as many at
a time as there are cores, largest first; each prints its time as it finishes. The workers save
into the cache one at a time (numba updates a cache index without a lock of its own).

make venv runs it after installing; after colcon build run it once from the sourced workspace
(doc/install.md). numba keeps the machine code in __pycache__ next to each module when that
directory is writable (a source checkout, a venv, a colcon install tree), else in the user's cache
(~/.cache/numba), or in NUMBA_CACHE_DIR when set; a missing or stale cache (edited sources,
another CPU) only means the first start compiles again.
"""
import argparse
import concurrent.futures
import contextlib
import fcntl
import io
import multiprocessing
import resource
import sys
import tempfile
import time


def _dynamics_and_control_cycle():
    # one group: the control cycle's computed-torque step calls the dynamics' one-state
    # Newton-Euler kernel, which two groups would each compile; then the per-message steps, the
    # joint-space laws' feedback, the momentum observer, the collision check, the drive stage
    # (it calls the Newton-Euler kernel too)
    from ..control.collision import warm_up as collision_warm_up
    from ..control.cycle_steps import warm_up as cycle_steps_warm_up
    from ..control.drive import warm_up as drive_warm_up
    from ..control.laws import ComputedTorque
    from ..control.momentum_observer import warm_up as observer_warm_up
    from ..dynamics import warm_up
    warm_up(forward=True, every_call=True)
    cycle_steps_warm_up()
    ComputedTorque.warm_up()
    observer_warm_up()
    collision_warm_up()
    drive_warm_up()


def _regressor_and_adaptive():
    # one group: the adaptive law's construction calls the regressor's batch kernel, and its
    # steps the regressor's one-state kernels
    from ..control.adaptive import warm_up as adaptive_warm_up
    from ..dynamics.regressor import warm_up as regressor_warm_up
    regressor_warm_up()
    adaptive_warm_up()


def _operational_space():
    from ..control.task_space import warm_up
    warm_up(laws=("operational_space",))


def _cartesian_impedance():
    from ..control.task_space import warm_up
    warm_up(laws=("cartesian_impedance",))


def _native_steps():
    # the laws' C entry points: cfuncs that call the laws' compiled kernels (their own groups'
    # cache entries when those are saved first, else compiled here as well)
    from ..control.native import warm_up
    warm_up()


def _stewart(leg_model):
    def compile_leg_model():
        from ..stewart.warmup import hexapod, warm_up
        warm_up(hexapod(leg_model), every_call=True)
    return compile_leg_model


# name: what it compiles, largest first (the order they start in; CPU seconds from an empty
# cache on the 2-core machine, 2026-11-28 evening: 19, 17, 16, 15, 11, 9): six groups keep two
# workers within a few seconds of each other (merged, the adaptive law's and the control cycle's
# would save 3 s of CPU that a 30 s group loses again in waiting)
GROUPS = {
    "dynamics and control-cycle kernels (computed torque, momentum observer, collisions)":
        _dynamics_and_control_cycle,
    "Cartesian-impedance law kernels": _cartesian_impedance,
    "operational-space law kernels": _operational_space,
    "regressor and adaptive-law kernels": _regressor_and_adaptive,
    "Stewart-platform kernels (the paper's legs)": _stewart("no_spin"),
    "Stewart-platform kernels (universal-joint legs)": _stewart("universal"),
    "native entry points of the laws (cfuncs)": _native_steps,
}


def save_under(lock_path):
    """Make this process's numba cache saves hold an exclusive lock on ``lock_path`` (a worker's
    initializer): ``save`` reads the index again under it, so every entry survives."""
    from numba.core.caching import IndexDataCacheFile
    save = IndexDataCacheFile.save

    def locked_save(self, key, data):
        with open(lock_path, "rb") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)   # released when the file closes
            save(self, key, data)
    IndexDataCacheFile.save = locked_save


def compile_group(name):
    """Run group ``name``'s warm-up (in a worker process); returns (name, wall s, CPU s)."""
    start, cpu = time.monotonic(), time.process_time()
    with contextlib.redirect_stdout(io.StringIO()):   # the warm-ups' notices: this prints times
        GROUPS[name]()
    return name, time.monotonic() - start, time.process_time() - cpu


def _cores():
    from ..plumbing.kernels import CORES
    return CORES


def main(argv=None):
    parser = argparse.ArgumentParser(prog="robodyn-ros compile", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jobs", type=int, default=None,
                        help="worker processes at a time (default: one per core)")
    args = parser.parse_args(argv)
    jobs = args.jobs or _cores()
    if jobs < 1:
        parser.error(f"--jobs must be at least 1, got {jobs}")
    start = time.monotonic()
    # spawn: a worker starts from a fresh interpreter, not from a copy of this one's threads
    with tempfile.NamedTemporaryFile(prefix="robodyn-compile-", suffix=".lock") as lock, \
            concurrent.futures.ProcessPoolExecutor(
                min(jobs, len(GROUPS)), mp_context=multiprocessing.get_context("spawn"),
                initializer=save_under, initargs=(lock.name,)) as pool:
        for done in concurrent.futures.as_completed([pool.submit(compile_group, name)
                                                     for name in GROUPS]):
            name, wall, cpu = done.result()
            print(f"{name}: {wall:.1f} s ({cpu:.1f} s of CPU)", flush=True)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    print(f"numba kernels compiled or loaded from the cache in {time.monotonic() - start:.1f} s "
          f"({children.ru_utime + children.ru_stime:.1f} s of CPU in {min(jobs, len(GROUPS))} "
          f"worker processes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
