"""Uses a fixed amount of CPU time per decision (TAKE5_BENCH_CPU_MS, default 50), measured on its
own process's CPU clock, then plays its lowest card: a bot whose cost does not depend on the
host."""

import os
import time

from take5 import Bot, View, run

SPEND = float(os.environ.get("TAKE5_BENCH_CPU_MS", "50")) / 1000


class Spender(Bot):
    name = "spender"

    def spend(self) -> None:
        end = time.process_time() + SPEND
        n = 0
        while time.process_time() < end:
            n += 1

    def pick_card(self, view: View) -> int:
        self.spend()
        return min(view.hand)

    def choose_row(self, view: View) -> int:
        self.spend()
        return super().choose_row(view)


if __name__ == "__main__":
    run(Spender())
