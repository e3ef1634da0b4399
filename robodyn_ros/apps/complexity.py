"""Multiplications and additions of our Newton–Euler and Lagrange–Euler, counted by running them on
counting scalars, beside the published figures."""
import argparse
import warnings

from ..dynamics.counting import PUBLISHED, count_lagrange_euler, count_newton_euler, generic_arm

EXPLANATION = """\
Why the figures differ:
- Ours are counted on the code that runs, for an arm with generic geometry (every DH angle and
  offset non-zero), gravity on and friction off; the published ones are derived by hand for
  n revolute joints and exploit structure: Angeles and Walker & Orin assume DH frames, where
  ^{i-1}R_i has a zero and a one, and Turney, Mudge & Lee ignore multiplications by Q_i (row
  swaps).
- Our kernel keeps each link's constant frame as a full 3x3 rotation (so that URDF joints about any
  axis need no special case) and folds the centre of mass into the body's first moment and its
  inertia about the joint origin (the spatial form), which removes the COM shift from both
  recursions: fewer operations than Luh-Walker-Paul's 150n-48 and Walker & Orin's 137n-22.
  'trivial' counts operations with a constant 0 or +-1 operand; on a DH arm with alpha in
  {0, +-pi/2} many more become trivial and a code generator specialised to it would drop them.
- The base of the chain is at rest, so the first link's velocity terms are constant-folded: hence
  the negative intercept.
- Our Lagrange-Euler forms U_ij = Delta_j T_i and U_ijk = Delta_j Delta_k T_i with 4x4 products and
  every trace in full, as Lee et al. 1982 (Table 1) do (the same O(n^4) growth and about the same
  figure at n = 6); Turney, Mudge & Lee 1980 (Table 1) reorganise the sums to O(n^3). (They print
  the Lagrange totals with the multiplication and addition columns of Table 1 the other way round
  from their own Appendix A.)
- Newton-Euler grows as n, Lagrange-Euler as n^4: at n = 6 the ratio is over 100, as Lee et al.
  report.
"""


def table(max_dof):
    rows = []
    for n in range(1, max_dof + 1):
        model = generic_arm(n)
        ne, _ = count_newton_euler(model)
        le, _ = count_lagrange_euler(model)
        rows.append((n, ne, le))
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(prog="robodyn-ros complexity", description=__doc__)
    parser.add_argument("--dof", type=int, default=6, metavar="N",
                        help="largest number of joints (default 6)")
    args = parser.parse_args(argv)
    if not 1 <= args.dof <= 12:
        parser.error("--dof must be between 1 and 12")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rows = table(args.dof)
    print("Counted on the running code (M = multiplications, A = additions; trivial = with a constant "
          "0 or +-1 operand, not included):")
    print(f"{'n':>3} {'N-E M':>8} {'N-E A':>8} {'trivial':>8} {'L-E M':>10} {'L-E A':>10} {'L-E/N-E':>8}")
    for n, ne, le in rows:
        print(f"{n:3d} {ne.mul:8d} {ne.add:8d} {ne.trivial_mul + ne.trivial_add:8d} "
              f"{le.mul:10d} {le.add:10d} {(le.mul + le.add) / (ne.mul + ne.add):8.1f}")
    print("\nPublished (n revolute joints):")
    header = "".join(f"{'n=' + str(n):>16}" for n, _, _ in rows)
    print(f"{'source':46s} {'':4s}{header}")
    for source, method, mul, add in PUBLISHED:
        cells = "".join(f"{round(mul(n)):>8d}/{round(add(n)):<7d}" for n, _, _ in rows)
        print(f"{source:46s} {method:4s}{cells}")
    print(f"\n{'ours':46s} {'N-E':4s}" + "".join(f"{ne.mul:>8d}/{ne.add:<7d}" for _, ne, _ in rows))
    print(f"{'ours':46s} {'L-E':4s}" + "".join(f"{le.mul:>8d}/{le.add:<7d}" for _, _, le in rows))
    print("\n" + EXPLANATION)
    return 0
