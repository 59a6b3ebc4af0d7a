"""Hostile SDK bot: exits with status 3 in its second PickCard. Expected: a `crash` fault with
"exit code 3"."""

import os

from take5 import Bot, run


class Quitter(Bot):
    name = "hostile_exit"
    version = "1"
    calls = 0

    def pick_card(self, view):
        self.calls += 1
        if self.calls >= 2:
            print("exiting with status 3", flush=True)
            os._exit(3)
        return min(view.hand)


if __name__ == "__main__":
    run(Quitter())
