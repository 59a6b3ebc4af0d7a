"""Pins itself to CPU 0 in its first decision of a game, then (``TAKE5_TEST_MODE``):

- ``compute`` (the default): computes steadily for 0.4 s of CPU time, then answers. Under a 0.5 s
  limit it is on time on any fair host; starved by busy processes the test pins to the same CPU
  (the host's load), it passes its wall-clock cap while it computes: the host's failure.
- ``brief``: computes for 0.15 s of CPU time: starved as above, it passes its cap but answers
  within the referee's grace for a starved bot (twice the cap): no fault at all.
- ``sleep``: sleeps 2.5 s (no CPU time, no run-queue wait): past its 1.5 s cap, its own timeout.
- ``swarm``: a hostile bot that tries to manufacture run-queue wait: six busy processes of its own
  on its CPU while it sleeps. They burn its CPU clock, which runs out first: its own timeout.
"""

import os
import subprocess
import sys
import time

from take5 import Bot, run

BUSY = "while True: pass"


def pin() -> None:
    for task in os.listdir("/proc/self/task"):
        try:
            os.sched_setaffinity(int(task), {0})
        except OSError:
            pass


class Starved(Bot):
    name = "starved"

    def pick_card(self, view):
        if view.round == 1 and view.turn == 1:
            pin()
            mode = os.environ.get("TAKE5_TEST_MODE", "compute")
            if mode in ("compute", "brief"):
                end = time.thread_time() + (0.4 if mode == "compute" else 0.15)
                n = 0
                while time.thread_time() < end:
                    n += 1
            elif mode == "sleep":
                time.sleep(2.5)
            elif mode == "swarm":
                for _ in range(6):
                    subprocess.Popen([sys.executable, "-c", BUSY])
                time.sleep(5)
        return min(view.hand)


if __name__ == "__main__":
    run(Starved())
