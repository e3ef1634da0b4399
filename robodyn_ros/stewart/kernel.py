"""Compiled per-pose kernels of Dasgupta & Mruthyunjaya 1998 (eqs. 1-37, 41), one source for the single
and the batched path.

3-vectors are tuples (stack values in numba: no allocation per pose); the leg frame T = [s y z] of
eq. (10) is kept as its three columns. Every kernel is plain Python underneath (``f.py_func``), which is
how ``robodyn_ros.stewart.flops`` runs the same code on counting scalars; for that the kernels use only
``np.sqrt``/``abs``/arithmetic on scalars and write into arrays the caller allocates.
"""
import numpy as np
from numba import njit

# Beyond this ratio of extreme singular values H is singular in double precision: the solution would
# carry no correct digit, so no forces are produced (NaN) and the pose is flagged.
SINGULAR_CONDITION = 1e12
# |k x s| below this: the universal joint's fixed axis lies along the leg, eq. (10) has no frame.
DEGENERATE_JOINT = 1e-9
_JACOBI_SWEEPS = 40


@njit(cache=True)
def cross(a, b):
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


@njit(cache=True)
def dot(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


@njit(cache=True)
def add(a, b):
    return (a[0] + b[0], a[1] + b[1], a[2] + b[2])


@njit(cache=True)
def sub(a, b):
    return (a[0] - b[0], a[1] - b[1], a[2] - b[2])


@njit(cache=True)
def scale(c, a):
    return (c * a[0], c * a[1], c * a[2])


@njit(cache=True)
def matvec(m, a):
    return (m[0, 0] * a[0] + m[0, 1] * a[1] + m[0, 2] * a[2],
            m[1, 0] * a[0] + m[1, 1] * a[1] + m[1, 2] * a[2],
            m[2, 0] * a[0] + m[2, 1] * a[1] + m[2, 2] * a[2])


@njit(cache=True)
def matTvec(m, a):
    return (m[0, 0] * a[0] + m[1, 0] * a[1] + m[2, 0] * a[2],
            m[0, 1] * a[0] + m[1, 1] * a[1] + m[2, 1] * a[2],
            m[0, 2] * a[0] + m[1, 2] * a[1] + m[2, 2] * a[2])


@njit(cache=True)
def from_frame(x, y, z, c):
    """T c for T = [x y z] (eqs. 11, 12, 15)."""
    return (x[0] * c[0] + y[0] * c[1] + z[0] * c[2],
            x[1] * c[0] + y[1] * c[1] + z[1] * c[2],
            x[2] * c[0] + y[2] * c[1] + z[2] * c[2])


@njit(cache=True)
def leg_kinematics(b, p, R, t, v, w, a, al):
    """Eqs. (1)-(9) for one leg: q = R p, L, s, L', W, L'', A (eq. 9 with its dots restored)."""
    q = matvec(R, p)
    S = sub(add(q, t), b)                                   # (1)
    L = np.sqrt(dot(S, S))                                  # (2)
    s = scale(1.0 / L, S)                                   # (3)
    Sd = add(cross(w, q), v)                                # (4)
    Ld = dot(s, Sd)                                         # (5)
    W = scale(1.0 / L, cross(s, Sd))                        # (6)
    Sdd = add(add(cross(al, q), cross(w, cross(w, q))), a)  # (7)
    Ldd = dot(s, Sdd) + L * dot(W, W)                       # (8)
    A = scale(1.0 / L, sub(cross(s, Sdd), scale(2.0 * Ld, W)))  # (9): A = (s x S'' - 2 L' W) / L
    return q, L, s, Ld, W, Ldd, A


@njit(cache=True)
def leg_dynamics(i, b, k, p, m_d, m_u, r_d0, r_u0, I_d0, I_l0, C_u, C_p, C_s, g,
                 R, t, v, w, a, al, printed_eq16):
    """Section 2 for leg i: everything the platform equations and eqs. (25)-(29) need."""
    q, L, s, Ld, W, Ldd, A = leg_kinematics(b[i], p[i], R, t, v, w, a, al)
    ks = cross(k[i], s)
    nks = np.sqrt(dot(ks, ks))
    y = scale(1.0 / nks, ks)                                # (10)
    z = cross(s, y)
    r_d = from_frame(s, y, z, r_d0[i])                      # (11)
    r_u = add(from_frame(s, y, z, r_u0[i]), scale(L, s))    # (12)
    a_d = add(cross(A, r_d), cross(W, cross(W, r_d)))       # (13)
    a_u = add(add(scale(Ldd, s), cross(A, r_u)),            # (14)
              add(cross(W, cross(W, r_u)), scale(2.0 * Ld, cross(W, s))))
    # I A + W x I W of both parts, evaluated in the leg frame; I_l0 = I_d0 + I_u0 (eqs. 15, 16 with I_u
    # about its own centre of mass: the m_u r_u x a_u term of eq. 19 already carries the transfer).
    A_l = (dot(s, A), dot(y, A), dot(z, A))
    W_l = (dot(s, W), dot(y, W), dot(z, W))
    J = I_l0[i]
    euler = from_frame(s, y, z, add(matvec(J, A_l), cross(W_l, matvec(J, W_l))))
    if printed_eq16:
        # The printed eq. (16) adds m_u L^2 diag(0,1,1) in the leg frame: m_u L^2 A, since s.A = 0 and
        # W x (m_u L^2 W) = 0.
        euler = add(euler, scale(m_u[i] * L * L, A))
    f = scale(C_s, sub(W, w))                               # spherical-joint friction moment
    C = add(add(cross(scale(m_d[i], r_d), sub(a_d, g)), cross(scale(m_u[i], r_u), sub(a_u, g))),
            add(euler, add(scale(C_u, W), f)))              # (20)
    K = scale(1.0 / L, cross(C, s))                         # (21)
    D = m_u[i] * dot(s, sub(a_u, g)) + C_p * Ld             # (24) with L' (dot restored)
    return q, L, s, Ld, Ldd, W, A, y, z, nks, r_d, r_u, a_d, a_u, C, K, D, f


@njit(cache=True)
def condition_number(H, U):
    """sigma_max / sigma_min of the 6x6 H by one-sided (Hestenes) Jacobi on the copy U: accurate even for
    nearly singular H, which a Gram-matrix eigenvalue route is not."""
    n = 6
    for r in range(n):
        for c in range(n):
            U[r, c] = H[r, c]
    for _ in range(_JACOBI_SWEEPS):
        rotated = False
        for i in range(n - 1):
            for j in range(i + 1, n):
                alpha = 0.0
                beta = 0.0
                gamma = 0.0
                for r in range(n):
                    alpha = alpha + U[r, i] * U[r, i]
                    beta = beta + U[r, j] * U[r, j]
                    gamma = gamma + U[r, i] * U[r, j]
                if abs(gamma) > 1e-15 * np.sqrt(alpha * beta):
                    rotated = True
                    zeta = (beta - alpha) / (2.0 * gamma)
                    tan = 1.0 / (abs(zeta) + np.sqrt(1.0 + zeta * zeta))
                    if zeta < 0.0:
                        tan = -tan
                    cos = 1.0 / np.sqrt(1.0 + tan * tan)
                    sin = cos * tan
                    for r in range(n):
                        ui = U[r, i]
                        uj = U[r, j]
                        U[r, i] = cos * ui - sin * uj
                        U[r, j] = sin * ui + cos * uj
        if not rotated:
            break
    smax = 0.0
    smin = np.inf
    for c in range(n):
        sc = 0.0
        for r in range(n):
            sc = sc + U[r, c] * U[r, c]
        sc = np.sqrt(sc)
        if sc > smax:
            smax = sc
        if sc < smin:
            smin = sc
    if smin == 0.0:
        return np.inf
    return smax / smin


@njit(cache=True)
def solve(Hw, nrhs):
    """Gaussian elimination with partial pivoting of Hw[:, :6] X = Hw[:, 6:6+nrhs], in place; the
    solutions end up in Hw[:, 6:6+nrhs]."""
    n = 6
    m = n + nrhs
    for col in range(n):
        piv = col
        big = abs(Hw[col, col])
        for r in range(col + 1, n):
            if abs(Hw[r, col]) > big:
                big = abs(Hw[r, col])
                piv = r
        if piv != col:
            for c in range(col, m):
                tmp = Hw[col, c]
                Hw[col, c] = Hw[piv, c]
                Hw[piv, c] = tmp
        inv = 1.0 / Hw[col, col]
        for r in range(col + 1, n):
            fac = Hw[r, col] * inv
            if fac != 0.0:
                for c in range(col + 1, m):
                    Hw[r, c] = Hw[r, c] - fac * Hw[col, c]
    for c in range(n, m):
        for r in range(n - 1, -1, -1):
            acc = Hw[r, c]
            for j in range(r + 1, n):
                acc = acc - Hw[r, j] * Hw[j, c]
            Hw[r, c] = acc / Hw[r, r]


@njit(cache=True)
def inverse_dynamics_pose(b, k, p, m_d, m_u, r_d0, r_u0, I_d0, I_l0, C_u, C_p, C_s, g,
                          M, R0, I_p, R, t, v, w, a, al, F_ext, M_ext, printed_eq16,
                          Hw, U, out_L, out_Ld, out_Ldd, out_D, out_x, out_F, out_F0):
    """One pose: writes L, L', L'', D, x, F (eq. 37), F0 (eq. 41); returns the condition number of H
    (inf when a universal joint is degenerate). Forces stay NaN when H is singular."""
    sumK = (0.0, 0.0, 0.0)
    sumqK = (0.0, 0.0, 0.0)
    degenerate = False
    for i in range(6):
        (q, L, s, Ld, Ldd, W, A, y, z, nks, r_d, r_u, a_d, a_u, C, K, D, f) = leg_dynamics(
            i, b, k, p, m_d, m_u, r_d0, r_u0, I_d0, I_l0, C_u, C_p, C_s, g,
            R, t, v, w, a, al, printed_eq16)
        if not nks > DEGENERATE_JOINT:
            degenerate = True
        qs = cross(q, s)
        for r in range(3):                                  # columns of H (eq. 36)
            Hw[r, i] = s[r]
            Hw[r + 3, i] = qs[r]
        sumK = add(sumK, K)
        sumqK = add(sumqK, sub(cross(q, K), f))
        out_L[i] = L
        out_Ld[i] = Ld
        out_Ldd[i] = Ldd
        out_D[i] = D
    # Platform (eqs. 30-34), inertia terms evaluated in the platform frame (eq. 32).
    Rc = matvec(R, R0)                                      # (30)
    a_c = add(add(cross(al, Rc), cross(w, cross(w, Rc))), a)  # (31)
    g_a = sub(g, a_c)
    w_l = matTvec(R, w)
    al_l = matTvec(R, al)
    Iterms = matvec(R, add(matvec(I_p, al_l), cross(w_l, matvec(I_p, w_l))))
    force0 = add(matvec(R, F_ext), scale(M, g_a))
    moment0 = add(sub(cross(scale(M, Rc), g_a), Iterms), matvec(R, M_ext))
    for r in range(3):
        Hw[r, 6] = force0[r] - sumK[r]                     # c of eq. (35)
        Hw[r + 3, 6] = moment0[r] - sumqK[r]
        Hw[r, 7] = -force0[r]                               # -c0 of eq. (41)
        Hw[r + 3, 7] = -moment0[r]
    cond = condition_number(Hw, U)
    if degenerate:
        cond = np.inf
    if not cond < SINGULAR_CONDITION:
        for i in range(6):
            out_x[i] = np.nan
            out_F[i] = np.nan
            out_F0[i] = np.nan
        return cond
    solve(Hw, 2)
    for i in range(6):
        out_x[i] = Hw[i, 6]
        out_F[i] = out_D[i] - Hw[i, 6]                      # (37)
        out_F0[i] = Hw[i, 7]
    return cond


@njit(cache=True)
def constraint_forces_pose(b, k, p, m_d, m_u, r_d0, r_u0, I_d0, I_l0, C_u, C_p, C_s, g,
                           R, t, v, w, a, al, printed_eq16, x, F, d_p,
                           F_s, F_p, F_c, F_u, M_u, M_p):
    """Eqs. (21), (26), (28), (27), (29) and (17) for each leg once x is known. M_p is the moment at the
    prismatic joint about the point r = d_p s on the leg axis (the paper leaves r open)."""
    for i in range(6):
        (q, L, s, Ld, Ldd, W, A, y, z, nks, r_d, r_u, a_d, a_u, C, K, D, f) = leg_dynamics(
            i, b, k, p, m_d, m_u, r_d0, r_u0, I_d0, I_l0, C_u, C_p, C_s, g,
            R, t, v, w, a, al, printed_eq16)
        fs = add(scale(x[i], s), K)                                         # (21)
        fp = add(sub(scale(m_u[i], sub(a_u, g)), fs), scale(C_p * Ld, s))   # (26)
        fc = sub(fp, scale(F[i], s))                                        # (28)
        fu = sub(add(scale(m_d[i], sub(a_d, g)), scale(m_u[i], sub(a_u, g))), fs)  # (27)
        mu = dot(s, C)                                                      # (29)
        A_l = (dot(s, A), dot(y, A), dot(z, A))
        W_l = (dot(s, W), dot(y, W), dot(z, W))
        Jd = I_d0[i]
        euler_d = from_frame(s, y, z, add(matvec(Jd, A_l), cross(W_l, matvec(Jd, W_l))))
        mp = sub(add(cross(scale(m_d[i], r_d), sub(g, a_d)), scale(mu, s)),   # (17) solved for M_p
                 add(add(euler_d, cross(scale(d_p, s), fp)), scale(C_u, W)))
        M_u[i] = mu
        for r in range(3):
            F_s[i, r] = fs[r]
            F_p[i, r] = fp[r]
            F_c[i, r] = fc[r]
            F_u[i, r] = fu[r]
            M_p[i, r] = mp[r]


@njit(cache=True)
def inverse_dynamics_batch(b, k, p, m_d, m_u, r_d0, r_u0, I_d0, I_l0, C_u, C_p, C_s, g,
                           M, R0, I_p, R, t, v, w, a, al, F_ext, M_ext, printed_eq16, Hw, U,
                           L, Ld, Ldd, D, x, F, F0, cond):
    for n in range(R.shape[0]):
        cond[n] = inverse_dynamics_pose(
            b, k, p, m_d, m_u, r_d0, r_u0, I_d0, I_l0, C_u, C_p, C_s, g, M, R0, I_p,
            R[n], t[n], v[n], w[n], a[n], al[n], F_ext[n], M_ext[n], printed_eq16, Hw, U,
            L[n], Ld[n], Ldd[n], D[n], x[n], F[n], F0[n])


@njit(cache=True)
def constraint_forces_batch(b, k, p, m_d, m_u, r_d0, r_u0, I_d0, I_l0, C_u, C_p, C_s, g,
                            R, t, v, w, a, al, printed_eq16, x, F, d_p,
                            F_s, F_p, F_c, F_u, M_u, M_p):
    for n in range(R.shape[0]):
        constraint_forces_pose(b, k, p, m_d, m_u, r_d0, r_u0, I_d0, I_l0, C_u, C_p, C_s, g,
                               R[n], t[n], v[n], w[n], a[n], al[n], printed_eq16, x[n], F[n], d_p,
                               F_s[n], F_p[n], F_c[n], F_u[n], M_u[n], M_p[n])


@njit(cache=True)
def leg_kinematics_batch(b, p, R, t, v, w, a, al, L, Ld, Ldd, s, q, W, A):
    for n in range(R.shape[0]):
        for i in range(6):
            qi, Li, si, Ldi, Wi, Lddi, Ai = leg_kinematics(b[i], p[i], R[n], t[n], v[n], w[n],
                                                           a[n], al[n])
            L[n, i] = Li
            Ld[n, i] = Ldi
            Ldd[n, i] = Lddi
            for r in range(3):
                s[n, i, r] = si[r]
                q[n, i, r] = qi[r]
                W[n, i, r] = Wi[r]
                A[n, i, r] = Ai[r]
