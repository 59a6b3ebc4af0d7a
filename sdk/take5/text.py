"""Text a bot (or a record, or anyone else) controls, made inert for a terminal or a page.

One definition, used everywhere a hostile string is shown or kept: the harness, the referee where
bot strings enter (take5_arena/referee/match/sanitize.py), the per-turn logs of a record, and the
terminal replay. Control and format characters (Unicode categories Cc, Cf, Cs, Co, Cn: ESC, CR, DEL,
C1 controls, bidirectional overrides, zero-width characters, unassigned code points) and the line
and paragraph separators are not dropped but shown as visible escapes (``\\x1b`` becomes the four
characters ``\\x1b``), so what was sent stays readable and nothing reaches a terminal raw.
"""

from __future__ import annotations

import unicodedata

_UNSAFE_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})


def _escape(ch: str) -> str:
    code = ord(ch)
    return (
        f"\\x{code:02x}"
        if code < 0x100
        else f"\\u{code:04x}"
        if code < 0x10000
        else f"\\U{code:08x}"
    )


def inert(text: object, *, keep_lines: bool = True) -> str:
    """``text`` with every control and format character as a visible escape.

    With ``keep_lines`` (the default) newlines and tabs stay (a log is lines); without it they are
    escaped too, so a one-line field cannot fake a line of output.
    """
    s = str(text)
    if (
        s.isprintable()
    ):  # the common case: no character to escape (isprintable is False for all of them)
        return s
    keep = "\n\t" if keep_lines else ""
    return "".join(
        ch
        if ch in keep
        or ((unicodedata.category(ch) not in _UNSAFE_CATEGORIES and ch.isprintable()) or ch == " ")
        else _escape(ch)
        for ch in s
    )


__all__ = ["inert"]
