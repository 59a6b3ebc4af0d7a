"""The one base of every error the referee raises on purpose, and its tree::

    RefereeError
    ├── BadBotRefError (ValueError)    match/botref.py: a BOT argument names nothing to run
    ├── CallFailedError                match/remote.py: a call to a bot gave no usable answer;
    │                                  ``kind``: the fault (match/faults.py's FaultKind)
    ├── ArchiveError (ValueError)      archive.py: an archive that would not unpack safely
    ├── ArtifactError                  artifacts.py: a validated archive missing or not matching
    ├── StoreError                     store/base.py: not a tournament, a newer schema, ...
    ├── SandboxError                   sandbox/errors.py (its tree is drawn there)
    │   ├── EngineUnavailableError     no Docker engine answers
    │   ├── ImageBuildError            a bot folder did not become an image (build_errors.py)
    │   └── ContainerStartError        a bot container could not be created or started
    ├── TournamentError                tournament/errors.py: a tournament command cannot go on
    │   ├── SubmitRefusedError         a bot failed validation (``reason``, its ``stderr``)
    │   ├── SubmitDeferredError        a bot could not be validated for the host's reasons
    │   ├── ScheduleError (ValueError) tournament/plan/schedule.py: no schedule
    │   ├── SettleError (ValueError)   tournament/plan/adaptive.py: no adaptive one
    │   └── ExecutorError (ValueError) tournament/run/executors.py: a bad executor
    │       └── ExecutorUnreachableError   its scheduler does not answer (exit 4)
    └── InfraError                     this module: a game that is nobody's fault (a match, a
                                       tournament's table); ``kind``: kinds.py's InfraKind

A bot's faults during a game are not exceptions: they are data in the game record
(match/faults.py); a bot's exception reaches the referee as a ``CallFailedError`` of kind ``error``.
:class:`RefereeError` is a ``take5_arena.errors.ArenaError``, the base of the platform's errors.
"""

from __future__ import annotations

from take5_arena.errors import ArenaError

from .kinds import InfraKind


class RefereeError(ArenaError):
    """An error of the referee whose message is meant for the user."""


class InfraError(RefereeError):
    """Not a bot's fault: the game cannot be played now (engine unavailable, image, a bot's
    sandbox that did not start, referee error). A tournament plays the game again later; a match
    ends with exit code 4."""

    exit_code = 4

    def __init__(self, kind: InfraKind, detail: str) -> None:
        self.kind = InfraKind(kind)
        self.detail = detail
        super().__init__(f"{kind}: {detail}")


__all__ = ["InfraError", "RefereeError"]
