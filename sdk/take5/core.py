"""The compiled core of the simulators: whole random games and batches of rollouts in C.

A search bot's time goes into rollouts, and a benchmark's or a rating study's into whole games of
random players; in the interpreter each costs microseconds per card. `take5._core` (take5/_core.c,
built by the SDK's own setuptools packaging) plays them in C, and this module is its one door::

    from take5 import core
    core.random_game(Settings(players=4), seed=7, player_seeds=[1, 2, 3, 4])   # final scores
    points = core.rollouts(table, hands, 0.5, seed=1)   # (deals, seats, cards) -> (deals, seats)

Each function is the exact twin of a pure-Python reference, which stays the rule book and is the
fallback where the extension was not built (`pip install ./sdk` without a C compiler):

- `random_game` is `play_game` with `RandomPlayer(player_seeds[seat])` at every seat: the same
  deals, decisions and scores (tests/test_core.py plays thousands of seeds both ways, 2-10 players,
  both variants, and compares every decision);
- `rollouts` is `take5.sim.play_out` on each deal in turn, all from copies of one `table`, with one
  `SplitMix64(seed)` as the random generator (`SplitMix64.random`, take5/shuffle.py).

The rules are thus written twice, in C and in Python; the equivalence tests are what keep them
one. Only bots call the core, in their own process: the referee never does, so whatever a bot
passes it can only harm that bot's own game.

Which one runs: `COMPILED` says, and `REASON` says why not. The environment variable TAKE5_CORE
chooses: ``auto`` (the default: the extension when it loads), ``python`` (always the reference) or
``compiled`` (the extension or an error at import: the arena's Python image sets it, so that a
broken build never hides behind the fallback; in CI, tests/test_core.py fails when the core in use
is not the compiled one). The extension carries a version number; one that does not match this
module's is refused like a missing one.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .game import RandomPlayer, Settings, play_game
from .rules import (
    CARD_COUNT,
    MAX_SEED,
    MIN_SEED,
    EndRule,
    InvalidSettings,
    Take5Error,
    Variant,
)
from .shuffle import SplitMix64
from .sim import Table, play_out

if TYPE_CHECKING:  # numpy is loaded by the first rollouts: random_game and the import stay light
    import numpy as np
    from numpy.typing import ArrayLike, NDArray

__all__ = [
    "COMPILED",
    "ENV",
    "MAX_HAND",
    "MAX_SEATS",
    "REASON",
    "VERSION",
    "random_game",
    "rollouts",
]

ENV = "TAKE5_CORE"
"""The environment variable that chooses the core: auto, python or compiled."""
VERSION = 1
"""The version of take5/_core.c this module speaks (its CORE_VERSION)."""
MAX_SEATS = 16
"""Seats a rollout may have (as `take5.sim.play_out`)."""
MAX_HAND = 16
"""Cards a hand of a rollout may hold."""
_MASK = (1 << 64) - 1


def _load() -> tuple[Any, str]:
    """The extension and "", or None and why not (TAKE5_CORE=compiled: Take5Error instead)."""
    choice = os.environ.get(ENV, "auto").strip().lower() or "auto"
    if choice not in ("auto", "python", "compiled"):
        raise Take5Error(f"{ENV}={choice!r}: use auto, python or compiled")
    if choice == "python":
        return None, f"{ENV}=python"
    try:
        from . import _core
    except ImportError as exc:
        reason = f"take5._core does not load ({exc})"
    else:
        found = getattr(_core, "VERSION", None)
        if found == VERSION:
            return _core, ""
        reason = f"take5._core is version {found}, this SDK needs {VERSION} (rebuild it)"
    if choice == "compiled":
        raise Take5Error(f"{ENV}=compiled, but {reason}")
    return None, reason


_CORE, _WHY = _load()
REASON: str = _WHY
"""Why the compiled core is not the one in use ("" when it is): not built, another version, or
TAKE5_CORE=python."""
COMPILED = _CORE is not None
"""Whether the compiled core is the one in use (`REASON` says why not)."""


def random_game(
    settings: Settings, seed: int, player_seeds: Sequence[int], rotation: int = 0
) -> tuple[int, ...]:
    """The final scores of `play_game` with `RandomPlayer(player_seeds[seat])` at each seat."""
    return _random_game(settings, seed, player_seeds, rotation, trace=False)[0]


def _random_game(
    settings: Settings, seed: int, player_seeds: Sequence[int], rotation: int, *, trace: bool
) -> tuple[tuple[int, ...], int, bytes | None]:
    """(scores, rounds, every decision in order when `trace`): what tests compare."""
    n = settings.players
    if len(player_seeds) != n:
        raise ValueError(f"{len(player_seeds)} player seeds for {n} seats")
    if _CORE is not None:
        # The engine's own checks of a seed and a rotation (Game.__init__), without its deal.
        if type(seed) is not int or not MIN_SEED <= seed <= MAX_SEED:
            raise InvalidSettings(f"the seed must be a whole number from {MIN_SEED} to {MAX_SEED}")
        if type(rotation) is not int or not 0 <= rotation < n:
            raise InvalidSettings(f"the rotation must be a whole number from 0 to {n - 1}")
        result: tuple[tuple[int, ...], int, bytes | None] = _CORE.random_game(
            n,
            settings.variant is Variant.PROFESSIONAL,
            settings.threshold,
            settings.end_rule is EndRule.ABOVE,
            seed & _MASK,
            rotation,
            [s & _MASK for s in player_seeds],
            trace,
        )
        return result
    log: list[int] = []
    players = [_Logged(RandomPlayer(s), log) if trace else RandomPlayer(s) for s in player_seeds]
    done = play_game(players, settings, seed, rotation=rotation, keep_record=False)
    return tuple(done.scores), done.round, bytes(log) if trace else None


class _Logged:
    """A random player that notes each of its decisions in a shared list (the reference trace)."""

    def __init__(self, player: RandomPlayer, log: list[int]) -> None:
        self.player, self.log = player, log

    def pick_card(self, view: Any) -> int:
        card = self.player.pick_card(view)
        self.log.append(card)
        return card

    def choose_row(self, view: Any) -> int:
        row = self.player.choose_row(view)
        self.log.append(row)
        return row

    def draft_card(self, view: Any) -> int:
        card = self.player.draft_card(view)
        self.log.append(card)
        return card


def rollouts(
    table: Table,
    hands: ArrayLike,
    randomness: float | Sequence[float],
    seed: int,
    first: ArrayLike | None = None,
) -> NDArray[np.int32]:
    """`take5.sim.play_out` from copies of `table` on every deal of `hands`, one after the other.

    - `hands[d, seat]` is a seat's hand in deal d (deals, seats, cards): every hand of a deal the
      same size, cards 1..104; a hand's order matters for which card a random pick takes, as in
      `play_out`;
    - `randomness` one number or one per seat, as in `play_out`;
    - `first[d, seat]`, where it is not 0, the card that seat plays first in deal d (in its hand);
    - `seed` seeds the one `SplitMix64` all deals draw from, in order.

    Returns the bull heads each seat took in each deal, (deals, seats) int32. ValueError for
    arguments of the wrong shape or cards that cannot be there, before any deal is played.
    """
    import numpy as np

    cards = np.ascontiguousarray(hands, dtype=np.int8)
    if cards.ndim != 3:
        raise ValueError("hands must be (deals, seats, cards)")
    deals, n, size = cards.shape
    eps = [float(randomness)] * n if isinstance(randomness, (int, float)) else list(randomness)
    forced = None if first is None else np.ascontiguousarray(first, dtype=np.int8)
    if not 1 <= n <= MAX_SEATS or size > MAX_HAND or len(eps) != n:
        raise ValueError(
            f"rollouts: {n} seats of {size} cards with {len(eps)} randomness values "
            f"(at most {MAX_SEATS} seats of {MAX_HAND}, one value per seat)"
        )
    if forced is not None and forced.shape != (deals, n):
        raise ValueError(f"first must be (deals, seats) = {(deals, n)}, not {forced.shape}")
    if _CORE is not None:
        out = _CORE.rollouts(
            bytes(table.ends),
            bytes(table.lens),
            bytes(table.heads),
            cards,
            deals,
            n,
            size,
            eps,
            seed & _MASK,
            forced,
        )
        return np.frombuffer(out, dtype=np.int32).reshape(deals, n)
    return _rollouts_reference(table, cards, eps, seed, forced)


def _rollouts_reference(
    table: Table, cards: NDArray[np.int8], eps: list[float], seed: int, forced: Any
) -> NDArray[np.int32]:
    """The pure-Python rollouts: `play_out` deal after deal, with the compiled core's checks."""
    import numpy as np

    deals, n, _ = cards.shape
    if cards.size and not (cards.min() >= 1 and cards.max() <= CARD_COUNT):
        raise ValueError("rollouts: a hand holds no such card")
    if forced is not None:
        held = (cards == forced[:, :, None]).any(axis=2) | (forced == 0)
        if not held.all():
            raise ValueError("rollouts: a first card that is not in its hand")
    rng = SplitMix64(seed)
    out = np.zeros((deals, n), dtype=np.int32)
    for d in range(deals):
        hands = cards[d].tolist()
        first = None if forced is None else [c or None for c in forced[d].tolist()]
        out[d] = play_out(table.copy(), hands, rng, eps, first)
    return out
