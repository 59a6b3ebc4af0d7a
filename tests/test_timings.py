"""take5_arena/referee/timings.py: the durations a long-running process keeps for its metrics stay
bounded, while the count and sum a Prometheus summary reads keep growing and a reader takes each
new duration once."""

from __future__ import annotations

from take5_arena.referee.timings import Timings


def test_a_reader_takes_each_new_duration_once_and_the_kept_ones_are_bounded():
    timings = Timings(keep=3)
    assert timings.since(0) == ([], 0)
    for s in (1.0, 2.0):
        timings.add(s)
    new, seen = timings.since(0)
    assert (new, seen) == ([1.0, 2.0], 2)
    assert timings.since(seen) == ([], 2)
    for s in (3.0, 4.0, 5.0, 6.0):
        timings.add(s)
    # a reader that fell behind gets the newest kept, never more than were added since
    new, seen = timings.since(seen)
    assert (new, seen) == ([4.0, 5.0, 6.0], 6)
    assert (timings.count, timings.total, len(timings)) == (6, 21.0, 6)
    timings.add(7.0)
    assert timings.since(6) == ([7.0], 7)
