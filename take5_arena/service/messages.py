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
from take5_arena.service.authors import Author, SubmissionRow, SubmissionStatus
from take5_arena.service.intake import Validated

_OUTCOMES = {
    SubmissionStatus.ACCEPTED: pb.SUBMIT_ACCEPTED,
    SubmissionStatus.UNCHANGED: pb.SUBMIT_UNCHANGED,
    SubmissionStatus.REFUSED: pb.SUBMIT_REFUSED,
}


def submit_pending(row: SubmissionRow) -> pb.SubmitBotResponse:
    """The upload is stored and will be validated; the client did not wait for the verdict."""
    return pb.SubmitBotResponse(
        outcome=pb.SUBMIT_PENDING, submission_id=row.id, bot_name=row.bot_name
    )


def submit_verdict(row: SubmissionRow, result: Validated) -> pb.SubmitBotResponse:
    outcome = _OUTCOMES.get(result.status, pb.SUBMIT_REFUSED)
    refused = outcome == pb.SUBMIT_REFUSED
    return pb.SubmitBotResponse(
        outcome=outcome,
        submission_id=row.id,
        bot_name=row.bot_name,
        version=result.version,
        source_hash=result.source_hash,
        validation="" if refused else result.detail,
        reason=result.detail if refused else "",
        bot_output=result.bot_output[-defaults.OUTPUT_TAIL :],
    )


def my_bots(
    author: Author,
    names: Sequence[str],
    active: Mapping[str, bool],
    versions: Sequence[EntrantVersion],
    stats: Mapping[int, VersionStats],
    submissions: Iterable[SubmissionRow],
) -> pb.ListMyBotsResponse:
    reply = pb.ListMyBotsResponse(
        author=author.name,
        limits=pb.AuthorLimits(
            max_active_bots=author.limits.max_active_bots,
            max_submissions_per_hour=author.limits.max_submissions_per_hour,
            max_archive_bytes=author.limits.max_archive_bytes,
        ),
    )
    for name in names:
        bot = reply.bots.add(name=name, active=active.get(name, False))
        for v in versions:
            if v.name == name:
                done = stats.get(v.id, VersionStats(0, 0))
                bot.versions.add(
                    version=v.version,
                    source_hash=v.source_hash,
                    submitted_at=v.submitted_at,
                    validation=str(v.validation.get("smoke", "")),
                    games=done.games,
                    faults=done.faults,
                )
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
        low, high = row.get("interval") or (row["rating"], row["rating"])
        reply.rows.add(
            rank=int(row["rank"]),
            bot=str(row["entrant"]),
            rating=float(row["rating"]),
            rating_low=float(low),
            rating_high=float(high),
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
    "game_record",
    "log_tail",
    "my_bots",
    "public_record",
    "standings",
    "submit_pending",
    "submit_verdict",
]
