from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class SubmitOutcome(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SUBMIT_OUTCOME_UNSPECIFIED: _ClassVar[SubmitOutcome]
    SUBMIT_ACCEPTED: _ClassVar[SubmitOutcome]
    SUBMIT_UNCHANGED: _ClassVar[SubmitOutcome]
    SUBMIT_REFUSED: _ClassVar[SubmitOutcome]
    SUBMIT_PENDING: _ClassVar[SubmitOutcome]
SUBMIT_OUTCOME_UNSPECIFIED: SubmitOutcome
SUBMIT_ACCEPTED: SubmitOutcome
SUBMIT_UNCHANGED: SubmitOutcome
SUBMIT_REFUSED: SubmitOutcome
SUBMIT_PENDING: SubmitOutcome

class SubmitBotRequest(_message.Message):
    __slots__ = ("metadata", "chunk")
    METADATA_FIELD_NUMBER: _ClassVar[int]
    CHUNK_FIELD_NUMBER: _ClassVar[int]
    metadata: SubmitMetadata
    chunk: bytes
    def __init__(self, metadata: _Optional[_Union[SubmitMetadata, _Mapping]] = ..., chunk: _Optional[bytes] = ...) -> None: ...

class SubmitMetadata(_message.Message):
    __slots__ = ("bot_name", "archive_size", "archive_sha256", "upload_key", "competition")
    BOT_NAME_FIELD_NUMBER: _ClassVar[int]
    ARCHIVE_SIZE_FIELD_NUMBER: _ClassVar[int]
    ARCHIVE_SHA256_FIELD_NUMBER: _ClassVar[int]
    UPLOAD_KEY_FIELD_NUMBER: _ClassVar[int]
    COMPETITION_FIELD_NUMBER: _ClassVar[int]
    bot_name: str
    archive_size: int
    archive_sha256: str
    upload_key: str
    competition: str
    def __init__(self, bot_name: _Optional[str] = ..., archive_size: _Optional[int] = ..., archive_sha256: _Optional[str] = ..., upload_key: _Optional[str] = ..., competition: _Optional[str] = ...) -> None: ...

class SubmitBotResponse(_message.Message):
    __slots__ = ("outcome", "submission_id", "bot_name", "version", "source_hash", "validation", "reason", "bot_output", "status", "waiting", "attempts", "competition")
    OUTCOME_FIELD_NUMBER: _ClassVar[int]
    SUBMISSION_ID_FIELD_NUMBER: _ClassVar[int]
    BOT_NAME_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    SOURCE_HASH_FIELD_NUMBER: _ClassVar[int]
    VALIDATION_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    BOT_OUTPUT_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    WAITING_FIELD_NUMBER: _ClassVar[int]
    ATTEMPTS_FIELD_NUMBER: _ClassVar[int]
    COMPETITION_FIELD_NUMBER: _ClassVar[int]
    outcome: SubmitOutcome
    submission_id: str
    bot_name: str
    version: int
    source_hash: str
    validation: str
    reason: str
    bot_output: str
    status: str
    waiting: str
    attempts: int
    competition: str
    def __init__(self, outcome: _Optional[_Union[SubmitOutcome, str]] = ..., submission_id: _Optional[str] = ..., bot_name: _Optional[str] = ..., version: _Optional[int] = ..., source_hash: _Optional[str] = ..., validation: _Optional[str] = ..., reason: _Optional[str] = ..., bot_output: _Optional[str] = ..., status: _Optional[str] = ..., waiting: _Optional[str] = ..., attempts: _Optional[int] = ..., competition: _Optional[str] = ...) -> None: ...

class GetSubmissionRequest(_message.Message):
    __slots__ = ("submission_id", "wait_seconds")
    SUBMISSION_ID_FIELD_NUMBER: _ClassVar[int]
    WAIT_SECONDS_FIELD_NUMBER: _ClassVar[int]
    submission_id: str
    wait_seconds: int
    def __init__(self, submission_id: _Optional[str] = ..., wait_seconds: _Optional[int] = ...) -> None: ...

class ListMyBotsRequest(_message.Message):
    __slots__ = ("competition",)
    COMPETITION_FIELD_NUMBER: _ClassVar[int]
    competition: str
    def __init__(self, competition: _Optional[str] = ...) -> None: ...

class ListMyBotsResponse(_message.Message):
    __slots__ = ("author", "bots", "submissions", "limits")
    AUTHOR_FIELD_NUMBER: _ClassVar[int]
    BOTS_FIELD_NUMBER: _ClassVar[int]
    SUBMISSIONS_FIELD_NUMBER: _ClassVar[int]
    LIMITS_FIELD_NUMBER: _ClassVar[int]
    author: str
    bots: _containers.RepeatedCompositeFieldContainer[MyBot]
    submissions: _containers.RepeatedCompositeFieldContainer[Submission]
    limits: AuthorLimits
    def __init__(self, author: _Optional[str] = ..., bots: _Optional[_Iterable[_Union[MyBot, _Mapping]]] = ..., submissions: _Optional[_Iterable[_Union[Submission, _Mapping]]] = ..., limits: _Optional[_Union[AuthorLimits, _Mapping]] = ...) -> None: ...

class MyBot(_message.Message):
    __slots__ = ("name", "active", "versions", "state", "organiser_note")
    NAME_FIELD_NUMBER: _ClassVar[int]
    ACTIVE_FIELD_NUMBER: _ClassVar[int]
    VERSIONS_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    ORGANISER_NOTE_FIELD_NUMBER: _ClassVar[int]
    name: str
    active: bool
    versions: _containers.RepeatedCompositeFieldContainer[BotVersion]
    state: str
    organiser_note: str
    def __init__(self, name: _Optional[str] = ..., active: _Optional[bool] = ..., versions: _Optional[_Iterable[_Union[BotVersion, _Mapping]]] = ..., state: _Optional[str] = ..., organiser_note: _Optional[str] = ...) -> None: ...

class BotVersion(_message.Message):
    __slots__ = ("version", "source_hash", "submitted_at", "validation", "games", "faults")
    VERSION_FIELD_NUMBER: _ClassVar[int]
    SOURCE_HASH_FIELD_NUMBER: _ClassVar[int]
    SUBMITTED_AT_FIELD_NUMBER: _ClassVar[int]
    VALIDATION_FIELD_NUMBER: _ClassVar[int]
    GAMES_FIELD_NUMBER: _ClassVar[int]
    FAULTS_FIELD_NUMBER: _ClassVar[int]
    version: int
    source_hash: str
    submitted_at: str
    validation: str
    games: int
    faults: int
    def __init__(self, version: _Optional[int] = ..., source_hash: _Optional[str] = ..., submitted_at: _Optional[str] = ..., validation: _Optional[str] = ..., games: _Optional[int] = ..., faults: _Optional[int] = ...) -> None: ...

class Submission(_message.Message):
    __slots__ = ("submission_id", "bot_name", "received_at", "status", "version", "detail", "bot_output", "archive_sha256")
    SUBMISSION_ID_FIELD_NUMBER: _ClassVar[int]
    BOT_NAME_FIELD_NUMBER: _ClassVar[int]
    RECEIVED_AT_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    DETAIL_FIELD_NUMBER: _ClassVar[int]
    BOT_OUTPUT_FIELD_NUMBER: _ClassVar[int]
    ARCHIVE_SHA256_FIELD_NUMBER: _ClassVar[int]
    submission_id: str
    bot_name: str
    received_at: str
    status: str
    version: int
    detail: str
    bot_output: str
    archive_sha256: str
    def __init__(self, submission_id: _Optional[str] = ..., bot_name: _Optional[str] = ..., received_at: _Optional[str] = ..., status: _Optional[str] = ..., version: _Optional[int] = ..., detail: _Optional[str] = ..., bot_output: _Optional[str] = ..., archive_sha256: _Optional[str] = ...) -> None: ...

class AuthorLimits(_message.Message):
    __slots__ = ("max_active_bots", "max_submissions_per_hour", "max_archive_bytes", "max_stored_bytes", "max_waiting")
    MAX_ACTIVE_BOTS_FIELD_NUMBER: _ClassVar[int]
    MAX_SUBMISSIONS_PER_HOUR_FIELD_NUMBER: _ClassVar[int]
    MAX_ARCHIVE_BYTES_FIELD_NUMBER: _ClassVar[int]
    MAX_STORED_BYTES_FIELD_NUMBER: _ClassVar[int]
    MAX_WAITING_FIELD_NUMBER: _ClassVar[int]
    max_active_bots: int
    max_submissions_per_hour: int
    max_archive_bytes: int
    max_stored_bytes: int
    max_waiting: int
    def __init__(self, max_active_bots: _Optional[int] = ..., max_submissions_per_hour: _Optional[int] = ..., max_archive_bytes: _Optional[int] = ..., max_stored_bytes: _Optional[int] = ..., max_waiting: _Optional[int] = ...) -> None: ...

class WithdrawBotRequest(_message.Message):
    __slots__ = ("bot_name", "competition")
    BOT_NAME_FIELD_NUMBER: _ClassVar[int]
    COMPETITION_FIELD_NUMBER: _ClassVar[int]
    bot_name: str
    competition: str
    def __init__(self, bot_name: _Optional[str] = ..., competition: _Optional[str] = ...) -> None: ...

class WithdrawBotResponse(_message.Message):
    __slots__ = ("bot_name", "was_active")
    BOT_NAME_FIELD_NUMBER: _ClassVar[int]
    WAS_ACTIVE_FIELD_NUMBER: _ClassVar[int]
    bot_name: str
    was_active: bool
    def __init__(self, bot_name: _Optional[str] = ..., was_active: _Optional[bool] = ...) -> None: ...

class StandingsRequest(_message.Message):
    __slots__ = ("competition",)
    COMPETITION_FIELD_NUMBER: _ClassVar[int]
    competition: str
    def __init__(self, competition: _Optional[str] = ...) -> None: ...

class StandingsResponse(_message.Message):
    __slots__ = ("rows", "games", "computed_at", "standings_json")
    ROWS_FIELD_NUMBER: _ClassVar[int]
    GAMES_FIELD_NUMBER: _ClassVar[int]
    COMPUTED_AT_FIELD_NUMBER: _ClassVar[int]
    STANDINGS_JSON_FIELD_NUMBER: _ClassVar[int]
    rows: _containers.RepeatedCompositeFieldContainer[StandingsRow]
    games: int
    computed_at: str
    standings_json: str
    def __init__(self, rows: _Optional[_Iterable[_Union[StandingsRow, _Mapping]]] = ..., games: _Optional[int] = ..., computed_at: _Optional[str] = ..., standings_json: _Optional[str] = ...) -> None: ...

class StandingsRow(_message.Message):
    __slots__ = ("rank", "bot", "rating", "rating_low", "rating_high", "games", "mean_penalty", "faults", "has_interval")
    RANK_FIELD_NUMBER: _ClassVar[int]
    BOT_FIELD_NUMBER: _ClassVar[int]
    RATING_FIELD_NUMBER: _ClassVar[int]
    RATING_LOW_FIELD_NUMBER: _ClassVar[int]
    RATING_HIGH_FIELD_NUMBER: _ClassVar[int]
    GAMES_FIELD_NUMBER: _ClassVar[int]
    MEAN_PENALTY_FIELD_NUMBER: _ClassVar[int]
    FAULTS_FIELD_NUMBER: _ClassVar[int]
    HAS_INTERVAL_FIELD_NUMBER: _ClassVar[int]
    rank: int
    bot: str
    rating: float
    rating_low: float
    rating_high: float
    games: int
    mean_penalty: float
    faults: int
    has_interval: bool
    def __init__(self, rank: _Optional[int] = ..., bot: _Optional[str] = ..., rating: _Optional[float] = ..., rating_low: _Optional[float] = ..., rating_high: _Optional[float] = ..., games: _Optional[int] = ..., mean_penalty: _Optional[float] = ..., faults: _Optional[int] = ..., has_interval: _Optional[bool] = ...) -> None: ...

class GetGameRecordRequest(_message.Message):
    __slots__ = ("game_id", "competition")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    COMPETITION_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    competition: str
    def __init__(self, game_id: _Optional[str] = ..., competition: _Optional[str] = ...) -> None: ...

class GetGameRecordResponse(_message.Message):
    __slots__ = ("game_id", "record_json")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    RECORD_JSON_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    record_json: str
    def __init__(self, game_id: _Optional[str] = ..., record_json: _Optional[str] = ...) -> None: ...

class MyBotFaultsRequest(_message.Message):
    __slots__ = ("bot_name", "limit", "competition")
    BOT_NAME_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    COMPETITION_FIELD_NUMBER: _ClassVar[int]
    bot_name: str
    limit: int
    competition: str
    def __init__(self, bot_name: _Optional[str] = ..., limit: _Optional[int] = ..., competition: _Optional[str] = ...) -> None: ...

class MyBotFaultsResponse(_message.Message):
    __slots__ = ("bot_name", "faults", "last_refusal_output")
    BOT_NAME_FIELD_NUMBER: _ClassVar[int]
    FAULTS_FIELD_NUMBER: _ClassVar[int]
    LAST_REFUSAL_OUTPUT_FIELD_NUMBER: _ClassVar[int]
    bot_name: str
    faults: _containers.RepeatedCompositeFieldContainer[BotFault]
    last_refusal_output: str
    def __init__(self, bot_name: _Optional[str] = ..., faults: _Optional[_Iterable[_Union[BotFault, _Mapping]]] = ..., last_refusal_output: _Optional[str] = ...) -> None: ...

class BotFault(_message.Message):
    __slots__ = ("game_id", "version", "round", "turn", "kind", "detail", "log_tail", "finished_at")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    ROUND_FIELD_NUMBER: _ClassVar[int]
    TURN_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    DETAIL_FIELD_NUMBER: _ClassVar[int]
    LOG_TAIL_FIELD_NUMBER: _ClassVar[int]
    FINISHED_AT_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    version: int
    round: int
    turn: int
    kind: str
    detail: str
    log_tail: str
    finished_at: str
    def __init__(self, game_id: _Optional[str] = ..., version: _Optional[int] = ..., round: _Optional[int] = ..., turn: _Optional[int] = ..., kind: _Optional[str] = ..., detail: _Optional[str] = ..., log_tail: _Optional[str] = ..., finished_at: _Optional[str] = ...) -> None: ...

class AskChallengeRequest(_message.Message):
    __slots__ = ("bot_name", "opponents", "competition")
    BOT_NAME_FIELD_NUMBER: _ClassVar[int]
    OPPONENTS_FIELD_NUMBER: _ClassVar[int]
    COMPETITION_FIELD_NUMBER: _ClassVar[int]
    bot_name: str
    opponents: _containers.RepeatedScalarFieldContainer[str]
    competition: str
    def __init__(self, bot_name: _Optional[str] = ..., opponents: _Optional[_Iterable[str]] = ..., competition: _Optional[str] = ...) -> None: ...

class GetChallengeRequest(_message.Message):
    __slots__ = ("challenge_id", "competition")
    CHALLENGE_ID_FIELD_NUMBER: _ClassVar[int]
    COMPETITION_FIELD_NUMBER: _ClassVar[int]
    challenge_id: str
    competition: str
    def __init__(self, challenge_id: _Optional[str] = ..., competition: _Optional[str] = ...) -> None: ...

class ChallengeResponse(_message.Message):
    __slots__ = ("challenge_id", "competition", "created_at", "seats", "state", "games")
    CHALLENGE_ID_FIELD_NUMBER: _ClassVar[int]
    COMPETITION_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    SEATS_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    GAMES_FIELD_NUMBER: _ClassVar[int]
    challenge_id: str
    competition: str
    created_at: str
    seats: _containers.RepeatedScalarFieldContainer[str]
    state: str
    games: _containers.RepeatedCompositeFieldContainer[ChallengeGame]
    def __init__(self, challenge_id: _Optional[str] = ..., competition: _Optional[str] = ..., created_at: _Optional[str] = ..., seats: _Optional[_Iterable[str]] = ..., state: _Optional[str] = ..., games: _Optional[_Iterable[_Union[ChallengeGame, _Mapping]]] = ...) -> None: ...

class ChallengeGame(_message.Message):
    __slots__ = ("game_id", "status")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    status: str
    def __init__(self, game_id: _Optional[str] = ..., status: _Optional[str] = ...) -> None: ...
