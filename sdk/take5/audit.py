"""An independent check of a game record, written from docs/rules.md and docs/record-format.md
alone.

`referee verify` replays a record through the engine (`take5.record`), which proves the record is
what the engine would have written, but a bug in the engine would then be replayed, not caught. This
module checks the same record a second way: it deals with its own SplitMix64, places cards with its
own code, scores with its own bull-head table, and ranks with its own code. It imports nothing from
`take5.game`, `take5.rules` (but the error base class) or `take5.shuffle`, so the two only agree
when both follow the written rules. Tests hold the two to agreement on thousands of generated games.

Two layers, both usable alone:

- `check_structure(doc)` checks the shape of a record: every key the format requires, every value of
  its JSON type (a card is an int: not ``23.0``, not ``true``), every number in its range, one seat
  entry per player. It raises `MalformedRecord` naming the place ("round 2, turn 3: ..."), so code
  reading a record after it never meets a type it does not expect.
- `audit_record(doc)` checks the rules: the deals, the draft, every play, placement, take, round
  score, the end of the game, the `complete` flag, forfeits against recorded faults
  (docs/faults.md), the final standing, and (in a record with a `time_control`) each seat's bank
  through its decisions. It returns the first `Divergence`, or None.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .rules import Take5Error

# What the documents say, restated here on purpose (tests compare them with the engine's values).
FORMAT = "take5-record"
VERSION = 1
CARDS = 104
ROWS = 4
HAND = 10
ROW_MAX = 5
MIN_PLAYERS = 2
MAX_PLAYERS = {"standard": 10, "professional": 6}
MAX_THRESHOLD = 1000
MAX_ROUNDS = 1000
MIN_SEED = -(2**63)
MAX_SEED = 2**64 - 1
END_RULES = ("at-or-above", "above")
REASONS = ("sixth-card", "low-card")
FORFEIT_AT_ONCE = frozenset({"crash", "incompatible"})
"""Fault kinds after which a bot forfeits at once (docs/faults.md, "Forfeits")."""
CLOCKS = ("cpu", "wall")
MAX_MS = 86_400_000
"""Milliseconds of a day: the most a time control's bank, increment or cap may be."""
MAX_USED_MS = 10**9
"""The most milliseconds a record may say one decision used (far beyond any wall-clock cap)."""


class MalformedRecord(Take5Error):
    """The file is not a game record this version can read."""


@dataclass(frozen=True)
class Divergence:
    """The first point where a record disagrees with the rules: where, what, expected vs
    recorded."""

    round: int | None
    """The round, from 1 (None: not within a round, e.g. the settings)."""
    turn: int | None
    """The turn within the round (None: not within a turn)."""
    card: int | None
    """The card concerned, if one is."""
    what: str
    """What disagrees, in words."""
    expected: Any = None
    """What the rules give (None: not a comparison)."""
    recorded: Any = None
    """What the record holds instead."""
    seat: int | None = None
    """The seat concerned, if one is."""

    def __str__(self) -> str:
        place = _place(self.round, self.turn, self.seat, self.card)
        text = f"{place}: {self.what}"
        if self.expected is not None or self.recorded is not None:
            text += f": expected {short(self.expected)}, recorded {short(self.recorded)}"
        return text


def _place(
    round_: int | None, turn: int | None, seat: int | None = None, card: int | None = None
) -> str:
    where = []
    if round_ is not None:
        where.append(f"round {round_}")
    if turn is not None:
        where.append(f"turn {turn}")
    if seat is not None:
        where.append(f"seat {seat}")
    if card is not None:
        where.append(f"card {card}")
    return ", ".join(where) or "game"


def short(value: Any) -> str:
    """A value for a one-line message: JSON (control characters escaped), cut at 200 characters."""
    try:
        text = json.dumps(value, separators=(",", ":"))
    except (RecursionError, ValueError, TypeError):
        text = f"<{type(value).__name__}>"
    return text if len(text) <= 200 else text[:197] + "..."


# -- the shape of a record -------------------------------------------------------------------------


def _bad(where: str, what: str) -> MalformedRecord:
    return MalformedRecord(f"{where}: {what}")


def _type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return short(value)
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def _whole(value: Any, where: str, what: str, low: int, high: int) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise _bad(where, f"{what} must be a whole number, not {_type(value)}")
    if not low <= value <= high:
        raise _bad(where, f"{what} must be from {low} to {high}, not {short(value)}")
    return value


def _list(
    value: Any, where: str, what: str, length: int | None = None, most: int | None = None
) -> list[Any]:
    if not isinstance(value, list):
        raise _bad(where, f"{what} must be a list, not {_type(value)}")
    if length is not None and len(value) != length:
        raise _bad(where, f"{what} must hold {length} entries, not {len(value)}")
    if most is not None and len(value) > most:
        raise _bad(where, f"{what} must hold at most {most} entries, not {len(value)}")
    return value


def _object(value: Any, where: str, what: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _bad(where, f"{what} must be an object, not {_type(value)}")
    return value


def _key(doc: Mapping[str, Any], key: str, where: str) -> Any:
    if key not in doc:
        raise _bad(where, f"no {key!r}")
    return doc[key]


def _cards(value: Any, where: str, what: str, most: int) -> list[int]:
    cards = _list(value, where, what, most=most)
    for card in cards:
        _whole(card, where, f"a card of {what}", 1, CARDS)
    return cards


def _pair(value: Any, where: str, what: str, seats: int) -> None:
    pair = _list(value, where, what, length=2)
    _whole(pair[0], where, f"the seat of {what}", 0, seats - 1)
    _whole(pair[1], where, f"the card of {what}", 1, CARDS)


def check_structure(doc: Any) -> None:
    """Raise MalformedRecord, naming the place, unless `doc` has the shape of a version 1 record."""
    if not isinstance(doc, dict):
        raise MalformedRecord(f"a record is a JSON object, not {_type(doc)}")
    if doc.get("format") != FORMAT:
        raise MalformedRecord(
            f"not a game record (format is {short(doc.get('format'))}, not {FORMAT!r})"
        )
    if doc.get("version") != VERSION or isinstance(doc.get("version"), bool):
        raise MalformedRecord(
            f"record version {short(doc.get('version'))} is not supported (this referee reads "
            f"{VERSION})"
        )
    settings = _object(_key(doc, "settings", "record"), "settings", "the settings")
    variant = settings.get("variant", "standard")
    if not isinstance(variant, str) or variant not in MAX_PLAYERS:
        raise _bad(
            "settings", f"unknown variant {short(variant)} (use 'standard' or 'professional')"
        )
    n = _whole(
        _key(settings, "players", "settings"),
        "settings",
        "players",
        MIN_PLAYERS,
        MAX_PLAYERS[variant],
    )
    _whole(settings.get("threshold", 66), "settings", "the threshold", 1, MAX_THRESHOLD)
    if settings.get("end_rule", END_RULES[0]) not in END_RULES:
        raise _bad(
            "settings",
            f"unknown end rule {short(settings.get('end_rule'))} (use 'at-or-above' or 'above')",
        )
    _whole(_key(doc, "seed", "record"), "record", "the seed", MIN_SEED, MAX_SEED)
    _whole(doc.get("rotation", 0), "record", "the rotation", 0, n - 1)
    if doc.get("game_id") is not None and not isinstance(doc["game_id"], str):
        raise _bad("record", f"the game id must be a string or null, not {_type(doc['game_id'])}")
    complete = doc.get("complete", True)
    if not isinstance(complete, bool):
        raise _bad("record", f"'complete' must be true or false, not {_type(complete)}")
    seats = _list(
        _key(doc, "seats", "record"), "seats", f"the seats of a {n}-player game", length=n
    )
    for seat, entry in enumerate(seats):
        where = f"seat {seat}"
        _object(entry, where, "a seat entry")
        if not isinstance(entry.get("name"), str):
            raise _bad(where, f"the name must be a string, not {_type(entry.get('name'))}")
        for key in ("author", "digest"):
            if key in entry and not isinstance(entry[key], str):
                raise _bad(where, f"{key!r} must be a string, not {_type(entry[key])}")
        if "clock" in entry and entry["clock"] not in CLOCKS:
            raise _bad(where, f"unknown clock {short(entry['clock'])} (use 'cpu' or 'wall')")
    timed = "time_control" in doc
    if timed:
        _check_time_control(doc["time_control"])
    rounds = _list(_key(doc, "rounds", "record"), "record", "'rounds'", most=MAX_ROUNDS)
    if not rounds:
        raise _bad("record", "'rounds' is empty: a game has at least one round")
    for index, rnd in enumerate(rounds):
        last_cut = not complete and index == len(rounds) - 1
        _check_round(rnd, index + 1, n, variant, last_cut, timed)
    result = _object(_key(doc, "result", "record"), "result", "the result")
    for key in ("scores", "places"):
        for value in _list(_key(result, key, "result"), "result", key, length=n):
            _whole(value, "result", f"an entry of {key}", 0, 10**9)
    for group in _list(_key(result, "standing", "result"), "result", "standing", most=n):
        for seat in _list(group, "result", "a place of standing", most=n):
            _whole(seat, "result", "a seat of standing", 0, n - 1)
    for seat in _list(result.get("forfeited", []), "result", "forfeited", most=n):
        _whole(seat, "result", "a forfeited seat", 0, n - 1)
    faults = _list(
        doc.get("faults", [[] for _ in range(n)]),
        "faults",
        f"the faults of a {n}-player game",
        length=n,
    )
    for seat, seat_faults in enumerate(faults):
        for fault in _list(seat_faults, f"seat {seat}", "its faults"):
            where = f"seat {seat}, a fault"
            _object(fault, where, "a fault")
            _whole(_key(fault, "round", where), where, "the round", 1, MAX_ROUNDS)
            _whole(_key(fault, "turn", where), where, "the turn", 0, HAND)
            if not isinstance(_key(fault, "kind", where), str):
                raise _bad(where, f"the kind must be a string, not {_type(fault['kind'])}")


def _check_time_control(value: Any) -> None:
    where = "time_control"
    tc = _object(value, where, "the time control")
    if tc.get("clock") not in CLOCKS:
        raise _bad(where, f"unknown clock {short(tc.get('clock'))} (use 'cpu' or 'wall')")
    _whole(_key(tc, "bank_ms", where), where, "the bank", 0, MAX_MS)
    _whole(_key(tc, "increment_ms", where), where, "the increment", 0, MAX_MS)
    if tc["bank_ms"] + tc["increment_ms"] == 0:
        raise _bad(where, "a time control gives some time: a bank or an increment")
    if _key(tc, "cap_ms", where) is not None:
        _whole(tc["cap_ms"], where, "the cap", 1, MAX_MS)
    if "wall_factor" in tc:
        _whole(tc["wall_factor"], where, "the wall factor", 1, 1000)
    if "ponder" in tc and tc["ponder"] not in ("charge", "allow"):
        raise _bad(where, f"unknown ponder rule {short(tc['ponder'])} (use 'charge' or 'allow')")


def _check_times(value: Any, where: str, n: int, most: int, timed: bool) -> None:
    """A turn's or a draft's ``clock``: ``[seat, milliseconds used, bank after]`` entries."""
    if not timed:
        raise _bad(where, "decision times ('clock') in a record without a 'time_control'")
    for entry in _list(value, where, "the decision times", most=most):
        entry = _list(entry, where, "a decision's time", length=3)
        _whole(entry[0], where, "the seat of a decision's time", 0, n - 1)
        _whole(entry[1], where, "the milliseconds a decision used", 0, MAX_USED_MS)
        _whole(entry[2], where, "the bank after a decision", 0, MAX_USED_MS)


def _check_round(
    rnd: Any, number: int, n: int, variant: str, last_cut: bool, timed: bool = False
) -> None:
    where = f"round {number}"
    _object(rnd, where, "a round")
    _whole(_key(rnd, "round", where), where, "the round number", 1, MAX_ROUNDS)
    if variant == "standard" and "draft" in rnd:
        raise _bad(
            where,
            "the round has a draft, but the game is standard "
            "(only the professional variant drafts)",
        )
    if variant == "professional":
        if "draft" not in rnd:
            raise _bad(
                where,
                "the round has no draft, but the game is professional (every round opens with one)",
            )
        draft = _object(rnd["draft"], where, "the draft")
        _whole(_key(draft, "first", where), where, "the first drafter", 0, n - 1)
        for pick in _list(_key(draft, "picks", where), where, "the draft picks", most=HAND * n):
            _pair(pick, where, "a draft pick", n)
        if "clock" in draft:
            _check_times(draft["clock"], f"{where}, the draft", n, HAND * n, timed)
    if last_cut and "hands" not in rnd:  # cut off during the draft: play has not started
        if "rows" in rnd or "turns" in rnd:
            raise _bad(where, "a round cut off in the draft has no rows or turns yet")
        return
    for seat, hand in enumerate(_list(_key(rnd, "hands", where), where, "the hands", length=n)):
        if len(_cards(hand, f"{where}, seat {seat}", "the hand", HAND)) != HAND:
            raise _bad(
                f"{where}, seat {seat}",
                f"a hand at the start of play holds {HAND} cards, not {len(hand)}",
            )
    for row in _list(_key(rnd, "rows", where), where, "the starting rows", length=ROWS):
        if len(_cards(row, where, "a starting row", 1)) != 1:
            raise _bad(where, "a starting row holds one card")
    for index, turn in enumerate(_list(_key(rnd, "turns", where), where, "the turns", most=HAND)):
        _check_turn(turn, f"{where}, turn {index + 1}", n, timed)
    if last_cut and "points" not in rnd and "scores" not in rnd:
        return
    for key in ("points", "scores"):
        for value in _list(_key(rnd, key, where), where, key, length=n):
            _whole(value, where, f"an entry of {key}", 0, 10**9)


def _check_turn(turn: Any, where: str, n: int, timed: bool = False) -> None:
    _object(turn, where, "a turn")
    if "clock" in turn:
        _check_times(turn["clock"], where, n, 2 * n, timed)
    _whole(_key(turn, "turn", where), where, "the turn number", 1, HAND)
    for play in _list(_key(turn, "plays", where), where, "the plays", length=n):
        _pair(play, where, "a play", n)
    for take in _list(_key(turn, "takes", where), where, "the takes", most=n):
        _object(take, where, "a take")
        _whole(_key(take, "seat", where), where, "the seat of a take", 0, n - 1)
        _whole(_key(take, "row", where), where, "the row of a take", 0, ROWS - 1)
        _whole(_key(take, "card", where), where, "the card of a take", 1, CARDS)
        _cards(_key(take, "cards", where), where, "the cards taken", ROW_MAX)
        if _key(take, "reason", where) not in REASONS:
            raise _bad(
                where,
                f"unknown take reason {short(take['reason'])} (use 'sixth-card' or 'low-card')",
            )
    for row in _list(_key(turn, "rows", where), where, "the rows", length=ROWS):
        if not _cards(row, where, "a row", ROW_MAX):
            raise _bad(where, "a row is empty")


# -- the rules -------------------------------------------------------------------------------------


def heads(card: int) -> int:
    """Bull heads of a card (docs/rules.md 1)."""
    if card == 55:
        return 7
    if card % 11 == 0:
        return 5
    if card % 10 == 0:
        return 3
    if card % 5 == 0:
        return 2
    return 1


class SplitMix64:
    """The deal generator exactly as docs/record-format.md ("Deals") and sdk/take5/shuffle.py state
    it."""

    def __init__(self, seed: int) -> None:
        self.state = seed % 2**64

    def next(self) -> int:
        self.state = (self.state + 0x9E3779B97F4A7C15) % 2**64
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) % 2**64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) % 2**64
        return z ^ (z >> 31)

    def below(self, n: int) -> int:
        while True:
            x = self.next()
            if x < 2**64 - 2**64 % n:
                return x % n

    def shuffle(self, items: Sequence[int]) -> list[int]:
        out = list(items)
        for i in range(len(out) - 1, 0, -1):
            j = self.below(i + 1)
            out[i], out[j] = out[j], out[i]
        return out


def standing(scores: Sequence[int], forfeited: Sequence[int]) -> tuple[list[int], list[list[int]]]:
    """Places (1 = best; equal totals share; forfeited seats below all others) and seats by
    place."""
    keys = [(1 if seat in forfeited else 0, score) for seat, score in enumerate(scores)]
    places = [1 + sum(1 for other in keys if other < key) for key in keys]
    groups = [
        [seat for seat in range(len(scores)) if places[seat] == p] for p in sorted(set(places))
    ]
    return places, groups


def audit_record(doc: Any) -> Divergence | None:
    """Check a record against the rules, independently of the engine; the first divergence or None.

    Raises MalformedRecord (with the place) when the record does not have the format's shape.
    """
    check_structure(doc)
    return _Audit(doc).run()


class _Audit:
    def __init__(self, doc: Mapping[str, Any]) -> None:
        settings = doc["settings"]
        self.doc = doc
        self.n: int = settings["players"]
        self.professional = settings.get("variant", "standard") == "professional"
        self.threshold: int = settings.get("threshold", 66)
        self.above = settings.get("end_rule", "at-or-above") == "above"
        self.rotation: int = doc.get("rotation", 0)
        self.complete: bool = doc.get("complete", True)
        self.rng = SplitMix64(doc["seed"])
        self.scores = [0] * self.n

    def run(self) -> Divergence | None:
        rounds = self.doc["rounds"]
        over = False
        for index, rnd in enumerate(rounds):
            number = index + 1
            if over:
                return Divergence(
                    number, None, None, "a round after the game ended", None, rnd["round"]
                )
            if rnd["round"] != number:
                return Divergence(number, None, None, "round number", number, rnd["round"])
            last = index == len(rounds) - 1
            found, finished = self.round(rnd, number, cut_allowed=last and not self.complete)
            if found:
                return found
            if not finished:
                break
            top = max(self.scores)
            over = top > self.threshold if self.above else top >= self.threshold
            over = over or number >= MAX_ROUNDS
        if self.complete and not over:
            return Divergence(
                None,
                None,
                None,
                "the game ends before a total reaches the threshold",
                "more rounds",
                len(rounds),
            )
        if not self.complete and over:
            return Divergence(
                len(rounds),
                None,
                None,
                "the game reached its end, but the record says it did not (complete: false)",
                True,
                False,
            )
        return self.faults_and_result(len(rounds)) or self.clocks()

    def round(
        self, rnd: Mapping[str, Any], number: int, cut_allowed: bool
    ) -> tuple[Divergence | None, bool]:
        """Check one round; (divergence, whether the round was played to its end)."""
        n = self.n
        if self.professional:
            first = (number - 1 + self.rotation) % n
            draft = rnd["draft"]
            if draft["first"] != first:
                return Divergence(number, None, None, "first drafter", first, draft["first"]), False
            pool = set(range(1, HAND * n + ROWS + 1))
            hands: list[list[int]] = [[] for _ in range(n)]
            for k, (seat, card) in enumerate(draft["picks"]):
                if seat != (first + k) % n:
                    return Divergence(
                        number, 0, card, "drafting seat", (first + k) % n, seat, seat=seat
                    ), False
                if card not in pool:
                    return Divergence(
                        number, 0, card, "the card is not in the draft pool", None, card, seat=seat
                    ), False
                pool.remove(card)
                hands[seat].append(card)
            if len(draft["picks"]) < HAND * n:
                if cut_allowed and "hands" not in rnd:
                    return None, False
                return Divergence(
                    number, 0, None, "the draft is incomplete", HAND * n, len(draft["picks"])
                ), False
            hands = [sorted(hand) for hand in hands]
            rows = [[card] for card in sorted(pool)]
        else:
            deck = self.rng.shuffle(range(1, CARDS + 1))
            hands = [[] for _ in range(n)]
            for position in range(n):
                hands[(position + self.rotation) % n] = sorted(
                    deck[position * HAND : (position + 1) * HAND]
                )
            rows = [[card] for card in deck[n * HAND : n * HAND + ROWS]]
        if "hands" not in rnd:
            return Divergence(number, None, None, "the round has no hands"), False
        for seat in range(n):
            if rnd["hands"][seat] != hands[seat]:
                return Divergence(
                    number,
                    None,
                    None,
                    "hand at the start of play",
                    hands[seat],
                    rnd["hands"][seat],
                    seat=seat,
                ), False
        if rnd["rows"] != rows:
            return Divergence(number, None, None, "starting rows", rows, rnd["rows"]), False
        points = [0] * n
        turns = rnd["turns"]
        for index, turn in enumerate(turns):
            found = self.turn(turn, number, index + 1, hands, rows, points)
            if found:
                return found, False
        if len(turns) < HAND:
            if cut_allowed and "points" not in rnd:
                return None, False
            return Divergence(
                number, len(turns) + 1, None, "the round has turns missing", HAND, len(turns)
            ), False
        for seat in range(n):
            self.scores[seat] += points[seat]
        for key, expected, what in (
            ("points", points, "points taken this round"),
            ("scores", self.scores, "totals after the round"),
        ):
            recorded = rnd.get(key)
            if recorded != expected:
                seat = next(
                    (s for s in range(n) if recorded is None or recorded[s] != expected[s]), None
                )
                return Divergence(number, None, None, what, expected, recorded, seat=seat), False
        return None, True

    def turn(
        self,
        turn: Mapping[str, Any],
        number: int,
        t: int,
        hands: list[list[int]],
        rows: list[list[int]],
        points: list[int],
    ) -> Divergence | None:
        if turn["turn"] != t:
            return Divergence(number, t, None, "turn number", t, turn["turn"])
        plays = turn["plays"]
        for seat, (played_by, card) in enumerate(plays):
            if played_by != seat:
                return Divergence(
                    number,
                    t,
                    None,
                    "plays must list every seat in order",
                    seat,
                    played_by,
                    seat=seat,
                )
            if card not in hands[seat]:
                return Divergence(
                    number,
                    t,
                    card,
                    "the seat does not hold this card",
                    hands[seat],
                    card,
                    seat=seat,
                )
        for seat, (_, card) in enumerate(plays):
            hands[seat].remove(card)
        recorded = turn["takes"]
        expected: list[dict[str, Any]] = []
        for card, seat in sorted((card, seat) for seat, (_, card) in enumerate(plays)):
            ends = [(row[-1], i) for i, row in enumerate(rows) if row[-1] < card]
            if ends:
                _, i = max(ends)
                if len(rows[i]) < ROW_MAX:
                    rows[i].append(card)
                    continue
                reason = "sixth-card"
            else:
                chosen = [
                    take["row"]
                    for take in recorded
                    if take["card"] == card and take["reason"] == "low-card"
                ]
                if not chosen:
                    return Divergence(
                        number,
                        t,
                        card,
                        "a card lower than every row needs a recorded row choice",
                        "a low-card take",
                        None,
                        seat=seat,
                    )
                i, reason = chosen[0], "low-card"
            taken, rows[i] = rows[i], [card]
            points[seat] += sum(heads(c) for c in taken)
            expected.append(
                {"seat": seat, "row": i, "card": card, "cards": taken, "reason": reason}
            )
        for index in range(max(len(expected), len(recorded))):
            want = expected[index] if index < len(expected) else None
            got = recorded[index] if index < len(recorded) else None
            if want != got:
                which = want or got or {}
                return Divergence(
                    number, t, which.get("card"), "row taken", want, got, seat=which.get("seat")
                )
        if turn["rows"] != rows:
            return Divergence(number, t, None, "rows after the turn", rows, turn["rows"])
        return None

    def clocks(self) -> Divergence | None:
        """The banks (docs/record-format.md, "Decision times"): replayed seat by seat in the order
        of the decisions, each recorded bank must be what the time control leaves, and a decision
        that used more than it could must carry a timeout fault of its seat, round and turn."""
        tc = self.doc.get("time_control")
        if tc is None:
            return None
        bank, increment, cap = tc["bank_ms"], tc["increment_ms"], tc["cap_ms"]
        ceiling = None if cap is None else max(bank, cap - increment)
        left = [bank] * self.n
        timeouts = {
            (seat, f["round"], f["turn"])
            for seat, seat_faults in enumerate(self.doc.get("faults") or [])
            for f in seat_faults
            if f["kind"] == "timeout"
        }
        for rnd in self.doc["rounds"]:
            number = rnd["round"]
            timed = []
            draft = rnd.get("draft")
            if isinstance(draft, dict):
                timed += [(0, entry) for entry in draft.get("clock", [])]
            for turn in rnd.get("turns", []):
                timed += [(turn["turn"], entry) for entry in turn.get("clock", [])]
            for t, (seat, used, recorded) in timed:
                available = left[seat] + increment
                limit = available if cap is None else min(available, cap)
                after = max(0, available - used)
                if ceiling is not None:
                    after = min(after, ceiling)
                if recorded != after:
                    return Divergence(
                        number, t, None, "the bank after a decision", after, recorded, seat=seat
                    )
                if used > limit and (seat, number, t) not in timeouts:
                    return Divergence(
                        number,
                        t,
                        None,
                        f"a decision that used {used} ms of its {limit} ms has no timeout fault",
                        "a timeout fault",
                        None,
                        seat=seat,
                    )
                left[seat] = after
        return None

    def faults_and_result(self, played_rounds: int) -> Divergence | None:
        n = self.n
        faults = self.doc.get("faults") or [[] for _ in range(n)]
        result = self.doc["result"]
        forfeited = result.get("forfeited", [])
        for seat in range(n):
            for fault in faults[seat]:
                if fault["round"] > played_rounds:
                    return Divergence(
                        fault["round"],
                        fault["turn"],
                        None,
                        "a fault in a round the game never reached",
                        None,
                        fault["kind"],
                        seat=seat,
                    )
                if fault["kind"] in FORFEIT_AT_ONCE and seat not in forfeited:
                    return Divergence(
                        fault["round"],
                        fault["turn"],
                        None,
                        f"a {fault['kind']} fault forfeits "
                        "the game at once (docs/faults.md), but the seat is not forfeited",
                        seat=seat,
                    )
        for seat in forfeited:
            if not faults[seat]:
                return Divergence(
                    None,
                    None,
                    None,
                    "the seat forfeited, but no fault is recorded for it (a "
                    "forfeit follows from faults, docs/faults.md)",
                    None,
                    "forfeited",
                    seat=seat,
                )
        want_forfeited = sorted(set(forfeited))
        places, groups = standing(self.scores, want_forfeited)
        expected: dict[str, list[Any]] = {
            "scores": self.scores,
            "places": places,
            "standing": groups,
            "forfeited": want_forfeited,
        }
        for key, want in expected.items():
            if result.get(key, [] if key == "forfeited" else None) != want:
                got = result.get(key)
                where: int | None = None
                if key in ("scores", "places") and isinstance(got, list):
                    where = next((s for s in range(n) if got[s] != want[s]), None)
                return Divergence(None, None, None, f"final {key}", want, got, seat=where)
        return None
