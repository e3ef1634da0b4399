"""Every column of the packed arrays the compiled kernels share, and the packing itself.

``P`` (``pack``) is the model as the kernels read it: row i describes joint i and the body it moves,
the last row holds the tip frame and gravity. A kernel workspace has one row per joint; every
workspace row starts with the pose of joint frame i in frame i-1 at the current q, in the same
columns as the constant part of that pose in ``P``, so that ``joint_frames.place_joint`` reads one
and writes the other and ``rotate``/``to_parent`` work on either.
"""
import numpy as np

from .link import PRISMATIC as _PRISMATIC_KIND

# P, rows 0..n-1: joint i and its body, in joint frame i
PRE_ROTATION = 0        # ^{i-1}R_i at q = 0, row-major (9)
PRE_ORIGIN = 9          # p_i, origin of joint frame i in frame i-1 (3)
MASS = 12               # m
FIRST_MOMENT = 13       # h = m c (3)
INERTIA_AT_ORIGIN = 16  # I_o = I_c + m (c.c 1 - c c^T): xx yy zz xy yz xz (6)
ARMATURE = 22
VISCOUS = 23
COULOMB_POS = 24        # Coulomb force for qd > 0
COULOMB_NEG = 25        # Coulomb force magnitude for qd < 0
PRISMATIC = 26          # 1.0 for a prismatic joint, 0.0 for a revolute one
COULOMB_TANH = 27       # v_s > 0: Coulomb friction as tanh(qd / v_s); 0: as the sign of qd
FRICTION_OFFSET = 28    # a constant friction torque (N m or N)
N_COLUMNS = 29
# P, row n: the tip frame in the last joint frame, then gravity in the base frame
TIP_ROTATION = 0        # (9, row-major)
TIP_ORIGIN = 9          # (3)
GRAVITY_VECTOR = 12     # (3)

# Kernel workspaces, row i: the pose of joint frame i in frame i-1 at the current q ...
JOINT_ROTATION = 0      # ^{i-1}R_i, row-major (9)
JOINT_ORIGIN = 9        # p_i (3)
# ... then, in the Newton–Euler workspace, the net force and moment on body i (about origin i) ...
NET_FORCE = 12          # (3)
NET_MOMENT = 15         # (3)
RNEA_COLUMNS = 18
# ... or, in the composite-rigid-body workspace, the composite body of links i..n-1 about origin i.
COMPOSITE_MASS = 12
COMPOSITE_FIRST_MOMENT = 13    # (3)
COMPOSITE_INERTIA = 16         # xx yy zz xy yz xz (6)
CRBA_COLUMNS = 22

# joint_frames reads the constant pose and writes the current one at the same columns
assert (PRE_ROTATION, PRE_ORIGIN) == (JOINT_ROTATION, JOINT_ORIGIN) == (TIP_ROTATION, TIP_ORIGIN) == (0, 9)


def pack(links, tip, gravity):
    """The constant parameter array the compiled kernels read, read-only."""
    n = len(links)
    P = np.zeros((n + 1, N_COLUMNS))
    for i, link in enumerate(links):
        row = P[i]
        row[PRE_ROTATION:PRE_ROTATION + 9] = link.pre[:3, :3].ravel()
        row[PRE_ORIGIN:PRE_ORIGIN + 3] = link.pre[:3, 3]
        c = link.com
        I_o = link.inertia + link.mass * (c @ c * np.eye(3) - np.outer(c, c))
        row[MASS] = link.mass
        row[FIRST_MOMENT:FIRST_MOMENT + 3] = link.mass * c
        row[INERTIA_AT_ORIGIN:INERTIA_AT_ORIGIN + 6] = (I_o[0, 0], I_o[1, 1], I_o[2, 2],
                                                        I_o[0, 1], I_o[1, 2], I_o[0, 2])
        row[ARMATURE] = link.armature
        row[VISCOUS] = link.viscous
        row[COULOMB_POS] = link.coulomb_positive
        row[COULOMB_NEG] = link.coulomb_negative
        row[COULOMB_TANH] = link.coulomb_tanh
        row[FRICTION_OFFSET] = link.friction_offset
        row[PRISMATIC] = 1.0 if link.joint == _PRISMATIC_KIND else 0.0
    P[n, TIP_ROTATION:TIP_ROTATION + 9] = tip[:3, :3].ravel()
    P[n, TIP_ORIGIN:TIP_ORIGIN + 3] = tip[:3, 3]
    P[n, GRAVITY_VECTOR:GRAVITY_VECTOR + 3] = gravity
    P.flags.writeable = False
    return P
