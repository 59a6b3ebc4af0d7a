"""Game records: load them, and check one against the rules twice.

A record (docs/record-format.md) holds the seed and every decision, so the engine can replay the
game and produce the record it should have been; the first place where the two differ is the
divergence. A replay through the same engine that wrote the record only proves consistency, so
`verify_record` also runs the independent checker of `take5.audit`, written from the documents
alone: a record is valid only when both agree with it.

Every way a file can be wrong ends in `MalformedRecord` (a one-line reason naming the place) or a
`Divergence`; nothing a record holds can raise anything else (tests/test_verify_fuzz.py).

The record's shape is typed here too: `GameRecord` and its parts (`SeatRecord`, `RoundRecord`,
`TurnRecord`, ...), key for key as docs/record-format.md specifies them.
"""

from __future__ import annotations

import json
import os
import secrets
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any, Literal, TypedDict

from .audit import Divergence as Divergence  # re-exported: the record API names both
from .audit import MalformedRecord as MalformedRecord
from .audit import audit_record, check_structure
from .clock import TimeControl
from .game import Game, Phase, Settings
from .rules import IllegalMove, Take5Error

MAX_RECORD_BYTES = 256 * 1024 * 1024
"""A record file larger than this is refused unread (the longest legal game is far smaller)."""


# -- the record's shape (docs/record-format.md) -------------------------------------------------
#
# TypedDicts, not dataclasses: a record is JSON all its life (written by the engine, stored as
# text, sent to workers and back, read from files nobody vouches for), so its type describes the
# dicts as they are, at no cost, and a record needs no conversion on its way in or out. Reading an
# untrusted one is `check_structure`'s job (take5.audit), not the type's. Keys the format marks
# optional are in the `total=False` halves; a record may hold extra top-level keys (ignored).


class SettingsRecord(TypedDict):
    """``settings``: ``take5.Settings.to_dict()``."""

    players: int
    variant: Literal["standard", "professional"]
    threshold: int
    end_rule: Literal["at-or-above", "above"]


class _SeatRequired(TypedDict):
    name: str


class SeatRecord(_SeatRequired, total=False):
    """``seats[i]``: what played seat i (only ``name`` is required)."""

    version: str | int
    """What the bot said in its handshake; in a tournament, the entrant's version number."""
    author: str
    entrant: str
    """In a tournament: ``name@version``."""
    digest: str
    """``sha256:...`` of the bot's source archive, where known."""
    bot: str
    kind: str
    sdk: str
    protocol_version: str
    handshake: bool
    bot_name: str
    owner: str
    """In a tournament or arena: the entrant's author as the organiser knows it."""
    clock: Literal["cpu", "wall"]
    """The clock that measured this seat (the one asked for, or wall where CPU time could not be
    measured); absent for a seat rejected before play and in records before time controls."""


class _DraftRequired(TypedDict):
    first: int
    picks: list[list[int]]
    """``[seat, card]`` pairs."""


class DraftRecord(_DraftRequired, total=False):
    """``draft`` of a round (professional variant): the first drafter and the picks in order."""

    clock: list[list[int]]
    """Optional: ``[seat, milliseconds used, bank after]`` of each pick, in pick order."""


class TakeRecord(TypedDict):
    """A row taken into a bull pile."""

    seat: int
    row: int
    card: int
    cards: list[int]
    reason: Literal["sixth-card", "low-card"]


class _TurnRequired(TypedDict):
    turn: int
    plays: list[list[int]]
    """``[seat, card]`` for every seat, in seat order."""
    takes: list[TakeRecord]
    rows: list[list[int]]


class TurnRecord(_TurnRequired, total=False):
    """A turn: the cards revealed, the rows taken, the rows after it."""

    logs: list[list[Any]]
    """Optional: ``[seat, text]``, each seat's own output during the turn (informative)."""
    clock: list[list[int]]
    """Optional: ``[seat, milliseconds used, bank after]`` of each decision of the turn, in the
    order asked (the plays, then the row choices)."""


class _RoundRequired(TypedDict):
    round: int


class RoundRecord(_RoundRequired, total=False):
    """A round; a cut-off game's last round may lack its later keys."""

    draft: DraftRecord
    hands: list[list[int]]
    rows: list[list[int]]
    turns: list[TurnRecord]
    points: list[int]
    scores: list[int]


class ResultRecord(TypedDict):
    """How a game ended: the scores, each seat's place, the seats grouped by place (ties
    together) and the seats that forfeited."""

    scores: list[int]
    places: list[int]
    standing: list[list[int]]
    forfeited: list[int]


class FaultRecord(TypedDict):
    """A fault of a seat (docs/faults.md): ``kind`` is a fault kind."""

    round: int
    turn: int
    kind: str
    detail: str


class DealRecord(TypedDict):
    """``deal``: a deal from a tournament's secret key (docs/security.md, "Deals"), not the key."""

    season: int
    commitment: str | None
    """SHA-256 of the season's key, in hex (take5.shuffle.key_commitment)."""
    id: str | None
    """The deal identity the key's HMAC was taken of (take5.shuffle.keyed_seed)."""


class _TimeControlRequired(TypedDict):
    clock: Literal["cpu", "wall"]
    bank_ms: int
    increment_ms: int
    cap_ms: int | None
    wall_factor: int


class TimeControlRecord(_TimeControlRequired, total=False):
    """``time_control``: the clock asked for and the time control, in milliseconds; ``ponder``
    (records since the rule; none: ``allow``): whether a bot's CPU between its answer and its
    next request was taken from its bank."""

    ponder: Literal["charge", "allow"]


class _GameRequired(TypedDict):
    format: Literal["take5-record"]
    version: int
    game_id: str | None
    settings: SettingsRecord
    seed: int
    rotation: int
    seats: list[SeatRecord]
    rounds: list[RoundRecord]
    complete: bool
    result: ResultRecord
    faults: list[list[FaultRecord]]


class GameRecord(_GameRequired, total=False):
    """A game record, format ``take5-record`` version 1 (docs/record-format.md)."""

    deal: DealRecord
    """Optional: where the seed came from when it came from a secret key."""
    time_control: TimeControlRecord
    """Optional (records since time controls): how the seats' time was measured and banked."""


def load_record(path: str | Path) -> dict[str, Any]:
    """Read a record file; a file that is not one raises MalformedRecord with the reason."""
    try:
        if not Path(path).exists():
            raise MalformedRecord(f"cannot read {path}: no such file")
        if not Path(path).is_file():  # a FIFO or a device would block or never end
            raise MalformedRecord(f"cannot read {path}: not a regular file")
        with open(path, "rb") as file:
            data = file.read(MAX_RECORD_BYTES + 1)
    except OSError as error:
        raise MalformedRecord(f"cannot read {path}: {error.strerror or error}") from None
    if len(data) > MAX_RECORD_BYTES:
        raise MalformedRecord(f"{path} is larger than {MAX_RECORD_BYTES} bytes")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise MalformedRecord(f"{path} is not a text file") from None
    doc = parse_record(text, str(path))
    check_format(doc)
    return dict(doc)


def parse_record(text: str | bytes, name: str = "the record") -> Any:
    """JSON text to a document; deep nesting and oversized numbers are refused, not raised."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise MalformedRecord(f"{name} is not JSON: {error}") from None
    except RecursionError:
        raise MalformedRecord(f"{name} is nested too deeply to be a record") from None
    except ValueError as error:  # e.g. an integer of more digits than Python converts
        raise MalformedRecord(f"{name} is not a record: {str(error).splitlines()[0]}") from None


def check_format(doc: Any) -> None:
    """The record's shape: see `take5.audit.check_structure`."""
    check_structure(doc)


def verify_record(doc: Mapping[str, Any]) -> Divergence | None:
    """Check a record twice, by replay and independently; None when valid, else the first
    divergence.

    Raises MalformedRecord when the record does not have the format's shape.
    """
    check_structure(doc)
    return replay_record(doc) or audit_record(doc)


def replay_record(doc: Mapping[str, Any]) -> Divergence | None:
    """Replay a well-formed record through the engine: the first divergence, or None."""
    check_structure(doc)
    try:
        return _verify(doc) or _verify_times(doc)
    except (KeyError, TypeError, ValueError, IndexError, AttributeError) as error:
        if isinstance(error, Take5Error):
            raise
        raise MalformedRecord(
            f"the record is malformed ({type(error).__name__}: {error})"
        ) from None


def _verify(doc: Mapping[str, Any]) -> Divergence | None:
    try:
        settings = Settings.from_dict(doc["settings"])
        game = Game(settings, doc["seed"], rotation=doc.get("rotation", 0))
    except Take5Error as error:
        raise MalformedRecord(f"the record's settings are invalid: {error}") from None
    n = settings.players
    rounds = doc["rounds"]
    if not isinstance(rounds, list):
        raise MalformedRecord("'rounds' must be a list")
    for recorded in rounds:
        number = recorded["round"]
        if game.is_over:
            return Divergence(
                number, None, None, "the game was already over", "no more rounds", number
            )
        if number != game.round:
            return Divergence(game.round, None, None, "round number", game.round, number)
        expected = game.round_log[number - 1]
        if "draft" in recorded or "draft" in expected:
            draft = recorded.get("draft") or {}
            if draft.get("first") != expected["draft"]["first"]:
                return Divergence(
                    number,
                    None,
                    None,
                    "first drafter",
                    expected["draft"]["first"],
                    draft.get("first"),
                )
            for seat, card in draft["picks"]:
                if game.phase is not Phase.DRAFT:
                    return Divergence(
                        number, None, card, "draft pick after the draft ended", None, [seat, card]
                    )
                if seat != game.drafter:
                    return Divergence(
                        number, 0, card, "drafting seat", game.drafter, seat, seat=seat
                    )
                try:
                    game.draft(card)
                except IllegalMove as error:
                    return Divergence(
                        number, None, card, f"illegal draft pick ({error})", None, [seat, card]
                    )
            if game.phase is Phase.DRAFT:
                if "hands" not in recorded and not doc.get("complete", True):
                    break  # a partial record of a game cut off in the draft
                return Divergence(
                    number,
                    None,
                    None,
                    "the draft is incomplete",
                    "10 cards per seat",
                    len(draft["picks"]),
                )
        divergence = _verify_deal(number, recorded, expected, n)
        if divergence:
            return divergence
        for turn in recorded["turns"]:
            divergence = _replay_turn(game, number, turn, n, expected)
            if divergence:
                return divergence
        if game.round == number and game.phase is not Phase.OVER and "points" not in expected:
            if recorded.get("points") is None and not doc.get("complete", True):
                break  # a partial record of a game cut off mid-round
            return Divergence(
                number, game.turn, None, "the round has turns missing", 10, len(recorded["turns"])
            )
        for key, what in (
            ("points", "points taken this round"),
            ("scores", "scores after the round"),
        ):
            if recorded.get(key) != expected[key]:
                return Divergence(number, None, None, what, expected[key], recorded.get(key))
    return _verify_end(doc, game, len(rounds))


def _verify_deal(
    number: int, recorded: Mapping[str, Any], expected: Mapping[str, Any], n: int
) -> Divergence | None:
    """A round's hands at the start of play and its starting rows, against the engine's."""
    if "hands" not in recorded:
        return Divergence(number, None, None, "the round has no hands")
    for seat in range(n):
        if recorded["hands"][seat] != expected["hands"][seat]:
            return Divergence(
                number,
                None,
                None,
                "hand at the start of play",
                expected["hands"][seat],
                recorded["hands"][seat],
                seat=seat,
            )
    if recorded["rows"] != expected["rows"]:
        return Divergence(number, None, None, "starting rows", expected["rows"], recorded["rows"])
    return None


def _verify_end(doc: Mapping[str, Any], game: Game, rounds: int) -> Divergence | None:
    """Whether the game ended as the record says (complete or not), and its final result."""
    if doc.get("complete", True) and not game.is_over:
        return Divergence(None, None, None, "the game ends too early", "more rounds", rounds)
    if not doc.get("complete", True) and game.is_over:
        return Divergence(
            rounds,
            None,
            None,
            "the game reached its end, but the record says it did not (complete: false)",
            True,
            False,
        )
    for seat in doc["result"].get("forfeited", []):
        game.forfeit(seat)
    expected_result = game.result().to_dict()
    for key in ("scores", "places", "standing", "forfeited"):
        if doc["result"].get(key) != expected_result[key]:
            return Divergence(
                None, None, None, f"final {key}", expected_result[key], doc["result"].get(key)
            )
    return None


def _replay_turn(
    game: Game, number: int, turn: Mapping[str, Any], n: int, expected_round: Mapping[str, Any]
) -> Divergence | None:
    if game.round != number or game.phase is not Phase.PLAY:
        return Divergence(
            number, turn.get("turn"), None, "a turn after the round ended", None, turn.get("turn")
        )
    if turn["turn"] != game.turn:
        return Divergence(number, game.turn, None, "turn number", game.turn, turn["turn"])
    plays = turn["plays"]
    seats = [seat for seat, _ in plays]
    if seats != list(range(n)):
        return Divergence(
            number, game.turn, None, "plays must list every seat in order", list(range(n)), seats
        )
    cards = [card for _, card in plays]
    for seat, card in enumerate(cards):
        if card not in game.hands[seat]:
            return Divergence(
                number,
                game.turn,
                card,
                "the seat does not hold this card",
                sorted(game.hands[seat]),
                card,
                seat=seat,
            )
    low_choices = {
        t["card"]: t["row"] for t in turn.get("takes", []) if t.get("reason") == "low-card"
    }
    this_turn = game.turn
    game.play(cards)
    while game.phase is Phase.CHOOSE_ROW:  # type: ignore[comparison-overlap]  # game.play() changed it
        card = game.view(game.waiting_for[0]).card
        if card not in low_choices:
            return Divergence(
                number,
                this_turn,
                card,
                "a low card needs a recorded row choice",
                "a low-card take",
                None,
            )
        try:
            game.choose_row(low_choices[card])
        except IllegalMove as error:
            return Divergence(
                number, this_turn, card, f"invalid row choice ({error})", None, low_choices[card]
            )
    expected = expected_round["turns"][-1]
    for index, take in enumerate(expected["takes"]):
        recorded_takes = turn.get("takes", [])
        got = recorded_takes[index] if index < len(recorded_takes) else None
        if got != take:
            return Divergence(number, this_turn, take["card"], "row taken", take, got)
    if len(turn.get("takes", [])) > len(expected["takes"]):
        extra = turn["takes"][len(expected["takes"])]
        return Divergence(number, this_turn, extra.get("card"), "row taken", None, extra)
    if turn.get("rows") != expected["rows"]:
        return Divergence(
            number, this_turn, None, "rows after the turn", expected["rows"], turn.get("rows")
        )
    return None


def _verify_times(doc: Mapping[str, Any]) -> Divergence | None:
    """Each seat's bank through its decisions, by the clock's own arithmetic (take5.clock)."""
    tc = doc.get("time_control")
    if tc is None:
        return None
    cap = tc["cap_ms"]
    try:
        control = TimeControl(tc["bank_ms"] / 1000, tc["increment_ms"] / 1000, cap and cap / 1000)
    except Take5Error as error:
        raise MalformedRecord(f"time_control: {error}") from None
    banks = [control.start() for _ in doc["seats"]]
    timeouts = {
        (seat, f["round"], f["turn"])
        for seat, seat_faults in enumerate(doc.get("faults") or [])
        for f in seat_faults
        if f["kind"] == "timeout"
    }
    for recorded in doc["rounds"]:
        number = recorded["round"]
        decisions = [(0, entry) for entry in (recorded.get("draft") or {}).get("clock", [])]
        for turn in recorded.get("turns", []):
            decisions += [(turn["turn"], entry) for entry in turn.get("clock", [])]
        for t, (seat, used, after) in decisions:
            bank = banks[seat]
            limit, over = bank.limit_ms, bank.over(used)
            expected = bank.charge(used)
            if after != expected:
                return Divergence(
                    number, t, None, "the bank after a decision", expected, after, seat=seat
                )
            if over and (seat, number, t) not in timeouts:
                return Divergence(
                    number,
                    t,
                    None,
                    f"a decision that used {used} ms of its {limit} ms has no timeout fault",
                    "a timeout fault",
                    None,
                    seat=seat,
                )
    return None


def without_times(doc: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of a record without its decision times (each turn's and draft's ``clock``): the one
    part of a record that is measured, so that two plays of the same deals by the same
    deterministic bots give equal records once it is left out (docs/record-format.md)."""
    out = dict(doc)
    rounds = []
    for rnd in doc.get("rounds", []):
        rnd = dict(rnd)
        if isinstance(rnd.get("draft"), dict):
            rnd["draft"] = {k: v for k, v in rnd["draft"].items() if k != "clock"}
        rnd["turns"] = [{k: v for k, v in t.items() if k != "clock"} for t in rnd.get("turns", [])]
        rounds.append(rnd)
    out["rounds"] = rounds
    return out


def iter_records(paths: list[Path]) -> Iterator[Path]:
    """Record files named directly or found (``*.json``) in named folders, in a stable order."""
    for path in paths:
        if path.is_dir():
            yield from sorted(p for p in path.rglob("*.json") if not p.is_dir())
        else:
            yield path


class Verdict(str, Enum):
    """What `judge` found about one record: the words `referee verify` prints."""

    VALID = "ok"
    """The record follows the rules, by replay and by the independent check."""
    INVALID = "INVALID"
    """The record is well formed but disagrees with the rules (a `Divergence`)."""
    MALFORMED = "MALFORMED"
    """The document is not a record this version can read (a `MalformedRecord`)."""


@dataclass(frozen=True)
class Judgement:
    """What `judge` says of one record: a verdict, and why when it is not valid."""

    verdict: Verdict
    """Valid, invalid or malformed."""
    reason: str = ""
    """One line: the divergence or the malformation, with its place ("round 2, turn 3, seat 1:
    ...")."""

    def __str__(self) -> str:
        return (
            self.verdict.value
            if self.verdict is Verdict.VALID
            else f"{self.verdict.value}: {self.reason}"
        )


def judge(doc: Any) -> Judgement:
    """Check a parsed document (or the MalformedRecord met reading it) and say why it fails, if it
    does."""
    if isinstance(doc, MalformedRecord):
        return Judgement(Verdict.MALFORMED, str(doc))
    try:
        divergence = verify_record(doc)
    except MalformedRecord as error:
        return Judgement(Verdict.MALFORMED, str(error))
    except RecursionError:
        return Judgement(Verdict.MALFORMED, "the record is nested too deeply")
    if divergence is None:
        return Judgement(Verdict.VALID)
    return Judgement(Verdict.INVALID, str(divergence))


def judge_file(path: str | Path) -> Judgement:
    """`judge` of a record file: never raises for anything the file holds."""
    try:
        return judge(load_record(path))
    except MalformedRecord as error:
        return Judgement(Verdict.MALFORMED, str(error))


class RecordPathError(Take5Error):
    """A record cannot be written where asked (found before the game is played)."""


class RecordFile:
    """Where a record will be written, checked and claimed before the game is played.

    The folders are made and a temporary file is created next to the target at once, so a path under
    a regular file, in /proc or in a read-only folder fails before any play; `write` then replaces
    the target in one step (an earlier file of that name is kept until then), and `discard` cleans
    up.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        if self.path.is_dir():
            raise RecordPathError(f"cannot write the record to {self.path}: it is a folder")
        parent = self.path.parent
        try:
            parent.mkdir(parents=True, exist_ok=True)
        except (FileExistsError, NotADirectoryError):
            raise RecordPathError(
                f"cannot write the record to {self.path}: {parent} is not a folder"
            ) from None
        except OSError as error:
            raise RecordPathError(
                f"cannot create the folder {parent}: {error.strerror or error}"
            ) from None
        name = parent / f".{self.path.name}.{secrets.token_hex(6)}.tmp"
        try:  # mode 0666 less the umask, as a plain open() would give the record itself
            os.close(os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
        except OSError as error:
            raise RecordPathError(
                f"cannot write the record to {self.path}: {error.strerror or error}"
            ) from None
        self._temporary: Path | None = name

    def write(self, doc: Mapping[str, Any]) -> Path:
        """Write the record (indented JSON) and move it into place."""
        if self._temporary is None:
            raise RecordPathError(f"the record file {self.path} was already written or discarded")
        try:
            self._temporary.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
            os.replace(self._temporary, self.path)
        except OSError as error:
            self.discard()
            raise RecordPathError(
                f"cannot write the record to {self.path}: {error.strerror or error}"
            ) from None
        self._temporary = None
        return self.path

    def discard(self) -> None:
        """Remove the claimed temporary file if the record was not written (any earlier file
        stays)."""
        if self._temporary is not None:
            self._temporary.unlink(missing_ok=True)
            self._temporary = None

    def __enter__(self) -> RecordFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.discard()


__all__ = [
    "MAX_RECORD_BYTES",
    "DealRecord",
    "Divergence",
    "DraftRecord",
    "FaultRecord",
    "GameRecord",
    "Judgement",
    "MalformedRecord",
    "RecordFile",
    "RecordPathError",
    "ResultRecord",
    "RoundRecord",
    "SeatRecord",
    "SettingsRecord",
    "TakeRecord",
    "TimeControlRecord",
    "TurnRecord",
    "Verdict",
    "check_format",
    "iter_records",
    "judge",
    "judge_file",
    "load_record",
    "parse_record",
    "replay_record",
    "verify_record",
    "without_times",
]
