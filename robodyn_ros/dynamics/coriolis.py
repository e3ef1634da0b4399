"""The Coriolis matrix C(q, qd), built body by body from Jacobians and their time derivatives:

    C = sum_i  m_i Jv_i^T dJv_i + Jw_i^T (I_i dJw_i + [w_i]x I_i Jw_i)

(world frame, Jv_i of the centre of mass, I_i about it). Then C qd is the Coriolis and centrifugal
force of the Newton–Euler pass and dM/dt - 2C is skew-symmetric, since [w]x I + I [w]x is skew.
NumPy, O(n^3): a tool for analysis and passivity-based control, not for the 1 kHz loop.
"""
import numpy as np

from .kinematics import link_frames
from .link import PRISMATIC
from .transforms import skew


def _point_jacobian_and_rate(model, frames, omegas, point, point_velocity, upto, qd):
    n = model.dof
    Jv, Jw, dJv, dJw = (np.zeros((3, n)) for _ in range(4))
    for j in range(upto + 1):
        z, o = frames[j][:3, 2], frames[j][:3, 3]
        dz = np.cross(omegas[j], z)
        if model.links[j].joint == PRISMATIC:
            Jv[:, j] = z
            dJv[:, j] = dz
        else:
            origin_velocity = _velocity(model, frames, o, j, qd)
            Jv[:, j] = np.cross(z, point - o)
            dJv[:, j] = np.cross(dz, point - o) + np.cross(z, point_velocity - origin_velocity)
            Jw[:, j] = z
            dJw[:, j] = dz
    return Jv, Jw, dJv, dJw


def _velocity(model, frames, point, upto, qd):
    v = np.zeros(3)
    for j in range(upto + 1):
        z, o = frames[j][:3, 2], frames[j][:3, 3]
        v += qd[j] * (z if model.links[j].joint == PRISMATIC else np.cross(z, point - o))
    return v


def coriolis_matrix(model, q, qd):
    q = np.asarray(q, dtype=float)
    qd = np.asarray(qd, dtype=float)
    if q.ndim == 2:
        return np.stack([coriolis_matrix(model, a, b) for a, b in zip(q, qd)])
    frames = link_frames(model, q)
    omegas, w = [], np.zeros(3)
    for j in range(model.dof):
        if model.links[j].joint != PRISMATIC:
            w = w + qd[j] * frames[j][:3, 2]
        omegas.append(w)
    C = np.zeros((model.dof, model.dof))
    for i, link in enumerate(model.links):
        R, o = frames[i][:3, :3], frames[i][:3, 3]
        c = o + R @ link.com
        Jv, Jw, dJv, dJw = _point_jacobian_and_rate(
            model, frames, omegas, c, _velocity(model, frames, c, i, qd), i, qd)
        I = R @ link.inertia @ R.T
        C += link.mass * Jv.T @ dJv + Jw.T @ (I @ dJw + skew(omegas[i]) @ I @ Jw)
    return C
