"""Hostile SDK bot: two threads flood stdout and stderr without end while it plays normally.
Expected: no fault; its kept output is bounded, and the host does not pay for the flood."""

import sys
import threading

from take5 import Bot, run

LINE = "flood " + "x" * 1000 + "\n"


def flood(stream):
    block = LINE * 64
    while True:
        try:
            stream.write(block)
        except (OSError, ValueError):
            pass  # a full output file: try again, and again


class Flood(Bot):
    name = "hostile_flood"
    version = "1"

    def pick_card(self, view):
        return min(view.hand)


if __name__ == "__main__":
    for stream in (sys.stdout, sys.stderr):
        threading.Thread(target=flood, args=(stream,), daemon=True).start()
    run(Flood())
