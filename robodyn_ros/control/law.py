"""The control-law interface and its plugin discovery.

A law maps the measured state (q, q̇) and the desired (q_d, q̇_d, q̈_d) to joint efforts. Laws are
plugins: a distribution registers a :class:`ControlLaw` subclass under the entry-point group
``robodyn_ros.control_laws`` and the controller node loads the one its ``control_law`` parameter
names (doc/control_laws.md).
"""
from __future__ import annotations

import abc
from collections.abc import Mapping
from importlib.metadata import EntryPoint, entry_points
from typing import Any, ClassVar

import numpy as np

ENTRY_POINT_GROUP = "robodyn_ros.control_laws"


class UnknownLawError(ValueError):
    """No control law is registered under the requested name; the message lists those that are."""


class ControlLaw(abc.ABC):
    """Joint efforts from the measured and the desired joint state of one :class:`RobotModel`.

    Construction validates the parameters (``ValueError`` naming the parameter and why) and
    preallocates what :meth:`compute` needs. To change a parameter at run time, construct a new
    law from ``{**law.params, name: value}``: the old one stays in service if that raises.

    A law may also offer the control loop's short path, ``saturating(limit, index, effort)``:
    a callable ``(q, qd, reference, dt) -> int`` bound once to the loop's effort limits, joint
    index and command (see ``ComputedTorque``), which computes at the rows of ``reference``
    into the law's ``torque``, then ``cycle_steps.saturate_into`` (in the same compiled call
    where it can). The loop takes it for a sampled trajectory and :meth:`compute` for everything
    else; both must give the same efforts. A law with a short path may also offer the loop's
    ordinary one, ``answering(limit, index, effort)``: a callable ``(message, names, match, q,
    qd, stamp, times, knots, origins, stacked, samples) -> int`` that takes a serialized joint
    state and samples its reference (``cycle_steps.ordinary_dt``) before the short path's step,
    in one compiled call, and returns ``cycle_steps.DECLINED``, having changed nothing of the
    law, when the state is not the ordinary next one (``ControlLoop.answer``). A subclass that
    overrides :meth:`compute` (or the short path) alone loses the paths it inherited: they would
    compute otherwise.
    """

    #: The parameters the law accepts, name -> description (the node declares these).
    parameters: ClassVar[Mapping[str, str]] = {}
    #: Values of the optional parameters; every other accepted parameter is required.
    defaults: ClassVar[Mapping[str, Any]] = {}
    saturating = answering = None   # the loop's short and ordinary paths, for the laws that offer them

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        # a path inherited would compute otherwise than the subclass's own compute or short path
        own = vars(cls)
        if "compute" in own and "saturating" not in own:
            cls.saturating = None
        if ("compute" in own or "saturating" in own) and "answering" not in own:
            cls.answering = None

    def __init__(self, model, params: Mapping[str, Any] | None = None):
        given = dict(params or {})
        name = type(self).__name__
        unknown = sorted(set(given) - set(self.parameters))
        if unknown:
            raise ValueError(f"{name} does not take parameter(s) {unknown}; "
                             f"it takes {sorted(self.parameters)}")
        missing = sorted(set(self.parameters) - set(given) - set(self.defaults))
        if missing:
            raise ValueError(f"{name} needs parameter(s) {missing}")
        self.model = model
        self.dof = model.dof
        self.params = {**self.defaults, **given}
        self._configure(self.params)

    @classmethod
    def warm_up(cls, notify=print) -> None:
        """Compile (or load from numba's cache) the law's own kernels, beyond the dynamics kernels
        every controller loads: at a controller's configure, so that switching to the law at run
        time compiles nothing in the parameter callback. A law without kernels of its own has
        nothing to do."""

    @abc.abstractmethod
    def _configure(self, params: Mapping[str, Any]) -> None:
        """Validate ``params`` (complete: defaults filled in) and prepare the compute path."""

    @abc.abstractmethod
    def compute(self, q, qd, q_des, qd_des, qdd_des, dt: float) -> np.ndarray:
        """Effort (n,) for measured ``q``, ``qd`` and desired ``q_des``, ``qd_des``, ``qdd_des``;
        ``dt`` is the time since the previous call, for the laws that integrate."""

    def reset(self) -> None:
        """Forget the internal state (an integral); a law without one has nothing to do."""


def available_laws() -> dict[str, EntryPoint]:
    """Registered control laws: entry-point name -> entry point (not loaded yet)."""
    return {ep.name: ep for ep in entry_points(group=ENTRY_POINT_GROUP)}


def load_law(name: str) -> type[ControlLaw]:
    """The :class:`ControlLaw` subclass registered as ``name``."""
    laws = available_laws()
    if name not in laws:
        raise UnknownLawError(f"unknown control law '{name}'; available: "
                              f"{', '.join(sorted(laws)) or 'none'} (entry-point group "
                              f"'{ENTRY_POINT_GROUP}')")
    cls = laws[name].load()
    if not (isinstance(cls, type) and issubclass(cls, ControlLaw)):
        raise TypeError(f"control law '{name}' ({laws[name].value}) is not a ControlLaw subclass")
    return cls


def warm_up_laws(notify=print) -> None:
    """``warm_up`` every registered law (a controller's configure: any of them may be switched to
    at run time); one that cannot be loaded is reported through ``notify`` and left out (it fails
    with the same reason if ever selected)."""
    for name in sorted(available_laws()):
        try:
            law = load_law(name)
        except Exception as error:   # a third party's broken plugin must not stop a controller
            notify(f"control law '{name}' not warmed up: {error}")
            continue
        law.warm_up(notify)


def takes_target(law) -> bool:
    """Whether ``law`` tracks a Cartesian target (``set_target`` and ``clear_target``)."""
    return hasattr(law, "set_target") and hasattr(law, "clear_target")


def task_link(law) -> str | None:
    """The law's task frame (None: the tip)."""
    link = getattr(law, "params", {}).get("task_link") if takes_target(law) else None
    return link or None
