"""The one base of the app layer's own errors (``except ArenaError``)."""

from __future__ import annotations


class ArenaError(Exception):
    """An error of the command line whose message is meant for the user."""
