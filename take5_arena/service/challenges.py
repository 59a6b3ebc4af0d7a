"""An author's challenges: unrated games of one of their own bots against bots they choose
(docs/authors/arena.md, "Challenges").

A challenge is one table: one deal in every rotation (a duplicate set), the author's bot and the
chosen opponents at their current versions. It is checked twice. When asked (:func:`check`, on the
pages' pool): the bot is the author's own and plays, each opponent is a bot that plays (not
withdrawn, retired or banned), the table has the arena's size, no bot twice. Then on the ladder's
thread, which alone deals and writes schedules (take5_arena/service/ladder.py,
:meth:`~take5_arena.service.ladder.Ladder.challenge`): the same bots still play at those
versions, and the author's limits (:func:`admit`: CHALLENGES_PER_HOUR asked in the last hour,
CHALLENGES_WAITING not yet played), counted from the store on the one thread that adds to it, so
that requests sent at once cannot pass a limit together.

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
from collections.abc import Sequence
from dataclasses import dataclass

from take5_arena.referee.store import Store
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


def admit(store: Store, author: str, now: dt.datetime | None = None) -> None:
    """LimitExceededError if ``author`` may not ask for another challenge now (on the ladder's
    thread: the one that stores them)."""
    now = now or dt.datetime.now(dt.timezone.utc)
    hour_ago = (now - dt.timedelta(hours=1)).isoformat()
    mine = [s for s in store.schedules.all(UNRATED_PREFIX) if author_of(s.description) == author]
    recent = [s for s in mine if s.created_at >= hour_ago]
    if len(recent) >= defaults.CHALLENGES_PER_HOUR:
        raise LimitExceededError(
            f"you asked for {len(recent)} challenges in the last hour, the most there may be; "
            "try again later"
        )
    waiting = [
        s for s in mine if any(g.status == "pending" for g in store.schedules.games(s.schedule_id))
    ]
    if len(waiting) >= defaults.CHALLENGES_WAITING:
        raise LimitExceededError(
            f"you have {len(waiting)} challenges not yet played; wait for them to be played"
        )


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
    "admit",
    "author_of",
    "challenge_of",
    "check",
    "description",
    "get",
    "may_read",
    "of_author",
]
