"""Tries to tell the arena's validation games from its rated ones by the clock alone: the attack
of tests/test_validation_blind.py's timing measurement, which works in any sandbox (Docker
included) because it says what it saw on its own stderr, which the records keep (``logs``).

What it measures, from inside its sandbox: the time from its process's start (or its previous
game's end) to its first decision (a table played straight after an image build, or on a cold
engine, could start otherwise), the wall clock between two of its decisions (its opponents' speed
plus the referee's), its own think time for a fixed piece of work (how busy the machine is), and
the seat the referee gave it (a ladder that seated a new version first in its first rated tables,
as the gauntlet once did, gave those away by the seat alone).
At the last decision of each round it writes those figures so far as one JSON line ("clockwatch
..."); it plays its highest card, unlike any bot of the pool: its play gives nothing away."""

import json
import statistics
import sys
import time

from take5 import Bot, run

STARTED = time.monotonic()


def _work() -> float:
    """Seconds for a fixed piece of work: the machine's load as the bot feels it."""
    start = time.perf_counter()
    total = 0
    for i in range(20_000):
        total += i * i % 7
    return time.perf_counter() - start


class ClockWatch(Bot):
    name = "clockwatch"

    def __init__(self):
        self.since = STARTED  # the process's start, then each game's end
        self.first = None
        self.began = 0.0
        self.last = None
        self.gaps = []
        self.think = []

    def pick_card(self, view):
        now = time.monotonic()
        if self.first is None:
            self.first = now - self.since
            self.began = time.time()
        if self.last is not None and len(view.hand) < 10:  # within a round only
            self.gaps.append(now - self.last)
        self.think.append(_work())
        if len(view.hand) == 1:
            note = {
                "first": round(self.first, 4),
                "gap": round(statistics.median(self.gaps), 5) if self.gaps else None,
                "think": round(statistics.median(self.think), 6),
                "seat": view.seat,
                "began": round(self.began, 3),
                "ended": round(time.time(), 3),
            }
            print("clockwatch " + json.dumps(note), file=sys.stderr, flush=True)
        self.last = time.monotonic()
        return max(view.hand)

    def game_over(self, result):
        self.since = time.monotonic()
        self.first, self.last, self.gaps, self.think = None, None, [], []


if __name__ == "__main__":
    run(ClockWatch())
