"""An honest but slow SDK bot: thinks (sleeps) a second before each card, well within the wall
clock's cap, so that a table of it lasts a minute or more (tests/test_cluster.py: a table whose
referee is killed must stop long before it would end by itself)."""

import time

from take5 import Bot, run


class Slow(Bot):
    name = "slow"
    version = "1"

    def pick_card(self, view):
        time.sleep(1.0)
        return min(view.hand)


if __name__ == "__main__":
    run(Slow())
