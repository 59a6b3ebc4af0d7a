"""Plays normally, then the process dies on round 1, turn 3."""

import os

from take5 import Bot, run


class CrashMid(Bot):
    name = "crash_mid"

    def pick_card(self, view):
        if view.round == 1 and view.turn == 3:
            print("crash_mid: segfault (simulated)", flush=True)
            os._exit(3)
        return min(view.hand)


if __name__ == "__main__":
    run(CrashMid())
