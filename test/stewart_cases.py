"""Cases shared by the Stewart node and core tests (a helper module, not a test module): the paper's
platform, a well-conditioned moving state, and the singular pose on Path III."""
import functools
import warnings
from pathlib import Path

import numpy as np

from robodyn_ros.stewart import StewartPlatform
from robodyn_ros.spatial import rotations
from robodyn_ros.apps.stewart_path import PAPER_PATHS

CONFIG = Path(__file__).resolve().parents[1] / "config" / "stewart_dasgupta.yaml"

# a pose with velocity and acceleration, well inside the workspace and far from singular
GOOD = dict(t=np.array([0.2, 0.0, 0.5]), R=rotations.rpy_matrix([0.05, -0.1, 0.1]),
            v=(0.05, 0.0, 0.02), w=(0.0, 0.1, 0.05), a=(0.3, -0.2, 0.1), al=(0.2, 0.0, -0.4))


@functools.cache
def platform() -> StewartPlatform:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # the paper's k_1 is not of unit length, rightly reported
        return StewartPlatform.from_yaml(CONFIG)


def good_forces(sp, wrench=(np.zeros(3), np.zeros(3))):
    g = GOOD
    return sp.inverse_dynamics(g["t"], g["R"], g["v"], g["w"], g["a"], g["al"], *wrench).forces


def det_h(sp, t, R):
    """det H (the 6x6 matrix of leg directions and moments): its sign flips across a singularity."""
    ik = sp.inverse_kinematics(t, R)
    return np.linalg.det(np.vstack([ik.directions.T, np.cross(ik.q, ik.directions).T]))


def singular_pose_on_path_iii(sp):
    """Bisection of det H along Path III: the paper's singularity (cond -> infinity)."""
    path, _ = PAPER_PATHS["III"]

    def det(tau):
        s = path.sample([tau])
        return det_h(sp, s.position[0], s.rotation[0])

    lo, hi = 3.5, 3.8
    assert det(lo) * det(hi) < 0
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if det(lo) * det(mid) < 0 else (mid, hi)
    s = path.sample([lo])
    return s.position[0], s.rotation[0]
