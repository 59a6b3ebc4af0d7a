"""Game records: load them, and check one against the rules by replaying it.

A record (docs/record-format.md) holds the seed and every decision, so the engine can replay the game
and produce the record it should have been; the first place where the two differ is the divergence.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .game import RECORD_FORMAT, RECORD_VERSION, Game, Phase, Settings
from .rules import IllegalMove, Take5Error


class MalformedRecord(Take5Error):
    """The file is not a game record this version can read."""


@dataclass(frozen=True)
class Divergence:
    """The first point where a record disagrees with the rules."""

    round: int | None
    turn: int | None
    card: int | None
    what: str
    expected: Any = None
    recorded: Any = None

    def __str__(self) -> str:
        where = []
        if self.round is not None:
            where.append(f"round {self.round}")
        if self.turn is not None:
            where.append(f"turn {self.turn}")
        if self.card is not None:
            where.append(f"card {self.card}")
        place = ", ".join(where) or "game"
        text = f"{place}: {self.what}"
        if self.expected is not None or self.recorded is not None:
            text += f": expected {_short(self.expected)}, recorded {_short(self.recorded)}"
        return text


def _short(value: Any) -> str:
    text = json.dumps(value, separators=(",", ":"))
    return text if len(text) <= 200 else text[:197] + "..."


def load_record(path: str | Path) -> dict[str, Any]:
    """Read a record file; a file that is not one raises MalformedRecord with the reason."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as error:
        raise MalformedRecord(f"cannot read {path}: {error.strerror or error}") from None
    except UnicodeDecodeError:
        raise MalformedRecord(f"{path} is not a text file") from None
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as error:
        raise MalformedRecord(f"{path} is not JSON: {error}") from None
    check_format(doc)
    return dict(doc)


def check_format(doc: Any) -> None:
    if not isinstance(doc, dict):
        raise MalformedRecord("a record is a JSON object")
    if doc.get("format") != RECORD_FORMAT:
        raise MalformedRecord(f"not a game record (format is {doc.get('format')!r}, not {RECORD_FORMAT!r})")
    if doc.get("version") != RECORD_VERSION:
        raise MalformedRecord(
            f"record version {doc.get('version')!r} is not supported (this referee reads {RECORD_VERSION})"
        )
    for key in ("settings", "seed", "rounds", "result"):
        if key not in doc:
            raise MalformedRecord(f"the record has no {key!r}")


def verify_record(doc: Mapping[str, Any]) -> Divergence | None:
    """Replay a record through the rules; None when it is valid, else the first divergence."""
    check_format(doc)
    try:
        return _verify(doc)
    except (KeyError, TypeError, ValueError, IndexError, AttributeError) as error:
        if isinstance(error, Take5Error):
            raise
        raise MalformedRecord(f"the record is malformed ({type(error).__name__}: {error})") from None


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
            return Divergence(number, None, None, "the game was already over", "no more rounds", number)
        if number != game.round:
            return Divergence(game.round, None, None, "round number", game.round, number)
        expected = game.round_log[number - 1]
        if "draft" in recorded or "draft" in expected:
            draft = recorded.get("draft") or {}
            if draft.get("first") != expected["draft"]["first"]:
                return Divergence(number, None, None, "first drafter", expected["draft"]["first"], draft.get("first"))
            for seat, card in draft["picks"]:
                if game.phase is not Phase.DRAFT:
                    return Divergence(number, None, card, "draft pick after the draft ended", None, [seat, card])
                if seat != game.drafter:
                    return Divergence(number, None, card, "drafting seat", game.drafter, seat)
                try:
                    game.draft(card)
                except IllegalMove as error:
                    return Divergence(number, None, card, f"illegal draft pick ({error})", None, [seat, card])
            if game.phase is Phase.DRAFT:
                return Divergence(number, None, None, "the draft is incomplete", "10 cards per seat", len(draft["picks"]))
        for key, what in (("hands", "hands at the start of play"), ("rows", "starting rows")):
            if recorded[key] != expected[key]:
                return Divergence(number, None, None, what, expected[key], recorded[key])
        for turn in recorded["turns"]:
            divergence = _replay_turn(game, number, turn, n, expected)
            if divergence:
                return divergence
        if game.round == number and game.phase is not Phase.OVER and "points" not in expected:
            if recorded.get("points") is None and not doc.get("complete", True):
                break  # a partial record of a game cut off mid-round
            return Divergence(number, game.turn, None, "the round has turns missing", 10, len(recorded["turns"]))
        for key, what in (("points", "points taken this round"), ("scores", "scores after the round")):
            if recorded.get(key) != expected[key]:
                return Divergence(number, None, None, what, expected[key], recorded.get(key))
    if doc.get("complete", True) and not game.is_over:
        return Divergence(None, None, None, "the game ends too early", "more rounds", len(rounds))
    for seat in doc["result"].get("forfeited", []):
        game.forfeit(seat)
    expected_result = game.result().to_dict()
    for key in ("scores", "places", "standing", "forfeited"):
        if doc["result"].get(key) != expected_result[key]:
            return Divergence(None, None, None, f"final {key}", expected_result[key], doc["result"].get(key))
    return None


def _replay_turn(
    game: Game, number: int, turn: Mapping[str, Any], n: int, expected_round: Mapping[str, Any]
) -> Divergence | None:
    if game.round != number or game.phase is not Phase.PLAY:
        return Divergence(number, turn.get("turn"), None, "a turn after the round ended", None, turn.get("turn"))
    if turn["turn"] != game.turn:
        return Divergence(number, game.turn, None, "turn number", game.turn, turn["turn"])
    plays = turn["plays"]
    seats = [seat for seat, _ in plays]
    if seats != list(range(n)):
        return Divergence(number, game.turn, None, "plays must list every seat in order", list(range(n)), seats)
    cards = [card for _, card in plays]
    for seat, card in enumerate(cards):
        if card not in game.hands[seat]:
            return Divergence(number, game.turn, card, f"seat {seat} does not hold this card", sorted(game.hands[seat]), card)
    low_choices = {t["card"]: t["row"] for t in turn.get("takes", []) if t.get("reason") == "low-card"}
    this_turn = game.turn
    game.play(cards)
    while game.phase is Phase.CHOOSE_ROW:  # type: ignore[comparison-overlap]  # game.play() changed it
        card = game.view(game.waiting_for[0]).card
        if card not in low_choices:
            return Divergence(number, this_turn, card, "a low card needs a recorded row choice", "a low-card take", None)
        try:
            game.choose_row(low_choices[card])
        except IllegalMove as error:
            return Divergence(number, this_turn, card, f"invalid row choice ({error})", None, low_choices[card])
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
        return Divergence(number, this_turn, None, "rows after the turn", expected["rows"], turn.get("rows"))
    return None


def iter_records(paths: list[Path]) -> Iterator[Path]:
    """Record files named directly or found (*.json) in named folders, in a stable order."""
    for path in paths:
        if path.is_dir():
            yield from sorted(path.rglob("*.json"))
        else:
            yield path
