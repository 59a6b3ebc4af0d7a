"""Text on the operator's terminal: nothing that came from a bot or a record reaches it raw.

The referee escapes bot strings where they enter (take5_arena/referee/match/sanitize.py); game
records read from files were never through that door, and a record is just as hostile as a bot. So
the app layer escapes again where it prints: :func:`field` for a value inside a line (a name, a
fault detail: no newline survives), :func:`block` for multi-line output (a bot's stderr); values put
into rich markup are escaped for it as well (cli/progress.py's ``markup``: ``[bold]`` in a bot's
name must print as text, not change the style). Every one of them is the SDK's one definition of
inert text (take5/text.py) with a length cap.
"""

from __future__ import annotations

from take5_arena.referee.match.sanitize import FIELD_LIMIT, TEXT_LIMIT, clean_field, clean_text


def field(text: object, limit: int = FIELD_LIMIT * 3) -> str:
    """A one-line value for click.echo: control characters (newlines too) escaped, capped."""
    return clean_field(text, limit)


def block(text: object, limit: int = TEXT_LIMIT) -> str:
    """Multi-line text for click.echo: lines kept, every other control character escaped."""
    return clean_text(text, limit)
