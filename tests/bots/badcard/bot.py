"""Plays a card that is not in its hand: the last card of the first row."""

from take5 import Bot, run


class BadCard(Bot):
    name = "badcard"

    def pick_card(self, view):
        return view.rows[0][-1]


if __name__ == "__main__":
    run(BadCard())
