"""The referee's vocabularies as enums: where a bot runs, why a game could not be played, how a
tournament run ended. (Fault kinds, what a bot did wrong, are in
take5_arena/referee/match/faults.py.)

Each is a ``str`` enum: a member is its own JSON value and equals its string, so the store and the
records hold the same text as before these were enums, and old stores read back unchanged.
"""

from __future__ import annotations

from enum import Enum


class StrEnum(str, Enum):
    """A ``str`` enum that prints as its value (``enum.StrEnum`` is Python 3.11+)."""

    def __str__(self) -> str:
        return str(self.value)

    def __format__(self, spec: str) -> str:
        return format(str(self.value), spec)


class SandboxKind(StrEnum):
    """Where a bot runs."""

    DOCKER = "docker"
    """A fresh locked-down container per game (no network, read-only files, memory/CPU/pids limits).
    """
    LOCAL = "local"
    """A local process of the operator's user: only for bots the operator trusts."""


class BotMemory(StrEnum):
    """What a bot process may remember from one game to the next (in the Docker sandbox).

    Either way a bot process never plays the same deal twice: the games of a deal replay it with
    the hands rotated, so remembering a deal is knowing every opponent's hand."""

    GAME = "game"
    """Every game in a fresh bot process: nothing of one game reaches another (the default)."""
    DEALS = "deals"
    """A bot process may play several different deals and keep what it learned from them."""


class Ponder(StrEnum):
    """Whether a bot's CPU between its answer and its next request is taken from its bank (the CPU
    clock; docs/faults.md, "Thinking between decisions")."""

    CHARGE = "charge"
    """Taken from its bank, as the next decision's time (the default)."""
    ALLOW = "allow"
    """Free: only the CPU from a request to its answer counts (every record before the rule)."""


class InfraKind(StrEnum):
    """Why a tournament game was not played: nobody's fault, rates no one, retried later."""

    ENGINE_UNAVAILABLE = "engine-unavailable"
    """No Docker engine answers (or it stopped answering during the game)."""
    IMAGE = "image"
    """A bot's image, which built at submission, does not build now."""
    REFEREE_ERROR = "referee-error"
    """The referee's own failure."""
    EXECUTOR = "executor"
    """The executor (process pool, dask) lost the table."""
    ARTIFACT = "artifact"
    """A bot version's validated source archive is missing or does not match its digest."""
    SANDBOX = "sandbox"
    """A bot's container, or the fork server that starts its process, did not start or answer
    within the start allowance (a loaded host, a slow engine): the bot's own code had not run."""
    HOST = "host"
    """The host's load starved a bot past a decision's wall-clock cap (CPU clock): its threads
    waited for a CPU long enough to account for the overrun (take5_arena/referee/match/runqueue.py).
    """


class RunStatus(StrEnum):
    """How a `referee tournament run` ended (the ``status`` of a run in the store)."""

    RUNNING = "running"
    FINISHED = "finished"
    """Every scheduled game is recorded."""
    INCOMPLETE = "incomplete"
    """Games are left unplayed after infrastructure failures: run again."""
    INTERRUPTED = "interrupted"
    FAILED = "failed"
    """The run itself stopped on an error."""
    KILLED = "killed"
    """The referee died without ending it (SIGKILL, a power cut): closed by the next run, which
    holds the run lock, so none of the earlier runs can still be running."""


def run_exit_code(*, interrupted: bool, finished: bool) -> int:
    """The exit code of a tournament run of any format (round robin, Swiss, knockout, settle;
    docs/organisers/command-line.md): 130 interrupted; else 0 when it finished what it set out to
    do (every game recorded, every round played, the bracket decided, the standings settled), 1
    when it did not (games left unplayed after infrastructure failures, or a budget ran out first:
    run again)."""
    if interrupted:
        return 130
    return 0 if finished else 1


class DealMode(StrEnum):
    """Where a tournament's deal seeds come from (docs/security.md, "Deals")."""

    SECRET = "secret"
    """A secret key per season: each seed an HMAC of the game's deal identity; the key's SHA-256
    published from the start, the key itself when the season is over."""
    PUBLIC = "public"
    """A public seed (``--seed N``; every tournament made before secret deals): reproducible, and
    predictable by anyone, bots included."""
