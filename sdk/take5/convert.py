"""Conversions between the engine's views and the protocol's messages (proto/take5/v1/bot.proto).

The referee turns a `View` into a request; the bot runtime turns the request back into an equal
`View`, so a bot sees exactly what an in-process player of the engine sees, and bot code never
touches protobuf. The round trip is lossless: `view_from_request(pick_card_request(v, ...)) == v`.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from .clock import Budget, ClockKind, TimeControl, to_ms
from .extras import missing_extra
from .game import Phase, Play, RowTake, Settings, View
from .rules import EndRule, Take5Error, TakeReason, Variant

try:
    from .v1 import bot_pb2 as pb
except ModuleNotFoundError as error:  # protobuf: the [bot] extra
    raise missing_extra("bot", "take5.convert", error) from None

PROTOCOL_VERSION = "1.1"
"""The protocol version this SDK speaks: MAJOR.MINOR; bots and referee must agree on MAJOR (1.1
added the `Clock` of every request: time banks and the CPU clock)."""

PROTOCOL_MAJOR = 1
"""The protocol's major version: a bot and a referee of different majors do not play."""

_PHASE_TO_PB = {
    Phase.PLAY: pb.PHASE_PLAY,
    Phase.DRAFT: pb.PHASE_DRAFT,
    Phase.CHOOSE_ROW: pb.PHASE_CHOOSE_ROW,
}
_PHASE_FROM_PB = {v: k for k, v in _PHASE_TO_PB.items()}
_VARIANT_TO_PB = {
    Variant.STANDARD: pb.VARIANT_STANDARD,
    Variant.PROFESSIONAL: pb.VARIANT_PROFESSIONAL,
}
_VARIANT_FROM_PB: dict[int, Variant] = {int(v): k for k, v in _VARIANT_TO_PB.items()}
_END_RULE_TO_PB = {EndRule.AT_OR_ABOVE: pb.END_RULE_AT_OR_ABOVE, EndRule.ABOVE: pb.END_RULE_ABOVE}
_END_RULE_FROM_PB: dict[int, EndRule] = {int(v): k for k, v in _END_RULE_TO_PB.items()}
_REASON_TO_PB = {
    TakeReason.SIXTH_CARD: pb.TAKE_REASON_SIXTH_CARD,
    TakeReason.LOW_CARD: pb.TAKE_REASON_LOW_CARD,
}
_REASON_FROM_PB = {v: k for k, v in _REASON_TO_PB.items()}


class ProtocolError(Take5Error, ValueError):
    """A message that does not describe a valid game situation (a referee or protocol bug)."""


def parse_version(text: str) -> tuple[int, int]:
    """ "MAJOR.MINOR" as integers; an empty string means this SDK's version (bots may omit it)."""
    if not text:
        return PROTOCOL_MAJOR, 0
    major, _, minor = text.strip().partition(".")
    try:
        return int(major), int(minor or 0)
    except ValueError:
        raise ProtocolError(f"protocol version {text!r} is not MAJOR.MINOR") from None


# -- settings ----------------------------------------------------------------------------------


def settings_to_proto(settings: Settings) -> pb.Settings:
    """A game's settings as the protocol's message."""
    return pb.Settings(
        players=settings.players,
        variant=_VARIANT_TO_PB[settings.variant],
        threshold=settings.threshold,
        end_rule=_END_RULE_TO_PB[settings.end_rule],
    )


def settings_from_proto(message: pb.Settings) -> Settings:
    """Unset enums and threshold take the defaults, so a hand-written request still works."""
    return _settings(message.players, message.variant, message.threshold, message.end_rule)


@functools.lru_cache(maxsize=64)
def _settings(players: int, variant: int, threshold: int, end_rule: int) -> Settings:
    # Settings are immutable and the same in every call of a game: build each one once.
    return Settings(
        players=players,
        variant=_VARIANT_FROM_PB.get(variant, Variant.STANDARD),
        threshold=threshold or Settings.threshold,
        end_rule=_END_RULE_FROM_PB.get(end_rule, EndRule.AT_OR_ABOVE),
    )


# -- views -------------------------------------------------------------------------------------


def view_to_proto(view: View, settings: pb.Settings | None = None) -> pb.View:
    """The request's `view` field; pass a prebuilt `settings` message to save work in a hot loop."""
    return pb.View(
        seat=view.seat,
        settings=settings if settings is not None else settings_to_proto(view.settings),
        phase=_PHASE_TO_PB[view.phase],
        round=view.round,
        turn=view.turn,
        hand=view.hand,
        rows=[pb.Row(cards=row) for row in view.rows],
        scores=view.scores,
        plays=[pb.Turn(plays=[pb.Play(seat=p[0], card=p[1]) for p in turn]) for turn in view.plays],
        takes=[
            pb.RowTake(
                seat=t.seat, row=t.row, card=t.card, cards=t.cards, reason=_REASON_TO_PB[t.reason]
            )
            for t in view.takes
        ],
        hands=[pb.Hand(cards=hand) for hand in view.hands] if view.hands is not None else (),
        pool=view.pool,
    )


_new = tuple.__new__  # NamedTuple construction without keyword handling: this is the bot's hot path
_VIEW_FIELDS = (
    "seat", "settings", "phase", "round", "turn", "hand", "rows", "scores",
    "plays", "takes", "revealed", "card", "hands", "pool",
)  # fmt: skip
if View._fields != _VIEW_FIELDS:  # pragma: no cover - guards the positional construction below
    raise ImportError(f"take5.convert is out of date with take5.game.View: {View._fields}")


def _plays(messages: Iterable[Any]) -> tuple[Play, ...]:
    return tuple([_new(Play, (p.seat, p.card)) for p in messages])


def view_from_proto(
    message: pb.View, *, revealed: Sequence[pb.Play] = (), card: int | None = None
) -> View:
    """The engine's View of a request (`revealed` and `card` only for ChooseRow)."""
    settings = settings_from_proto(message.settings)
    try:
        phase = _PHASE_FROM_PB[message.phase]
    except KeyError:
        raise ProtocolError(f"unknown phase {message.phase}") from None
    hands = None
    if settings.variant is Variant.PROFESSIONAL:
        hands = tuple([tuple(h.cards) for h in message.hands])
    return _new(
        View,
        (
            message.seat,
            settings,
            phase,
            message.round,
            message.turn,
            tuple(message.hand),
            tuple([tuple(r.cards) for r in message.rows]),
            tuple(message.scores),
            tuple([_plays(t.plays) for t in message.plays]),
            tuple(
                [
                    _new(
                        RowTake,
                        (
                            t.seat,
                            t.row,
                            t.card,
                            tuple(t.cards),
                            _REASON_FROM_PB.get(t.reason, TakeReason.LOW_CARD),
                        ),
                    )
                    for t in message.takes
                ]
            ),
            _plays(revealed),
            card,
            hands,
            tuple(message.pool),
        ),
    )


# -- time --------------------------------------------------------------------------------------

_CLOCK_TO_PB = {ClockKind.WALL: pb.CLOCK_KIND_WALL, ClockKind.CPU: pb.CLOCK_KIND_CPU}
_CLOCK_FROM_PB: dict[int, ClockKind] = {int(v): k for k, v in _CLOCK_TO_PB.items()}


def time_limit_ms(seconds: float) -> int:
    """A time limit in whole milliseconds, at least 1 (the protocol's unit)."""
    return max(1, round(seconds * 1000))


def budget_to_proto(budget: Budget) -> pb.Clock:
    """The `clock` field of a request (its `time_limit_ms` is `budget.limit`)."""
    return pb.Clock(
        kind=_CLOCK_TO_PB[budget.clock],
        bank_ms=to_ms(budget.limit if budget.bank is None else budget.bank),
        increment_ms=to_ms(budget.increment),
        cap_ms=0 if budget.cap is None else max(1, to_ms(budget.cap)),
        wall_limit_ms=time_limit_ms(budget.wall_limit),
    )


def time_control_to_proto(control: TimeControl, clock: ClockKind) -> pb.Clock:
    """The Handshake's `clock`: the match's time control, `bank_ms` the bank each game starts
    with (before the first increment), `wall_limit_ms` 0."""
    return pb.Clock(
        kind=_CLOCK_TO_PB[clock],
        bank_ms=control.bank_ms,
        increment_ms=control.increment_ms,
        cap_ms=control.cap_ms or 0,
    )


def _budget(time_limit: float | Budget) -> Budget:
    return time_limit if isinstance(time_limit, Budget) else Budget(float(time_limit))


def budget_from_request(
    request: pb.PickCardRequest | pb.ChooseRowRequest, fallback: float | None = None
) -> Budget:
    """The time a request gives: its `clock`, or (from a referee older than protocol 1.1) its
    `time_limit_ms` on the wall clock. `fallback` (seconds) stands in for a request that says
    nothing at all (a hand-written one): the gRPC deadline, say."""
    if request.time_limit_ms:
        limit = request.time_limit_ms / 1000
    else:
        limit = fallback if fallback is not None else float("inf")
    if not request.HasField("clock"):
        return Budget(limit)
    clock = request.clock
    return Budget(
        limit,
        _CLOCK_FROM_PB.get(clock.kind, ClockKind.WALL),
        bank=clock.bank_ms / 1000,
        increment=clock.increment_ms / 1000,
        cap=clock.cap_ms / 1000 if clock.cap_ms else None,
        wall=clock.wall_limit_ms / 1000 if clock.wall_limit_ms else None,
    )


# -- requests ----------------------------------------------------------------------------------


def pick_card_request(view: View, game_id: str, time_limit: float | Budget) -> pb.PickCardRequest:
    """PickCard for a PLAY or DRAFT view; `time_limit` in seconds on the wall clock, or the whole
    `Budget` of the call."""
    if view.phase not in (Phase.PLAY, Phase.DRAFT):
        raise ValueError(f"PickCard is for the play and draft phases, not {view.phase.value}")
    budget = _budget(time_limit)
    return pb.PickCardRequest(
        game_id=game_id,
        time_limit_ms=time_limit_ms(budget.limit),
        view=view_to_proto(view),
        clock=budget_to_proto(budget),
    )


def choose_row_request(view: View, game_id: str, time_limit: float | Budget) -> pb.ChooseRowRequest:
    """ChooseRow for a CHOOSE_ROW view; `time_limit` as for :func:`pick_card_request`."""
    if view.phase is not Phase.CHOOSE_ROW or view.card is None:
        raise ValueError(f"ChooseRow is for the choose-row phase, not {view.phase.value}")
    budget = _budget(time_limit)
    return pb.ChooseRowRequest(
        game_id=game_id,
        time_limit_ms=time_limit_ms(budget.limit),
        view=view_to_proto(view),
        card=view.card,
        revealed=[pb.Play(seat=p[0], card=p[1]) for p in view.revealed],
        clock=budget_to_proto(budget),
    )


def view_from_request(request: pb.PickCardRequest | pb.ChooseRowRequest) -> View:
    """The View a PickCard or ChooseRow request describes."""
    if isinstance(request, pb.ChooseRowRequest):
        return view_from_proto(request.view, revealed=request.revealed, card=request.card)
    return view_from_proto(request.view)


# -- end of a game -----------------------------------------------------------------------------


@dataclass(frozen=True)
class GameOver:
    """How a game ended, as the bot's `game_over` hook receives it."""

    game_id: str
    """The referee's id of the game."""
    seat: int
    """Your seat in that game."""
    settings: Settings
    """The game's settings."""
    scores: tuple[int, ...]
    """Final penalty totals, by seat (fewest is best)."""
    places: tuple[int, ...]
    """Final places, by seat: 1 is best, equal totals share a place, forfeited seats last."""
    forfeited: tuple[int, ...] = ()
    """Seats that forfeited the game (too many faults), ascending."""
    rounds: int = 0
    """Rounds played."""
    faults: int = 0
    """Your faults in this game (docs/faults.md)."""

    @property
    def place(self) -> int:
        """This bot's place: 1 is best, ties share."""
        return self.places[self.seat]

    @property
    def score(self) -> int:
        """This bot's penalty total."""
        return self.scores[self.seat]

    @property
    def won(self) -> bool:
        """First place, possibly shared."""
        return self.place == 1


def game_over_request(over: GameOver, time_limit: float) -> pb.GameOverRequest:
    """The end-of-game message to a seat (the referee's side)."""
    return pb.GameOverRequest(
        game_id=over.game_id,
        seat=over.seat,
        settings=settings_to_proto(over.settings),
        scores=over.scores,
        places=over.places,
        forfeited=over.forfeited,
        rounds=over.rounds,
        faults=over.faults,
        time_limit_ms=time_limit_ms(time_limit),
    )


def game_over_from_request(request: pb.GameOverRequest) -> GameOver:
    """The end-of-game message as the bot's `GameOver` (the bot's side)."""
    return GameOver(
        game_id=request.game_id,
        seat=request.seat,
        settings=settings_from_proto(request.settings),
        scores=tuple(request.scores),
        places=tuple(request.places),
        forfeited=tuple(request.forfeited),
        rounds=request.rounds,
        faults=request.faults,
    )


__all__ = [
    "PROTOCOL_MAJOR",
    "PROTOCOL_VERSION",
    "GameOver",
    "ProtocolError",
    "budget_from_request",
    "budget_to_proto",
    "choose_row_request",
    "game_over_from_request",
    "game_over_request",
    "parse_version",
    "pick_card_request",
    "pick_card_requests",
    "settings_from_proto",
    "settings_to_proto",
    "time_control_to_proto",
    "time_limit_ms",
    "view_from_proto",
    "view_from_request",
    "view_to_proto",
]


# -- the referee's fast path -------------------------------------------------------------------


def _varint(value: int) -> bytes:
    out = bytearray()
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


_VIEW_FIELD_TAG = b"\x1a"  # field 3 (view), wire type 2 (length-delimited), in both request types


def pick_card_requests(
    views: Sequence[View], game_id: str, time_limit: float | Budget | Sequence[Budget]
) -> list[bytes]:
    """Encoded PickCard requests for views of the same moment (one per seat), built fast;
    `time_limit` is one for all, or each seat's `Budget` (in the order of `views`).

    The views of one turn differ only in `seat` and `hand`, so the rest of the View message is
    encoded once and each seat's two fields are appended: fields of a message may come in any order
    on the wire, so the result is an ordinary PickCardRequest (it decodes equal to
    `pick_card_request(view, ...)`).
    """
    if not views:
        return []
    if isinstance(time_limit, (int, float, Budget)):
        budgets: Sequence[Budget] = [_budget(time_limit)] * len(views)
    else:
        budgets = time_limit
    if len(budgets) != len(views):
        raise ValueError("pick_card_requests needs one budget per view")
    first = views[0]
    shared = view_to_proto(first._replace(seat=0, hand=())).SerializeToString()
    heads: dict[Budget, bytes] = {}
    out = []
    for view, budget in zip(views, budgets):
        if view.round != first.round or view.turn != first.turn or view.phase is not first.phase:
            raise ValueError("pick_card_requests needs views of the same moment of one game")
        head = heads.get(budget)
        if head is None:
            head = heads[budget] = pb.PickCardRequest(
                game_id=game_id,
                time_limit_ms=time_limit_ms(budget.limit),
                clock=budget_to_proto(budget),
            ).SerializeToString()
        body = shared + pb.View(seat=view.seat, hand=view.hand).SerializeToString()
        out.append(head + _VIEW_FIELD_TAG + _varint(len(body)) + body)
    return out


__all__ += ["pick_card_requests"]
