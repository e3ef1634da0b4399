"""`robodyn-ros compile` (robodyn_ros.apps.precompile), which `make venv` runs so that no node start waits
for numba, fills numba's cache with every compiled function the Python side calls. It compiles in
worker processes, so the check runs in a fresh interpreter afterwards: every group's warm-up and
the API calls there must only load from the cache (numba reports each compile it makes; a lost
cache-index entry, which two workers saving at once without the lock could cause, would be one)."""
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHECK = textwrap.dedent("""
    import contextlib, io, json
    from numba.core import event
    from robodyn_ros.apps import precompile
    from robodyn_ros.control import collision, cycle_steps, drive, laws, momentum_observer, trajectory
    from robodyn_ros.dynamics import crba, forward, newton_euler
    from robodyn_ros.stewart import kernel, universal
    with contextlib.redirect_stdout(io.StringIO()) as out:
        assert precompile.main([]) == 0
    printed = out.getvalue()

    compiled = []
    class Compiles(event.Listener):
        def on_start(self, ev):
            compiled.append(f"{ev.data['dispatcher'].py_func.__qualname__}{ev.data['args']}")
        def on_end(self, ev):
            pass
    with event.install_listener("numba:compile", Compiles()):
        for group in precompile.GROUPS.values():
            with contextlib.redirect_stdout(io.StringIO()):
                group()
    entries = {
        "newton_euler": [newton_euler.rnea, newton_euler.rnea_no_wrench, newton_euler.rnea_batch],
        "crba": [crba.crba, crba.crba_batch],
        "forward": [forward.forward_dynamics, forward.forward_dynamics_no_wrench,
                    forward.forward_dynamics_batch],
        "stewart.kernel": [kernel.inverse_dynamics_args, kernel.inverse_dynamics_batch,
                           kernel.constraint_forces_batch, kernel.leg_kinematics_batch],
        "stewart.universal": [universal.inverse_dynamics_batch, universal.constraint_forces_batch],
        "control.cycle_steps": [cycle_steps.take_state, cycle_steps.saturate_into],
        "control.trajectory": [trajectory.sample_into],
        "control.laws": [laws.pid_into],
        "control.momentum_observer": [momentum_observer.momentum_one, momentum_observer.observer_step],
        "control.collision": [collision.last_crossing],
        "control.drive": [drive.drive_command_into, drive.drive_adds_into],
    }
    print(json.dumps({"printed": printed, "compiled": compiled,
                      "versions": {f"{m}.{f.py_func.__name__}": len(f.signatures)
                                   for m, fs in entries.items() for f in fs}}))
""")


def test_compile_command_fills_the_cache_with_every_kernel_the_api_calls():
    from robodyn_ros.apps.precompile import GROUPS
    run = subprocess.run([sys.executable, "-c", CHECK], cwd=ROOT, capture_output=True, text=True,
                         timeout=900, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert run.returncode == 0, run.stderr
    result = json.loads(run.stdout.strip().splitlines()[-1])
    assert result["compiled"] == [], "compiled again after robodyn-ros compile"
    versions = result["versions"]
    assert all(versions.values()), {name: n for name, n in versions.items() if not n}
    # the warm-ups reach each of these through one version (no second layout, no literal ints),
    # the one the API's fast path calls: a second one would be a second compile for nothing
    assert all(n == 1 for n in versions.values()), versions
    lines = result["printed"].splitlines()
    assert sorted(line.split(":")[0] for line in lines[:-1]) == sorted(GROUPS), lines
    assert lines[-1].startswith("numba kernels compiled or loaded from the cache in"), lines


def test_compile_is_a_robodyn_ros_command():
    from robodyn_ros.apps.cli import COMMANDS
    assert COMMANDS["compile"][0] == "robodyn_ros.apps.precompile"


def test_a_warm_up_says_when_it_compiles_and_only_then():
    """The notice comes from numba's own compile events, not from the time taken (a first cache
    load took 0.7 s on a busy machine, and a 0.5 s timer called that a compile)."""
    import numba
    from robodyn_ros.plumbing import kernels
    twice = numba.njit(lambda x: 2.0 * x)   # a function of this test's: not compiled yet
    said = []
    kernels.warm_up("test kernels", lambda: twice(1.0), said.append, estimate=3)
    assert len(said) == 2 and said[0].startswith("Compiling the test kernels (numba, empty or stale "
                                                 "cache: about 3 s of one core"), said
    assert said[1].startswith("Compiled the test kernels in "), said
    said.clear()
    kernels.warm_up("test kernels", lambda: twice(2.0), said.append, estimate=3)   # compiled now
    assert said == []
