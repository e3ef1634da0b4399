"""``robodyn-ros compile``: compile every numba kernel of the package into numba's cache now, so
that no node start waits for it (about 10-20 s once; a second run only loads the cache).

``make venv`` runs it after installing; after ``colcon build`` run it once from the sourced
workspace (doc/install.md). numba keeps the machine code in ``__pycache__`` next to each module
when that directory is writable (a source checkout, a venv, a colcon install tree), else in the
user's cache (``~/.cache/numba``), or in ``NUMBA_CACHE_DIR`` when set; a missing or stale cache
(edited sources, another CPU) only means the first start compiles again.
"""
import argparse
import sys
import time


def main(argv=None):
    argparse.ArgumentParser(prog="robodyn-ros compile", description=__doc__,
                            formatter_class=argparse.RawDescriptionHelpFormatter).parse_args(argv)
    from ..control.adaptive import warm_up as adaptive_warm_up
    from ..control.collision import warm_up as collision_warm_up
    from ..control.cycle_steps import warm_up as cycle_steps_warm_up
    from ..control.momentum_observer import warm_up as observer_warm_up
    from ..control.task_space import warm_up as task_space_warm_up
    from ..dynamics import warm_up as dynamics_warm_up
    from ..dynamics.regressor import warm_up as regressor_warm_up
    from ..stewart.model import LEG_MODELS
    from ..stewart.warmup import hexapod, warm_up as stewart_warm_up

    start = time.monotonic()
    dynamics_warm_up(forward=True, every_call=True)
    regressor_warm_up()
    adaptive_warm_up()
    task_space_warm_up()
    cycle_steps_warm_up()
    observer_warm_up()
    collision_warm_up()
    for leg_model in LEG_MODELS:
        stewart_warm_up(hexapod(leg_model), every_call=True)
    print(f"numba kernels compiled or loaded from the cache in {time.monotonic() - start:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
