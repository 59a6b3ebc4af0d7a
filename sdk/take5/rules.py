"""The rules of 6 nimmt! that do not depend on a game in progress.

Pure functions over plain tuples, so the referee, the bots and the tests share one implementation
(docs/rules.md sections 1 and 4). Rows are tuples of cards, oldest first; a table is a tuple of 4
rows.

The SDK's errors are defined under one base, here (``except take5.Take5Error`` catches them all)::

    Take5Error
    ├── InvalidSettings (ValueError)     settings the rules do not allow
    ├── IllegalMove (ValueError)         a decision the rules do not allow
    │   ├── CardNotInHand
    │   ├── CardNotInPool
    │   └── InvalidRow
    ├── NeedRowChoice                    a low card: its player must choose a row first
    ├── WrongPhase                       a decision the game is not waiting for
    ├── ProtocolError (ValueError)       convert.py: a message that is no valid game situation
    ├── MalformedRecord                  audit.py: a record of the wrong shape
    ├── RecordPathError                  record.py: a record cannot be written where asked
    └── HarnessError                     harness.py: what the referee would count as a fault
        ├── BotLoadError                 a bot file that cannot be loaded
        └── BotRaised                    a bot that raised while asked for a move
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from enum import Enum

CARD_COUNT = 104
"""Cards in the deck, numbered 1..104."""
ROW_COUNT = 4
"""Rows on the table."""
HAND_SIZE = 10
"""Cards dealt (or drafted) to each player per round, so a round has 10 turns."""
MAX_ROW_LENGTH = 5
"""Cards a row holds: the sixth takes the row."""
DEFAULT_THRESHOLD = 66
"""The penalty total that ends a game unless the settings say otherwise."""
TOTAL_BULL_HEADS = 171
"""Bull heads in the whole deck."""

# Limits that keep every game finite and every record small (docs/record-format.md, "Limits").
# A round gives someone at least one bull head (20 or more cards cannot all fit on 4 rows of 5), so
# a threshold bounds the game; MAX_ROUNDS is a hard stop even for bots that collude to take nothing.
MAX_THRESHOLD = 1000
"""The highest threshold a game may be played to."""
MAX_ROUNDS = 1000
"""A game ends after this round even when no total has reached the threshold."""
MIN_SEED = -(2**63)
MAX_SEED = 2**64 - 1
"""Seeds are 64-bit whole numbers, signed or unsigned (the generator uses the seed mod 2**64)."""

Row = tuple[int, ...]
Rows = tuple[Row, ...]


def _bull_heads(card: int) -> int:
    if card == 55:
        return 7
    if card % 11 == 0:
        return 5
    if card % 10 == 0:
        return 3
    if card % 5 == 0:
        return 2
    return 1


BULL_HEADS: tuple[int, ...] = (0,) + tuple(_bull_heads(c) for c in range(1, CARD_COUNT + 1))
"""``BULL_HEADS[card]`` is the penalty of a card (index 0 is unused): the fast `bull_heads`."""


def bull_heads(card: int) -> int:
    """Penalty points of one card (docs/rules.md 1)."""
    if not 1 <= card <= CARD_COUNT:
        raise ValueError(f"no such card: {card!r} (cards are 1..{CARD_COUNT})")
    return BULL_HEADS[card]


def penalty(cards: Iterable[int]) -> int:
    """Total bull heads of some cards: the cost of taking a row, or a bull pile's score."""
    return sum(BULL_HEADS[c] for c in cards)


class Variant(str, Enum):
    """The game played (docs/rules.md 2 and 7); the value is the record's and the command line's
    word."""

    STANDARD = "standard"
    """All 104 cards, 2 to 10 players, hands dealt at random and private."""
    PROFESSIONAL = "professional"
    """Cards 1..10n+4 for n players (2 to 6), drafted openly each round: every hand is known."""


class EndRule(str, Enum):
    """How the threshold ends the game (docs/rules.md 6): the referee defaults to "at or above"."""

    AT_OR_ABOVE = "at-or-above"
    """The game ends when a total reaches the threshold."""
    ABOVE = "above"
    """The game ends when a total passes the threshold."""


class TakeReason(str, Enum):
    """Why a player took a row (docs/rules.md 4 and 5)."""

    SIXTH_CARD = "sixth-card"
    """The card would have been the row's sixth."""
    LOW_CARD = "low-card"
    """The card was lower than every row's end, and its player chose the row."""


def deck(variant: Variant = Variant.STANDARD, players: int = 4) -> tuple[int, ...]:
    """The cards in use: all 104, or 1..10n+4 in the professional variant (docs/rules.md 7)."""
    if variant is Variant.PROFESSIONAL:
        return tuple(range(1, HAND_SIZE * players + ROW_COUNT + 1))
    return tuple(range(1, CARD_COUNT + 1))


def target_row(rows: Sequence[Row], card: int) -> int | None:
    """Index of the row the card goes to, or None when it is lower than every row's end
    (docs/rules.md 4)."""
    best = None
    best_end = 0
    for index, row in enumerate(rows):
        end = row[-1]
        if best_end < end < card:
            best, best_end = index, end
    return best


def row_penalty(row: Sequence[int]) -> int:
    """What taking this row costs."""
    return penalty(row)


@dataclass(frozen=True)
class Placement:
    """What placing one card did: where it went and what its player took."""

    card: int
    """The card placed."""
    row: int
    """The index of the row it went to, 0..3."""
    taken: Row
    """The cards its player took (empty when the card was simply added to its row)."""
    reason: TakeReason | None
    """Why a row was taken, or None when none was."""
    rows: Rows
    """The rows after the placing."""

    @property
    def points(self) -> int:
        """The bull heads taken: the penalty of `taken`."""
        return penalty(self.taken)


def place_card(rows: Rows, card: int, chosen_row: int | None = None) -> Placement:
    """Place one card on the rows as docs/rules.md 4 says; chosen_row is used only for a low card.

    Raises NeedRowChoice when the card is lower than every row's end and no row was chosen.
    """
    index = target_row(rows, card)
    if index is None:
        if chosen_row is None:
            raise NeedRowChoice(card)
        if not (isinstance(chosen_row, int) and 0 <= chosen_row < len(rows)):
            raise InvalidRow(chosen_row, len(rows))
        taken = rows[chosen_row]
        new_rows = rows[:chosen_row] + ((card,),) + rows[chosen_row + 1 :]
        return Placement(card, chosen_row, taken, TakeReason.LOW_CARD, new_rows)
    row = rows[index]
    if len(row) >= MAX_ROW_LENGTH:
        new_rows = rows[:index] + ((card,),) + rows[index + 1 :]
        return Placement(card, index, row, TakeReason.SIXTH_CARD, new_rows)
    new_rows = rows[:index] + (row + (card,),) + rows[index + 1 :]
    return Placement(card, index, (), None, new_rows)


def place_cards(
    rows: Rows, cards: Iterable[int], choose_row: Callable[[Rows, int], int] | None = None
) -> tuple[Rows, list[Placement]]:
    """Place a turn's cards lowest first; choose_row(rows, card) -> row index answers a low card.

    The default row choice is the cheapest row (fewest bull heads, then the lowest index), which is
    also the referee's default move for a bot that cannot answer.
    """
    placements = []
    for card in sorted(cards):
        chosen = None
        if target_row(rows, card) is None:
            chosen = (choose_row or cheapest_row)(rows, card)
        placement = place_card(rows, card, chosen)
        placements.append(placement)
        rows = placement.rows
    return rows, placements


def cheapest_row(rows: Sequence[Row], card: int | None = None) -> int:
    """The row with the fewest bull heads (ties: fewer cards, then the lowest index)."""
    return min(range(len(rows)), key=lambda i: (penalty(rows[i]), len(rows[i]), i))


def cost_of_card(rows: Rows, card: int, chosen_row: int | None = None) -> int:
    """Bull heads its player takes if this card were placed now on these rows (alone)."""
    if chosen_row is None and target_row(rows, card) is None:
        chosen_row = cheapest_row(rows)
    return place_card(rows, card, chosen_row).points


def unseen_cards(
    hand: Iterable[int],
    rows: Iterable[Iterable[int]],
    played: Iterable[int] = (),
    variant: Variant = Variant.STANDARD,
    players: int = 4,
) -> tuple[int, ...]:
    """Cards of the deck this player has not seen: not in their hand, not on the rows, not played.

    In the standard game these are the other hands plus the undealt cards.
    """
    seen = set(hand)
    for row in rows:
        seen.update(row)
    seen.update(played)
    return tuple(c for c in deck(variant, players) if c not in seen)


# Errors live here so that the pure helpers above can raise them.
class Take5Error(Exception):
    """Base class of every error the rules raise."""


class InvalidSettings(Take5Error, ValueError):
    """Settings the rules do not allow (player count, threshold, variant)."""


class IllegalMove(Take5Error, ValueError):
    """A decision the rules do not allow; the match layer decides what to do about it."""


class CardNotInHand(IllegalMove):
    def __init__(self, card: object, hand: Sequence[int], seat: int | None = None) -> None:
        who = "" if seat is None else f"seat {seat}: "
        super().__init__(f"{who}card {card!r} is not in the hand {list(hand)}")
        self.card = card
        self.hand = tuple(hand)
        self.seat = seat


class CardNotInPool(IllegalMove):
    def __init__(self, card: object, pool: Sequence[int]) -> None:
        super().__init__(f"card {card!r} is not in the draft pool")
        self.card = card
        self.pool = tuple(pool)


class InvalidRow(IllegalMove):
    def __init__(self, row: object, row_count: int = ROW_COUNT) -> None:
        super().__init__(f"row {row!r} does not exist (rows are 0..{row_count - 1})")
        self.row = row


class NeedRowChoice(Take5Error):
    """The card is lower than every row's end: its player must choose a row first."""

    def __init__(self, card: int) -> None:
        super().__init__(f"card {card} is lower than every row: a row must be chosen")
        self.card = card


class WrongPhase(Take5Error):
    """A decision was given that the game is not waiting for."""
