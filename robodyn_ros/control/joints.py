"""Joint names against the model's chain order.

A controller is configured with its joints in the order of its messages (``joints``); the model
and the laws work in chain order. :class:`JointOrder` is the one place that maps between them.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..plumbing.reasons import bounded


class JointOrder:
    """``names[k]`` (message order) is chain joint ``index[k]``."""

    def __init__(self, chain: Sequence[str], requested: Sequence[str] = ()):
        chain = [str(j) for j in chain]
        names = [str(j) for j in requested] or chain
        missing = [j for j in chain if j not in names]
        unknown = [j for j in names if j not in chain]
        if missing or unknown or len(set(names)) != len(names):
            raise ValueError(
                f"joints {bounded(names)} must name each joint of the chain "
                f"{bounded(chain)} once"
                + "".join(f"; {what}: {bounded(found)}" for what, found in
                          (("missing", missing), ("not in the chain", unknown)) if found))
        self.chain = tuple(chain)
        self.names = tuple(names)
        self.index = np.array([chain.index(j) for j in names], dtype=np.intp)

    @property
    def dof(self) -> int:
        return len(self.chain)

    def to_chain(self, values) -> np.ndarray:
        """A vector in message order, in chain order (a new array)."""
        chain = np.empty(self.dof)
        chain[self.index] = values
        return chain

    def matrix_to_chain(self, matrix) -> np.ndarray:
        """An n x n matrix whose rows and columns are in message order, in chain order."""
        chain = np.empty((self.dof, self.dof))
        chain[np.ix_(self.index, self.index)] = matrix
        return chain

    def from_chain(self, values, out: np.ndarray | None = None) -> np.ndarray:
        """A vector in chain order, in message order (into ``out`` when given)."""
        return np.take(values, self.index, out=out)

    def find_in(self, names: Sequence[str]) -> np.ndarray:
        """Index into ``names`` (a message's joint names) of each chain joint; ValueError when a
        chain joint is missing or named twice. Other names are ignored (a JointState may carry
        more joints than this controller's)."""
        position = {}
        repeated = []
        for i, name in enumerate(names):
            if name in position:
                repeated.append(name)
            position[name] = i
        repeated = [j for j in self.chain if j in repeated]
        if repeated:
            raise ValueError(f"joint state names joint(s) {bounded(repeated)} more than once")
        missing = [j for j in self.chain if j not in position]
        if missing:
            raise ValueError(f"joint state lacks joints {bounded(missing)} (it has "
                             f"{len(names)} names: {bounded(names)})")
        return np.array([position[j] for j in self.chain], dtype=np.intp)
