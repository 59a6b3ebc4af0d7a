"""heuristic: plays the card with the smallest expected penalty this turn.

The strategy is the SDK's bundled bot (`take5/bots/heuristic.py` in the SDK: read it there); this
file is what the referee runs: a bot is a program that serves a Bot over gRPC. Try it in-process
with `take5-harness example_bots/heuristic`, or serve it: `python3 bot.py --listen
unix:/tmp/heuristic.sock`.
"""

from take5 import run
from take5.bots import HeuristicBot

if __name__ == "__main__":
    run(HeuristicBot())
