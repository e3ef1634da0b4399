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


def frame_motion(p, data, fid, q, qd, reference):
    """(pose in our base, J, J q̇, J̇ q̇ at q̈ = 0) of Pinocchio's frame ``fid``, as our
    ``frame_motion`` gives them: ``p`` a test's view of Pinocchio's model (``model``, ``joints`` in
    our order, ``q``; optional ``v_`` for our velocity in its tangent space and ``root``, our base
    in its world). "world": LOCAL_WORLD_ALIGNED turned into our base, J̇ q̇ the classical
    acceleration; "body": LOCAL, J̇ q̇ the spatial acceleration (d/dt(J_b) q̇). Both in [v; ω]."""
    model, root = p.model, getattr(p, "root", np.eye(4))
    qp, v = p.q(q), getattr(p, "v_", lambda x: x)(qd)
    pin.forwardKinematics(model, data, qp, v, np.zeros(model.nv))
    pin.computeJointJacobians(model, data, qp)
    pin.updateFramePlacements(model, data)
    pose = np.linalg.solve(root, data.oMf[fid].homogeneous)
    rf = pin.LOCAL_WORLD_ALIGNED if reference == "world" else pin.LOCAL
    J = pin.getFrameJacobian(model, data, fid, rf).reshape(6, -1)[:, [j.idx_v for j in p.joints]]
    twist = pin.getFrameVelocity(model, data, fid, rf).vector
    if reference != "world":
        return pose, J, twist, pin.getFrameAcceleration(model, data, fid, rf).vector
    turn = np.kron(np.eye(2), root[:3, :3].T)      # Pinocchio's world into our base
    bias = pin.getFrameClassicalAcceleration(model, data, fid, rf).vector
    return pose, turn @ J, turn @ twist, turn @ bias
