"""Hostile SDK bot: a fork bomb in its second PickCard; every process forks without end and the bot
never answers again. Expected: `timeout` faults, then a forfeit; the pids limit holds the bomb."""

import os
import time

from take5 import Bot, run


class Bomb(Bot):
    name = "hostile_fork"
    version = "1"
    calls = 0

    def pick_card(self, view):
        self.calls += 1
        if self.calls >= 2:
            print("fork bomb", flush=True)
            while True:
                try:
                    os.fork()
                except OSError:
                    time.sleep(0.001)
        return min(view.hand)


if __name__ == "__main__":
    run(Bomb())
