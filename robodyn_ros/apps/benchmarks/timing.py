"""Timing helpers shared by the benchmarks: best-of-repeats of many calls, which is the figure least
disturbed by the other core's load (the median is reported beside it)."""
import statistics
import timeit


def per_call(func, number=20000, repeat=7):
    """(best, median) seconds per call of ``func()`` over ``repeat`` rounds of ``number`` calls."""
    func()
    rounds = [t / number for t in timeit.repeat(func, number=number, repeat=repeat)]
    return min(rounds), statistics.median(rounds)


def paired(ours, peer, number=20000, repeat=9):
    """``per_call`` of two functions with their rounds interleaved, so that both see the same load
    on this shared machine: ((best, median) ours, (best, median) peer)."""
    ours(), peer()
    a, b = [], []
    for _ in range(repeat):
        a.append(timeit.timeit(ours, number=number) / number)
        b.append(timeit.timeit(peer, number=number) / number)
    return (min(a), statistics.median(a)), (min(b), statistics.median(b))


def figure(name, best, median, unit="us", peer=None, target=None, note=""):
    """One row of a benchmark: our figure, the peer's from the same run, their ratio and the target."""
    row = {"name": name, "best": best, "median": median, "unit": unit}
    if peer is not None:
        row["peer"] = peer
    if target is not None:
        row["target"] = target
    if note:
        row["note"] = note
    return row
