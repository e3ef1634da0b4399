"""Compute time of the computed-torque law per control cycle (004 eq. 4.1, one Newton–Euler pass)."""
import warnings

import numpy as np

from ..control.law import load_law
from ..dynamics import RobotModel
from ..resources import find_share_file
from .timing import figure, per_call


def run():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = RobotModel.from_urdf(find_share_file("urdf/puma560.urdf"))
    law = load_law("computed_torque")(model, {"kp": 100.0, "kd": 20.0})
    rng = np.random.default_rng(1)
    q, qd, q_des, qd_des, qdd_des = rng.uniform(-1.0, 1.0, (5, model.dof))
    best, median = per_call(lambda: law.compute(q, qd, q_des, qd_des, qdd_des, 1e-3))
    row = figure("computed-torque law, compute per cycle (us)", best * 1e6, median * 1e6,
                 target="<= 20 us")
    row["met"] = bool(best * 1e6 <= 20.0)
    return {"robot": "PUMA 560", "rows": [row]}
