"""Where long work is (issue 46, item 6): on a terminal one line rewritten in place; in a pipe or a
log file whole lines, one every LOG_EVERY s, and nothing lost to a carriage return (the demos'
\\r lines made one endless line of a log, and ``demo identify`` printed its next line onto the
last progress line). A fake clock and fake streams: no waiting."""
import io

from robodyn_ros.apps.progress import EVERY, LOG_EVERY, Progress


class Stream(io.StringIO):
    def __init__(self, terminal):
        super().__init__()
        self.terminal = terminal

    def isatty(self):
        return self.terminal


def run(terminal, seconds, step=0.125):   # exact in binary: no rounding at the boundaries
    now = [0.0]
    stream = Stream(terminal)
    progress = Progress(stream, clock=lambda: now[0])
    while now[0] < seconds:
        progress.show(f"t = {now[0]:5.2f} s")
        now[0] += step
    progress.done("done, 42 samples")
    print("the next line", file=stream)
    return stream.getvalue()


def test_a_log_gets_whole_lines_and_few_of_them():
    text = run(terminal=False, seconds=35.0)
    assert "\r" not in text
    lines = text.splitlines()
    assert lines[-2:] == ["done, 42 samples", "the next line"]
    shown = lines[:-2]
    assert len(shown) == int(35.0 // LOG_EVERY) and all(s.startswith("t = ") for s in shown)
    assert run(terminal=False, seconds=3.0).splitlines() == ["done, 42 samples", "the next line"]


def test_a_terminal_gets_one_line_rewritten_and_the_last_replaces_it():
    text = run(terminal=True, seconds=3.0)
    body, _, last = text.rpartition("\r")
    assert last == "done, 42 samples".ljust(len(f"t = {2.5:5.2f} s")) + "\nthe next line\n"
    assert body.count("\r") == round(3.0 / EVERY) and "\n" not in body
