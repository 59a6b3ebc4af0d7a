"""Opponents that ship with the SDK: installing the SDK alone (``pip install ./sdk``) is enough to
try a bot::

    from take5 import play_against
    from take5.bots import HeuristicBot
    print(play_against(MyBot(), ["random", "heuristic", HeuristicBot()]).summary())

=============  ==============================================================================
name           plays
=============  ==============================================================================
``random``     a random card, row and draft pick, seeded from the situation (deterministic)
``lowest``     always its lowest card; the cheapest row
``heuristic``  the card with the smallest expected penalty this turn
``search``     a light Monte Carlo search over the rest of the round (``take5.batch``), ~20 ms
=============  ==============================================================================

Each is written only against the public SDK, as any bot author would write it, so its source is also
an example to read. The folders in example_bots/ serve these same classes as separate processes (the
referee runs bots that way, locally or in Docker); example_bots/montecarlo is the strong search bot.
"""

from __future__ import annotations

from take5 import Bot

from .heuristic import HeuristicBot
from .lowest import LowestBot
from .random_bot import RandomBot
from .search import SearchBot

BUILTIN: dict[str, type[Bot]] = {
    "random": RandomBot,
    "lowest": LowestBot,
    "heuristic": HeuristicBot,
    "search": SearchBot,
}
"""The bundled bots by the name the harness and `play_against` accept."""


def builtin(name: str) -> Bot | None:
    """A new instance of the bundled bot called `name`, or None if there is none."""
    cls = BUILTIN.get(name)
    return cls() if cls is not None else None


__all__ = ["BUILTIN", "HeuristicBot", "LowestBot", "RandomBot", "SearchBot", "builtin"]
