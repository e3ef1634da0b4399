"""The figures of doc/performance.md, rendered from a robodyn-ros bench --json file, so that the
page never carries a hand-copied number.

Only the text between the page's two perf-page markers is replaced; the prose around it is the
page's own. --check rewrites nothing and exits 1 when the page differs from what the results give.
"""
import argparse
import json
import sys
from pathlib import Path

from .doc_pages import update

BEGIN = ("<!-- perf-page: generated from benchmarks/results.json by `robodyn-ros dev perf-page`; "
         "do not edit -->")
END = "<!-- /perf-page -->"


def _number(value):
    """Integers as they are, other figures to three significant digits (no exponent above 100)."""
    if isinstance(value, int):
        return str(value)
    return f"{value:.0f}" if abs(value) >= 100 else f"{value:.3g}"


def _figure(value, unit):
    """A figure in its unit; per-second rates in k/s or M/s."""
    if unit.endswith("/s"):
        for scale, prefix in ((1e6, "M"), (1e3, "k")):
            if abs(value) >= scale:
                return f"{value / scale:.3g} {prefix}/s"
        return f"{value:.3g} /s"
    return _number(value)


def _target(row):
    if "target" not in row:
        return ""
    return row["target"] + {True: " ✔", False: " ✘ missed"}.get(row.get("met"), "")


def _cell(text):
    return str(text).replace("|", "\\|")


def _suite(name, suite):
    """One suite's table, its rows' notes, and the breakdown of a counted figure."""
    rows = suite["rows"]
    lines = [f"### {name}: {suite.get('robot', '')}", "",
             "| figure | ours (best / median) | peer, same run (flops: the paper) | ratio "
             "| target |",
             "| --- | --- | --- | --- | --- |"]
    for row in rows:
        unit = row.get("unit", "")
        ours = f"{_figure(row['best'], unit)} / {_figure(row['median'], unit)}"
        peer = _figure(row["peer"], unit) if "peer" in row else "–"
        ratio = f"{row['ratio']:.2f}×" if "ratio" in row else ""
        lines.append(f"| {_cell(row['name'].strip())} | {ours} | {peer} | {ratio} "
                     f"| {_cell(_target(row))} |")
    notes = [f"- {row['name'].strip()}: {row['note']}" for row in rows if row.get("note")]
    if notes:
        lines += ["", *notes]
    for row in rows:
        if row.get("sections"):
            lines += ["", f"Operation count of {row['name'].strip()}, by part:", "",
                      "| part | mul/div | add/sub | sqrt | trivial (operand 0 or ±1) | total |",
                      "| --- | --- | --- | --- | --- | --- |"]
            for part, ops in row["sections"].items():
                trivial = ops.get("trivial (operand 0 or +-1)", "–")
                lines.append(f"| {_cell(part)} | {ops['mul_div']} | {ops['add_sub']} "
                             f"| {ops['sqrt']} | {trivial} | {ops['total']} |")
    return lines


def render(results: dict) -> str:
    """The generated section (markers included) for a ``robodyn-ros bench --json`` result."""
    m = results.get("machine", {})
    lines = [BEGIN, "",
             f"Machine of this run: Python {m.get('python', '?')}, {m.get('cpu', '?')}, "
             f"{m.get('cores', '?')} cores.", ""]
    for name, suite in results["suites"].items():
        lines += _suite(name, suite) + [""]
    lines.append(END)
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="robodyn-ros dev perf-page", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--results", default="benchmarks/results.json", metavar="FILE",
                        help="robodyn-ros bench --json output (default: benchmarks/results.json)")
    parser.add_argument("--page", default="doc/performance.md", metavar="FILE",
                        help="page to update (default: doc/performance.md)")
    parser.add_argument("--check", action="store_true",
                        help="change nothing; exit 1 if the page is not what the results give")
    args = parser.parse_args(argv)
    try:
        results = json.loads(Path(args.results).read_text())
        return 0 if update(args.page, BEGIN, END, render(results), args.check) else 1
    except OSError as exc:
        print(f"robodyn-ros dev perf-page: {args.results}: {exc.strerror} (run it from the "
              "repository's top directory, or give --results)", file=sys.stderr)
    except ValueError as exc:   # json's errors are ValueErrors too
        print(f"robodyn-ros dev perf-page: {exc}", file=sys.stderr)
    return 2

if __name__ == "__main__":
    sys.exit(main())
