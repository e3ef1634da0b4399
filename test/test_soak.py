"""The controller as it runs in service, ``robodyn-ros dev soak`` (issue 23 §5-6): its short form over
real DDS, and its schedule and verdict on their own."""

from robodyn_ros.apps import soak
from test_fuzz import CI_STATE_TIMEOUT

#: The short form: 2.5 min of soak (3 min of wall time with the start and the stop), the last
#: 1.5 min judged. The RSS bound stays the hour's 1 MB rather than scaled to the 1.5 min (26 kB):
#: that would be below what is measured — RSS moves by pages and Python's allocator takes 256 kB
#: arenas — so a flat controller would fail it. A leak of 0.7 MB a minute (40 MB an hour) fails
#: here; a slower one is the hour's to find (doc/testing.md).
SHORT = {"duration": 150.0, "warmup": 60.0, "interval": 15.0}


def test_the_goal_schedule_preempts_one_in_ten_and_cancels_one_in_twenty():
    kinds = [soak.kind(k, last=False) for k in range(200)]
    assert kinds.count("preempt") == 20 and kinds.count("cancel") == 10
    assert all(kinds[k] == "succeed" for k in range(200) if k % 10 not in (4, 9))
    assert soak.kind(19, last=True) == "succeed"  # nothing would preempt the run's last goal
    assert soak.kind(4, last=True) == "cancel"


def _report(rows, warmup=30.0, complete=True):
    report = {"warmup_s": warmup, "rss_bound_kb": 1024.0, "command_gap_bound_ms": 112.0,
              "complete": complete, "alive_at_end": {"controller": True}, "rows": [
                  {"t_s": t, "rss_kb": rss, "threads": threads, "fds": 18, "cpu_percent": 20.0,
                   "command_gap_max_ms": gap, "command_gaps_over_bound": int(gap > 112.0),
                   "stale_spells": 0, "goals": {"succeed: SUCCEEDED": 5},
                   "unexpected_goals": unexpected}
                  for t, rss, threads, gap, unexpected in rows]}
    report.update(soak.verdict(report))
    return report


def test_the_verdict_judges_the_rows_after_the_warmup():
    flat = [(15.0, 180_000, 17, 30.0, []), (30.0, 200_000, 19, 30.0, []),
            (45.0, 200_900, 19, 30.0, []), (60.0, 200_500, 19, 30.0, [])]
    report = _report(flat)  # growth during the warm-up is not judged
    assert report["holds"] and report["after_warmup"]["rss_growth_kb"] == 900, report
    assert not _report(flat + [(75.0, 201_100, 19, 30.0, [])])["checks"]["rss_flat"]
    assert not _report(flat + [(75.0, 200_000, 20, 30.0, [])])["checks"]["threads_constant"]
    assert not _report(flat + [(75.0, 200_000, 19, 113.0, [])])["checks"]["gaps_within_bound"]
    late = {"goal": 7, "kind": "succeed", "outcome": ["ABORTED", -5]}
    assert not _report(flat + [(75.0, 200_000, 19, 30.0, [late])])["checks"]["goals_as_expected"]
    assert not _report(flat[:2])["holds"]  # one row after the warm-up: nothing to judge
    assert not _report(flat, complete=False)["holds"]  # a run stopped early


def test_the_stale_spells_are_read_from_the_controllers_log(tmp_path):
    log = tmp_path / "controller.log"
    log.write_text("[INFO] [1795655593.83] [computed_torque_controller]: active\n"
                   "[WARN] [1795655597.111] [computed_torque_controller]: no valid joint state "
                   "for 0.1 s: publishing hold_gravity\n[WARN] [1795655598.5] [computed_tor")
    stale = soak._StaleLog(log)
    assert stale.new() == [1795655597.111]
    with open(log, "a") as f:  # the line written to its end meanwhile
        f.write("que_controller]: no valid joint state for 0.1 s: publishing hold_gravity\n")
    assert stale.new() == [1795655598.5] and stale.new() == []


def test_a_short_soak_meets_issue_23s_goals():
    """2.5 min at 1 kHz with a goal every 2 s (simulated): after the warm-up the controller's RSS
    within 1 MB, its threads and file descriptors constant; no gap between commands over the
    bound (the CI watchdog's, as the fuzz run's); every goal's outcome the expected one, each
    kind seen; both nodes alive and exiting 0."""
    report = soak.run(**SHORT, state_timeout=CI_STATE_TIMEOUT, progress=lambda line: None)
    summary = soak.summary(report) + "\n" + "\n".join(map(str, report["rows"]))
    rows, after = report["rows"], report["after_warmup"]
    assert report["complete"] and set(report["exit_codes"].values()) == {0}, summary
    assert len(rows) >= 10 and all(r["commands"] > 1000 for r in rows), summary
    assert after["rss_growth_kb"] <= 1024, summary
    assert len(after["threads"]) == 1 and len(after["fds"]) == 1, summary
    assert report["command_gap_max_ms"] <= report["command_gap_bound_ms"], summary
    outcomes = report["outcomes"]
    assert not report["unexpected_goals"], summary
    assert {"succeed: SUCCEEDED", "preempt: ABORTED", "cancel: CANCELED"} <= set(outcomes), summary
    assert sum(outcomes.values()) == report["goals_sent"], summary
    assert report["holds"], summary
