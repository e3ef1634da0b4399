"""Compiled kernels of the exact universal-joint leg (leg_model "universal"), built from the paper's
per-leg equations in kernel.py with two changes (doc/stewart_models.md explains them):

* The leg spins. A universal joint turns the lower part about the fixed axis k (rate theta1') and
  about y = k x s / |k x s| (fixed in the leg), so the leg's angular velocity is
  w = theta1' k + theta2' y. Its part normal to s is the paper's W; its component along s, the spin,
  is sigma = s.w = c theta1' with c = s.k and theta1' = k.w = k.W / |k x s|^2 (= 1 - c^2).
  Then w = W + sigma s and dw/dt = A + sigma' s + sigma (W x s).
* The joint's constraint moment lies along n = k x y (it transmits no moment about k or y), not
  along s: the leg's moment balance about the joint, L s x F_s + mu n = C, gives mu = s.C / s.n from
  its component along s and the transverse spherical-joint force K = (C - mu n) x s / L from the rest.

Joint friction acts on the joint rates: the universal joint's C_u (theta1' k + theta2' y) = C_u w and
the spherical joint's C_s (w - omega_platform), which are the paper's C_u W and C_s (W - omega) when
the leg does not spin. Where sigma and sigma' vanish (k normal to s and to s') the model is the
paper's.
"""
import numpy as np

from .kernel import (DEGENERATE_JOINT, M_K, O_F, O_X, _inline, _jit, add, cross, dot,
                     leg_frame, leg_kinematics, leg_loads, leg_reactions, platform_solve, scale,
                     store_leg, store_reactions, sub, v3)


@_inline
def spin(k, s, nks, W, A):
    """Angular velocity w and acceleration dw of a leg held by a universal joint of fixed axis k,
    from the paper's W and A (their parts normal to s)."""
    c = dot(s, k)
    c_dot = dot(cross(W, s), k)                  # s' = W x s
    inv = 1.0 / (nks * nks)                      # 1 / |k x s|^2
    th1d = dot(k, W) * inv
    th1dd = (dot(k, A) + 2.0 * c * c_dot * th1d) * inv
    sigma = c * th1d
    sigma_dot = c_dot * th1d + c * th1dd
    w = add(W, scale(sigma, s))
    dw = add(add(A, scale(sigma_dot, s)), scale(sigma, cross(W, s)))
    return w, dw


@_inline
def leg_dynamics_universal(model, i, pose):
    """leg_dynamics (kernel.py) for the universal-joint leg, with w, dw in place of W, A, and the
    constraint moment mu along n."""
    q, L, s, Ld, W, Ldd, A = leg_kinematics(model, i, pose)
    y, z, nks = leg_frame(model, i, s)
    k = v3(model, M_K + 3 * i)
    w, dw = spin(k, s, nks, W, A)
    r_d, r_u, a_d, a_u, C, D, f = leg_loads(model, i, pose, L, s, Ld, Ldd, y, z, w, dw)
    n = cross(k, y)
    mu = dot(s, C) / dot(s, n)                   # s.n = -|k x s|
    K = scale(1.0 / L, cross(sub(C, scale(mu, n)), s))
    return q, L, s, Ld, Ldd, w, dw, y, z, nks, r_d, r_u, a_d, a_u, C, K, D, f, mu, n


@_inline
def inverse_dynamics_pose(model, pose, Hw, U, norms, work, out, n):
    """kernel.inverse_dynamics_pose with universal-joint legs."""
    sumK = (0.0, 0.0, 0.0)
    sumqK = (0.0, 0.0, 0.0)
    degenerate = False
    for i in range(6):
        (q, L, s, Ld, Ldd, w, dw, y, z, nks, r_d, r_u, a_d, a_u, C, K, D, f, mu, axis) = \
            leg_dynamics_universal(model, i, pose)
        if not nks > DEGENERATE_JOINT:
            degenerate = True
        store_leg(Hw, out, n, i, q, s, L, Ld, Ldd, D)
        sumK = add(sumK, K)
        sumqK = add(sumqK, sub(cross(q, K), f))
    return platform_solve(model, pose, sumK, sumqK, degenerate, Hw, U, norms, work, out, n)


@_jit
def inverse_dynamics_batch(model, poses, out, cond, start, stop):
    """kernel.inverse_dynamics_batch with universal-joint legs."""
    Hw = np.empty((6, 8), poses.dtype)
    U = np.empty((6, 6), poses.dtype)
    norms = np.empty(6, poses.dtype)
    work = np.empty((3, 3), poses.dtype)
    for n in range(start, stop):
        cond[n] = inverse_dynamics_pose(model, poses[n], Hw, U, norms, work, out, n)


@_jit
def constraint_forces_batch(model, poses, out, vec, mu):
    """kernel.constraint_forces_batch with universal-joint legs: the constraint moment mu n."""
    for n in range(poses.shape[0]):
        for i in range(6):
            (q, L, s, Ld, Ldd, w, dw, y, z, nks, r_d, r_u, a_d, a_u, C, K, D, f, m_u, axis) = \
                leg_dynamics_universal(model, i, poses[n])
            fs, fp, fc, fu, mp = leg_reactions(model, i, out[O_X, n, i], out[O_F, n, i], s, Ld, y,
                                               z, w, dw, r_d, a_d, a_u, K, scale(m_u, axis))
            store_reactions(vec, mu, n, i, fs, fp, fc, fu, mp, m_u, axis)
