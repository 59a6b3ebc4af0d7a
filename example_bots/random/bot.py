"""random: plays a uniformly random card of its hand, takes a random row, drafts a random card.

The strategy is the SDK's bundled bot (`take5/bots/random_bot.py` in the SDK: read it there); this
file is what the referee runs: a bot is a program that serves a Bot over gRPC. Try it in-process
with `take5-harness example_bots/random`, or serve it: `python3 bot.py --listen
unix:/tmp/random.sock`.
"""

from take5 import run
from take5.bots import RandomBot

if __name__ == "__main__":
    run(RandomBot())
