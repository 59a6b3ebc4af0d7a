"""Hostile SDK bot: sleeps forever in its second PickCard. Expected: `timeout` faults, then a
forfeit; the container is still removed after the game."""

import time

from take5 import Bot, run


class Sleeper(Bot):
    name = "hostile_sleep"
    version = "1"
    calls = 0

    def pick_card(self, view):
        self.calls += 1
        if self.calls >= 2:
            print("sleeping forever", flush=True)
            while True:
                time.sleep(3600)
        return min(view.hand)


if __name__ == "__main__":
    run(Sleeper())
