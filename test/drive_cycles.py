"""What a drive that holds the last command until the next receives, judged from the commands sent
to it: the largest change it may apply in one of its cycles, whatever its phase.

A drive of period T applies, in each cycle, the newest command it has. So a command sent at t may
be applied in the cycle right after one that held any command whose hold interval [t_h, t_h+1)
meets [t - T, t): the one sent last before it, and every one sent within T before it.
``worst_steps`` is the largest |c_i - c_h| over all such pairs, per joint (and, apart, over
consecutive commands alone); a drive's limit of rate x T is kept when it is at most that. Times
a period apart to a thousandth of it (the rounding of a clock in epoch seconds) are two cycles."""
import numpy as np


def worst_steps(times, commands, period):
    """(worst change in one drive cycle, worst change between consecutive commands), per joint,
    of ``commands`` (rows) sent at ``times`` (s, non-decreasing) to a drive of ``period`` s."""
    times, commands = np.asarray(times, dtype=float), np.asarray(commands, dtype=float)
    cycle = consecutive = np.zeros(commands.shape[1])
    for i in range(1, len(times)):
        consecutive = np.maximum(consecutive, np.abs(commands[i] - commands[i - 1]))
        h = i - 1
        while h >= 0 and (h == i - 1 or times[h + 1] > times[i] - 0.999 * period):
            cycle = np.maximum(cycle, np.abs(commands[i] - commands[h]))
            h -= 1
    return cycle, consecutive


def drive_cycle_steps(times, commands, period, phase=0.0):
    """The changes (rows) a drive of ``period`` s whose cycles fall at ``phase`` + k ``period``
    applies from one cycle to the next, from the first command on: the newest command sent at or
    before each cycle."""
    times, commands = np.asarray(times, dtype=float), np.asarray(commands, dtype=float)
    ticks = phase + period * np.arange(np.ceil((times[0] - phase) / period),
                                       np.floor((times[-1] - phase) / period) + 2)
    held = commands[np.searchsorted(times, ticks, side="right") - 1]
    return np.diff(held, axis=0)
