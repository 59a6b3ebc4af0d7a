"""Raises an exception on round 1, turn 1 of each game (a bug), then plays normally."""

from take5 import Bot, run


class Error(Bot):
    name = "error"

    def pick_card(self, view):
        if view.round == 1 and view.turn == 1:
            raise ValueError("bug in my evaluation function")
        return max(view.hand)


if __name__ == "__main__":
    run(Error())
