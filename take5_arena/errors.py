"""The base of every error the platform raises on purpose, and the packages' own bases under it::

    ArenaError                     this module: ``except ArenaError`` catches them all
    ├── RefereeError               take5_arena/referee/errors.py (its tree is drawn there)
    ├── LeaderboardError           take5_arena/leaderboard/errors.py
    ├── ServiceError               take5_arena/service/errors.py (its tree is drawn there)
    └── SourceError                take5_arena/standings.py: the games to rate cannot be read

Each message is one line meant for the user: the command line prints it after ``referee:`` and
exits with the error's `exit_code` (take5_arena/cli/main.py): 2, a usage error, unless the class
says otherwise (4: the host failed, not the command line or a bot; docs/faults.md). The SDK's
errors have their own base, ``take5.Take5Error`` (sdk/take5/rules.py), since the SDK is installed
without the platform.
"""

from __future__ import annotations


class ArenaError(Exception):
    """An error of the platform whose message is meant for the user."""

    exit_code = 2
    """The command line's exit status when this error ends a command."""


__all__ = ["ArenaError"]
