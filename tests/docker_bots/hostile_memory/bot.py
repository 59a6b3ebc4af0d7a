"""Test bot: remembers games, in memory and in /tmp, and plays an illegal card once it has seen a
game end. In a fresh container per game it never has: no fault (as local process: faults)."""

import os

from take5 import Bot, run

MARK = os.environ.get("TAKE5_MEMORY_MARK", "/tmp/take5-seen-a-game")


class Memory(Bot):
    name = "hostile_memory"
    version = "1"
    games_seen = 0

    def pick_card(self, view):
        if self.games_seen or os.path.exists(MARK):
            return 999  # not a card: an illegal-card fault
        return min(view.hand)

    def game_over(self, result):
        self.games_seen += 1
        try:
            with open(MARK, "w") as fh:
                fh.write("1")
        except OSError:
            pass


if __name__ == "__main__":
    run(Memory())
