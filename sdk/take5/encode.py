"""Observations for learning: what a seat knows as one fixed-size vector, for any table size.

A policy trained on these vectors plays at any table of 2 to 10 (the seats are padded to 10, with a
mask), in any of the environments (take5.env's PettingZoo environments, take5.vector's batch
environment) and in a bot, which needs nothing beyond numpy::

    from take5.encode import action_mask, encode
    obs = encode(view)              # float32, OBSERVATION_SIZE long
    legal = action_mask(view)       # int8, ACTIONS long: 1 where the action is legal

`encode(view)` encodes one `take5.View`; `encode_batch(batch)` every seat of every game of a
`take5.batch.Batch` at once, identically (tests/test_env_encode.py checks it on every turn of many
games).

Layout (each slice a module constant; planes are 104 wide, card c at index c - 1):

=========  ====================================================================================
`HAND`     the seat's hand
`ROWS`     4 planes: the cards of row 0, 1, 2, 3
`OTHERS`   the cards that someone else may still play this round: the cards the seat has not
           seen (other hands and undealt cards), or, in the professional variant where hands
           are public, the other seats' hands
`POOL`     the open draft pool (draft only)
`CARD`     the card to place (a row choice only)
`PHASE`    3: play, choose a row, draft (all 0 once the game is over)
`TOTALS`   10: each seat's score with this round's points, divided by the threshold and capped
           at 1; the seat's own first, then the next seats in seat order; 0 for absent seats
`SEATS`    10: 1 for each seat at the table, in the order of `TOTALS`
`HELD`     1: the cards in the hand / 10
=========  ====================================================================================

Actions (`ACTIONS` = 108): 0..103 play (or draft) card a + 1; 104..107 take row a - 104.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

try:
    import numpy as np
except ModuleNotFoundError as error:  # the [sim] extra
    from .extras import missing_extra

    raise missing_extra("sim", "take5.encode", error) from None
from numpy.typing import NDArray

from .game import Phase, View
from .rules import CARD_COUNT, HAND_SIZE, ROW_COUNT, deck

if TYPE_CHECKING:
    from .batch import Batch

__all__ = [
    "ACTIONS",
    "CARD",
    "HAND",
    "HELD",
    "MAX_SEATS",
    "OBSERVATION_SIZE",
    "OTHERS",
    "PHASE",
    "PHASES",
    "POOL",
    "ROWS",
    "ROW_ACTIONS",
    "SEATS",
    "TOTALS",
    "action_mask",
    "action_masks",
    "encode",
    "encode_batch",
]

MAX_SEATS = 10
"""Seats are padded to this many (the standard game's largest table)."""
ROW_ACTIONS = CARD_COUNT
"""Action ROW_ACTIONS + r takes row r."""
ACTIONS = CARD_COUNT + ROW_COUNT
"""Actions a policy chooses from: 108 (play or draft card a + 1; take row a - ROW_ACTIONS)."""
PHASES = (Phase.PLAY, Phase.CHOOSE_ROW, Phase.DRAFT)
"""The phases in the order of `PHASE`."""


def _planes(start: int, count: int = 1) -> slice:
    return slice(start, start + count * CARD_COUNT)


HAND = _planes(0)
"""The seat's hand (a plane: card c at index c - 1)."""
ROWS = _planes(HAND.stop, ROW_COUNT)
"""4 planes: the cards of row 0, 1, 2, 3."""
OTHERS = _planes(ROWS.stop)
"""The cards someone else may still play this round (the module text says which)."""
POOL = _planes(OTHERS.stop)
"""The open draft pool (draft only)."""
CARD = _planes(POOL.stop)
"""The card to place (a row choice only)."""
PHASE = slice(CARD.stop, CARD.stop + len(PHASES))
"""3 values: play, choose a row, draft (all 0 once the game is over)."""
TOTALS = slice(PHASE.stop, PHASE.stop + MAX_SEATS)
"""10 values: each seat's score with this round's points over the threshold, capped at 1; the
seat's own first, then the next seats in seat order; 0 for absent seats."""
SEATS = slice(TOTALS.stop, TOTALS.stop + MAX_SEATS)
"""10 values: 1 for each seat at the table, in the order of `TOTALS`."""
HELD = slice(SEATS.stop, SEATS.stop + 1)
"""1 value: the cards in the hand / 10."""
OBSERVATION_SIZE: int = HELD.stop
"""The length of every observation: 856."""

_Float = NDArray[np.float32]


def _standing(totals: Any, threshold: int) -> _Float:
    """Totals / threshold, capped at 1, as float32 (one formula for both encoders)."""
    share: _Float = np.minimum(np.asarray(totals, dtype=np.float32) / np.float32(threshold), 1)
    return share.astype(np.float32)


def encode(view: View) -> _Float:
    """The observation vector of one seat's view (see the module text)."""
    out = np.zeros(OBSERVATION_SIZE, dtype=np.float32)

    def plane(where: slice, cards: Any) -> None:
        for card in cards:
            out[where.start + card - 1] = 1.0

    settings = view.settings
    n = settings.players
    plane(HAND, view.hand)
    for r, row in enumerate(view.rows):
        plane(_planes(ROWS.start + r * CARD_COUNT), row)
    if view.hands is not None:
        others = [c for seat, hand in enumerate(view.hands) if seat != view.seat for c in hand]
    else:
        others = list(view.unseen())
    plane(OTHERS, others)
    plane(POOL, view.pool)
    if view.card is not None:
        plane(CARD, (view.card,))
    if view.phase in PHASES:
        out[PHASE.start + PHASES.index(view.phase)] = 1.0
    points = view.round_points
    order = [(view.seat + k) % n for k in range(n)]
    totals = [view.scores[s] + points[s] for s in order]
    out[TOTALS.start : TOTALS.start + n] = _standing(totals, settings.threshold)
    out[SEATS.start : SEATS.start + n] = 1.0
    out[HELD.start] = np.float32(len(view.hand)) / np.float32(HAND_SIZE)
    return out


def action_mask(view: View) -> NDArray[np.int8]:
    """1 for each legal action of the seat whose view this is (all 0 once the game is over)."""
    mask = np.zeros(ACTIONS, dtype=np.int8)
    if view.phase is Phase.CHOOSE_ROW:
        mask[ROW_ACTIONS : ROW_ACTIONS + len(view.rows)] = 1
    elif view.phase is Phase.PLAY or view.phase is Phase.DRAFT:
        for card in view.pool if view.phase is Phase.DRAFT else view.hand:
            mask[card - 1] = 1
    return mask


def encode_batch(batch: Batch) -> _Float:
    """Every seat's observation in every game of a batch, (G, n, OBSERVATION_SIZE): what `encode`
    gives for that seat's view of a play turn (games that are over or between rounds included as
    they stand). The batch must keep its cards (`keep_cards=True`, the default)."""
    g, n = len(batch), batch.players
    out = np.zeros((g, n, OBSERVATION_SIZE), dtype=np.float32)
    flat = out.reshape(-1)
    hands = batch.hands.astype(np.intp)  # (G, n, 10), NO_CARD past `held`
    slot = np.arange(HAND_SIZE)
    valid = np.broadcast_to(slot < batch.held[:, None, None], hands.shape)
    cell = (np.arange(g * n).reshape(g, n) * OBSERVATION_SIZE)[:, :, None]
    flat[(cell + HAND.start + hands - 1)[valid]] = 1.0
    # What every seat of a game shares: the rows and the cards out of the hands this round.
    shared = np.zeros((g, ROW_COUNT * CARD_COUNT), dtype=np.float32)
    rows = batch.rows.astype(np.intp)  # (G, 4, 5)
    in_row = np.arange(5) < batch.lens[:, :, None]
    at = np.arange(g)[:, None, None] * (ROW_COUNT * CARD_COUNT)
    at = at + np.arange(ROW_COUNT)[None, :, None] * CARD_COUNT + rows - 1
    shared.reshape(-1)[at[in_row]] = 1.0
    out[:, :, ROWS] = shared[:, None, :]
    # The cards of the deck that are not out: in some hand, or undealt. Without the seat's own
    # hand that is `view.unseen()`, and in the professional variant (every card dealt) exactly
    # the other seats' hands.
    in_deck = np.zeros(CARD_COUNT, dtype=np.float32)
    in_deck[np.array(deck(batch.settings.variant, n)) - 1] = 1.0
    unseen = in_deck * ~batch.out[:, 1:]  # (G, 104)
    out[:, :, OTHERS] = unseen[:, None, :] - out[:, :, HAND]
    out[:, :, PHASE.start] = 1.0
    order = (np.arange(n)[:, None] + np.arange(n)[None, :]) % n  # order[seat, k]: k-th seat after
    totals = batch.totals[:, order]  # (G, n, n)
    out[:, :, TOTALS.start : TOTALS.start + n] = _standing(totals, batch.settings.threshold)
    out[:, :, SEATS.start : SEATS.start + n] = 1.0
    out[:, :, HELD.start] = batch.held[:, None].astype(np.float32) / np.float32(HAND_SIZE)
    return out


def action_masks(batch: Batch) -> NDArray[np.int8]:
    """Every seat's legal actions in every game of a batch, (G, n, ACTIONS): its cards (a play
    turn; all 0 in games whose round is finished or which are over)."""
    g, n = len(batch), batch.players
    mask = np.zeros((g, n, ACTIONS), dtype=np.int8)
    valid = (np.arange(HAND_SIZE) < batch.held[:, None, None]) & ~batch.over[:, None, None]
    valid = np.broadcast_to(valid, (g, n, HAND_SIZE))
    cell = (np.arange(g * n).reshape(g, n) * ACTIONS)[:, :, None]
    mask.reshape(-1)[(cell + batch.hands.astype(np.intp) - 1)[valid]] = 1
    return mask
