"""The tournament's settings and the notes its long-running parts leave: the ``meta`` table's
``settings`` and ``note.*`` rows (the schema's own rows are :mod:`.schema`'s)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from .base import Repository, meta, set_meta


class Settings(Repository):
    """``store.settings``: what `referee tournament run` and the arena were started with."""

    def get(self) -> dict[str, Any]:
        value = meta(self._db, "settings")
        return json.loads(value) if value else {}

    def set(self, settings: Mapping[str, Any]) -> None:
        with self._transaction() as db:
            set_meta(db, "settings", json.dumps(dict(settings), sort_keys=True))

    def set_note(self, key: str, text: str | None) -> None:
        """A line a long-running part leaves for ``referee tournament status`` (None: cleared),
        e.g. the arena's ladder saying why it plays no table."""
        with self._transaction() as db:
            if text is None:
                db.execute("DELETE FROM meta WHERE key = ?", (f"note.{key}",))
            else:
                set_meta(db, f"note.{key}", text)

    def note(self, key: str) -> str | None:
        return meta(self._db, f"note.{key}")

    def take(self, counter: str) -> int:
        """The next number of ``counter`` (0, 1, 2, ...): each is handed out once, to one caller,
        even to processes sharing the store (one atomic statement). The arena numbers its
        validation tables with it, so that no two of them are ever dealt from one deal identity
        (take5_arena/referee/tournament/submission.py)."""
        with self._transaction() as db:
            row = db.execute(
                "INSERT INTO meta(key, value) VALUES (?, '1') ON CONFLICT(key) DO UPDATE"
                " SET value = CAST(CAST(meta.value AS INTEGER) + 1 AS TEXT) RETURNING value",
                (f"count.{counter}",),
            ).fetchone()
        return int(row[0]) - 1

    def calendar(self) -> str | None:
        """The season's calendar as JSON (take5_arena/referee/tournament/season.py; None: no
        season was ever opened)."""
        return meta(self._db, "season")

    def set_calendar(self, text: str) -> None:
        with self._transaction() as db:
            set_meta(db, "season", text)


__all__ = ["Settings"]
