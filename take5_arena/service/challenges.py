"""An author's challenges: unrated games of one of their own bots against bots they choose
(docs/authors/arena.md, "Challenges").

A challenge is one table: one deal in every rotation (a duplicate set), the author's bot and the
chosen opponents at their current versions. It is checked twice. When asked (:func:`check`, on the
pages' pool): the bot is the author's own and plays, each opponent is a bot that plays (not
withdrawn, retired or banned), the table has the arena's size, no bot twice. Then on the ladder's
thread, which alone deals and writes schedules (take5_arena/service/ladder.py,
:meth:`~take5_arena.service.ladder.Ladder.challenge`): the same bots still play at those
versions, and the author's limits (:meth:`Quota.admit`: CHALLENGES_PER_HOUR asked in the last
hour, CHALLENGES_WAITING not yet played), counted from the stores under the quota's lock, which
every competition's ladder takes to count and store, so that requests sent at once cannot pass a
limit together.

An arena with several competitions (take5_arena/service/competitions.py) has a ladder each, and
each plays the challenges asked in its competition, stored in its store, with its settings. The
limits are the account's, counted across every competition the server serves: a challenge costs
the arena the same wherever it is played (sandboxed games, a share of the tables that rated play
would have had), and an account is what the arena trusts and limits (its token, its uploads), so
an author with N competitions to ask in must not get N times the quota.

The ladder stores it as a schedule ``challenge-NNNNNN`` (``UNRATED_PREFIX``: the store leaves
such games out of the ratings, the standings, the public lists and a version's counts) whose
description names the author, deals it from its own namespace of the arena's secret key (never a
ladder deal), and plays it between its own tables: a challenge table starts only after a rated one
has, so rated play always keeps at least half of the tables.

Who may read a challenge's games (:func:`may_read`): its author, and the authors of the bots that
sit at it; nobody else, and not the public record calls (GetGameRecord, ``/api/games``).
"""

from __future__ import annotations

import datetime as dt
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from take5_arena.referee.store import Store, StoreError
from take5_arena.referee.store.records import UNRATED_PREFIX
from take5_arena.service import defaults
from take5_arena.service.authors import Accounts, check_name
from take5_arena.service.errors import BadRequestError, LimitExceededError, NotFoundError

NAMESPACE = "challenge"
"""The deal identities' namespace of the challenges' tables (referee/tournament/plan/deals.py)."""
TABLES = 10**12
"""A challenge's table number is TABLES + its number: no ladder batch's table reaches it, so even
an arena dealt from a public seed never deals a challenge the deal of a ladder table."""
_BY = "challenge by "


@dataclass(frozen=True)
class ChallengeGame:
    game_id: str
    status: str
    """pending, done (recorded) or failed."""


@dataclass(frozen=True)
class Challenge:
    """A stored challenge as its author reads it."""

    id: str
    author: str
    created_at: str
    seats: tuple[str, ...]
    """``name@version`` of each seat, the author's bot first."""
    games: tuple[ChallengeGame, ...]

    @property
    def state(self) -> str:
        statuses = {g.status for g in self.games}
        if statuses <= {"done"}:
            return "played"
        if "pending" in statuses:
            return "waiting" if "done" not in statuses else "playing"
        return "not played"


def description(author: str) -> str:
    """A challenge schedule's description: it names the author who asked for it."""
    return _BY + author


def author_of(text: str) -> str | None:
    """The author a schedule's description names, if it is a challenge's."""
    return text[len(_BY) :] if text.startswith(_BY) else None


def check(
    store: Store, accounts: Accounts, author: str, bot: str, opponents: Sequence[str], players: int
) -> tuple[str, ...]:
    """The seats (``name@version``, the author's bot first) of a challenge ``author`` asks for,
    or a RequestError saying why not."""
    check_name("bot", bot)
    for name in opponents:
        check_name("bot", name)
    claim = accounts.claim_of(bot)
    if claim is None or claim.author != author:
        raise NotFoundError(f"you have no bot named {bot!r}")
    if len(opponents) != players - 1:
        raise BadRequestError(
            f"a table here has {players} seats: choose {players - 1} opponent(s) for {bot}"
        )
    if len({bot, *opponents}) != players:
        raise BadRequestError("choose each bot once")
    current = {v.name: v for v in store.versions.current()}
    seats = []
    for name in (bot, *opponents):
        held = accounts.claim_of(name)
        if name not in current or (held is not None and held.banned_at is not None):
            raise NotFoundError(f"{name!r} is not a bot that plays here now")
        seats.append(current[name].key)
    return tuple(seats)


def seats_in(
    directory: Path,
    accounts: Accounts,
    author: str,
    bot: str,
    opponents: Sequence[str],
    players: int,
) -> tuple[str, ...]:
    """:func:`check` against the store of the competition in ``directory``: what the web form and
    AskChallenge both do before they hand a challenge to that competition's ladder."""
    with Store(directory, readonly=True) as store:
        return check(store, accounts, author, bot, opponents, players)


def asked(store: Store, author: str) -> list[tuple[str, bool]]:
    """Each challenge ``author`` asked for in this store: when, and whether a game of it is still
    to play."""
    return [
        (s.created_at, any(g.status == "pending" for g in store.schedules.games(s.schedule_id)))
        for s in store.schedules.all(UNRATED_PREFIX)
        if author_of(s.description) == author
    ]


def admit(
    store: Store,
    author: str,
    now: dt.datetime | None = None,
    elsewhere: Sequence[tuple[str, bool]] = (),
) -> None:
    """LimitExceededError if ``author`` may not ask for another challenge now, counting those in
    ``store`` and those ``elsewhere`` (:func:`asked` of the arena's other competitions)."""
    now = now or dt.datetime.now(dt.timezone.utc)
    hour_ago = (now - dt.timedelta(hours=1)).isoformat()
    mine = [*asked(store, author), *elsewhere]
    recent = [created for created, _ in mine if created >= hour_ago]
    if len(recent) >= defaults.CHALLENGES_PER_HOUR:
        raise LimitExceededError(
            f"you asked for {len(recent)} challenges in the last hour, the most there may be; "
            "try again later"
        )
    waiting = [created for created, pending in mine if pending]
    if len(waiting) >= defaults.CHALLENGES_WAITING:
        raise LimitExceededError(
            f"you have {len(waiting)} challenges not yet played; wait for them to be played"
        )


class Quota:
    """The challenge limits of an account across every competition of an arena: one per server,
    shared by every competition's ladder. A ladder counts and stores a challenge under
    :attr:`lock`, so two ladders cannot both admit the one challenge that passes a limit."""

    def __init__(self, directories: Callable[[], Iterable[Path]] = lambda: ()) -> None:
        self.lock = threading.Lock()
        self._directories = directories
        """The directories of the competitions served now (read at each count: a competition
        added while the server runs counts from then on)."""

    def admit(self, store: Store, home: Path, author: str, now: dt.datetime | None = None) -> None:
        """:func:`admit` for a challenge asked in the competition in ``home`` (whose ``store`` is
        open for writing on its ladder's thread), counting the other competitions' too. Call it
        holding :attr:`lock`."""
        here = home.absolute()
        elsewhere: list[tuple[str, bool]] = []
        for directory in self._directories():
            if directory.absolute() == here:
                continue
            try:
                with Store(directory, readonly=True) as other:
                    elsewhere += asked(other, author)
            except StoreError:  # unreadable now: its ladder cannot play challenges either
                continue
        admit(store, author, now, elsewhere)


def _challenge(store: Store, schedule_id: str, author: str, created_at: str) -> Challenge:
    games = store.schedules.games(schedule_id)
    keys = {v.id: v.key for v in store.versions.all()}
    seats = tuple(keys.get(v, "?") for v in games[0].seats) if games else ()
    return Challenge(
        schedule_id,
        author,
        created_at,
        seats,
        tuple(ChallengeGame(g.game_id, g.status) for g in games),
    )


def of_author(store: Store, author: str, limit: int) -> list[Challenge]:
    """The author's newest ``limit`` challenges, newest first."""
    mine = [s for s in store.schedules.all(UNRATED_PREFIX) if author_of(s.description) == author]
    return [_challenge(store, s.schedule_id, author, s.created_at) for s in reversed(mine)][:limit]


def get(store: Store, author: str, challenge_id: str) -> Challenge:
    """One of the author's challenges; NotFoundError for any other (another author's too)."""
    if challenge_id.startswith(UNRATED_PREFIX):
        for s in store.schedules.all(challenge_id):
            if s.schedule_id == challenge_id and author_of(s.description) == author:
                return _challenge(store, s.schedule_id, author, s.created_at)
    raise NotFoundError("you have no such challenge")


def challenge_of(store: Store, game_id: str) -> str | None:
    """The challenge a game belongs to (None: a rated game, or no such game)."""
    sid = store.schedules.schedule_of(game_id)
    return sid if sid is not None and sid.startswith(UNRATED_PREFIX) else None


def may_read(store: Store, accounts: Accounts, author: str | None, game_id: str) -> bool:
    """Whether ``author`` (None: nobody signed in) may read this game's record: any rated game;
    a challenge's only for its author and the authors of the bots at its table."""
    sid = challenge_of(store, game_id)
    if sid is None:
        return True
    if author is None:
        return False
    info = next((s for s in store.schedules.all(sid) if s.schedule_id == sid), None)
    if info is not None and author_of(info.description) == author:
        return True
    names = {store.versions.get(v).name for v in store.schedules.game(game_id).seats}
    return any(accounts.owner(name) == author for name in names)


__all__ = [
    "NAMESPACE",
    "TABLES",
    "Challenge",
    "ChallengeGame",
    "Quota",
    "admit",
    "asked",
    "author_of",
    "challenge_of",
    "check",
    "description",
    "get",
    "may_read",
    "of_author",
    "seats_in",
]
