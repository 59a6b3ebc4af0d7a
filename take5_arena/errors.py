"""The base of every error the platform raises on purpose, and the packages' own bases under it::

    ArenaError                     this module: ``except ArenaError`` catches them all
    ├── RefereeError               take5_arena/referee/errors.py (its tree is drawn there)
    ├── LeaderboardError           take5_arena/leaderboard/errors.py
    ├── ServiceError               take5_arena/service/errors.py (its tree is drawn there)
    └── SourceError                take5_arena/standings.py: the games to rate cannot be read

Each message is one line meant for the user: the command line prints it after ``referee:`` and
exits with its ``exit_code``, 2 unless the kind says otherwise (take5_arena/cli/main.py). The SDK's
errors have their own base, ``take5.Take5Error`` (sdk/take5/rules.py), since the SDK is
installed without the platform.
"""

from __future__ import annotations


class ArenaError(Exception):
    """An error of the platform whose message is meant for the user."""

    exit_code = 2
    """The command line's exit status for it: 2 (bad usage or input) unless a kind of error says
    otherwise (4: the host failed the store, take5_arena/referee/store/health.py)."""


__all__ = ["ArenaError"]
