"""Turning the public arguments (one pose or a batch) into the contiguous float arrays the kernels take."""
import numpy as np


def as_batch(position, rotation_matrix, *vectors):
    """Returns (single, t (N,3), R (N,3,3), [vectors (N,3)...]); None vectors become zeros.

    One pose is position (3,) with rotation (3,3); a batch is (N,3) with (N,3,3). Vectors may be given
    per pose or once for the whole batch.
    """
    t = np.asarray(position, dtype=float)
    R = np.asarray(rotation_matrix, dtype=float)
    single = t.ndim == 1
    if single:
        t = t[None]
        R = R[None]
    if t.ndim != 2 or t.shape[1] != 3 or R.shape != (t.shape[0], 3, 3):
        raise ValueError(f"position {np.shape(position)} and rotation_matrix "
                         f"{np.shape(rotation_matrix)}: expected (3,) and (3, 3), or (N, 3) and (N, 3, 3)")
    n = t.shape[0]
    out = []
    for v in vectors:
        if v is None:
            out.append(np.zeros((n, 3)))
            continue
        v = np.asarray(v, dtype=float)
        if v.shape == (3,):
            v = np.broadcast_to(v, (n, 3))
        if v.shape != (n, 3):
            raise ValueError(f"vector of shape {v.shape} does not match {n} poses")
        out.append(np.ascontiguousarray(v))
    return single, np.ascontiguousarray(t), np.ascontiguousarray(R), out
