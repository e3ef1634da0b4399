"""The one-state kernels' workspaces (robodyn_ros.plumbing.kernels.scratch): on the machine stack up
to STACK_SCRATCH values, on the heap above, each thread its own. Either way a state gets the numbers
the kernel's interpreted twin gives it (its workspace is a NumPy array), and the mass matrix those
of n Newton–Euler passes (method="strobe", a second formulation). The batch kernels, forward
dynamics and the adaptive law's steps call the one-state kernels' single compiled versions
(``as_declared``), not versions of their own."""
import concurrent.futures
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

from robodyn_ros.dynamics import layout, newton_euler
from robodyn_ros.dynamics.counting import generic_arm
from robodyn_ros.plumbing import kernels

ROOT = Path(__file__).resolve().parents[1]


def test_a_workspace_too_large_for_the_stack_gives_the_same_numbers():
    # 240 joints: the CRBA and Newton–Euler workspaces (240 x 22 and 240 x 18) are over the limit
    arm = generic_arm(240, seed=5)
    assert arm.dof * layout.RNEA_COLUMNS > kernels.STACK_SCRATCH
    assert arm.dof * layout.CRBA_COLUMNS > kernels.STACK_SCRATCH
    rng = np.random.default_rng(5)
    q, qd, qdd = rng.uniform(-1.0, 1.0, (3, arm.dof))
    tau = arm.inverse_dynamics(q, qd, qdd)
    twin = np.empty(arm.dof)
    kernels.interpreted(newton_euler)["rnea"](arm.params, q, qd, qdd, newton_euler.NO_WRENCH,
                                              newton_euler.GRAVITY | newton_euler.FRICTION, twin)
    np.testing.assert_allclose(tau, twin, rtol=1e-12, atol=1e-12 * np.abs(twin).max())
    strobe = arm.mass_matrix(q, method="strobe")
    assert np.allclose(arm.mass_matrix(q), strobe, rtol=1e-9, atol=1e-9 * np.abs(strobe).max())


ONE_VERSION = """
import json
import numba
import numpy as np
from robodyn_ros.control import adaptive, drive
from robodyn_ros.dynamics import crba, forward, newton_euler, regressor
from robodyn_ros.dynamics import model as dynamics_model
from robodyn_ros.dynamics.counting import generic_arm

arm = generic_arm(6, seed=1)
for direct in (dynamics_model._RNEA_WRENCH, dynamics_model._CRBA, dynamics_model._FORWARD_WRENCH,
               regressor._ONE, regressor._PAYLOAD, adaptive._PAYLOAD_STEP, adaptive._BASE_STEP,
               drive.DRIVE_ADDS):
    direct.ready()   # the versions the API's Direct calls declare
Q, W = np.zeros((2, 6)), np.ones((2, 6))
mode = newton_euler.GRAVITY | newton_euler.TIP_WRENCH
for caller, args in ((newton_euler.rnea_batch, (arm.params, Q, Q, Q, W, mode, np.empty((2, 6)))),
                     (crba.crba_batch, (arm.params, Q, np.empty((2, 6, 6)))),
                     (forward.forward_dynamics_batch,
                      (arm.params, Q, Q, Q, W, mode, np.empty((2, 6))))):
    numba.njit(cache=False)(caller.py_func)(*args)   # typed anew, whatever the cache holds
for direct in (dynamics_model._FORWARD_WRENCH, adaptive._PAYLOAD_STEP, adaptive._BASE_STEP,
               adaptive._ANSWER, drive.DRIVE_COMMAND):   # typed as their Direct calls them
    numba.njit(cache=False)(direct._kernel.py_func).compile(direct._signature)
print(json.dumps({f.py_func.__name__: len(f.signatures) for f in (
    newton_euler.rnea, crba.crba, forward.forward_dynamics, regressor.regressor_one,
    regressor.payload_one, adaptive.payload_step, adaptive.base_step, drive.drive_adds_into)}))
"""


def test_a_caller_uses_the_one_state_kernel_s_one_compiled_version():
    """A second version of a one-state kernel would cost seconds of compiling in every process
    that uses both paths (``robodyn-ros compile`` too): in a process of its own (this one's other
    tests compile versions of their own), each caller is typed anew, and the one-state kernels it
    calls keep the one version the API's ``Direct`` calls declare."""
    run = subprocess.run([sys.executable, "-c", ONE_VERSION], cwd=ROOT, capture_output=True,
                         text=True, timeout=600, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert run.returncode == 0, run.stderr[-3000:]
    versions = json.loads(run.stdout.strip().splitlines()[-1])
    assert versions == dict.fromkeys(versions, 1), versions


def test_a_batch_row_gives_the_one_state_numbers(model):
    rng = np.random.default_rng(7)
    q, qd, qdd = rng.uniform(-1.0, 1.0, (3, 5, model.dof))
    wrench = np.ones(6)
    tau, M = model.inverse_dynamics(q, qd, qdd, tip_wrench=wrench), model.mass_matrix(q)
    qdd_out = model.forward_dynamics(q, qd, qdd, tip_wrench=wrench)
    for k in range(5):
        assert np.array_equal(tau[k], model.inverse_dynamics(q[k], qd[k], qdd[k], tip_wrench=wrench))
        assert np.array_equal(M[k], model.mass_matrix(q[k]))
        assert np.array_equal(qdd_out[k], model.forward_dynamics(q[k], qd[k], qdd[k],
                                                                 tip_wrench=wrench))


def test_threads_calling_one_model_get_their_own_numbers(model):
    rng = np.random.default_rng(6)
    q, qd, qdd = rng.uniform(-2.0, 2.0, (3, 4, 300, model.dof))

    def one_state_at_a_time(t):
        return ([model.mass_matrix(x) for x in q[t]],
                [model.inverse_dynamics(a, b, c) for a, b, c in zip(q[t], qd[t], qdd[t])])

    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        results = list(pool.map(one_state_at_a_time, range(4)))
    for t, (M, tau) in enumerate(results):
        assert np.array_equal(np.array(M), model.mass_matrix(q[t]))
        assert np.array_equal(np.array(tau), model.inverse_dynamics(q[t], qd[t], qdd[t]))


def test_a_change_to_any_module_forgets_the_whole_packages_cache(tmp_path, monkeypatch):
    """numba checks a cached kernel against its own module only; a kernel inlining another
    module's keeps stale code unless the whole cache goes when any module changes."""
    import os
    from robodyn_ros.plumbing import kernels
    package = tmp_path / "pkg"
    (package / "sub" / "__pycache__").mkdir(parents=True)
    caller, callee = package / "caller.py", package / "sub" / "callee.py"
    caller.write_text("x = 1\n")
    callee.write_text("y = 2\n")
    cached = [package / "sub" / "__pycache__" / f"callee.f-1.py311.{n}" for n in ("nbi", "1.nbc")]
    monkeypatch.setattr(kernels, "PACKAGE", package)
    monkeypatch.setattr(kernels, "SOURCES_STAMP", package / "__pycache__" / "stamp")
    assert kernels.forget_a_stale_cache()        # no stamp yet: judged stale
    for f in cached:
        f.write_bytes(b"machine code")
    assert not kernels.forget_a_stale_cache()    # nothing changed: kept
    assert all(f.exists() for f in cached)
    stat = callee.stat()
    os.utime(callee, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
    assert kernels.forget_a_stale_cache()        # one module changed: every entry goes
    assert not any(f.exists() for f in cached)
    assert caller.read_text() == "x = 1\n"       # sources untouched
