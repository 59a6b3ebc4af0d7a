"""take5: the rules of 6 nimmt!, the game engine, and (in take5.bot) the bot runtime.

Bot authors: ``from take5 import Bot, run`` (see README). The rule helpers here are the ones the referee
uses, so a bot never needs to reimplement the rules.
"""

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
    MAX_ROW_LENGTH,
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
    TakeReason,
    Take5Error,
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
