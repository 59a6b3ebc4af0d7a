"""The trained bot's policy: a few features of each card, read off take5.encode's observation, and
a small network that scores them. numpy only; train.py fits it, bot.py plays it.

The observation (take5.encode) says everything a seat knows: its hand, the rows, the cards the
others may still hold, the standings. From it, for every card of the hand, `card_features` works
out what a player weighs: whether the card is lower than every row, what it would take now, how
far it lies behind its row's end, how many of the others' cards fall in between and how much room
the row has left (the chance that the row fills before the card lands), and the card itself. The
network (one hidden layer) turns the features of each card into a score; the policy is the
softmax of the scores over the legal cards. The same function serves every table size, since the
features are per card and the table size enters only as the number of others.
"""

from __future__ import annotations

from math import comb
from pathlib import Path

import numpy as np

from take5 import BULL_HEADS, CARD_COUNT, HAND_SIZE, MAX_ROW_LENGTH, ROW_COUNT
from take5.encode import HAND, HELD, OTHERS, ROWS, SEATS, TOTALS

CARDS = np.arange(1, CARD_COUNT + 1, dtype=np.float32)  # card c at index c - 1
HEADS = np.array(BULL_HEADS[1:], dtype=np.float32)
FEATURES = (
    "low",  # lower than every row's end: it takes a row
    "cost now",  # bull heads it takes if placed now (the cheapest row for a low card) / 10
    "gap",  # (card - its row's end) / 104
    "between",  # the others' cards between its row's end and it / 10
    "room",  # free places in its row / 5
    "fill risk",  # chance the others fill its row first, times the row's bull heads + 1, / 10
    "under",  # the share of the others' cards lower than it (a low card's risk)
    "card",  # the card / 104
    "its heads",  # its own bull heads / 7
    "row heads",  # its row's bull heads / 10
    "hand",  # cards in hand / 10
    "standing",  # own total / threshold
)
# P(X >= k) for X ~ Binomial(m, p) needs C(m, i) for i < k <= 5 and m <= 9 others.
_COMB = np.array([[comb(m, i) for i in range(MAX_ROW_LENGTH)] for m in range(10)], dtype=np.float32)


def hand_cards(obs: np.ndarray) -> np.ndarray:
    """The cards of the hand in each observation, ascending, padded with 0: (..., 10) ints."""
    hand = obs[..., HAND] > 0
    order = np.argsort(~hand, axis=-1, kind="stable")[..., :HAND_SIZE]  # held cards first
    cards = order + 1
    return np.where(np.take_along_axis(hand, order, -1), cards, 0)


def card_features(obs: np.ndarray, cards: np.ndarray) -> np.ndarray:
    """The features of some cards (..., K; 0: no card) in their observations (...,
    OBSERVATION_SIZE): (..., K, len(FEATURES)), all 0 for no card."""
    rows = obs[..., ROWS].reshape(obs.shape[:-1] + (ROW_COUNT, CARD_COUNT))
    others = obs[..., OTHERS]
    lens = rows.sum(-1)  # (..., 4)
    ends = (rows * CARDS).max(-1)
    heads = (rows * HEADS).sum(-1)
    value = cards.astype(np.float32)
    # The row each card goes to: the highest end below it.
    below = ends[..., None, :] < value[..., None]  # (..., K, 4)
    fit = np.where(below, ends[..., None, :], 0.0)
    end = fit.max(-1)
    low = end == 0
    target = below & (fit == end[..., None])
    length = (target * lens[..., None, :]).sum(-1)
    row_heads = (target * heads[..., None, :]).sum(-1)
    cheapest = heads.min(-1)[..., None]
    full = length >= MAX_ROW_LENGTH
    cost = np.where(low, cheapest, np.where(full, row_heads, 0.0))
    # The others' cards below each card, a running count (index c - 1: lower than c); those
    # between a row's end e and a card c are under(c) - under(e + 1), under(e + 1) at index e.
    under = np.cumsum(others, -1) - others
    index = np.clip(cards.astype(np.intp) - 1, 0, CARD_COUNT - 1)
    under_card = np.take_along_axis(under, index, -1)
    under_end = np.take_along_axis(under, np.clip(end.astype(np.intp), 0, CARD_COUNT - 1), -1)
    between = np.where(low, 0.0, under_card - under_end)
    unseen = np.maximum(others.sum(-1, keepdims=True), 1.0)
    opponents = np.maximum(obs[..., SEATS].sum(-1, keepdims=True) - 1, 0)
    room = np.where(low | full, 0.0, MAX_ROW_LENGTH - length)
    fill = np.where(low | full, 0.0, _at_least(room, opponents, between / unseen) * (row_heads + 1))
    held = np.broadcast_to(obs[..., HELD], cost.shape)
    standing = np.broadcast_to(obs[..., TOTALS][..., :1], cost.shape)
    features = np.stack(
        [
            low,
            cost / 10,
            np.where(low, 0.0, value - end) / CARD_COUNT,
            between / 10,
            room / MAX_ROW_LENGTH,
            fill / 10,
            under_card / unseen,
            value / CARD_COUNT,
            HEADS[index] / 7,
            row_heads / 10,
            held,
            standing,
        ],
        -1,
    ).astype(np.float32)
    return features * (cards > 0)[..., None]


def _at_least(k: np.ndarray, m: np.ndarray, p: np.ndarray) -> np.ndarray:
    """P(X >= k) for X ~ Binomial(m, p), elementwise; k in 0..5, m in 0..9."""
    m_int = np.broadcast_to(m, k.shape).astype(np.intp)
    below = np.zeros_like(p)
    for i in range(MAX_ROW_LENGTH):
        term = _COMB[m_int, i] * p**i * (1 - p) ** np.maximum(m_int - i, 0)
        below += np.where((i < k) & (i <= m_int), term, 0.0)
    return np.where(k <= 0, 1.0, 1.0 - below)


class Policy:
    """Scores per card: w2 . tanh(W1 features + b1); softmax over the legal cards."""

    def __init__(self, w1: np.ndarray, b1: np.ndarray, w2: np.ndarray) -> None:
        self.w1, self.b1, self.w2 = w1, b1, w2

    @classmethod
    def new(cls, hidden: int = 16, seed: int = 0) -> Policy:
        rng = np.random.default_rng(seed)
        w1 = rng.normal(0, 0.5, (len(FEATURES), hidden)).astype(np.float32)
        return cls(w1, np.zeros(hidden, np.float32), np.zeros(hidden, np.float32))

    @classmethod
    def load(cls, path: str | Path) -> Policy:
        with np.load(path) as saved:
            return cls(saved["w1"], saved["b1"], saved["w2"])

    def save(self, path: str | Path) -> None:
        np.savez(path, w1=self.w1, b1=self.b1, w2=self.w2)

    def scores(self, features: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The score of each card, and the hidden layer (for training)."""
        hidden = np.tanh(features @ self.w1 + self.b1)
        return hidden @ self.w2, hidden

    def best_card(self, obs: np.ndarray) -> int:
        """The card (1..104) of the hand with the highest score, for one observation."""
        cards = hand_cards(obs[None])
        scores, _ = self.scores(card_features(obs[None], cards))
        return int(cards[0, np.argmax(np.where(cards[0] > 0, scores[0], -np.inf))])


def softmax(scores: np.ndarray, cards: np.ndarray) -> np.ndarray:
    """The policy over the cards of each hand (..., K): softmax of the scores of the cards held."""
    held = cards > 0
    scores = np.where(held, scores, -np.inf)
    weights = np.where(held, np.exp(scores - scores.max(-1, keepdims=True)), 0.0)
    return weights / weights.sum(-1, keepdims=True)
