"""Operation counts measured by running the real algorithms on counting scalars.

``Counted`` wraps a float and tallies every multiplication (and division) and addition (and
subtraction) it takes part in, and square roots apart. The Newton–Euler kernel the fast path
compiles (its interpreted twin, ``robodyn_ros.plumbing.kernels.interpreted``) and the Lagrange–Euler code are
run unchanged on arrays of such scalars, so the counts describe the code that runs, not a formula
typed in; ``robodyn_ros.apps.benchmarks.stewart`` counts the Stewart-platform kernels the same way.
Operations with a constant operand of exactly 0 or +-1 are tallied apart: a code generator
specialised to one arm's geometry would not perform them.
"""
import numpy as np

from ..plumbing.kernels import interpreted
from . import layout, newton_euler
from .lagrange_euler import lagrange_euler
from .model import RobotModel


class Tally:
    def __init__(self):
        self.mul = self.add = self.trivial_mul = self.trivial_add = self.sqrt = 0


class Counted:
    __slots__ = ("value", "tally")

    def __init__(self, value, tally):
        self.value = float(value)
        self.tally = tally

    def _other(self, other):
        return other.value if isinstance(other, Counted) else float(other)

    def _count(self, other, kind):
        constant = not isinstance(other, Counted)
        x = float(other) if constant else 0.5
        if kind == "mul":
            if constant and (abs(x) < 1e-12 or abs(abs(x) - 1.0) < 1e-12):
                self.tally.trivial_mul += 1
            else:
                self.tally.mul += 1
        elif constant and abs(x) < 1e-12:
            self.tally.trivial_add += 1
        else:
            self.tally.add += 1

    def _new(self, value):
        return Counted(value, self.tally)

    def __add__(self, other):
        self._count(other, "add")
        return self._new(self.value + self._other(other))

    __radd__ = __add__

    def __sub__(self, other):
        self._count(other, "add")
        return self._new(self.value - self._other(other))

    def __rsub__(self, other):
        self._count(other, "add")
        return self._new(self._other(other) - self.value)

    def __mul__(self, other):
        self._count(other, "mul")
        return self._new(self.value * self._other(other))

    __rmul__ = __mul__

    def __truediv__(self, other):
        self._count(other, "mul")
        return self._new(self.value / self._other(other))

    def __rtruediv__(self, other):
        self._count(other, "mul")
        return self._new(self._other(other) / self.value)

    def __neg__(self):
        return self._new(-self.value)   # a sign flip, not counted (001 ignores them too)

    def __abs__(self):
        return self._new(abs(self.value))

    # comparisons by value, not counted
    def __gt__(self, other):
        return self.value > self._other(other)

    def __lt__(self, other):
        return self.value < self._other(other)

    def __ge__(self, other):
        return self.value >= self._other(other)

    def __le__(self, other):
        return self.value <= self._other(other)

    def __eq__(self, other):
        return self.value == self._other(other)

    def __ne__(self, other):
        return self.value != self._other(other)

    __hash__ = None

    def cos(self):   # np.cos on an object array calls this; trigonometry is counted by neither source
        return self._new(np.cos(self.value))

    def sin(self):
        return self._new(np.sin(self.value))

    def sqrt(self):  # np.sqrt on an object calls this: tallied apart
        self.tally.sqrt += 1
        return self._new(np.sqrt(self.value))


def counted(values, tally):
    """An object array of the shape of ``values`` holding Counted scalars that report to ``tally``."""
    out = np.empty(np.shape(values), dtype=object)
    out.ravel()[:] = [Counted(v, tally) for v in np.ravel(values)]
    return out


def count_newton_euler(model, rng=None):
    """Tally of one Newton–Euler pass (gravity on, friction off) on ``model``, and its result."""
    rng = np.random.default_rng(0) if rng is None else rng
    tally = Tally()
    q, qd, qdd = (counted(rng.standard_normal(model.dof), tally) for _ in range(3))
    tau = np.empty(model.dof, dtype=object)
    ws = np.empty((model.dof, layout.RNEA_COLUMNS), dtype=object)
    interpreted(newton_euler)["rnea_into"](model.params, q, qd, qdd, np.zeros(6), newton_euler.GRAVITY,
                                           ws, tau)
    return tally, np.array([t.value for t in tau])


def count_lagrange_euler(model, rng=None):
    rng = np.random.default_rng(0) if rng is None else rng
    tally = Tally()
    q, qd, qdd = (counted(rng.standard_normal(model.dof), tally) for _ in range(3))
    tau = lagrange_euler(model, q, qd, qdd, friction=False)
    return tally, np.array([t.value for t in tau])


def random_inertia(mass, rng):
    """Inertia about the COM of a randomly turned solid box: always physically realisable."""
    a, b, c = rng.uniform(0.05, 0.4, 3)
    box = mass / 12.0 * np.diag([b * b + c * c, a * a + c * c, a * a + b * b])
    R, _ = np.linalg.qr(rng.standard_normal((3, 3)))
    return R @ box @ R.T


def generic_arm(n, seed=0):
    """An n-revolute standard-DH arm with generic geometry and inertia (no zeros to exploit)."""
    rng = np.random.default_rng(seed)
    links = []
    for _ in range(n):
        mass = rng.uniform(1.0, 5.0)
        links.append(dict(a=rng.uniform(0.1, 0.5), alpha=rng.uniform(-3, 3), d=rng.uniform(0.1, 0.5),
                          theta=rng.uniform(-3, 3), mass=mass, com=rng.uniform(-0.1, 0.1, 3),
                          inertia=random_inertia(mass, rng)))
    return RobotModel.from_dh(links)


# Published counts for n revolute joints: (source, method, multiplications(n), additions(n))
PUBLISHED = [
    ("Luh, Walker & Paul 1980 (Angeles, Table 7.3)", "N-E", lambda n: 150 * n - 48, lambda n: 131 * n - 48),
    ("Walker & Orin 1982 (Angeles, eq. 7.43)", "N-E", lambda n: 137 * n - 22, lambda n: 110 * n - 14),
    ("Turney, Mudge & Lee 1980, Table 1", "N-E", lambda n: 108 * n - 12, lambda n: 100 * n - 9),
    ("Lee et al. 1982, N-E controller, Table 2", "N-E", lambda n: 119 * n - 24, lambda n: 107 * n - 21),
    ("Hollerbach 1980, recursive (Angeles, Table 7.3)", "L-E", lambda n: 412 * n - 277, lambda n: 320 * n - 201),
    ("Turney, Mudge & Lee 1980, Table 1", "L-E",
     lambda n: 81 / 6 * n**3 + 165 / 2 * n**2 + 5 * n, lambda n: 40 / 3 * n**3 + 58 * n**2 - 64 / 3 * n),
    ("Lee et al. 1982, L-E controller, Table 1", "L-E",
     lambda n: 128 / 3 * n**4 + 515 / 3 * n**3 + 850 / 3 * n**2 + 82 / 3 * n,
     lambda n: 98 / 3 * n**4 + 787 / 6 * n**3 + 640 / 3 * n**2 + 131 / 6 * n),
]
