"""Strings from bots, made harmless where they enter the referee.

Everything a bot sends back as text (its handshake name, version, author and SDK, the details of an
error status, its stderr) is hostile: an ANSI/OSC escape in it would clear the operator's screen,
set the window title or forge lines of the referee's output, and a megabyte of it would bloat every
record. So each such string is cleaned once, at ingress, before it is stored in a record or shown:

* control characters are escaped, not dropped (``\\x1b`` becomes the four characters ``\\x1b``), so
  what the bot sent stays readable; this covers C0 and C1 controls, DEL, and the Unicode line/
  paragraph separators, format characters and bidirectional overrides that can disguise text
  (one definition for the whole project: take5/text.py);
* in a one-line field (:func:`clean_field`) newlines and tabs are escaped as well, so a bot cannot
  fake a line of output; in a multi-line text (:func:`clean_text`, for stderr) they are kept;
* the length is capped (an ellipsis marks a cut).

Escaping for Markdown, HTML and rich markup is the job of whoever renders the text (the app layer
and the site): this module only guarantees no control characters and a bounded size.
"""

from __future__ import annotations

from take5.text import inert

#: Longest handshake field kept (name, version, author, sdk).
FIELD_LIMIT = 100
#: Longest error detail or output tail kept.
TEXT_LIMIT = 4000


def _cap(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: max(0, limit - 3)] + "..."


def clean_field(text: object, limit: int = FIELD_LIMIT) -> str:
    """A one-line string from a bot: every control character escaped, at most ``limit``
    characters."""
    return _cap(inert(text, keep_lines=False), limit)


def clean_text(text: object, limit: int = TEXT_LIMIT) -> str:
    """Multi-line text from a bot (its output): newlines and tabs kept, other controls escaped, and
    at most ``limit`` characters (the end is kept: the last lines say most about a failure)."""
    cleaned = inert(str(text).replace("\r\n", "\n"))
    return cleaned if len(cleaned) <= limit else "..." + cleaned[-(limit - 3) :]
