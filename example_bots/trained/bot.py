"""trained: a policy learned by self-play on take5.vector.VectorEnv, played from its weights.

Each card of the hand is described by a few features of take5.encode's observation (policy.py:
what it takes now, how likely its row fills first, the card itself, ...), a small network scores
them, and the bot plays the best-scored card. The weights (weights.npz) come from train.py, a few
CPU-minutes of REINFORCE in numpy; docs/authors/training.md walks through it. Rows are the SDK
default (the cheapest row), draft picks too.

It needs numpy, which the SDK depends on and the arena's Python image carries, so requirements.txt
lists nothing.
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from policy import Policy  # noqa: E402

from take5 import Bot, View, run  # noqa: E402
from take5.encode import encode  # noqa: E402


class TrainedBot(Bot):
    name = "trained"
    version = "1.0"
    author = "take5 arena"

    def __init__(self, weights: str | Path = HERE / "weights.npz") -> None:
        self.policy = Policy.load(weights)

    def pick_card(self, view: View) -> int:
        if len(view.hand) == 1:
            return view.hand[0]
        return self.policy.best_card(encode(view))


if __name__ == "__main__":
    run(TrainedBot())
