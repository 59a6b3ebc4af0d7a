from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class ClockKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    CLOCK_KIND_UNSPECIFIED: _ClassVar[ClockKind]
    CLOCK_KIND_WALL: _ClassVar[ClockKind]
    CLOCK_KIND_CPU: _ClassVar[ClockKind]

class Phase(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    PHASE_UNSPECIFIED: _ClassVar[Phase]
    PHASE_PLAY: _ClassVar[Phase]
    PHASE_DRAFT: _ClassVar[Phase]
    PHASE_CHOOSE_ROW: _ClassVar[Phase]

class Variant(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    VARIANT_UNSPECIFIED: _ClassVar[Variant]
    VARIANT_STANDARD: _ClassVar[Variant]
    VARIANT_PROFESSIONAL: _ClassVar[Variant]

class EndRule(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    END_RULE_UNSPECIFIED: _ClassVar[EndRule]
    END_RULE_AT_OR_ABOVE: _ClassVar[EndRule]
    END_RULE_ABOVE: _ClassVar[EndRule]

class TakeReason(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    TAKE_REASON_UNSPECIFIED: _ClassVar[TakeReason]
    TAKE_REASON_SIXTH_CARD: _ClassVar[TakeReason]
    TAKE_REASON_LOW_CARD: _ClassVar[TakeReason]
CLOCK_KIND_UNSPECIFIED: ClockKind
CLOCK_KIND_WALL: ClockKind
CLOCK_KIND_CPU: ClockKind
PHASE_UNSPECIFIED: Phase
PHASE_PLAY: Phase
PHASE_DRAFT: Phase
PHASE_CHOOSE_ROW: Phase
VARIANT_UNSPECIFIED: Variant
VARIANT_STANDARD: Variant
VARIANT_PROFESSIONAL: Variant
END_RULE_UNSPECIFIED: EndRule
END_RULE_AT_OR_ABOVE: EndRule
END_RULE_ABOVE: EndRule
TAKE_REASON_UNSPECIFIED: TakeReason
TAKE_REASON_SIXTH_CARD: TakeReason
TAKE_REASON_LOW_CARD: TakeReason

class HandshakeRequest(_message.Message):
    __slots__ = ("protocol_version", "referee", "time_limit_ms", "clock")
    PROTOCOL_VERSION_FIELD_NUMBER: _ClassVar[int]
    REFEREE_FIELD_NUMBER: _ClassVar[int]
    TIME_LIMIT_MS_FIELD_NUMBER: _ClassVar[int]
    CLOCK_FIELD_NUMBER: _ClassVar[int]
    protocol_version: str
    referee: str
    time_limit_ms: int
    clock: Clock
    def __init__(self, protocol_version: _Optional[str] = ..., referee: _Optional[str] = ..., time_limit_ms: _Optional[int] = ..., clock: _Optional[_Union[Clock, _Mapping]] = ...) -> None: ...

class HandshakeResponse(_message.Message):
    __slots__ = ("name", "version", "author", "sdk", "protocol_version")
    NAME_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    AUTHOR_FIELD_NUMBER: _ClassVar[int]
    SDK_FIELD_NUMBER: _ClassVar[int]
    PROTOCOL_VERSION_FIELD_NUMBER: _ClassVar[int]
    name: str
    version: str
    author: str
    sdk: str
    protocol_version: str
    def __init__(self, name: _Optional[str] = ..., version: _Optional[str] = ..., author: _Optional[str] = ..., sdk: _Optional[str] = ..., protocol_version: _Optional[str] = ...) -> None: ...

class Clock(_message.Message):
    __slots__ = ("kind", "bank_ms", "increment_ms", "cap_ms", "wall_limit_ms")
    KIND_FIELD_NUMBER: _ClassVar[int]
    BANK_MS_FIELD_NUMBER: _ClassVar[int]
    INCREMENT_MS_FIELD_NUMBER: _ClassVar[int]
    CAP_MS_FIELD_NUMBER: _ClassVar[int]
    WALL_LIMIT_MS_FIELD_NUMBER: _ClassVar[int]
    kind: ClockKind
    bank_ms: int
    increment_ms: int
    cap_ms: int
    wall_limit_ms: int
    def __init__(self, kind: _Optional[_Union[ClockKind, str]] = ..., bank_ms: _Optional[int] = ..., increment_ms: _Optional[int] = ..., cap_ms: _Optional[int] = ..., wall_limit_ms: _Optional[int] = ...) -> None: ...

class Settings(_message.Message):
    __slots__ = ("players", "variant", "threshold", "end_rule")
    PLAYERS_FIELD_NUMBER: _ClassVar[int]
    VARIANT_FIELD_NUMBER: _ClassVar[int]
    THRESHOLD_FIELD_NUMBER: _ClassVar[int]
    END_RULE_FIELD_NUMBER: _ClassVar[int]
    players: int
    variant: Variant
    threshold: int
    end_rule: EndRule
    def __init__(self, players: _Optional[int] = ..., variant: _Optional[_Union[Variant, str]] = ..., threshold: _Optional[int] = ..., end_rule: _Optional[_Union[EndRule, str]] = ...) -> None: ...

class Row(_message.Message):
    __slots__ = ("cards",)
    CARDS_FIELD_NUMBER: _ClassVar[int]
    cards: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, cards: _Optional[_Iterable[int]] = ...) -> None: ...

class Play(_message.Message):
    __slots__ = ("seat", "card")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    CARD_FIELD_NUMBER: _ClassVar[int]
    seat: int
    card: int
    def __init__(self, seat: _Optional[int] = ..., card: _Optional[int] = ...) -> None: ...

class Turn(_message.Message):
    __slots__ = ("plays",)
    PLAYS_FIELD_NUMBER: _ClassVar[int]
    plays: _containers.RepeatedCompositeFieldContainer[Play]
    def __init__(self, plays: _Optional[_Iterable[_Union[Play, _Mapping]]] = ...) -> None: ...

class RowTake(_message.Message):
    __slots__ = ("seat", "row", "card", "cards", "reason")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    ROW_FIELD_NUMBER: _ClassVar[int]
    CARD_FIELD_NUMBER: _ClassVar[int]
    CARDS_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    seat: int
    row: int
    card: int
    cards: _containers.RepeatedScalarFieldContainer[int]
    reason: TakeReason
    def __init__(self, seat: _Optional[int] = ..., row: _Optional[int] = ..., card: _Optional[int] = ..., cards: _Optional[_Iterable[int]] = ..., reason: _Optional[_Union[TakeReason, str]] = ...) -> None: ...

class Hand(_message.Message):
    __slots__ = ("cards",)
    CARDS_FIELD_NUMBER: _ClassVar[int]
    cards: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, cards: _Optional[_Iterable[int]] = ...) -> None: ...

class View(_message.Message):
    __slots__ = ("seat", "settings", "phase", "round", "turn", "hand", "rows", "scores", "plays", "takes", "hands", "pool")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    SETTINGS_FIELD_NUMBER: _ClassVar[int]
    PHASE_FIELD_NUMBER: _ClassVar[int]
    ROUND_FIELD_NUMBER: _ClassVar[int]
    TURN_FIELD_NUMBER: _ClassVar[int]
    HAND_FIELD_NUMBER: _ClassVar[int]
    ROWS_FIELD_NUMBER: _ClassVar[int]
    SCORES_FIELD_NUMBER: _ClassVar[int]
    PLAYS_FIELD_NUMBER: _ClassVar[int]
    TAKES_FIELD_NUMBER: _ClassVar[int]
    HANDS_FIELD_NUMBER: _ClassVar[int]
    POOL_FIELD_NUMBER: _ClassVar[int]
    seat: int
    settings: Settings
    phase: Phase
    round: int
    turn: int
    hand: _containers.RepeatedScalarFieldContainer[int]
    rows: _containers.RepeatedCompositeFieldContainer[Row]
    scores: _containers.RepeatedScalarFieldContainer[int]
    plays: _containers.RepeatedCompositeFieldContainer[Turn]
    takes: _containers.RepeatedCompositeFieldContainer[RowTake]
    hands: _containers.RepeatedCompositeFieldContainer[Hand]
    pool: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, seat: _Optional[int] = ..., settings: _Optional[_Union[Settings, _Mapping]] = ..., phase: _Optional[_Union[Phase, str]] = ..., round: _Optional[int] = ..., turn: _Optional[int] = ..., hand: _Optional[_Iterable[int]] = ..., rows: _Optional[_Iterable[_Union[Row, _Mapping]]] = ..., scores: _Optional[_Iterable[int]] = ..., plays: _Optional[_Iterable[_Union[Turn, _Mapping]]] = ..., takes: _Optional[_Iterable[_Union[RowTake, _Mapping]]] = ..., hands: _Optional[_Iterable[_Union[Hand, _Mapping]]] = ..., pool: _Optional[_Iterable[int]] = ...) -> None: ...

class PickCardRequest(_message.Message):
    __slots__ = ("game_id", "time_limit_ms", "view", "clock")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    TIME_LIMIT_MS_FIELD_NUMBER: _ClassVar[int]
    VIEW_FIELD_NUMBER: _ClassVar[int]
    CLOCK_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    time_limit_ms: int
    view: View
    clock: Clock
    def __init__(self, game_id: _Optional[str] = ..., time_limit_ms: _Optional[int] = ..., view: _Optional[_Union[View, _Mapping]] = ..., clock: _Optional[_Union[Clock, _Mapping]] = ...) -> None: ...

class PickCardResponse(_message.Message):
    __slots__ = ("card",)
    CARD_FIELD_NUMBER: _ClassVar[int]
    card: int
    def __init__(self, card: _Optional[int] = ...) -> None: ...

class ChooseRowRequest(_message.Message):
    __slots__ = ("game_id", "time_limit_ms", "view", "card", "revealed", "clock")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    TIME_LIMIT_MS_FIELD_NUMBER: _ClassVar[int]
    VIEW_FIELD_NUMBER: _ClassVar[int]
    CARD_FIELD_NUMBER: _ClassVar[int]
    REVEALED_FIELD_NUMBER: _ClassVar[int]
    CLOCK_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    time_limit_ms: int
    view: View
    card: int
    revealed: _containers.RepeatedCompositeFieldContainer[Play]
    clock: Clock
    def __init__(self, game_id: _Optional[str] = ..., time_limit_ms: _Optional[int] = ..., view: _Optional[_Union[View, _Mapping]] = ..., card: _Optional[int] = ..., revealed: _Optional[_Iterable[_Union[Play, _Mapping]]] = ..., clock: _Optional[_Union[Clock, _Mapping]] = ...) -> None: ...

class ChooseRowResponse(_message.Message):
    __slots__ = ("row",)
    ROW_FIELD_NUMBER: _ClassVar[int]
    row: int
    def __init__(self, row: _Optional[int] = ...) -> None: ...

class GameOverRequest(_message.Message):
    __slots__ = ("game_id", "seat", "settings", "scores", "places", "forfeited", "rounds", "faults", "time_limit_ms")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    SETTINGS_FIELD_NUMBER: _ClassVar[int]
    SCORES_FIELD_NUMBER: _ClassVar[int]
    PLACES_FIELD_NUMBER: _ClassVar[int]
    FORFEITED_FIELD_NUMBER: _ClassVar[int]
    ROUNDS_FIELD_NUMBER: _ClassVar[int]
    FAULTS_FIELD_NUMBER: _ClassVar[int]
    TIME_LIMIT_MS_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    seat: int
    settings: Settings
    scores: _containers.RepeatedScalarFieldContainer[int]
    places: _containers.RepeatedScalarFieldContainer[int]
    forfeited: _containers.RepeatedScalarFieldContainer[int]
    rounds: int
    faults: int
    time_limit_ms: int
    def __init__(self, game_id: _Optional[str] = ..., seat: _Optional[int] = ..., settings: _Optional[_Union[Settings, _Mapping]] = ..., scores: _Optional[_Iterable[int]] = ..., places: _Optional[_Iterable[int]] = ..., forfeited: _Optional[_Iterable[int]] = ..., rounds: _Optional[int] = ..., faults: _Optional[int] = ..., time_limit_ms: _Optional[int] = ...) -> None: ...

class GameOverResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...
