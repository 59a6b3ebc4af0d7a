"""A batch environment for training: many games at once on take5.batch, every seat an agent.

In short::

    import numpy as np
    from take5.vector import VectorEnv

    env = VectorEnv(games=1024, players=4, seed=1)
    obs, mask = env.reset()                       # (1024, 4, 856) float32, (1024, 4, 108) int8
    for _ in range(1000):
        actions = my_policy(obs, mask)            # (1024, 4): a card - 1 for every seat
        obs, mask, rewards, done, scores = env.step(actions)

Each `step` is one play turn of every game: each seat's action is the card it plays (action a plays
card a + 1, as in take5.encode and take5.env). The rest is decided by the rules' defaults, so that
every game takes exactly one step per turn: a card lower than every row takes the cheapest row (the
referee's default move), and in the professional variant each round's draft is played at random.
A game that ends is replaced at once by a new one: `done[g]` says so, `scores[g]` holds its final
scores, and `obs[g]` is already the new game's first turn.

Rewards are minus the bull heads each seat took in the turn, so a game's return for a seat is minus
its final score. Observations are `take5.encode.encode_batch` (the same vectors `encode(view)`
gives a bot at play time), of one size for every table size.

Needs numpy only (no gymnasium, no pettingzoo). To train one seat against fixed opponents, fill the
other seats' actions from a policy of take5.batch, e.g. `greedy_cards(env.batch) - 1`.
"""

from __future__ import annotations

from typing import NamedTuple

try:
    import numpy as np
except ModuleNotFoundError as error:  # the [sim] extra
    from .extras import missing_extra

    raise missing_extra("sim", "take5.vector", error) from None
from numpy.typing import ArrayLike, NDArray

from ._named import plain_signature
from .batch import Batch
from .encode import ACTIONS, OBSERVATION_SIZE, action_masks, encode_batch
from .game import Settings
from .rules import DEFAULT_THRESHOLD, EndRule, Variant

__all__ = ["Step", "VectorEnv"]


class Step(NamedTuple):
    """What `VectorEnv.step` returns."""

    observations: NDArray[np.float32]
    """(G, n, OBSERVATION_SIZE): every seat's observation of its next turn."""
    masks: NDArray[np.int8]
    """(G, n, ACTIONS): 1 for the legal actions (the cards in hand)."""
    rewards: NDArray[np.float32]
    """(G, n): minus the bull heads each seat took in this turn."""
    done: NDArray[np.bool_]
    """(G,): the games that ended in this turn (and were replaced by new ones)."""
    scores: NDArray[np.int32]
    """(G, n): the final scores of the games that ended (0 elsewhere)."""


plain_signature(Step)


class VectorEnv:
    """`games` games of `players` seats advanced together; see the module text."""

    observation_size = OBSERVATION_SIZE
    action_count = ACTIONS

    def __init__(
        self,
        games: int = 256,
        players: int = 4,
        *,
        variant: Variant | str = Variant.STANDARD,
        threshold: int = DEFAULT_THRESHOLD,
        end_rule: EndRule | str = EndRule.AT_OR_ABOVE,
        seed: int | None = None,
    ) -> None:
        if games < 1:
            raise ValueError("games must be at least 1")
        self.settings = Settings(
            players=players,
            variant=Variant(variant),
            threshold=threshold,
            end_rule=EndRule(end_rule),
        )
        self.games = games
        self.players = players
        self._rng = np.random.default_rng(seed)
        self._batch: Batch | None = None

    @property
    def batch(self) -> Batch:
        """The games as they stand (a take5.batch.Batch: read its arrays, do not change them)."""
        if self._batch is None:
            raise RuntimeError("call reset() first")
        return self._batch

    def _deal(self, count: int) -> Batch:
        seeds = self._rng.integers(0, 1 << 63, size=count, dtype=np.uint64)
        return Batch.deal(self.settings, seeds, rng=self._rng)

    def reset(self, seed: int | None = None) -> tuple[NDArray[np.float32], NDArray[np.int8]]:
        """Deal new games (from `seed`, else from where the generator stands); returns the first
        observations and action masks."""
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        self._batch = self._deal(self.games)
        return encode_batch(self._batch), action_masks(self._batch)

    def step(self, actions: ArrayLike) -> Step:
        """Play one turn of every game: `actions[g, seat]` is the card - 1 each seat plays.

        Raises ValueError for an action that is not a card in that seat's hand (see the masks).
        """
        batch = self.batch
        chosen = np.asarray(actions)
        if chosen.shape != (self.games, self.players) or not np.issubdtype(
            chosen.dtype, np.integer
        ):
            raise ValueError(f"actions must be whole numbers of shape {(self.games, self.players)}")
        if ((chosen < 0) | (chosen >= ACTIONS - 4)).any():
            raise ValueError("an action is not a card (cards are actions 0 to 103)")
        taken = batch.play_turn(chosen + 1)
        batch.end_round(self._rng)
        done = batch.over.copy()
        scores = np.zeros((self.games, self.players), dtype=np.int32)
        if done.any():
            index = np.flatnonzero(done)
            scores[index] = batch.scores[index]
            batch.replace(index, self._deal(len(index)))
        return Step(
            encode_batch(batch),
            action_masks(batch),
            -taken.astype(np.float32),
            done,
            scores,
        )

    def __repr__(self) -> str:
        s = self.settings
        return f"VectorEnv(games={self.games}, players={s.players}, variant={s.variant.value!r})"
