"""The one base of every error the referee raises on purpose: ``except RefereeError`` catches them
all (a bad bot reference, a store that cannot be read, a tournament that cannot go on, ...).

Faults of a bot during a game are not exceptions: they are data in the game record (see
take5_arena/referee/match/faults.py).
"""

from __future__ import annotations


class RefereeError(Exception):
    """An error of the referee whose message is meant for the user."""
