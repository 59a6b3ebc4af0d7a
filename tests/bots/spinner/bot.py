"""Spins the CPU without end in round 1, turn 2 (it never answers): over its limit on any clock."""

from take5 import Bot, run


class Spinner(Bot):
    name = "spinner"

    def pick_card(self, view):
        if view.round == 1 and view.turn == 2:
            n = 0
            while True:
                n += 1
        return min(view.hand)


if __name__ == "__main__":
    run(Spinner())
