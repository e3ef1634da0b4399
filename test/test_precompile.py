"""`robodyn-ros compile` (robodyn_ros.apps.precompile), which `make venv` runs so that no node start waits
for numba, reaches every compiled function the Python side calls. Checked in a fresh interpreter, where
only what the command itself ran can have been compiled or loaded from the cache."""
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHECK = textwrap.dedent("""
    import contextlib, io, json
    from robodyn_ros.apps import precompile
    from robodyn_ros.control import collision, cycle_steps, momentum_observer
    from robodyn_ros.dynamics import crba, forward, newton_euler
    from robodyn_ros.stewart import kernel, universal
    with contextlib.redirect_stdout(io.StringIO()):
        assert precompile.main([]) == 0
    entries = {
        "newton_euler": [newton_euler.rnea, newton_euler.rnea_no_wrench, newton_euler.rnea_batch],
        "crba": [crba.crba, crba.crba_batch],
        "forward": [forward.forward_dynamics, forward.forward_dynamics_no_wrench,
                    forward.forward_dynamics_batch],
        "stewart.kernel": [kernel.inverse_dynamics_args, kernel.inverse_dynamics_batch,
                           kernel.constraint_forces_batch, kernel.leg_kinematics_batch],
        "stewart.universal": [universal.inverse_dynamics_batch, universal.constraint_forces_batch],
        "control.cycle_steps": [cycle_steps.take_state, cycle_steps.saturate_into],
        "control.momentum_observer": [momentum_observer.momentum_one, momentum_observer.observer_step],
        "control.collision": [collision.last_crossing],
    }
    print(json.dumps({f"{m}.{f.py_func.__name__}": len(f.signatures)
                      for m, fs in entries.items() for f in fs}))
""")


def test_compile_command_reaches_every_kernel_the_api_calls():
    run = subprocess.run([sys.executable, "-c", CHECK], cwd=ROOT, capture_output=True, text=True,
                         timeout=600, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert run.returncode == 0, run.stderr
    compiled = json.loads(run.stdout.strip().splitlines()[-1])
    assert compiled and all(compiled.values()), {name: n for name, n in compiled.items() if not n}


def test_compile_is_a_robodyn_ros_command():
    from robodyn_ros.apps.cli import COMMANDS
    assert COMMANDS["compile"][0] == "robodyn_ros.apps.precompile"
