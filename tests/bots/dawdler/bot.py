"""Sleeps 0.6 s in every PickCard (no CPU time), then plays its lowest card: the others have that
long between their answer and their next request."""

import time

from take5 import Bot, run


class Dawdler(Bot):
    name = "dawdler"

    def pick_card(self, view):
        time.sleep(0.6)
        return min(view.hand)


if __name__ == "__main__":
    run(Dawdler())
