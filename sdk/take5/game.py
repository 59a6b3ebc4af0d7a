"""The game engine: one game of 6 nimmt!, step by step, with its record.

`Game` is a state machine in the style of a chess board: it tells which decisions it waits for
(`phase`, `waiting_for`), gives each seat its view (`view`), and takes decisions (`draft`, `play`,
`choose_row`). It never asks anybody anything itself, so the same engine serves in-process bots,
remote bots over gRPC (asked concurrently by the referee) and tests. `play_game` is the simple
driver for in-process `Player` objects.

No I/O, no clock, no global state: a game is fully determined by its settings, seed, rotation and
the decisions given to it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol, cast

from ._named import plain_signature
from .rules import (
    BULL_HEADS,
    DEFAULT_THRESHOLD,
    HAND_SIZE,
    MAX_ROUNDS,
    MAX_ROW_LENGTH,
    MAX_SEED,
    MAX_THRESHOLD,
    MIN_SEED,
    ROW_COUNT,
    CardNotInHand,
    CardNotInPool,
    EndRule,
    InvalidRow,
    InvalidSettings,
    Row,
    Rows,
    Take5Error,
    TakeReason,
    Variant,
    WrongPhase,
    deck,
    penalty,
    unseen_cards,
)
from .shuffle import SplitMix64

if TYPE_CHECKING:  # the record's type lives with the records (take5.record imports this module)
    from .record import GameRecord

RECORD_FORMAT = "take5-record"
"""The ``format`` of every game record (docs/record-format.md)."""
RECORD_VERSION = 1
"""The ``version`` of the records this engine writes."""

MIN_PLAYERS = 2
"""The fewest seats at a table."""
MAX_PLAYERS = {Variant.STANDARD: 10, Variant.PROFESSIONAL: 6}
"""The most seats at a table, by variant."""


@dataclass(frozen=True)
class Settings:
    """What the players agree on before a game (RULES.md 2, 6, 7)."""

    players: int = 4
    """Seats at the table: 2-10 in the standard game, 2-6 in the professional variant."""
    variant: Variant = Variant.STANDARD
    """The standard game, or the professional variant with its open draft (RULES.md 7)."""
    threshold: int = DEFAULT_THRESHOLD
    """The penalty total that ends the game, 1..1000 (RULES.md 6)."""
    end_rule: EndRule = EndRule.AT_OR_ABOVE
    """Whether reaching the threshold ends the game, or only passing it."""

    def __post_init__(self) -> None:
        try:
            object.__setattr__(self, "variant", Variant(self.variant))
        except ValueError:
            raise InvalidSettings(
                f"unknown variant {self.variant!r} (use 'standard' or 'professional')"
            ) from None
        try:
            object.__setattr__(self, "end_rule", EndRule(self.end_rule))
        except ValueError:
            raise InvalidSettings(
                f"unknown end rule {self.end_rule!r} (use 'at-or-above' or 'above')"
            ) from None
        top = MAX_PLAYERS[self.variant]
        if not _whole(self.players) or not MIN_PLAYERS <= self.players <= top:
            raise InvalidSettings(
                f"the {self.variant.value} game is for {MIN_PLAYERS} to {top} players, "
                f"not {_show(self.players)}"
            )
        if not _whole(self.threshold) or not 1 <= self.threshold <= MAX_THRESHOLD:
            raise InvalidSettings(
                f"the threshold must be a whole number from 1 to {MAX_THRESHOLD}, "
                f"not {_show(self.threshold)}"
            )

    def game_over(self, scores: Sequence[int]) -> bool:
        """Whether these totals end the game (RULES.md 6)."""
        top = max(scores)
        if self.end_rule is EndRule.ABOVE:
            return top > self.threshold
        return top >= self.threshold

    def to_dict(self) -> dict[str, Any]:
        """The settings as a record holds them (docs/record-format.md)."""
        return {
            "players": self.players,
            "variant": self.variant.value,
            "threshold": self.threshold,
            "end_rule": self.end_rule.value,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Settings:
        """Settings from a record's ``settings`` object; absent keys take their defaults."""
        return cls(
            players=data["players"],
            variant=data.get("variant", Variant.STANDARD),
            threshold=data.get("threshold", DEFAULT_THRESHOLD),
            end_rule=data.get("end_rule", EndRule.AT_OR_ABOVE),
        )


def _whole(value: object) -> bool:
    """An int that is not a bool: JSON's true must not pass for 1."""
    return isinstance(value, int) and not isinstance(value, bool)


def _show(value: object) -> str:
    """A value for an error message, cut short (a hostile value may be huge)."""
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


class Phase(str, Enum):
    """Which decision the game waits for (`View.phase`, `Game.phase`)."""

    DRAFT = "draft"
    """Professional variant: a seat takes a card from the open pool (`Bot.draft_card`)."""
    PLAY = "play"
    """Every seat chooses a card of its hand at once (`Bot.pick_card`)."""
    CHOOSE_ROW = "choose-row"
    """A seat's card is lower than every row's end: it names the row to take (`Bot.choose_row`)."""
    OVER = "over"
    """The game has ended."""


def _document_fields(cls: type[Any], **docs: str) -> None:
    """Give each field of a named tuple its docstring, for `help()` and the API reference.

    A named tuple's fields are descriptors documented "Alias for field number N"; their docstrings
    can be set, and this is the one place they are. Every field must be described and nothing else,
    so a field added without a description fails at import (tests/test_docs.py reads them back).
    """
    fields: tuple[str, ...] = cls._fields
    missing = [name for name in fields if name not in docs]
    unknown = [name for name in docs if name not in fields]
    if missing or unknown:
        raise TypeError(f"{cls.__name__}: undocumented fields {missing}, unknown names {unknown}")
    for name, doc in docs.items():
        getattr(cls, name).__doc__ = doc
    plain_signature(cls)


class Play(NamedTuple):
    """A card revealed by a seat."""

    seat: int
    card: int


_document_fields(
    Play,
    seat="The seat that revealed the card.",
    card="The card, 1..104.",
)


class RowTake(NamedTuple):
    """A row taken into a seat's bull pile: by playing `card`, for `reason`."""

    seat: int
    row: int
    card: int
    cards: Row
    reason: TakeReason

    @property
    def points(self) -> int:
        """The bull heads taken: the penalty of `cards`."""
        return penalty(self.cards)


_document_fields(
    RowTake,
    seat="The seat that took the row.",
    row="The row's index, 0..3; the card played starts the new row there.",
    card="The card whose placing took the row.",
    cards="The cards taken, oldest first: they go to the seat's bull pile.",
    reason="Why: the card was the row's sixth, or lower than every row's end (`TakeReason`).",
)


class View(NamedTuple):
    """Everything one seat may know when it is asked to decide (RULES.md 8), and nothing more.

    `phase` says what is asked: DRAFT (take a card from `pool`), PLAY (play a card of `hand`) or
    CHOOSE_ROW (`card` is lower than every row: name the row to take). Views are immutable named
    tuples because the engine makes one per seat per turn and must stay fast.
    """

    seat: int
    settings: Settings
    phase: Phase
    round: int
    turn: int
    hand: tuple[int, ...]
    rows: Rows
    scores: tuple[int, ...]
    plays: tuple[tuple[Play, ...], ...] = ()
    takes: tuple[RowTake, ...] = ()
    revealed: tuple[Play, ...] = ()
    card: int | None = None
    hands: tuple[tuple[int, ...], ...] | None = None
    pool: tuple[int, ...] = ()

    @property
    def players(self) -> int:
        """The number of seats at the table (`settings.players`)."""
        return self.settings.players

    @property
    def played_cards(self) -> tuple[int, ...]:
        """Every card revealed so far this round, this turn's included."""
        cards = [p.card for turn in self.plays for p in turn]
        cards.extend(p.card for p in self.revealed)
        return tuple(cards)

    @property
    def round_points(self) -> tuple[int, ...]:
        """Bull heads each seat has taken so far this round."""
        points = [0] * self.settings.players
        for take in self.takes:
            points[take.seat] += take.points
        return tuple(points)

    def unseen(self) -> tuple[int, ...]:
        """Cards this seat has not seen: in other hands or undealt (empty in the professional
        game)."""
        known: list[int] = list(self.played_cards)
        for take in self.takes:
            known.extend(take.cards)
        if self.hands is not None:
            for hand in self.hands:
                known.extend(hand)
        known.extend(self.pool)
        return unseen_cards(
            self.hand, self.rows, known, self.settings.variant, self.settings.players
        )


_document_fields(
    View,
    seat="Your seat, 0..players-1: the index of your entries in `scores` and `hands`.",
    settings="The game's `Settings`: players, variant, threshold and end rule.",
    phase="What is asked: `Phase.PLAY`, `Phase.DRAFT` or `Phase.CHOOSE_ROW`.",
    round="The round, from 1.",
    turn="The turn of the round, 1..10; 0 during the draft.",
    hand=(
        "Your hand, ascending. In PLAY it holds every card you may play; in CHOOSE_ROW it no "
        "longer holds the card you played this turn (that is `card`)."
    ),
    rows="The 4 rows as they are now, each oldest (lowest) card first.",
    scores=(
        "Every seat's penalty total from the rounds before this one, by seat; this round's points "
        "so far are in `takes` (`round_points`)."
    ),
    plays="Cards revealed in the earlier turns of this round, one tuple per turn, in seat order.",
    takes="Rows taken so far this round (this turn's takes included), in order.",
    revealed="This turn's revealed cards, in seat order (CHOOSE_ROW only; empty otherwise).",
    card="Your card that is lower than every row's end (CHOOSE_ROW only; None otherwise).",
    hands=(
        "Every seat's hand, by seat (professional variant only, where the open draft makes hands "
        "public; None otherwise)."
    ),
    pool="The cards still in the open draft pool, ascending (DRAFT only; empty otherwise).",
)


@dataclass(frozen=True)
class Fault:
    """Something a seat did wrong, and what the referee did about it (filled by the match layer)."""

    seat: int
    """The seat at fault."""
    round: int
    """The round it happened in, from 1."""
    turn: int
    """The turn, 1..10 (0: during the draft, or before play)."""
    kind: str
    """A fault kind of docs/faults.md (``timeout``, ``crash``, ``illegal-card``, ...)."""
    detail: str = ""
    """One line on what happened, for the bot's author."""

    def to_dict(self) -> dict[str, Any]:
        """The fault as a record's ``faults`` list holds it (without the seat: the list is per
        seat)."""
        return {"round": self.round, "turn": self.turn, "kind": self.kind, "detail": self.detail}


@dataclass(frozen=True)
class Result:
    """The final standing: totals, places (1 = best, ties share), forfeited seats ranked last."""

    scores: tuple[int, ...]
    """Every seat's penalty total, by seat."""
    places: tuple[int, ...]
    """Every seat's place, by seat: 1 is best, equal totals share a place, forfeits come last."""
    forfeited: tuple[int, ...] = ()
    """The seats that forfeited, ascending."""

    @property
    def standing(self) -> tuple[tuple[int, ...], ...]:
        """Seats grouped by place, best first."""
        groups: dict[int, list[int]] = {}
        for seat, place in enumerate(self.places):
            groups.setdefault(place, []).append(seat)
        return tuple(tuple(groups[p]) for p in sorted(groups))

    @property
    def winners(self) -> tuple[int, ...]:
        """The seats in first place (several when they tie)."""
        return self.standing[0]

    def to_dict(self) -> dict[str, Any]:
        """The result as a record holds it (docs/record-format.md)."""
        return {
            "scores": list(self.scores),
            "places": list(self.places),
            "standing": [list(g) for g in self.standing],
            "forfeited": list(self.forfeited),
        }


def rank(scores: Sequence[int], forfeited: Iterable[int] = ()) -> Result:
    """Places from totals, lowest first, ties sharing a place; forfeited seats below everybody."""
    out = frozenset(forfeited)
    keys = [(seat in out, score) for seat, score in enumerate(scores)]
    places = tuple(1 + sum(1 for other in keys if other < key) for key in keys)
    return Result(tuple(scores), places, tuple(sorted(out)))


_make_view = tuple.__new__  # View's fields without the keyword handling of View(...): a hot path
# Module-level names for enum members: attribute lookups on an Enum class are slow in a hot loop.
_DRAFT, _PLAY, _CHOOSE_ROW, _OVER = Phase.DRAFT, Phase.PLAY, Phase.CHOOSE_ROW, Phase.OVER
_SIXTH_CARD, _LOW_CARD = TakeReason.SIXTH_CARD, TakeReason.LOW_CARD


class Game:
    """One game, advanced by decisions. Mutable like a chess board; views and results are
    immutable."""

    def __init__(
        self,
        settings: Settings | None = None,
        seed: int = 0,
        *,
        rotation: int = 0,
        keep_record: bool = True,
    ) -> None:
        """`keep_record=False` skips building the record (simulations and benchmarks that never
        read it); `record()` and `round_log` then refuse."""
        self.settings = settings or Settings()
        """The game's settings."""
        self._keep = keep_record
        if not _whole(seed) or not MIN_SEED <= seed <= MAX_SEED:
            raise InvalidSettings(
                f"the seed must be a whole number from {MIN_SEED} to {MAX_SEED}, not {_show(seed)}"
            )
        n = self.settings.players
        if not _whole(rotation) or not 0 <= rotation < n:
            raise InvalidSettings(
                f"the rotation must be a whole number from 0 to {n - 1}, not {_show(rotation)}"
            )
        self.seed = seed
        """The seed of the deals (docs/record-format.md, "Deals")."""
        self.rotation = rotation
        """Deal position p goes to seat (p + rotation) mod players (duplicate deals rotate it)."""
        self._rng = SplitMix64(seed)
        self.scores: list[int] = [0] * n
        """Every seat's penalty total from the finished rounds, by seat."""
        self.round = 0
        """The round, from 1."""
        self.turn = 0
        """The turn of the round, 1..10; 0 during the draft."""
        self.phase = _PLAY
        """What the game waits for (`waiting_for` says from whom)."""
        self.hands: list[list[int]] = [[] for _ in range(n)]
        """Every seat's hand, by seat (a seat's `view` shows only what it may know)."""
        self._rows: list[list[int]] = []  # lists while placing; views get tuples
        self.pool: list[int] = []
        """The open draft pool (professional variant, during the draft)."""
        self.forfeited: set[int] = set()
        """Seats ranked last whatever their score (`forfeit`)."""
        self.faults: list[Fault] = []
        """Every fault noted with `add_fault`, in order."""
        self._round_points = [0] * n
        # Immutable and grown by concatenation: views share them without copying.
        self._plays: tuple[tuple[Play, ...], ...] = ()
        self._takes: tuple[RowTake, ...] = ()
        self._revealed: tuple[Play, ...] = ()
        self._pending: list[
            tuple[int, int]
        ] = []  # (card, seat) of this turn still to place, lowest first
        self._draft_order: list[int] = []
        self._draft_picks: list[list[int]] = []
        self._rounds: list[dict[str, Any]] = []
        self._turn_takes: list[dict[str, Any]] = []
        self._shared: tuple[Any, ...] | None = None  # the seat-independent part of the views
        self._start_round()

    # -- what the game waits for -------------------------------------------------------------

    @property
    def is_over(self) -> bool:
        """Whether the game has ended."""
        return self.phase is _OVER

    @property
    def waiting_for(self) -> tuple[int, ...]:
        """Seats whose decision the game needs now."""
        if self.phase is _PLAY:
            return tuple(range(self.settings.players))
        if self.phase is _DRAFT:
            return (self._draft_order[0],)
        if self.phase is _CHOOSE_ROW:
            return (self._pending[0][1],)
        return ()

    @property
    def pending(self) -> tuple[tuple[int, int], ...]:
        """The cards revealed this turn and not placed yet, as (card, seat), lowest first: the
        first is the card whose player chooses a row in the CHOOSE_ROW phase."""
        return tuple(self._pending)

    @property
    def drafter(self) -> int:
        """The seat whose draft pick the game waits for (DRAFT only: WrongPhase otherwise)."""
        if self.phase is not _DRAFT:
            raise WrongPhase(f"no draft now (phase {self.phase.value})")
        return self._draft_order[0]

    def view(self, seat: int) -> View:
        """What `seat` may know now (RULES.md 8). The only place views are made."""
        shared = self._shared
        if shared is None:
            phase = self.phase
            choosing = phase is _CHOOSE_ROW
            hands = (
                tuple(tuple(sorted(h)) for h in self.hands)
                if self.settings.variant is Variant.PROFESSIONAL
                else None
            )
            shared = self._shared = (
                self.settings,
                phase,
                self.round,
                self.turn,
                tuple(map(tuple, self._rows)),
                tuple(self.scores),
                self._plays,
                self._takes,
                self._revealed if choosing else (),
                self._pending[0][0] if choosing else None,
                hands,
                tuple(self.pool) if phase is _DRAFT else (),
            )
        hands = shared[10]
        hand = hands[seat] if hands is not None else tuple(self.hands[seat])
        return _make_view(View, (seat, *shared[:4], hand, *shared[4:]))

    # -- decisions ---------------------------------------------------------------------------

    def draft(self, card: int) -> None:
        """The current drafter takes `card` from the open pool (RULES.md 7)."""
        seat = self.drafter
        self._shared = None
        if card not in self.pool:
            raise CardNotInPool(card, self.pool)
        self.pool.remove(card)
        self.hands[seat].append(card)
        self._draft_picks.append([seat, card])
        self._draft_order.pop(0)
        if not self._draft_order:
            self._start_play()

    def play(self, cards: Mapping[int, int] | Sequence[int]) -> None:
        """All seats reveal their chosen cards at once (RULES.md 3); then they are placed."""
        if self.phase is not _PLAY:
            raise WrongPhase(f"cannot play cards now (phase {self.phase.value})")
        self._shared = None
        n = self.settings.players
        if isinstance(cards, (list, tuple)):
            chosen = list(cards)
        else:
            chosen = [cards[seat] for seat in range(n)]
        if len(chosen) != n:
            raise WrongPhase(f"need one card for each of the {n} seats, got {len(chosen)}")
        hands = self.hands
        for seat, card in enumerate(chosen):
            if card not in hands[seat] or type(card) is not int:
                raise CardNotInHand(card, hands[seat], seat=seat)
        for hand, card in zip(hands, chosen):
            hand.remove(card)
        self._revealed = tuple(map(Play, range(n), chosen))
        self._pending = sorted(zip(chosen, range(n)))
        self._turn_takes = []
        self._place_pending()

    def choose_row(self, row: int) -> None:
        """The owner of the turn's low card takes `row` (RULES.md 4, the rows as they are now)."""
        if self.phase is not _CHOOSE_ROW:
            raise WrongPhase(f"no row to choose now (phase {self.phase.value})")
        if isinstance(row, bool) or not isinstance(row, int) or not 0 <= row < ROW_COUNT:
            raise InvalidRow(row, ROW_COUNT)
        self._shared = None
        card, seat = self._pending.pop(0)
        self._take(row, card, seat, _LOW_CARD)
        self.phase = _PLAY
        self._place_pending()

    def forfeit(self, seat: int) -> None:
        """Rank `seat` last in this game whatever its score; the match layer keeps playing for
        it."""
        if not 0 <= seat < self.settings.players:
            raise ValueError(f"no seat {seat}")
        self.forfeited.add(seat)

    def add_fault(self, seat: int, kind: str, detail: str = "") -> Fault:
        """Note a seat's fault at the current round and turn, for the record."""
        fault = Fault(seat, self.round, self.turn, kind, detail)
        self.faults.append(fault)
        return fault

    @property
    def rows(self) -> Rows:
        """The 4 rows now, oldest card first."""
        return tuple(map(tuple, self._rows))

    @rows.setter
    def rows(self, rows: Sequence[Sequence[int]]) -> None:
        # For tests and analysis tools that set up a position by hand.
        self._shared = None
        self._rows = [list(r) for r in rows]

    @property
    def round_log(self) -> list[dict[str, Any]]:
        """The record's rounds so far (JSON-ready; do not modify)."""
        self._check_kept()
        return self._rounds

    def _check_kept(self) -> None:
        if not self._keep:
            raise Take5Error("this game was played without its record (Game(keep_record=False))")

    # -- results -----------------------------------------------------------------------------

    def result(self) -> Result:
        """The standing now: final once the game is over."""
        return rank(self.scores, self.forfeited)

    def record(
        self,
        *,
        game_id: str | None = None,
        seats: Sequence[Mapping[str, Any]] | None = None,
        extra: Mapping[str, Any] | None = None,
    ) -> GameRecord:
        """The game as a versioned JSON-ready document (docs/record-format.md)."""
        self._check_kept()
        n = self.settings.players
        faults: list[list[dict[str, Any]]] = [[] for _ in range(n)]
        for fault in self.faults:
            faults[fault.seat].append(fault.to_dict())
        doc: dict[str, Any] = {
            "format": RECORD_FORMAT,
            "version": RECORD_VERSION,
            "game_id": game_id,
            "settings": self.settings.to_dict(),
            "seed": self.seed,
            "rotation": self.rotation,
            "seats": [dict(s) for s in seats]
            if seats
            else [{"name": f"seat{i}"} for i in range(n)],
            "rounds": self._rounds,
            "complete": self.is_over,
            "result": self.result().to_dict(),
            "faults": faults,
        }
        if extra:
            doc.update(extra)
        return cast("GameRecord", doc)

    # -- internals ---------------------------------------------------------------------------

    def _start_round(self) -> None:
        settings = self.settings
        n = settings.players
        self.round += 1
        self.turn = 0
        self._round_points = [0] * n
        self._plays = ()
        self._takes = ()
        self._revealed = ()
        record: dict[str, Any] = {"round": self.round}
        if settings.variant is Variant.PROFESSIONAL:
            # Open draft: the whole reduced deck lies face up; the first drafter rotates.
            self.pool = list(deck(Variant.PROFESSIONAL, n))
            self.hands = [[] for _ in range(n)]
            first = (self.round - 1 + self.rotation) % n
            self._draft_order = [(first + i) % n for i in range(n)] * HAND_SIZE
            self._draft_picks = []
            record["draft"] = {"first": first, "picks": self._draft_picks}
            self.phase = _DRAFT
            self._rounds.append(record)
            return
        cards = self._rng.shuffled(deck(Variant.STANDARD))
        hands: list[list[int]] = [[] for _ in range(n)]
        for position in range(n):
            seat = (position + self.rotation) % n
            hands[seat] = sorted(cards[position * HAND_SIZE : (position + 1) * HAND_SIZE])
        self.hands = hands
        start = n * HAND_SIZE
        self._rows = [[c] for c in cards[start : start + ROW_COUNT]]
        self._rounds.append(record)
        self._start_play()

    def _start_play(self) -> None:
        record = self._rounds[-1]
        if self.settings.variant is Variant.PROFESSIONAL:
            self._rows = [[c] for c in sorted(self.pool)]
            self.pool = []
            for hand in self.hands:
                hand.sort()
        if self._keep:
            record["hands"] = [list(h) for h in self.hands]
            record["rows"] = [r[:] for r in self._rows]
            record["turns"] = []
        self.turn = 1
        self.phase = _PLAY

    def _take(self, index: int, card: int, seat: int, reason: TakeReason) -> None:
        rows = self._rows
        taken = rows[index]
        rows[index] = [card]
        self._takes += (RowTake(seat, index, card, tuple(taken), reason),)
        self._round_points[seat] += sum(map(BULL_HEADS.__getitem__, taken))
        if self._keep:
            self._turn_takes.append(
                {"seat": seat, "row": index, "card": card, "cards": taken, "reason": reason.value}
            )

    def _place_pending(self) -> None:
        pending = self._pending
        rows = self._rows
        while pending:
            card, seat = pending[0]
            best = -1
            best_end = 0
            for index, row in enumerate(rows):
                end = row[-1]
                if best_end < end < card:
                    best, best_end = index, end
            if best < 0:
                self.phase = _CHOOSE_ROW
                return
            del pending[0]
            row = rows[best]
            if len(row) >= MAX_ROW_LENGTH:
                self._take(best, card, seat, _SIXTH_CARD)
            else:
                row.append(card)
        self._end_turn()

    def _end_turn(self) -> None:
        self._plays += (self._revealed,)
        if self._keep:
            self._rounds[-1]["turns"].append(
                {
                    "turn": self.turn,
                    "plays": list(map(list, self._revealed)),
                    "takes": self._turn_takes,
                    "rows": [r[:] for r in self._rows],
                }
            )
        self._revealed = ()
        if self.hands[0]:
            self.turn += 1
            return
        for seat, points in enumerate(self._round_points):
            self.scores[seat] += points
        if self._keep:
            record = self._rounds[-1]
            record["points"] = list(self._round_points)
            record["scores"] = list(self.scores)
        if self.settings.game_over(self.scores) or self.round >= MAX_ROUNDS:
            self.phase = _OVER
        else:
            self._start_round()


class Player(Protocol):
    """The one interface through which `play_game` asks in-process players for decisions."""

    def pick_card(self, view: View) -> int:
        """A card of view.hand to play this turn."""
        ...

    def choose_row(self, view: View) -> int:
        """The index of the row to take: view.card is lower than every row's end."""
        ...

    def draft_card(self, view: View) -> int:
        """A card of view.pool to take into the hand (professional variant only)."""
        ...


def play_game(
    players: Sequence[Player],
    settings: Settings | None = None,
    seed: int = 0,
    *,
    rotation: int = 0,
    keep_record: bool = True,
) -> Game:
    """Play a whole game with in-process players; invalid decisions raise (no referee here)."""
    settings = settings or Settings(players=len(players))
    if len(players) != settings.players:
        raise InvalidSettings(f"{len(players)} players for a {settings.players}-player game")
    game = Game(settings, seed, rotation=rotation, keep_record=keep_record)
    while True:
        phase = game.phase
        if phase is _PLAY:
            game.play([p.pick_card(game.view(seat)) for seat, p in enumerate(players)])
        elif phase is _CHOOSE_ROW:
            seat = game.waiting_for[0]
            game.choose_row(players[seat].choose_row(game.view(seat)))
        elif phase is _DRAFT:
            seat = game.drafter
            game.draft(players[seat].draft_card(game.view(seat)))
        else:
            return game


@dataclass
class RandomPlayer:
    """Plays uniformly at random from its own seeded generator: the built-in opponent."""

    seed: int = 0
    _rng: SplitMix64 = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._rng = SplitMix64(self.seed)

    def pick_card(self, view: View) -> int:
        hand = view.hand
        return hand[self._rng.below(len(hand))]

    def choose_row(self, view: View) -> int:
        return self._rng.below(len(view.rows))

    def draft_card(self, view: View) -> int:
        pool = view.pool
        return pool[self._rng.below(len(pool))]


__all__ = [
    "BULL_HEADS",
    "MAX_PLAYERS",
    "MIN_PLAYERS",
    "RECORD_FORMAT",
    "RECORD_VERSION",
    "Fault",
    "Game",
    "Phase",
    "Play",
    "Player",
    "RandomPlayer",
    "Result",
    "RowTake",
    "Settings",
    "View",
    "play_game",
    "rank",
]
