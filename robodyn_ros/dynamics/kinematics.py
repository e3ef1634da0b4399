"""Forward kinematics, the tip Jacobian and the energies, in plain NumPy (not on the control path)."""
import numpy as np

from .link import PRISMATIC


def joint_transform(link, qi):
    """Pose of joint frame i in joint frame i-1: the constant part, then the motion along z."""
    motion = np.eye(4)
    if link.joint == PRISMATIC:
        motion[2, 3] = qi
    else:
        c, s = np.cos(qi), np.sin(qi)
        motion[:2, :2] = [[c, -s], [s, c]]
    return link.pre @ motion


def link_frames(model, q):
    frames = []
    T = np.eye(4)
    for link, qi in zip(model.links, q):
        T = T @ joint_transform(link, qi)
        frames.append(T)
    frames.append(T @ model.tip)
    return frames


def _columns(model, frames, point, upto):
    """Jacobian columns [v; w] of ``point`` (world) for the joints before and including ``upto``."""
    J = np.zeros((6, model.dof))
    for j in range(upto + 1):
        z, o = frames[j][:3, 2], frames[j][:3, 3]
        if model.links[j].joint == PRISMATIC:
            J[:3, j] = z
        else:
            J[:3, j] = np.cross(z, point - o)
            J[3:, j] = z
    return J


def tip_jacobian(model, q):
    frames = link_frames(model, q)
    return _columns(model, frames, frames[-1][:3, 3], model.dof - 1)


def energy(model, q, qd):
    frames = link_frames(model, q)
    kinetic = 0.5 * model.armature @ (qd * qd)
    potential = 0.0
    for i, link in enumerate(model.links):
        R, o = frames[i][:3, :3], frames[i][:3, 3]
        c = o + R @ link.com
        J = _columns(model, frames, c, i)
        v, w = J[:3] @ qd, J[3:] @ qd
        kinetic += 0.5 * link.mass * v @ v + 0.5 * w @ (R @ link.inertia @ R.T) @ w
        potential -= link.mass * model.gravity @ c
    return kinetic, potential
