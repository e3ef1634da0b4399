"""Where long work is, on the command line: on a terminal one line rewritten in place (``\\r``),
elsewhere -- a pipe, a log file, CI -- whole lines, fewer of them, so that a log reads line by
line and nothing is lost to a carriage return.

``show(text)`` says where the work is now (as often as it likes: the lines are rate-limited);
``done(text)`` ends it with its last line, which on a terminal replaces the one shown. Every
``show`` is followed by a ``done`` before anything else is printed."""
from __future__ import annotations

import sys
import time

#: s between two lines rewritten in place on a terminal, and between two lines of a log
EVERY, LOG_EVERY = 0.5, 10.0


class Progress:
    """The progress line of one stream (default: sys.stdout at the time of each call)."""

    def __init__(self, stream=None, clock=time.monotonic):
        self._stream, self._clock = stream, clock
        self._last = None       # when a line was last shown; None: no line open
        self._width = 0

    @property
    def stream(self):
        return self._stream or sys.stdout

    def on_terminal(self) -> bool:
        isatty = getattr(self.stream, "isatty", None)
        return bool(isatty and isatty())

    def show(self, text: str) -> None:
        """``text`` as where the work is, unless a line was shown less than EVERY s (LOG_EVERY
        s off a terminal) ago."""
        now = self._clock()
        terminal = self.on_terminal()
        if self._last is not None and now - self._last < (EVERY if terminal else LOG_EVERY):
            return
        if self._last is None and not terminal:
            self._last = now   # the first log line after LOG_EVERY s: short work logs nothing
            return
        self._last = now
        if terminal:
            self.stream.write("\r" + text.ljust(self._width))
            self._width = len(text)
        else:
            self.stream.write(text + "\n")
        self.stream.flush()

    def done(self, text: str | None = None) -> None:
        """End the work: ``text`` as its last line (on a terminal in place of the one shown);
        None: just end the line shown."""
        if self.on_terminal() and self._width:
            self.stream.write(("\r" + text.ljust(self._width) if text else "") + "\n")
        elif text:
            self.stream.write(text + "\n")
        self.stream.flush()
        self._last, self._width = None, 0


#: the command line's progress line on stdout
progress = Progress()
