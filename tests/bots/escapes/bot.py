"""A hostile name: ANSI and OSC escapes, a fake newline forging a referee line, rich markup; it
then answers an illegal card with an error whose details carry the same escapes, and prints them to
stderr."""

import sys

from take5 import Bot, run

EVIL = "\x1b[2J\x1b]0;pwned\x07evil\nreferee: all bots passed\r[bold red]x[/]"


class Escapes(Bot):
    name = EVIL
    version = "1.0\x1b[31m"
    author = "mallory\x1b]8;;http://x\x07"

    def pick_card(self, view):
        print(EVIL, file=sys.stderr, flush=True)
        raise RuntimeError(EVIL)


if __name__ == "__main__":
    run(Escapes())
