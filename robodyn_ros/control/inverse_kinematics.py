"""Whether an arm can reach a pose: the workspace bound (``reach``) and a damped least-squares
inverse kinematics within the joint limits (``solve``), checked along the points of a Cartesian
path (``unreachable``). What the controller asks before it accepts a task-space target."""
from __future__ import annotations

import numpy as np

from ..spatial.rotations import log_so3, quaternion_matrix

IK_ITERATIONS, IK_POINT_ITERATIONS = 200, 30
IK_POSITION_TOLERANCE, IK_ORIENTATION_TOLERANCE = 1e-3, 1e-2   # m, rad
IK_SPACING = 0.01, 0.05   # m, rad: trajectory points closer than this to the last one solved are skipped
_DAMPING = 1e-2                      # λ of the IK's damped least squares
_STEP = 0.1                          # m (and rad) at most per IK iteration


def reach(model, link=None) -> tuple[np.ndarray, float]:
    """The first joint's axis origin (base frame) and an upper bound of the distance from it to
    the origin of ``link``'s frame: the sum of the distances between successive joint frames and
    from the frame's joint to the frame, plus each prismatic joint's travel (a link fixed to the
    base: its own distance, as it never moves)."""
    origin, f = model.links[0].pre[:3, 3].copy(), model.frame(link)
    if f.joint < 0:
        return origin, float(np.linalg.norm(f.offset[9:] - origin))
    lengths = [np.linalg.norm(model.links[i].pre[:3, 3]) for i in range(1, f.joint + 1)]
    lengths.append(np.linalg.norm(f.offset[9:]))
    travel = [max(abs(model.lower[i]), abs(model.upper[i])) for i in range(f.joint + 1)
              if model.joint_types[i] == "prismatic"]
    return origin, float(sum(lengths) + sum(travel))


def solve(model, link, q, position, rotation, iterations):
    """Damped least squares from ``q`` towards the pose, each step clipped into the joint limits:
    (q reached, position residual m, orientation residual rad)."""
    q, zero = np.array(q, dtype=float), np.zeros(model.dof)
    for k in range(iterations + 1):
        pose, J, _, _ = model.frame_motion(q, zero, link)
        e = np.concatenate([position - pose[:3, 3], log_so3(rotation @ pose[:3, :3].T)])
        size = np.linalg.norm(e)
        if k == iterations or (np.linalg.norm(e[:3]) < 0.1 * IK_POSITION_TOLERANCE
                               and np.linalg.norm(e[3:]) < 0.1 * IK_ORIENTATION_TOLERANCE):
            break
        e *= min(1.0, _STEP / size)
        q = np.clip(q + J.T @ np.linalg.solve(J @ J.T + _DAMPING ** 2 * np.eye(6), e),
                    model.lower, model.upper)
    return q, float(np.linalg.norm(e[:3])), float(np.linalg.norm(e[3:]))


def unreachable(model, link, q, positions, quaternions) -> str:
    """Why the poses (K x 3 positions, K x 4 unit quaternions) cannot be reached from ``q``, or ''."""
    origin, longest = reach(model, link)
    distance = np.linalg.norm(positions - origin, axis=1)
    if np.any(distance > longest):
        i = int(np.argmax(distance > longest))
        return (f"point {i}: outside the workspace, {distance[i]:.4g} m from the first joint's "
                f"axis, the arm reaches {longest:.4g} m")
    rotations, last = quaternion_matrix(quaternions), None
    for i in range(len(positions)):
        if last is not None and i < len(positions) - 1 and (
                np.linalg.norm(positions[i] - positions[last]) < IK_SPACING[0] and 2.0 * np.arccos(
                    min(abs(quaternions[i] @ quaternions[last]), 1.0)) < IK_SPACING[1]):
            continue   # close to the last point solved: the path between is not checked anyway
        last = i
        q, dp, dr = solve(model, link, q, positions[i], rotations[i],
                          IK_ITERATIONS if i == 0 else IK_POINT_ITERATIONS)
        if dp > IK_POSITION_TOLERANCE or dr > IK_ORIENTATION_TOLERANCE:
            at = [name for name, v, lo, hi in zip(model.joint_names, q, model.lower, model.upper)
                  if v <= lo or v >= hi]
            return (f"point {i}: not reached within the joint limits (damped least squares from "
                    f"the measured configuration): residual {dp:.3g} m, {dr:.3g} rad"
                    + (f", at the limit: {', '.join(at)}" if at else ""))
    return ""
