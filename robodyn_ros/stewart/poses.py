"""Turning the public arguments (one pose or a batch) into the flat pose vectors the kernels take
(layout in kernel.py: t, R, v, omega, a, alpha, F_ext, M_ext). A single pose given as arrays skips
this: kernel.inverse_dynamics_args takes the caller's arrays as they are."""
import numpy as np

from .kernel import POSE_SIZE


def pack_poses(position, rotation_matrix, *vectors):
    """Returns (single, poses (N, 30)). One pose is position (3,) with rotation (3,3); a batch is (N,3)
    with (N,3,3). Vectors may be given per pose (N,3) or once (3,); None means zero."""
    t = np.asarray(position, dtype=float)
    R = np.asarray(rotation_matrix, dtype=float)
    single = t.ndim == 1
    n = 1 if single else len(t)
    if t.shape[-1:] != (3,) or t.ndim > 2 or R.shape != t.shape[:-1] + (3, 3):
        raise ValueError(f"position {t.shape} and rotation_matrix {R.shape}: expected (3,) and "
                         "(3, 3), or (N, 3) and (N, 3, 3)")
    poses = np.zeros((n, POSE_SIZE))
    poses[:, 0:3] = t
    poses[:, 3:12] = R.reshape(n, 9)
    for j, v in enumerate(vectors):
        if v is not None:
            v = np.asarray(v, dtype=float)
            if v.shape not in ((3,), (n, 3)) or (single and v.ndim != 1):
                raise ValueError(f"vector of shape {v.shape} does not match "
                                 f"{'one pose' if single else f'{n} poses'}")
            poses[:, 12 + 3 * j:15 + 3 * j] = v
    return single, poses
