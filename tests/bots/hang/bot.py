"""Never answers PickCard (the SDK still answers Handshake).

With TAKE5_TEST_WAITING set to a folder, it first leaves a file there named by its pid, so that a
test can wait until the bot is really stuck in PickCard instead of sleeping."""

import os
import time
from pathlib import Path

from take5 import Bot, run


class Hang(Bot):
    name = "hang"

    def pick_card(self, view):
        waiting = os.environ.get("TAKE5_TEST_WAITING")
        if waiting:
            Path(waiting, str(os.getpid())).touch()
        while True:
            time.sleep(3600)


if __name__ == "__main__":
    run(Hang())
