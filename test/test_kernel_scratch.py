"""The one-state kernels' workspaces (robodyn_ros.plumbing.kernels.scratch): on the machine stack up
to STACK_SCRATCH values, on the heap above, each thread its own. Either way a state gets the numbers
the kernel's interpreted twin gives it (its workspace is a NumPy array), and the mass matrix those
of n Newton–Euler passes (method="strobe", a second formulation). The batch kernels, forward
dynamics and the adaptive law's steps call the one-state kernels' single compiled versions
(``as_declared``), not versions of their own."""
import concurrent.futures

import numba
import numpy as np

from robodyn_ros.dynamics import crba, forward, layout, newton_euler
from robodyn_ros.control import adaptive
from robodyn_ros.dynamics import model as dynamics_model
from robodyn_ros.dynamics import regressor
from robodyn_ros.dynamics.counting import generic_arm
from robodyn_ros.plumbing import kernels


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


def test_a_batch_calls_the_one_state_kernel_s_one_compiled_version(model):
    """A second version of a one-state kernel would cost seconds of compiling in every process
    that uses both paths (``robodyn-ros compile`` too): each caller is typed anew here (whatever
    numba's cache holds), and the one-state kernels it calls have only the version the model's
    ``Direct`` calls declare. The rows give the one-state numbers."""
    rng = np.random.default_rng(7)
    q, qd, qdd = rng.uniform(-1.0, 1.0, (3, 5, model.dof))
    for direct in (dynamics_model._RNEA_WRENCH, dynamics_model._CRBA,
                   dynamics_model._FORWARD_WRENCH):
        direct.ready()
    P, mode, wrenches = model.params, newton_euler.GRAVITY | newton_euler.TIP_WRENCH, np.ones((5, 6))
    tau, M, qdd_out = np.empty((5, model.dof)), np.empty((5, model.dof, model.dof)), \
        np.empty((5, model.dof))
    for caller, args in ((newton_euler.rnea_batch, (P, q, qd, qdd, wrenches, mode, tau)),
                         (crba.crba_batch, (P, q, M)),
                         (forward.forward_dynamics_batch, (P, q, qd, qdd, wrenches, mode, qdd_out))):
        numba.njit(cache=False)(caller.py_func)(*args)
    for direct in (regressor._ONE, regressor._PAYLOAD, adaptive._PAYLOAD_STEP, adaptive._BASE_STEP):
        direct.ready()
    for direct in (dynamics_model._FORWARD_WRENCH, adaptive._PAYLOAD_STEP, adaptive._BASE_STEP,
                   adaptive._ANSWER):   # typed as their Direct calls them
        numba.njit(cache=False)(direct._kernel.py_func).compile(direct._signature)
    for one_state in (newton_euler.rnea, crba.crba, forward.forward_dynamics,
                      regressor.regressor_one, regressor.payload_one, adaptive.payload_step,
                      adaptive.base_step):
        assert len(one_state.signatures) == 1, (one_state, one_state.signatures)
    for k in range(5):
        assert np.array_equal(tau[k], model.inverse_dynamics(q[k], qd[k], qdd[k],
                                                             tip_wrench=np.ones(6),
                                                             friction=False))
        assert np.array_equal(M[k], model.mass_matrix(q[k]))
        assert np.array_equal(qdd_out[k], model.forward_dynamics(q[k], qd[k], qdd[k],
                                                                 tip_wrench=np.ones(6),
                                                                 friction=False))


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
