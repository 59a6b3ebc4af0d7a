"""Plays its lowest card (so it often has to choose a row), then names a row that does not exist."""

from take5 import Bot, run


class BadRow(Bot):
    name = "badrow"

    def pick_card(self, view):
        return min(view.hand)

    def choose_row(self, view):
        return 7


if __name__ == "__main__":
    run(BadRow())
