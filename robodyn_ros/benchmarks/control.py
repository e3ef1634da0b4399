"""Compute time of the control laws per control cycle: computed torque (004 eq. 4.1, one Newton–Euler
pass) and the adaptive computed torque of Slotine & Li with ``adapt: payload`` (one compiled call:
the Slotine–Li pass with the last body's 10 regressor columns, the effort and the update)."""
import numpy as np

from ..control.adaptive import AdaptiveComputedTorque
from ..control.law import load_law
from .dynamics import puma
from .timing import figure, per_call


def run():
    _, model = puma()
    # dt = 0 for the adaptive law: the update's whole work, the estimates left as they are (the
    # same state a million times over would otherwise drive them anywhere)
    laws = [("computed-torque law", load_law("computed_torque")(model, {"kp": 100.0, "kd": 20.0}), 1e-3),
            ("adaptive computed-torque law (adapt: payload)", AdaptiveComputedTorque(model), 0.0)]
    rng = np.random.default_rng(1)
    q, qd, q_des, qd_des, qdd_des = rng.uniform(-1.0, 1.0, (5, model.dof))
    rows = []
    for name, law, dt in laws:
        best, median = per_call(lambda: law.compute(q, qd, q_des, qd_des, qdd_des, dt))
        row = figure(f"{name}, compute per cycle (us)", best * 1e6, median * 1e6, target="<= 20 us")
        row["met"] = bool(best * 1e6 <= 20.0)
        rows.append(row)
    return {"robot": "PUMA 560", "rows": rows}
