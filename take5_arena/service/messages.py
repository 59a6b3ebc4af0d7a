"""The arena's data as arena.proto's messages: one function per reply, from what the store, the
accounts and the publisher hold. No I/O here, and no policy: the servicer
(take5_arena/service/servicer.py) decides who may see what and gathers it; this module only says
how it is written down, so that each field is filled in one place.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from take5.record import FaultRecord, GameRecord
from take5_arena.referee.store import EntrantVersion, FaultedGame, VersionStats
from take5_arena.service import defaults
from take5_arena.service.api import arena_pb2 as pb
from take5_arena.service.authors import Author, BotClaim, SubmissionRow, SubmissionStatus
from take5_arena.service.challenges import Challenge

_OUTCOMES = {
    SubmissionStatus.ACCEPTED: pb.SUBMIT_ACCEPTED,
    SubmissionStatus.UNCHANGED: pb.SUBMIT_UNCHANGED,
    SubmissionStatus.REFUSED: pb.SUBMIT_REFUSED,
}
_WAITING = "waiting: "


def submission(row: SubmissionRow, version: EntrantVersion | None = None) -> pb.SubmitBotResponse:
    """A submission as it is now (``version``: the one it became, if judged so)."""
    outcome = _OUTCOMES.get(row.status, pb.SUBMIT_PENDING)
    refused = outcome == pb.SUBMIT_REFUSED
    judged = row.status.finished
    return pb.SubmitBotResponse(
        outcome=outcome,
        submission_id=row.id,
        bot_name=row.bot_name,
        version=version.version if version is not None and not refused else 0,
        source_hash=version.source_hash if version is not None and not refused else "",
        validation=row.detail if judged and not refused else "",
        reason=row.detail if refused else "",
        bot_output=row.bot_output[-defaults.OUTPUT_TAIL :] if refused else "",
        status=row.status.value,
        waiting=row.detail.removeprefix(_WAITING)
        if not judged and row.detail.startswith(_WAITING)
        else "",
        attempts=row.attempts,
        competition=row.competition,
    )


def my_bots(
    author: Author,
    claims: Sequence[BotClaim],
    active: Mapping[str, bool],
    versions: Sequence[EntrantVersion],
    stats: Mapping[int, VersionStats],
    submissions: Sequence[SubmissionRow],
) -> pb.ListMyBotsResponse:
    """An author's bots: the names they hold, with their state and the organiser's note, then the
    names of their recent submissions that they do not hold (waiting, or refused every time)."""
    reply = pb.ListMyBotsResponse(
        author=author.name,
        limits=pb.AuthorLimits(
            max_active_bots=author.limits.max_active_bots,
            max_submissions_per_hour=author.limits.max_submissions_per_hour,
            max_archive_bytes=author.limits.max_archive_bytes,
            max_stored_bytes=author.limits.max_stored_bytes,
            max_waiting=defaults.MAX_WAITING_PER_AUTHOR,
        ),
    )
    held = {c.bot_name for c in claims}
    waiting = {s.bot_name for s in submissions if not s.status.finished}
    for claim in claims:
        playing = active.get(claim.bot_name, False)
        state = (
            "banned"
            if claim.banned_at is not None
            else "active"
            if playing
            else "waiting"
            if claim.bot_name in waiting
            else "withdrawn"
        )
        bot = reply.bots.add(
            name=claim.bot_name, active=playing, state=state, organiser_note=claim.note
        )
        for v in versions:
            if v.name == claim.bot_name:
                done = stats.get(v.id, VersionStats(0, 0))
                bot.versions.add(
                    version=v.version,
                    source_hash=v.source_hash,
                    submitted_at=v.submitted_at,
                    validation=str(v.validation.get("smoke", "")),
                    games=done.games,
                    faults=done.faults,
                )
    others = sorted({s.bot_name for s in submissions} - held)
    for name in others:
        reply.bots.add(name=name, active=False, state="waiting" if name in waiting else "refused")
    number = {v.id: v.version for v in versions}
    for s in submissions:
        reply.submissions.add(
            submission_id=s.id,
            bot_name=s.bot_name,
            received_at=s.received_at,
            status=s.status.value,
            version=number.get(s.version_id or -1, 0),
            detail=s.detail,
            bot_output=s.bot_output,
            archive_sha256=s.archive_sha256,
        )
    return reply


def standings(doc: Mapping[str, Any] | None, computed_at: str) -> pb.StandingsResponse:
    """The publisher's standings document (take5_arena/leaderboard/publish.py) as a reply."""
    if doc is None:
        return pb.StandingsResponse(games=0)
    reply = pb.StandingsResponse(
        games=int(doc.get("games") or 0),
        computed_at=computed_at,
        standings_json=json.dumps(doc, ensure_ascii=False),
    )
    for row in doc.get("rows", []):
        interval = row.get("interval")
        low, high = interval or (0.0, 0.0)
        reply.rows.add(
            rank=int(row["rank"]),
            bot=str(row["entrant"]),
            rating=float(row["rating"]),
            rating_low=float(low),
            rating_high=float(high),
            has_interval=interval is not None,
            games=int(row["games"]),
            mean_penalty=float(row.get("mean_penalty") or 0.0),
            faults=int(sum((row.get("faults") or {}).values())),
        )
    return reply


def game_record(game_id: str, record: GameRecord) -> pb.GetGameRecordResponse:
    return pb.GetGameRecordResponse(
        game_id=game_id, record_json=json.dumps(public_record(record), ensure_ascii=False)
    )


def bot_faults(
    bot_name: str,
    refusal: SubmissionRow | None,
    versions: Mapping[int, int],
    games: Iterable[FaultedGame],
    limit: int,
) -> pb.MyBotFaultsResponse:
    """An author's view of a bot's faults: the newest first, each with the bot's own output up to
    it; ``versions`` maps the store's version ids to version numbers."""
    reply = pb.MyBotFaultsResponse(bot_name=bot_name)
    if refusal is not None:
        reply.last_refusal_output = (refusal.detail + "\n" + refusal.bot_output)[
            -defaults.OUTPUT_TAIL :
        ]
    for game in games:
        for fault in reversed((game.record.get("faults") or [])[game.seat]):
            if len(reply.faults) >= limit:
                break
            reply.faults.add(
                game_id=game.game_id,
                version=versions[game.version_id],
                round=int(fault.get("round", 0)),
                turn=int(fault.get("turn", 0)),
                kind=str(fault.get("kind", "")),
                detail=str(fault.get("detail", ""))[: defaults.DETAIL_CHARS],
                log_tail=log_tail(game.record, game.seat, fault),
                finished_at=game.finished_at,
            )
    return reply


def challenge(found: Challenge, competition: str) -> pb.ChallengeResponse:
    """A stored challenge as its author reads it (AskChallenge, GetChallenge)."""
    return pb.ChallengeResponse(
        challenge_id=found.id,
        competition=competition,
        created_at=found.created_at,
        seats=list(found.seats),
        state=found.state,
        games=[pb.ChallengeGame(game_id=g.game_id, status=g.status) for g in found.games],
    )


def public_record(record: GameRecord) -> dict[str, Any]:
    """A record as anyone may read it: without the bots' own output (the turns' ``logs``), which
    only each bot's author reads (MyBotFaults)."""
    out: dict[str, Any] = dict(record)
    rounds = []
    for rnd in record.get("rounds") or []:
        copy: dict[str, Any] = dict(rnd)
        copy["turns"] = [
            {k: v for k, v in turn.items() if k != "logs"} for turn in rnd.get("turns") or []
        ]
        rounds.append(copy)
    out["rounds"] = rounds
    return out


def own_logs(record: GameRecord, seats: Iterable[int]) -> list[list[Any]]:
    """The turns' own output of ``seats`` alone (an author's seats of a game), as ``[round, turn,
    seat, text]`` rows: what an author's replay shows beside each turn. The seats are chosen by the
    caller from the store (who owns which version), never from the record's names."""
    mine = set(seats)
    rows: list[list[Any]] = []
    for rnd in record.get("rounds") or []:
        for turn in rnd.get("turns") or []:
            rows.extend(
                [rnd.get("round"), turn.get("turn"), entry[0], str(entry[1])]
                for entry in turn.get("logs") or []
                if isinstance(entry, (list, tuple)) and len(entry) == 2 and entry[0] in mine
            )
    return rows


def log_tail(record: GameRecord, seat: int, fault: FaultRecord) -> str:
    """The seat's own output up to the fault's turn, as far as the record keeps it (the turn
    objects' optional ``logs``: ``[seat, text]``); the last :data:`defaults.LOG_TAIL` characters."""
    lines: list[str] = []
    for rnd in record.get("rounds") or []:
        for number, turn in enumerate(rnd.get("turns") or [], start=1):
            if (rnd.get("round", 0), number) > (fault.get("round", 0), fault.get("turn", 0)):
                break
            lines.extend(
                str(entry[1])
                for entry in turn.get("logs") or []
                if isinstance(entry, (list, tuple)) and len(entry) == 2 and entry[0] == seat
            )
    return "\n".join(lines)[-defaults.LOG_TAIL :]


__all__ = [
    "bot_faults",
    "challenge",
    "game_record",
    "log_tail",
    "my_bots",
    "own_logs",
    "public_record",
    "standings",
    "submission",
]
