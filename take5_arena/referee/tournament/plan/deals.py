"""Where a tournament's deals come from: its public seed, or its secret key (docs/security.md,
"Deals").

A :class:`Dealer` is made in the referee's main process from the store and the settings
(:meth:`Dealer.of`) and gives the schedulers their deal sources (:meth:`Dealer.source`): with a
secret key, a table's seed is ``take5.shuffle.keyed_seed(key, identity)`` of its deal identity
(schedule.py's :func:`~.schedule.deal_identity`: namespace, table number, seats, game settings).
The identity and the key's season go into the store with each game, and into its record
(``deal``: docs/record-format.md), so that anyone can check the seed once the key is revealed.

The key stays in this process: a game sealed in the store (its seed kept out until it is
recorded) gets its seed here, when its table is specced for a worker (:meth:`Dealer.seed_of`), and
the spec carries that seed and the public deal information, never the key.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from take5.shuffle import keyed_seed

from ...kinds import DealMode
from ...store import Store, StoredGame, StoreError
from ...store.deals import SeasonKey, current_key
from ..errors import TournamentError
from .schedule import Deal, DealSource, deal_identity, public_deals
from .settings import TournamentSettings


@dataclass(frozen=True)
class Dealer:
    """The deals of one tournament (see the module text)."""

    public_seed: int = 0
    """The seed of public deals (used when there is no key)."""
    key: SeasonKey | None = field(default=None, repr=False)
    """The current season's secret key; None: deals from the public seed."""

    @classmethod
    def of(
        cls, store: Store, settings: TournamentSettings, public_seed: int | None = None
    ) -> Dealer:
        """The dealer of the tournament in ``store``: its current season's key (made now, with its
        commitment, if it has none) when its deals are secret, else its public seed (``settings``'
        seed unless ``public_seed`` is given: the arena's ladder keeps its own)."""
        seed = settings.seed if public_seed is None else public_seed
        if settings.deals is DealMode.PUBLIC:
            return cls(seed)
        try:
            return cls(seed, current_key(store))
        except StoreError as error:  # the key file missing or not the committed key
            raise TournamentError(str(error)) from None

    @property
    def secret(self) -> bool:
        return self.key is not None

    def source(self, namespace: str, context: Any) -> DealSource:
        """The deal source of a scheduler (``namespace``: where its tables are numbered)."""
        if self.key is None:
            return public_deals(self.public_seed)
        key = self.key

        def deal(table: int, seats: Any) -> Deal:
            identity = deal_identity(namespace, table, seats, context)
            return Deal(keyed_seed(key.key, identity), key.season, identity)

        return deal

    def choice_seed(self, identity: str, public: int) -> int:
        """The seed of a choice other than a deal (the ladder's next tables and their seat
        order), named ``identity``: from the secret key when there is one, so that no one can
        foresee where a bot will sit and tell its rated tables from its validation
        (docs/security.md), else ``public`` (derived from the public seed by the caller)."""
        if self.key is None:
            return public
        return keyed_seed(self.key.key, f"choice {identity}")

    def seed_of(self, game: StoredGame) -> int:
        """The seed of a stored game: the store's, or for a sealed game its key's HMAC."""
        if not game.sealed:
            return game.deal_seed
        if self.key is None or game.deal_season != self.key.season or game.deal_id is None:
            raise TournamentError(
                f"game {game.game_id} was dealt from the key of season {game.deal_season}, "
                "which this run does not hold"
            )
        return keyed_seed(self.key.key, game.deal_id)


__all__ = ["Dealer"]
