"""Tries to tell the arena's validation (smoke) games from its rated ones, from what it sees, and
notes its guess with what it saw (``TAKE5_TEST_SEEN``, one JSON line per game): the attack of
tests/test_validation_blind.py.

What it looks at: its opponents' play (a house bot that always plays its lowest card shows as a
seat whose cards rise turn after turn), the table's shape, the game id's form, and the time from
its process's start to its first decision (a table played straight after an image build, or by
another part of the referee, could start otherwise). It guesses "validation" when an opponent
plays like the house's lowest bot, the one signal that told 87% of the house-bot smoke tables."""

import itertools
import json
import os
import time

from take5 import Bot, run

STARTED = time.monotonic()
RISING = 5
"""Turns in a row of rising cards that give a seat away as the lowest bot (1 in 120 at random)."""


class Detector(Bot):
    name = "detector"

    def __init__(self):
        self.first_call = None
        self.rising = False

    def pick_card(self, view):
        if self.first_call is None:
            self.first_call = time.monotonic() - STARTED
        for seat in range(view.players):
            if seat == view.seat:
                continue
            cards = [p.card for turn in view.plays for p in turn if p.seat == seat]
            if len(cards) >= RISING and all(a < b for a, b in itertools.pairwise(cards)):
                self.rising = True
        return max(view.hand)  # plays unlike any house bot: its own play gives nothing away

    def game_over(self, result):
        seen = os.environ.get("TAKE5_TEST_SEEN")
        if seen:
            line = {
                "game_id": result.game_id,
                "process": f"{os.getpid()}-{STARTED}",
                "players": len(result.scores),
                "first_call": self.first_call,
                "guess": "validation" if self.rising else "rated",
            }
            with open(seen, "a") as file:
                file.write(json.dumps(line) + "\n")
        self.first_call = None
        self.rising = False


if __name__ == "__main__":
    run(Detector())
