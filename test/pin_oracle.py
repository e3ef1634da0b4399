"""Shared by the tests that use Pinocchio as an oracle (a helper module, not a test module)."""
import numpy as np
import pinocchio as pin


def configuration(model, joints, q) -> np.ndarray:
    """Pinocchio's configuration vector of ``model`` with ``joints`` (its JointModels, in our
    chain order) at our joint positions ``q``; every other joint at its neutral position."""
    out = pin.neutral(model)
    for j, qi in zip(joints, q):
        if j.nq == 2:              # continuous joint: (cos q, sin q)
            out[j.idx_q:j.idx_q + 2] = np.cos(qi), np.sin(qi)
        else:
            out[j.idx_q] = qi
    return out
