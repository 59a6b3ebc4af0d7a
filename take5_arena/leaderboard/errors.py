"""The leaderboard's errors::

    LeaderboardError               this module
    └── SiteCheckError             site_check.py: the folder is not a published site

:class:`LeaderboardError` is a ``take5_arena.errors.ArenaError``, the base of the platform's
errors. A record that does not verify is not an error here: it is reported and left out
(collection.py).
"""

from __future__ import annotations

from take5_arena.errors import ArenaError


class LeaderboardError(ArenaError):
    """An error of the leaderboard whose message is meant for the user."""


__all__ = ["LeaderboardError"]
