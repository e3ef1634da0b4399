"""The one-state kernels' workspaces (robodyn_ros.plumbing.kernels.scratch): on the machine stack up
to STACK_SCRATCH values, on the heap above, each thread its own. Either way a state gets the numbers
the batch kernels give it (their workspace is a heap array), and the mass matrix those of n
Newton–Euler passes (method="strobe", a second formulation)."""
import concurrent.futures

import numpy as np

from robodyn_ros.dynamics import layout
from robodyn_ros.dynamics.counting import generic_arm
from robodyn_ros.plumbing import kernels


def test_a_workspace_too_large_for_the_stack_gives_the_same_numbers():
    # 240 joints: the CRBA and Newton–Euler workspaces (240 x 22 and 240 x 18) are over the limit
    arm = generic_arm(240, seed=5)
    assert arm.dof * layout.RNEA_COLUMNS > kernels.STACK_SCRATCH
    assert arm.dof * layout.CRBA_COLUMNS > kernels.STACK_SCRATCH
    rng = np.random.default_rng(5)
    q, qd, qdd = rng.uniform(-1.0, 1.0, (3, 2, arm.dof))
    M, tau = arm.mass_matrix(q), arm.inverse_dynamics(q, qd, qdd)
    for k in range(2):
        assert np.array_equal(arm.mass_matrix(q[k]), M[k])
        assert np.array_equal(arm.inverse_dynamics(q[k], qd[k], qdd[k]), tau[k])
    strobe = arm.mass_matrix(q[0], method="strobe")
    assert np.allclose(M[0], strobe, rtol=1e-9, atol=1e-9 * np.abs(strobe).max())


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
