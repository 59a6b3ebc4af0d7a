"""Plays its lowest card and notes, for each decision, what the SDK told it about its time: with
TAKE5_TEST_SEEN set, one JSON line per call (the clock, the bank, this call's limit, time_left(),
the wall-clock cap)."""

import json
import os

from take5 import Bot, run


class TimeAware(Bot):
    name = "timeaware"

    def note(self, call):
        seen = os.environ.get("TAKE5_TEST_SEEN")
        if seen and self.context is not None:
            line = {
                "call": call,
                "clock": self.context.clock.value,
                "bank": self.context.bank,
                "limit": self.context.time_limit,
                "left": self.time_left(),
                "wall": self.context.budget.wall_limit if self.context.budget else None,
            }
            with open(seen, "a") as file:
                file.write(json.dumps(line) + "\n")

    def pick_card(self, view):
        self.note("pick_card")
        return min(view.hand)

    def choose_row(self, view):
        self.note("choose_row")
        return 0


if __name__ == "__main__":
    run(TimeAware())
