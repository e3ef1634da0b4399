"""What a control law hands to the law that replaces it, and what /diagnostics shows of a law that
adapts its model (``adaptive_computed_torque``, or any law with ``estimate_names``,
``estimates``, ``initial_estimates`` and ``reset_estimates()``): the control loop's, without ROS.
"""
from __future__ import annotations

import numpy as np

_PROTOCOL = ("estimate_names", "estimates", "initial_estimates", "reset_estimates")


def estimates_of(law):
    """``law`` if it estimates parameters (module docstring), else None."""
    return law if all(hasattr(law, name) for name in _PROTOCOL) else None


def carry_over(old, new) -> None:
    """What ``old`` learnt, into ``new`` when both estimate the same parameters (a gain change);
    an impedance law's filtered stiffness and target, so that the change reaches the torque
    through its filter and rate limit, not as a step."""
    if hasattr(new, "continue_from") and type(new) is type(old):
        new.continue_from(old)
    if (estimates_of(old) is not None and estimates_of(new) is not None and hasattr(new, "set_estimates")
            and tuple(old.estimate_names) == tuple(new.estimate_names)):
        new.set_estimates(old.estimates)


def drift(law) -> dict:
    """/diagnostics values for ``law``'s estimates (none when it has none)."""
    law = estimates_of(law)
    if law is None:
        return {}
    names, now, model = law.estimate_names, law.estimates, np.asarray(law.initial_estimates)
    change = now - model
    k = int(np.argmax(np.abs(change)))
    values = {"estimated parameters": len(names),
              "largest estimate drift": f"{names[k]} {change[k]:+.6g} (model {model[k]:.6g})"}
    prefix = names[0].rpartition(".")[0]
    if [name.rpartition(".")[2] for name in names[:4]] == ["m", "mx", "my", "mz"] and all(
            name.startswith(prefix + ".") for name in names[:4]):
        mass = change[0]
        values["payload mass estimate (kg)"] = float(mass)
        com = change[1:4] / mass if abs(mass) > 1e-6 else np.zeros(3)
        values[f"payload centre of mass estimate (m, {prefix} frame)"] = np.round(com, 6).tolist()
    return values
