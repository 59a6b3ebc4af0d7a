"""take5: the rules of 6 nimmt!, the game engine, and (in take5.bot) the bot runtime.

Bot authors: ``from take5 import Bot, run`` (docs/authors/writing-a-bot.md). The rule helpers here
are the ones the referee uses, so a bot never needs to reimplement the rules.
"""

from typing import TYPE_CHECKING

from .game import (
    Fault,
    Game,
    Phase,
    Play,
    Player,
    RandomPlayer,
    Result,
    RowTake,
    Settings,
    View,
    play_game,
    rank,
)
from .rules import (
    BULL_HEADS,
    CARD_COUNT,
    DEFAULT_THRESHOLD,
    HAND_SIZE,
    MAX_ROUNDS,
    MAX_ROW_LENGTH,
    MAX_THRESHOLD,
    ROW_COUNT,
    TOTAL_BULL_HEADS,
    CardNotInHand,
    CardNotInPool,
    EndRule,
    IllegalMove,
    InvalidRow,
    InvalidSettings,
    NeedRowChoice,
    Placement,
    Take5Error,
    TakeReason,
    Variant,
    WrongPhase,
    bull_heads,
    cheapest_row,
    cost_of_card,
    deck,
    penalty,
    place_card,
    place_cards,
    row_penalty,
    target_row,
    unseen_cards,
)

__version__ = "0.1.0"

# The bot runtime needs grpc; it is loaded on first use so that `import take5` (the engine alone)
# stays light for the referee's hot paths and for tools that never talk to a bot.
_LAZY = {
    "Bot": "bot",
    "CallContext": "bot",
    "run": "bot",
    "serve": "bot",
    "GameOver": "convert",
    "PROTOCOL_VERSION": "convert",
    "play_against": "harness",
    "load_bot": "loading",
}


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'take5' has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs only
    from .bot import Bot, CallContext, run, serve
    from .convert import PROTOCOL_VERSION, GameOver
    from .harness import play_against
    from .loading import load_bot


#: The public API (what `from take5 import *` gives and type checkers treat as exported).
__all__ = [
    "BULL_HEADS",
    "CARD_COUNT",
    "DEFAULT_THRESHOLD",
    "HAND_SIZE",
    "MAX_ROUNDS",
    "MAX_ROW_LENGTH",
    "MAX_THRESHOLD",
    "PROTOCOL_VERSION",
    "ROW_COUNT",
    "TOTAL_BULL_HEADS",
    "Bot",
    "CallContext",
    "CardNotInHand",
    "CardNotInPool",
    "EndRule",
    "Fault",
    "Game",
    "GameOver",
    "IllegalMove",
    "InvalidRow",
    "InvalidSettings",
    "NeedRowChoice",
    "Phase",
    "Placement",
    "Play",
    "Player",
    "RandomPlayer",
    "Result",
    "RowTake",
    "Settings",
    "Take5Error",
    "TakeReason",
    "Variant",
    "View",
    "WrongPhase",
    "__version__",
    "bull_heads",
    "cheapest_row",
    "cost_of_card",
    "deck",
    "load_bot",
    "penalty",
    "place_card",
    "place_cards",
    "play_against",
    "play_game",
    "rank",
    "row_penalty",
    "run",
    "serve",
    "target_row",
    "unseen_cards",
]
