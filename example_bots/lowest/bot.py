"""lowest: always plays its lowest card (and drafts the lowest card of the pool).

The strategy is the SDK's bundled bot (`take5/bots/lowest.py` in the SDK: read it there); this file
is what the referee runs: a bot is a program that serves a Bot over gRPC. Try it in-process with
`take5-harness example_bots/lowest`, or serve it: `python3 bot.py --listen unix:/tmp/lowest.sock`.
"""

from take5 import run
from take5.bots import LowestBot

if __name__ == "__main__":
    run(LowestBot())
