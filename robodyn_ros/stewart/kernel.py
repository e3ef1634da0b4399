"""Compiled per-pose kernels of Dasgupta & Mruthyunjaya 1998 (eqs. 1-37, 41), one source for the single
and the batched path.

3-vectors are tuples (stack values in numba: no allocation per pose); the leg frame T = [s y z] of
eq. (10) is kept as its three columns. The model and each pose travel as flat float arrays (layouts
below) so that a call costs one dispatch of a few arguments, which dominates a single pose. Every
kernel is plain Python underneath (``robodyn_ros.plumbing.kernels.interpreted(kernel)`` runs it interpreted),
which is how the tests run the very same code as the reference of the compiled one and how
``robodyn_ros.apps.benchmarks.stewart`` counts its operations on counting scalars; for that the kernels use
only ``np.sqrt``/``abs``/arithmetic/comparisons on scalars and allocate work arrays of their input's
dtype. Singular cases are flagged, not raised: the toolkit compiles with IEEE semantics (x/0 = inf).
"""
import numpy as np

from ..plumbing.kernels import inline as _inline
from ..plumbing.kernels import kernel as _jit

# Beyond this ratio of extreme singular values H is singular in double precision: the solution would
# carry no correct digit, so no forces are produced (NaN) and the pose is flagged.
SINGULAR_CONDITION = 1e12
# |k x s| below this: the universal joint's fixed axis lies along the leg, eq. (10) has no frame.
DEGENERATE_JOINT = 1e-9
_JACOBI_SWEEPS = 40

# Model vector: b, k, p (6x3), m_d, m_u (6), r_d0, r_u0 (6x3), I_d0, I_d0 + I_u0 (6x3x3 row-major),
# C_u, C_p, C_s, g (3), M, R0 (3), I_p (9), prismatic_point.
M_B, M_K, M_P, M_MD, M_MU, M_RD, M_RU, M_ID, M_IL = 0, 18, 36, 54, 60, 66, 84, 102, 156
M_CU, M_CP, M_CS, M_G, M_M, M_R0, M_IP, M_DP, MODEL_SIZE = 210, 211, 212, 213, 216, 217, 220, 229, 230
# Pose vector: t, R (row-major), v, omega, a, alpha, F_ext, M_ext.
P_T, P_R, P_V, P_W, P_A, P_AL, P_FE, P_ME, POSE_SIZE = 0, 3, 12, 15, 18, 21, 24, 27, 30
# Output rows per pose.
O_L, O_LD, O_LDD, O_D, O_X, O_F, O_F0, OUT_ROWS = 0, 1, 2, 3, 4, 5, 6, 7
# Columns whose cosine squared is below this count as orthogonal: singular values to ~1e-12 relative.
_ORTHOGONALITY2 = 1e-24
# Round-robin schedule of the 15 column pairs of a 6x6 Jacobi sweep: 5 rounds of 3 disjoint pairs.
_ROUNDS = np.array([[(0, 5), (1, 4), (2, 3)], [(0, 4), (3, 5), (1, 2)], [(0, 3), (2, 4), (1, 5)],
                    [(0, 2), (1, 3), (4, 5)], [(0, 1), (2, 5), (3, 4)]])


@_jit
def cross(a, b):
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


@_jit
def dot(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


@_jit
def add(a, b):
    return (a[0] + b[0], a[1] + b[1], a[2] + b[2])


@_jit
def sub(a, b):
    return (a[0] - b[0], a[1] - b[1], a[2] - b[2])


@_jit
def scale(c, a):
    return (c * a[0], c * a[1], c * a[2])


@_inline
def v3(a, o):
    return (a[o], a[o + 1], a[o + 2])


@_inline
def matvec(m, o, a):
    """(3x3 row-major at m[o:o+9]) a."""
    return (m[o] * a[0] + m[o + 1] * a[1] + m[o + 2] * a[2],
            m[o + 3] * a[0] + m[o + 4] * a[1] + m[o + 5] * a[2],
            m[o + 6] * a[0] + m[o + 7] * a[1] + m[o + 8] * a[2])


@_inline
def matTvec(m, o, a):
    return (m[o] * a[0] + m[o + 3] * a[1] + m[o + 6] * a[2],
            m[o + 1] * a[0] + m[o + 4] * a[1] + m[o + 7] * a[2],
            m[o + 2] * a[0] + m[o + 5] * a[1] + m[o + 8] * a[2])


@_jit
def from_frame(x, y, z, c):
    """T c for T = [x y z] (eqs. 11, 12, 15)."""
    return (x[0] * c[0] + y[0] * c[1] + z[0] * c[2],
            x[1] * c[0] + y[1] * c[1] + z[1] * c[2],
            x[2] * c[0] + y[2] * c[1] + z[2] * c[2])


@_jit
def to_frame(x, y, z, c):
    """T^T c."""
    return (dot(x, c), dot(y, c), dot(z, c))


@_inline
def leg_kinematics(model, i, pose):
    """Eqs. (1)-(9) for leg i: q = R p, L, s, L', W, L'', A (eq. 9 with its dots restored)."""
    w = v3(pose, P_W)
    q = matvec(pose, P_R, v3(model, M_P + 3 * i))
    S = sub(add(q, v3(pose, P_T)), v3(model, M_B + 3 * i))     # (1)
    L = np.sqrt(dot(S, S))                                      # (2)
    s = scale(1.0 / L, S)                                       # (3)
    Sd = add(cross(w, q), v3(pose, P_V))                        # (4)
    Ld = dot(s, Sd)                                             # (5)
    W = scale(1.0 / L, cross(s, Sd))                            # (6)
    Sdd = add(add(cross(v3(pose, P_AL), q), cross(w, cross(w, q))), v3(pose, P_A))  # (7)
    Ldd = dot(s, Sdd) + L * dot(W, W)                           # (8)
    A = scale(1.0 / L, sub(cross(s, Sdd), scale(2.0 * Ld, W)))  # (9): A = (s x S'' - 2 L' W) / L
    return q, L, s, Ld, W, Ldd, A


@_inline
def euler_terms(model, o, s, y, z, A, W):
    """I A + W x I W for the inertia I = T J T^T, J at model[o:o+9] in the leg frame."""
    A_l = to_frame(s, y, z, A)
    W_l = to_frame(s, y, z, W)
    return from_frame(s, y, z, add(matvec(model, o, A_l), cross(W_l, matvec(model, o, W_l))))


@_inline
def leg_frame(model, i, s):
    """The leg frame of eq. (10): y = k x s / |k x s|, z = s x y, and |k x s|."""
    ks = cross(v3(model, M_K + 3 * i), s)
    nks = np.sqrt(dot(ks, ks))
    y = scale(1.0 / nks, ks)                                    # (10)
    return y, cross(s, y), nks


@_inline
def leg_loads(model, i, pose, L, s, Ld, Ldd, y, z, w, dw):
    """Eqs. (11)-(20) and (24) for leg i turning at angular velocity w with angular acceleration dw:
    the paper's W and A, or the spinning leg's of the universal-joint model (universal.py). Returns the
    centres of mass r_d, r_u, their accelerations, the moment C (about the universal joint) the
    constraints must supply, D, and the spherical-joint friction moment f."""
    g = v3(model, M_G)
    m_d = model[M_MD + i]
    m_u = model[M_MU + i]
    r_d = from_frame(s, y, z, v3(model, M_RD + 3 * i))          # (11)
    r_u = add(from_frame(s, y, z, v3(model, M_RU + 3 * i)), scale(L, s))  # (12)
    a_d = add(cross(dw, r_d), cross(w, cross(w, r_d)))          # (13)
    a_u = add(add(scale(Ldd, s), cross(dw, r_u)),               # (14)
              add(cross(w, cross(w, r_u)), scale(2.0 * Ld, cross(w, s))))
    # Both parts at once with I_d0 + I_u0 (eqs. 15, 16 with I_u about its own centre of mass: the
    # m_u r_u x a_u term of eq. 19 already carries the transfer).
    euler = euler_terms(model, M_IL + 9 * i, s, y, z, dw, w)
    f = scale(model[M_CS], sub(w, v3(pose, P_W)))               # spherical-joint friction moment
    C = add(add(cross(scale(m_d, r_d), sub(a_d, g)), cross(scale(m_u, r_u), sub(a_u, g))),
            add(euler, add(scale(model[M_CU], w), f)))          # (20)
    D = m_u * dot(s, sub(a_u, g)) + model[M_CP] * Ld            # (24) with L' (dot restored)
    return r_d, r_u, a_d, a_u, C, D, f


@_inline
def leg_dynamics(model, i, pose, printed_eq16):
    """Section 2 for leg i: everything the platform equations and eqs. (25)-(29) need."""
    q, L, s, Ld, W, Ldd, A = leg_kinematics(model, i, pose)
    y, z, nks = leg_frame(model, i, s)
    r_d, r_u, a_d, a_u, C, D, f = leg_loads(model, i, pose, L, s, Ld, Ldd, y, z, W, A)
    if printed_eq16:
        # The printed eq. (16) adds m_u L^2 diag(0,1,1) in the leg frame: m_u L^2 A, since s.A = 0 and
        # W x (m_u L^2 W) = 0.
        C = add(C, scale(model[M_MU + i] * L * L, A))
    K = scale(1.0 / L, cross(C, s))                             # (21)
    return q, L, s, Ld, Ldd, W, A, y, z, nks, r_d, r_u, a_d, a_u, C, K, D, f


@_inline
def condition_number(A, U, norms, work):
    """sigma_max / sigma_min of the 6x6 A (columns 0-5 of A) by one-sided (Hestenes) Jacobi on its rows
    (A^T has A's singular values): accurate even for nearly singular A (sigma_min to eps * sigma_max
    absolute), which an eigenvalue route on the Gram matrix A A^T is not (it squares the condition
    number). Given the triangular R of H = QR (triangularize) it needs a sweep or two fewer than on H
    itself (Drmac & Veselic 2008: R's rows are closer to orthogonal). U[c] holds row c of A.

    Row pairs are visited in round-robin order (_ROUNDS): the three pairs of a round are disjoint,
    so their dot products, rotation angles and updates are independent and computed side by side
    (the sqrt/division chains of one rotation overlap with the others'). A pair is rotated until its
    cosine is below 1e-12 (_ORTHOGONALITY2 is its square); the sweep with no rotation ends it. The
    squared norms of a rotated pair are recomputed from the new rows, not updated: updating them
    drifts for small rows and then misleads the next rotations (wrong sigma_min near singularity)."""
    n = 6
    for c in range(n):
        acc = 0.0
        for r in range(n):
            U[c, r] = A[c, r]
            acc = acc + A[c, r] * A[c, r]
        norms[c] = acc
    for _ in range(_JACOBI_SWEEPS):
        rotated = False
        for rnd in range(5):
            for k in range(3):
                i = _ROUNDS[rnd, k, 0]
                j = _ROUNDS[rnd, k, 1]
                gamma = 0.0
                for r in range(n):
                    gamma = gamma + U[i, r] * U[j, r]
                work[0, k] = gamma
            for k in range(3):
                i = _ROUNDS[rnd, k, 0]
                j = _ROUNDS[rnd, k, 1]
                gamma = work[0, k]
                work[2, k] = 0.0
                if gamma * gamma > _ORTHOGONALITY2 * (norms[i] * norms[j]):
                    rotated = True
                    # tan = gamma / (d/2 + sign(d) sqrt(d^2/4 + gamma^2)), cos^2 = 1 / (1 + tan^2)
                    # written with one square root of d^2 + 4 gamma^2 and w = |d| + that root.
                    d = norms[j] - norms[i]
                    root = np.sqrt(d * d + 4.0 * (gamma * gamma))
                    w = abs(d) + root
                    tan = 2.0 * gamma / w
                    if d < 0.0:
                        tan = -tan
                    cos = np.sqrt(w / (2.0 * root))
                    work[1, k] = cos
                    work[2, k] = cos * tan
            for k in range(3):
                sin = work[2, k]
                if sin != 0.0:
                    i = _ROUNDS[rnd, k, 0]
                    j = _ROUNDS[rnd, k, 1]
                    cos = work[1, k]
                    ni = 0.0
                    nj = 0.0
                    for r in range(n):
                        ui = cos * U[i, r] - sin * U[j, r]
                        uj = sin * U[i, r] + cos * U[j, r]
                        U[i, r] = ui
                        U[j, r] = uj
                        ni = ni + ui * ui
                        nj = nj + uj * uj
                    norms[i] = ni
                    norms[j] = nj
        if not rotated:
            break
    smax = norms[0]
    smin = norms[0]
    for c in range(1, n):
        if norms[c] > smax:
            smax = norms[c]
        if norms[c] < smin:
            smin = norms[c]
    if smin == 0.0:
        return np.inf
    return np.sqrt(smax / smin)


@_inline
def triangularize(Hw, m):
    """Householder QR of Hw[:, :6] applied to all m columns of Hw, in place: R in the upper triangle
    (zeros below), Q^T applied to the right-hand sides in columns 6 to m-1. It serves both the solve
    (back_substitute) and the condition number (Jacobi on R)."""
    n = 6
    for k in range(n - 1):
        norm2 = 0.0
        for r in range(k, n):
            norm2 = norm2 + Hw[r, k] * Hw[r, k]
        if norm2 == 0.0:
            continue                                   # column already zero below the diagonal
        alpha = np.sqrt(norm2)
        if Hw[k, k] > 0.0:
            alpha = -alpha                             # v0 = H_kk - alpha without cancellation
        v0 = Hw[k, k] - alpha
        beta = -1.0 / (alpha * v0)                     # 2 / (v.v), v = (v0, Hw[k+1:, k])
        for c in range(k + 1, m):
            g = v0 * Hw[k, c]
            for r in range(k + 1, n):
                g = g + Hw[r, k] * Hw[r, c]
            g = beta * g
            Hw[k, c] = Hw[k, c] - g * v0
            for r in range(k + 1, n):
                Hw[r, c] = Hw[r, c] - g * Hw[r, k]
        Hw[k, k] = alpha
        for r in range(k + 1, n):
            Hw[r, k] = 0.0


@_inline
def back_substitute(Hw, nrhs):
    """R X = Hw[:, 6:6+nrhs] for the upper triangular R in Hw[:, :6] (triangularize), in place: the
    solutions end up in Hw[:, 6:6+nrhs]."""
    n = 6
    for c in range(n, n + nrhs):
        for r in range(n - 1, -1, -1):
            acc = Hw[r, c]
            for j in range(r + 1, n):
                acc = acc - Hw[r, j] * Hw[j, c]
            Hw[r, c] = acc / Hw[r, r]


@_inline
def store_leg(Hw, out, n, i, q, s, L, Ld, Ldd, D):
    """Column i of H (eq. 36) and the leg's rows L, L', L'', D of out[:, n]."""
    qs = cross(q, s)
    for r in range(3):
        Hw[r, i] = s[r]
        Hw[r + 3, i] = qs[r]
    out[O_L, n, i] = L
    out[O_LD, n, i] = Ld
    out[O_LDD, n, i] = Ldd
    out[O_D, n, i] = D


@_inline
def inverse_dynamics_pose(model, pose, printed_eq16, Hw, U, norms, work, out, n):
    """One pose: writes the rows L, L', L'', D, x, F (eq. 37), F0 (eq. 41) of out[:, n]; returns the
    condition number of H (inf when a universal joint is degenerate). Forces stay NaN when H is
    singular."""
    sumK = (0.0, 0.0, 0.0)
    sumqK = (0.0, 0.0, 0.0)
    degenerate = False
    for i in range(6):
        (q, L, s, Ld, Ldd, W, A, y, z, nks, r_d, r_u, a_d, a_u, C, K, D, f) = leg_dynamics(
            model, i, pose, printed_eq16)
        if not nks > DEGENERATE_JOINT:
            degenerate = True
        store_leg(Hw, out, n, i, q, s, L, Ld, Ldd, D)
        sumK = add(sumK, K)
        sumqK = add(sumqK, sub(cross(q, K), f))
    return platform_solve(model, pose, sumK, sumqK, degenerate, Hw, U, norms, work, out, n)


@_inline
def platform_solve(model, pose, sumK, sumqK, degenerate, Hw, U, norms, work, out, n):
    """The platform (eqs. 30-37, 41) once the legs have filled H (store_leg) and given the sums of
    their transverse spherical-joint forces K and moments q x K - f: rows x, F, F0 of out[:, n] and
    the condition number of H."""
    # Platform (eqs. 30-34), inertia terms evaluated in the platform frame (eq. 32).
    w = v3(pose, P_W)
    al = v3(pose, P_AL)
    M = model[M_M]
    Rc = matvec(pose, P_R, v3(model, M_R0))                     # (30)
    a_c = add(add(cross(al, Rc), cross(w, cross(w, Rc))), v3(pose, P_A))  # (31)
    g_a = sub(v3(model, M_G), a_c)
    w_l = matTvec(pose, P_R, w)
    al_l = matTvec(pose, P_R, al)
    Iterms = matvec(pose, P_R, add(matvec(model, M_IP, al_l), cross(w_l, matvec(model, M_IP, w_l))))
    force0 = add(matvec(pose, P_R, v3(pose, P_FE)), scale(M, g_a))
    moment0 = add(sub(cross(scale(M, Rc), g_a), Iterms), matvec(pose, P_R, v3(pose, P_ME)))
    for r in range(3):
        Hw[r, 6] = force0[r] - sumK[r]                         # c of eq. (35)
        Hw[r + 3, 6] = moment0[r] - sumqK[r]
        Hw[r, 7] = -force0[r]                                   # -c0 of eq. (41)
        Hw[r + 3, 7] = -moment0[r]
    triangularize(Hw, 8)
    cond = condition_number(Hw, U, norms, work)
    if degenerate:
        cond = np.inf
    if not cond < SINGULAR_CONDITION:
        for i in range(6):
            out[O_X, n, i] = np.nan
            out[O_F, n, i] = np.nan
            out[O_F0, n, i] = np.nan
        return cond
    back_substitute(Hw, 2)
    for i in range(6):
        out[O_X, n, i] = Hw[i, 6]
        out[O_F, n, i] = out[O_D, n, i] - Hw[i, 6]              # (37)
        out[O_F0, n, i] = Hw[i, 7]
    return cond


@_inline
def leg_reactions(model, i, x, F, s, Ld, y, z, w, dw, r_d, a_d, a_u, K, moment_u):
    """Eqs. (21), (26), (28), (27) and (17) for leg i once x and F are known, given the universal
    joint's constraint moment (vector): F_s, F_p, F_c, F_u and M_p, the moment at the prismatic joint
    about the point r = prismatic_point * s on the leg axis (the paper leaves r open)."""
    g = v3(model, M_G)
    m_d = model[M_MD + i]
    m_u = model[M_MU + i]
    fs = add(scale(x, s), K)                                            # (21)
    fp = add(sub(scale(m_u, sub(a_u, g)), fs), scale(model[M_CP] * Ld, s))  # (26)
    fc = sub(fp, scale(F, s))                                           # (28)
    fu = sub(add(scale(m_d, sub(a_d, g)), scale(m_u, sub(a_u, g))), fs)  # (27)
    euler_d = euler_terms(model, M_ID + 9 * i, s, y, z, dw, w)
    mp = sub(add(cross(scale(m_d, r_d), sub(g, a_d)), moment_u),      # (17) solved for M_p
             add(add(euler_d, cross(scale(model[M_DP], s), fp)), scale(model[M_CU], w)))
    return fs, fp, fc, fu, mp


@_inline
def store_reactions(vec, mu, n, i, fs, fp, fc, fu, mp, m_u, axis):
    """Rows F_s, F_p, F_c, F_u, M_p and the constraint moment's axis of vec[:, n, i], M_u of mu[n, i]."""
    mu[n, i] = m_u
    for r in range(3):
        vec[0, n, i, r] = fs[r]
        vec[1, n, i, r] = fp[r]
        vec[2, n, i, r] = fc[r]
        vec[3, n, i, r] = fu[r]
        vec[4, n, i, r] = mp[r]
        vec[5, n, i, r] = axis[r]


@_inline
def constraint_forces_pose(model, pose, printed_eq16, out, n, vec, mu):
    """The reactions of each leg (leg_reactions) once x is known (out[:, n]); the paper's constraint
    moment at the universal joint is M_u s with M_u = s.C (eq. 29)."""
    for i in range(6):
        (q, L, s, Ld, Ldd, W, A, y, z, nks, r_d, r_u, a_d, a_u, C, K, D, f) = leg_dynamics(
            model, i, pose, printed_eq16)
        m_ui = dot(s, C)                                                    # (29)
        fs, fp, fc, fu, mp = leg_reactions(model, i, out[O_X, n, i], out[O_F, n, i], s, Ld, y, z,
                                           W, A, r_d, a_d, a_u, K, scale(m_ui, s))
        store_reactions(vec, mu, n, i, fs, fp, fc, fu, mp, m_ui, s)


@_jit
def inverse_dynamics_batch(model, poses, printed_eq16, out, cond, start, stop):
    """Rows start..stop-1 of poses (N, POSE_SIZE) into the same rows of out (OUT_ROWS, N, 6) (each
    output quantity one contiguous (N, 6) block) and cond (N,): the cores share one batch by
    ranges of rows, each writing straight into the whole output."""
    Hw = np.empty((6, 8), poses.dtype)
    U = np.empty((6, 6), poses.dtype)
    norms = np.empty(6, poses.dtype)
    work = np.empty((3, 3), poses.dtype)
    for n in range(start, stop):
        cond[n] = inverse_dynamics_pose(model, poses[n], printed_eq16, Hw, U, norms, work, out, n)


@_jit
def inverse_dynamics_one(model, pose, printed_eq16, out):
    """One pose vector (POSE_SIZE,) into out (OUT_ROWS, 1, 6): a batch of one, so that the single and
    the batched path are one compiled function (and one compile)."""
    cond = np.empty(1, pose.dtype)
    poses = pose.reshape((1, POSE_SIZE))
    one = poses.shape[0]   # row 0 to 1 as int64s: the literals 0 and 1 would compile it once more
    inverse_dynamics_batch(model, poses, printed_eq16, out, cond, one - 1, one)
    return cond[0]


@_jit
def inverse_dynamics_args(model, t, R, v, w, a, al, f_ext, m_ext, printed_eq16, out):
    """The public single-pose call without any packing in Python: the caller's arrays (1-D, 2-D for R)
    go straight in, out (OUT_ROWS, 6) receives the rows. Returns the condition number, or -1.0 when
    the sizes are not those of one pose, (3,) and (3, 3) (the caller then takes the general path,
    which says what is wrong). A batch of one, so that the single and the batched path are one
    compiled function."""
    if ((t.size != 3) | (R.shape[0] != 3) | (R.shape[1] != 3) | (v.size != 3) | (w.size != 3)
            | (a.size != 3) | (al.size != 3) | (f_ext.size != 3) | (m_ext.size != 3)):
        return -1.0
    poses = np.empty((1, POSE_SIZE))
    for r in range(3):
        poses[0, P_T + r] = t[r]
        for c in range(3):
            poses[0, P_R + 3 * r + c] = R[r, c]
        poses[0, P_V + r] = v[r]
        poses[0, P_W + r] = w[r]
        poses[0, P_A + r] = a[r]
        poses[0, P_AL + r] = al[r]
        poses[0, P_FE + r] = f_ext[r]
        poses[0, P_ME + r] = m_ext[r]
    cond = np.empty(1)
    # rows 0 to 1 as int64s, the types the batch path passes: numba compiles a kernel called with
    # the literals 0 and 1 once more, for them (some 10 s from an empty cache)
    one = poses.shape[0]
    inverse_dynamics_batch(model, poses, printed_eq16, out.reshape((OUT_ROWS, 1, 6)), cond,
                           one - 1, one)
    return cond[0]


@_jit
def constraint_forces_batch(model, poses, printed_eq16, out, vec, mu):
    for n in range(poses.shape[0]):
        constraint_forces_pose(model, poses[n], printed_eq16, out, n, vec, mu)


@_jit
def leg_kinematics_batch(model, poses, scalars, vectors):
    """Rows L, L', L'' of scalars and s, q, W, A of vectors, per pose."""
    for n in range(poses.shape[0]):
        for i in range(6):
            q, L, s, Ld, W, Ldd, A = leg_kinematics(model, i, poses[n])
            scalars[n, 0, i] = L
            scalars[n, 1, i] = Ld
            scalars[n, 2, i] = Ldd
            for r in range(3):
                vectors[n, 0, i, r] = s[r]
                vectors[n, 1, i, r] = q[r]
                vectors[n, 2, i, r] = W[r]
                vectors[n, 3, i, r] = A[r]

