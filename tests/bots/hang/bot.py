"""Never answers PickCard (the SDK still answers Handshake)."""
import time

from take5 import Bot, run


class Hang(Bot):
    name = "hang"

    def pick_card(self, view):
        while True:
            time.sleep(3600)


if __name__ == "__main__":
    run(Hang())
