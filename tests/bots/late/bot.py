"""Answers one call too late (round 1, turn 2 of each game), then plays its highest card on time."""

import time

from take5 import Bot, run


class Late(Bot):
    name = "late"

    def pick_card(self, view):
        if view.round == 1 and view.turn == 2:
            time.sleep(self.time_left() + 0.3)
        return max(view.hand)


if __name__ == "__main__":
    run(Late())
