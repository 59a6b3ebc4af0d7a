"""Answers at once, then thinks on: after its first PickCard of each game, a thread spins the CPU
for 0.3 s of its own while the others decide. Under ``--ponder charge`` that CPU is taken from its
bank (in its next decisions' times), under ``allow`` it is free (tests/test_clocks.py plays it
against the dawdler, which leaves it the time)."""

import threading
import time

from take5 import Bot, run

PONDER = 0.3


def spin() -> None:
    end = time.thread_time() + PONDER
    while time.thread_time() < end:
        pass


class Ponderer(Bot):
    name = "ponderer"

    def pick_card(self, view):
        if view.round == 1 and view.turn == 1:
            threading.Thread(target=spin, daemon=True).start()
        return min(view.hand)


if __name__ == "__main__":
    run(Ponderer())
