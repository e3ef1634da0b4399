"""Base parameters: the combinations of standard parameters that the joint torques determine.

Some columns of Y are zero for every motion (the first body's mass moves no joint), some are
combinations of others (a link's mass acts on the joints before it exactly as a part of the
previous body's inertia does). Found numerically, as Gautier (1990) does: Y stacked over random
states, its columns made unit, its rank by the SVD (σ_k > ``tol`` σ_0), then the base set chosen in
column order by QR without pivoting — a parameter is base when its column is not a combination of
the columns before it (|R_kk| > ``tol``) — which must find as many, so that, as in Khalil's
symbolic rules, what a link's parameters cannot show regroups into those of the links before it.
Each base parameter is its own standard parameter plus the dependent ones with their coefficients
(β, rounded to zero below ``tol``).

The choice depends only on the kinematics (and which joints are prismatic), not on the masses:
``base_parameters`` may be asked once per arm and serve any estimate of its parameters.
"""
from __future__ import annotations

import dataclasses

import numpy as np

from .inertial_parameters import columns, parameter_names
from .regressor import regressor

TOLERANCE = 1e-8   # relative to the largest pivot (|R_00|) or singular value


class RankError(ValueError):
    """Pivoted QR and the SVD disagree on the rank: the tolerance falls into no gap."""


@dataclasses.dataclass(frozen=True)
class BaseParameters:
    """The base set of one arm's regressor (module docstring)."""
    names: tuple          # the standard parameters' names, Y's column order
    columns: np.ndarray   # indices of the base (independent) columns, ascending
    dependent: np.ndarray  # indices of the other columns (zero ones included)
    beta: np.ndarray      # (base, dependent): base parameter k = π[columns[k]] + β[k] @ π[dependent]
    singular_values: np.ndarray  # of the column-normalised sample regressor, descending
    tolerance: float

    @property
    def count(self):
        return len(self.columns)

    def base_regressor(self, Y):
        """The base columns of Y (..., p) -> (..., count): W_base π_base = Y π."""
        return Y[..., self.columns]

    def from_standard(self, pi):
        """π_base of a standard parameter vector."""
        pi = np.asarray(pi, dtype=float)
        return pi[self.columns] + self.beta @ pi[self.dependent]

    def expressions(self, digits=4):
        """One readable line per base parameter: its standard one plus the regrouped ones."""
        lines = []
        for k, c in enumerate(self.columns):
            terms = [self.names[c]]
            for d, coefficient in zip(self.dependent, self.beta[k]):
                if coefficient != 0.0:
                    sign = "-" if coefficient < 0 else "+"
                    factor = "" if abs(abs(coefficient) - 1.0) < 1e-12 else f"{abs(coefficient):.{digits}g} "
                    terms.append(f"{sign} {factor}{self.names[d]}")
            lines.append(" ".join(terms))
        return lines

    def table(self):
        """The base parameters as a table a person reads: number, expression."""
        width = len(str(self.count))
        unidentifiable = [self.names[d] for d in self.dependent if not self.beta[:, list(
            self.dependent).index(d)].any()]
        rows = [f"{self.count} base parameters of {len(self.names)} standard ones "
                f"(rank tolerance {self.tolerance:g} of the largest singular value)"]
        rows += [f"  {k + 1:>{width}d}  {line}" for k, line in enumerate(self.expressions())]
        if unidentifiable:
            rows.append("  no effect on any joint torque: " + ", ".join(unidentifiable))
        return "\n".join(rows)


def sample_states(model, count, rng):
    """Random states that excite everything the arm can show: positions over a turn (or within a
    prismatic joint's limits), velocities and accelerations of both signs."""
    n = model.dof
    lower = np.where(np.isfinite(model.lower), model.lower, -np.pi)
    upper = np.where(np.isfinite(model.upper), model.upper, np.pi)
    revolute = np.array([t == "revolute" for t in model.joint_types])
    lower = np.where(revolute, -np.pi, lower)
    upper = np.where(revolute, np.pi, upper)
    return (rng.uniform(lower, upper, (count, n)), rng.normal(0.0, 1.0, (count, n)),
            rng.normal(0.0, 1.0, (count, n)))


def base_parameters(model, offset=False, tol=TOLERANCE, seed=0, inertial_only=False):
    """The base parameters of ``model``'s regressor (module docstring); ``inertial_only``: of the
    rigid-body columns alone (the 10 per body), as tables of base parameters are usually quoted."""
    p = columns(model.dof, offset)
    names = parameter_names(model, offset)
    if inertial_only:
        p, names = 10 * model.dof, names[:10 * model.dof]
    states = max(20, 4 * p // model.dof)
    Y = regressor(model, *sample_states(model, states, np.random.default_rng(seed)), offset=offset)
    W = Y.reshape(-1, Y.shape[-1])[:, :p]
    norms = np.linalg.norm(W, axis=0)
    # unit columns, so that the rank test is the same for parameters of any unit; a column of
    # rounding errors (a first body's mass: exactly zero, but for 1e-16 of g) stays zero
    Wn = np.where(norms > tol * norms.max(), W / np.where(norms > 0.0, norms, 1.0), 0.0)
    # the rank by the SVD; the base set in column order by QR without pivoting (a column is base
    # when it adds to the span of the base columns before it: |R_kk| above tol, the columns being
    # unit); the two must agree. NumPy alone: the controller computes this at configure (the
    # adaptive law, the observer's payload), and needs no SciPy for it
    sigma = np.linalg.svd(Wn, compute_uv=False)
    rank = int(np.sum(sigma > tol * sigma[0]))
    R0 = np.linalg.qr(Wn, mode="r")
    independent = np.abs(np.diag(R0)) > tol * np.linalg.norm(Wn, axis=0).max()
    chosen = np.flatnonzero(independent)
    if len(chosen) != rank:
        raise RankError(f"{model.name}: QR in column order finds {len(chosen)} independent "
                        f"columns, the SVD rank {rank}, at tolerance {tol:g}")
    dependent = np.flatnonzero(~independent)
    beta = np.zeros((rank, len(dependent)))
    if len(dependent):
        beta = np.linalg.lstsq(W[:, chosen], W[:, dependent], rcond=None)[0]
        beta[np.abs(beta) < tol * max(1.0, np.abs(beta).max())] = 0.0
    return BaseParameters(tuple(names), chosen, dependent, beta, sigma, tol)
