"""doc/performance.md's figures are what `robodyn-ros dev perf-page` renders from the committed
benchmarks/results.json: a page left stale after a new benchmark run fails here."""
import copy
import json
from pathlib import Path

from robodyn_ros.apps.dev import perf_page as page

ROOT = Path(__file__).resolve().parents[1]
RESULTS = json.loads((ROOT / "benchmarks/results.json").read_text())
PAGE = (ROOT / "doc/performance.md").read_text()


def generated_section(text):
    start, end = text.index(page.BEGIN), text.index(page.END) + len(page.END)
    return text[start:end]


def test_performance_page_is_generated_from_the_committed_results():
    assert PAGE.count(page.BEGIN) == 1 and PAGE.count(page.END) == 1
    assert generated_section(PAGE) == page.render(RESULTS), \
        "doc/performance.md is stale: run `robodyn-ros dev perf-page` and commit it"


def test_every_figure_of_the_results_reaches_the_page():
    # the generator drops nothing: each row's name and its best figure as the page shows it
    section = generated_section(PAGE)
    for suite in RESULTS["suites"].values():
        for row in suite["rows"]:
            assert row["name"].strip() in section
            assert page._figure(row["best"], row.get("unit", "")) in section


def test_a_changed_result_makes_the_page_stale(tmp_path):
    results = copy.deepcopy(RESULTS)
    row = results["suites"]["dynamics"]["rows"][0]
    row["best"], row["met"] = row["best"] * 3, False
    (tmp_path / "results.json").write_text(json.dumps(results))
    (tmp_path / "performance.md").write_text(PAGE)
    args = ["--results", str(tmp_path / "results.json"), "--page", str(tmp_path / "performance.md")]
    assert page.main([*args, "--check"]) == 1
    assert page.main(args) == 0
    updated = (tmp_path / "performance.md").read_text()
    assert f"| {row['name']} | {page._figure(row['best'], 'us')} /" in updated
    assert "✘ missed" in updated
    # only the generated section changed; the prose around it is the page's own
    assert updated.split(page.BEGIN)[0] == PAGE.split(page.BEGIN)[0]
    assert updated.split(page.END)[1] == PAGE.split(page.END)[1]
    assert page.main([*args, "--check"]) == 0


def test_rates_are_scaled_and_small_figures_keep_three_digits():
    assert page._figure(2016766.3, "states/s") == "2.02 M/s"
    assert page._figure(358226.2, "poses/s") == "358 k/s"
    assert page._figure(2.0655732, "us") == "2.07"
    assert page._figure(298.71870, "us") == "299"
    assert page._figure(3104, "flops") == "3104"
