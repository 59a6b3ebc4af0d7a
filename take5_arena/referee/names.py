"""The one rule for the names of bots and authors, everywhere a name enters: ``referee submit``
(local or remote), the arena's accounts, its organiser's commands.

A name is 1-40 ASCII letters, digits, ``-``, ``_`` or ``.``, starting with a letter or a digit, and
nothing else: the whole string must match (no trailing newline, no spaces, no other script).
ASCII only, said plainly: names become folder names, image tags and lines in terminals and web
pages, and a rule over all of Unicode would need its confusables (Cyrillic ``а`` for Latin ``a``)
and normal forms to be unique. Within ASCII, two names that differ only in case are the same name
(:func:`name_key`): ``AliceBot`` cannot stand beside ``alicebot``. And a name that only looks like
another (:func:`look_alike`: a trailing ``.``, ``_`` for ``-``, ``0`` for ``o``, ``1`` or ``I`` for
``l``, ``rn`` for ``m``, ``vv`` for ``w``) cannot be taken beside it: ``alicebot.`` and ``a1icebot``
would pass for ``alicebot`` in a standings table.
"""

from __future__ import annotations

import re

MAX_NAME = 40
NAME_RULE = f"1-{MAX_NAME} ASCII letters, digits, '-', '_' or '.', starting with a letter or digit"
_NAME = re.compile(rf"[A-Za-z0-9][A-Za-z0-9._-]{{0,{MAX_NAME - 1}}}", re.ASCII)


def name_problem(kind: str, name: object) -> str | None:
    """None if ``name`` is a valid name, else a one-line message saying what is valid."""
    if isinstance(name, str) and _NAME.fullmatch(name):
        return None
    shown = repr(name[:60]) if isinstance(name, str) else type(name).__name__
    return f"{kind} name {shown}: use {NAME_RULE}"


def name_key(name: str) -> str:
    """The form in which names are unique: two names with the same key are the same name."""
    return name.casefold()


_SEPARATORS = re.compile(r"[._-]+")
_LOOKALIKES = (("rn", "m"), ("vv", "w"), ("0", "o"), ("1", "l"), ("i", "l"), ("j", "l"))


def look_alike(name: str) -> str:
    """What ``name`` looks like: names with the same form read as one name in a table, so a new
    name may not have the form of another (a separate rule from :func:`name_key`'s uniqueness,
    so that names already held keep their keys). Case folded, runs of ``.``, ``_`` and ``-`` read
    as one ``-`` and dropped at either end, and the ASCII look-alikes read as one letter."""
    form = _SEPARATORS.sub("-", name.casefold()).strip("-")
    for seen, read in _LOOKALIKES:
        form = form.replace(seen, read)
    return form


__all__ = ["MAX_NAME", "NAME_RULE", "look_alike", "name_key", "name_problem"]
