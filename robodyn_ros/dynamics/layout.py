"""Column layout of the packed arrays the compiled kernels share.

Row i of the parameter array ``P`` describes joint i and the body it moves; its last row holds the
tip frame and gravity. Row i of a kernel workspace starts with ^{i-1}R_i (row-major) and p_i, the
pose of joint frame i in frame i-1 at the current q.
"""
# P, rows 0..n-1
R0, P0, MASS, H, INERTIA, ARMATURE, VISCOUS, COULOMB_POS, COULOMB_NEG, PRISMATIC = (
    0, 9, 12, 13, 16, 22, 23, 24, 25, 26)
N_COLUMNS = 27
# P, row n: the tip frame in the last joint frame (rotation at 0..8, origin at 9..11), then gravity
GRAVITY_VECTOR = 12
# workspace rows
WS_R, WS_P = 0, 9
