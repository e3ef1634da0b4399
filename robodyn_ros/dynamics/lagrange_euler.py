"""Lagrange–Euler dynamics with 4x4 matrices (Uicker; Lewis; 001 §2, 004 §3.1), written apart from
the Newton–Euler code so that each checks the other, and run on counting scalars for the complexity
comparison.

With T_i the pose of joint frame i and Q_j the derivative of the joint's motion (revolute: rotation
about z; prismatic: translation along z), let Delta_j = T_j Q_j T_j^-1. Then
    U_ij = dT_i/dq_j = Delta_j T_i,     U_ijk = Delta_min(j,k) Delta_max(j,k) T_i     (j, k <= i),
and, with J_i the pseudo-inertia of link i in its frame,
    D_ik  = sum_{j >= max(i,k)}   Tr(U_jk J_j U_ji^T)
    h_ikm = sum_{j >= max(i,k,m)} Tr(U_jkm J_j U_ji^T)
    c_i   = sum_{j >= i} -m_j g^T U_ji r_j
    tau_i = sum_k D_ik qdd_k + sum_k sum_m h_ikm qd_k qd_m + c_i.
"""
import numpy as np

from .link import PRISMATIC

_Q_REVOLUTE = np.zeros((4, 4))
_Q_REVOLUTE[0, 1], _Q_REVOLUTE[1, 0] = -1.0, 1.0
_Q_PRISMATIC = np.zeros((4, 4))
_Q_PRISMATIC[2, 3] = 1.0


def pseudo_inertia(link):
    """J = integral of [r; 1][r; 1]^T dm over the link, in its joint frame."""
    c = np.asarray(link.com, dtype=float)
    I_o = link.inertia + link.mass * (c @ c * np.eye(3) - np.outer(c, c))
    J = np.zeros((4, 4))
    J[:3, :3] = 0.5 * np.trace(I_o) * np.eye(3) - I_o
    J[:3, 3] = J[3, :3] = link.mass * c
    J[3, 3] = link.mass
    return J


def _motion(joint, qi):
    M = np.zeros((4, 4), dtype=np.result_type(np.asarray(qi), float))
    M[0, 0] = M[1, 1] = M[2, 2] = M[3, 3] = 1.0
    if joint == PRISMATIC:
        M[2, 3] = qi
    else:
        c, s = np.cos(qi), np.sin(qi)
        M[0, 0], M[0, 1], M[1, 0], M[1, 1] = c, -s, s, c
    return M


def _trace_product(A, B, C):
    """Tr(A B C^T) without forming the product: sum over (A B) * C elementwise."""
    return np.sum((A @ B) * C)


def lagrange_euler(model, q, qd, qdd, tip_wrench=None, friction=True):
    """Joint forces by Lagrange–Euler; same meaning and arguments as ``RobotModel.inverse_dynamics``
    for one state (``q`` may hold counting scalars)."""
    n = model.dof
    T, Delta, J = [], [], []
    pose = np.eye(4)
    for link, qi in zip(model.links, q):
        pose = pose @ link.pre @ _motion(link.joint, qi)
        Q = _Q_PRISMATIC if link.joint == PRISMATIC else _Q_REVOLUTE
        inverse = np.eye(4, dtype=pose.dtype)
        inverse[:3, :3] = pose[:3, :3].T
        inverse[:3, 3] = -(pose[:3, :3].T @ pose[:3, 3])
        T.append(pose)
        Delta.append(pose @ Q @ inverse)
        J.append(pseudo_inertia(link))

    U = [[Delta[j] @ T[i] if j <= i else None for j in range(n)] for i in range(n)]
    g = np.append(model.gravity, 0.0)
    tau = np.empty(n, dtype=np.result_type(q, float))
    for i in range(n):
        total = 0.0
        for k in range(n):
            D_ik = sum(_trace_product(U[j][k], J[j], U[j][i]) for j in range(max(i, k), n))
            total = total + D_ik * qdd[k]
            for m in range(n):
                lo, hi = min(k, m), max(k, m)
                h_ikm = sum(_trace_product(Delta[lo] @ Delta[hi] @ T[j], J[j], U[j][i])
                            for j in range(max(i, k, m), n))
                total = total + h_ikm * qd[k] * qd[m]
        c_i = sum(-model.links[j].mass * (g @ U[j][i] @ np.append(model.links[j].com, 1.0))
                  for j in range(i, n))
        tau[i] = total + c_i
    tau = tau + model.armature * np.asarray(qdd)
    if friction:
        tau = tau + model.friction_torques(np.asarray(qd, dtype=float))
    if tip_wrench is not None:
        tau = tau + _wrench_torques(model, Delta, T[-1] @ model.tip, np.asarray(tip_wrench, dtype=float))
    return tau


def _wrench_torques(model, Delta, tip, wrench):
    """Virtual work of the wrench the tool exerts: tau_j = f . dp/dq_j + n . dtheta/dq_j."""
    R = tip[:3, :3]
    f, moment = R @ wrench[:3], R @ wrench[3:]
    tau = np.empty(model.dof)
    for j, D in enumerate(Delta):
        dT = D @ tip
        omega = np.array([D[2, 1], D[0, 2], D[1, 0]])
        tau[j] = f @ dT[:3, 3] + moment @ omega
    return tau
