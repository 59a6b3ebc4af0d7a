"""The base of every error the platform raises on purpose, and the packages' own bases under it::

    ArenaError                     this module: ``except ArenaError`` catches them all
    ├── RefereeError               take5_arena/referee/errors.py (its tree is drawn there)
    ├── LeaderboardError           take5_arena/leaderboard/errors.py
    ├── ServiceError               take5_arena/service/errors.py (its tree is drawn there)
    ├── SourceError                take5_arena/standings.py: the games to rate cannot be read
    └── MissingExtraError (ImportError)  this module: a part of the platform that is not installed

Each message is one line meant for the user: the command line prints it after ``referee:`` and
exits with the error's `exit_code` (take5_arena/cli/main.py): 2, a usage error, unless the class
says otherwise (4: the host or the installation failed, not the command line or a bot: a missing
extra, an engine or a sandbox that did not answer; docs/faults.md). The SDK's errors have their
own base, ``take5.Take5Error`` (sdk/take5/rules.py), since the SDK is installed without the
platform.
"""

from __future__ import annotations

import importlib.util


class ArenaError(Exception):
    """An error of the platform whose message is meant for the user."""

    exit_code = 2
    """The command line's exit status when this error ends a command: 2 (bad usage or input)
    unless a kind of error says otherwise (4: the host or the installation failed)."""


#: extra of pyproject.toml -> the top-level modules it installs that the platform imports. The base
#: install plays local matches and tournaments, rates them and verifies records; each extra adds
#: one part, as Starlette's and httpx's do.
EXTRAS: dict[str, tuple[str, ...]] = {
    "dask": ("distributed", "cloudpickle"),
    "docker": ("docker",),
    "metrics": ("prometheus_client",),
    "postgres": ("psycopg",),
    "rl": ("pettingzoo", "gymnasium"),
    "web": ("starlette", "uvicorn", "jinja2", "multipart"),
}

MISSING_EXTRA_EXIT = 4
"""The exit status of a command that needs an extra that is not installed (docs/organisers/
command-line.md)."""


class MissingExtraError(ArenaError, ImportError):
    """What was asked for needs an extra of take5-arena that is not installed: the message names
    the extra and the command that installs it."""

    exit_code = MISSING_EXTRA_EXIT

    def __init__(self, extra: str, module: str | None = None) -> None:
        self.extra = extra
        missing = f" (no module {module!r})" if module else ""
        super().__init__(
            f"this needs the [{extra}] extra{missing}: pip install 'take5-arena[{extra}]'",
            name=module,
        )


def extra_of(module: str | None) -> str | None:
    """The extra that installs ``module`` (a dotted name: its top-level package counts), or None."""
    top = (module or "").split(".")[0]
    return next((extra for extra, tops in EXTRAS.items() if top in tops), None)


def require_extra(extra: str) -> None:
    """Raise :class:`MissingExtraError` unless every module of ``extra`` can be imported; the one
    check before a path that needs an extra starts work it could not finish (a tournament in
    Docker, say), where an ImportError deep in a worker would be nobody's fault to the referee."""
    for module in EXTRAS[extra]:
        if importlib.util.find_spec(module) is None:
            raise MissingExtraError(extra, module)


def missing_extra(error: ImportError) -> MissingExtraError | None:
    """``error`` as a :class:`MissingExtraError` when the module it could not import belongs to an
    extra (the command line's one line for it, whatever imported it), else None."""
    if isinstance(error, MissingExtraError):
        return error
    extra = extra_of(error.name) if isinstance(error, ModuleNotFoundError) else None
    return None if extra is None else MissingExtraError(extra, error.name)


__all__ = [
    "EXTRAS",
    "MISSING_EXTRA_EXIT",
    "ArenaError",
    "MissingExtraError",
    "extra_of",
    "missing_extra",
    "require_extra",
]
