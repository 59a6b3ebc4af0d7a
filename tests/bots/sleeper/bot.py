"""Sleeps 1.2 s in its first decision of each game (no CPU time), then plays its lowest card.

Late on the wall clock at any limit below 1.2 s; on time on the CPU clock, whose wall-clock cap is
far above that (tests/test_clocks.py gives it a generous --wall-factor)."""

import time

from take5 import Bot, run


class Sleeper(Bot):
    name = "sleeper"

    def pick_card(self, view):
        if view.round == 1 and view.turn == 1:
            time.sleep(1.2)
        return min(view.hand)


if __name__ == "__main__":
    run(Sleeper())
