"""The entrants and their versions: the ``entrants`` and ``entrant_versions`` tables (what
`referee submit` and the arena's validation add, what schedules seat)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .base import Repository, StoreError, meta, now, set_meta
from .postgres import Row


@dataclass(frozen=True)
class EntrantVersion:
    id: int
    name: str
    version: int
    source_hash: str
    image_id: str | None
    bot_dir: str
    kind: str
    submitted_at: str
    validation: dict[str, Any]
    artifact: str | None = None
    """The digest of the validated source archive (what plays); None: submitted before archives."""
    author: str | None = None
    """Who submitted this version, as the organiser knows it (the arena account that owns it, or
    ``referee submit --author``; a version submitted without one takes its entrant's); None: not
    known. Stored per version, so that a record, the seating rule and the standings name who
    submitted the code that played, even where an entrant's author changed later."""

    @property
    def key(self) -> str:
        """The id of this version in schedules: ``name@version``."""
        return f"{self.name}@{self.version}"


_HELD = "version held."
"""The ``meta`` key (and the entrant's name) of the highest version number held for a submission
being validated (:meth:`Versions.reserve`)."""


class Versions(Repository):
    """``store.versions``: every version of every entrant, by id, by name, the current ones."""

    def add(
        self,
        name: str,
        *,
        source_hash: str,
        bot_dir: str,
        kind: str,
        image_id: str | None = None,
        validation: Mapping[str, Any] | None = None,
        artifact: str | None = None,
        author: str | None = None,
        number: int | None = None,
    ) -> tuple[EntrantVersion, bool]:
        """Record a new version of entrant ``name`` (creating the entrant). Returns the version and
        whether it is new: the same source as an earlier version of this entrant gives that version
        (its image id updated, its author kept). ``author``, when given, becomes the entrant's
        author and the new version's (without one, the entrant's goes to the new version).
        ``number``: the version number :meth:`reserve` held for this submission (None: the next
        one free, past every number held)."""
        with self._transaction() as db:
            row = db.execute("SELECT id FROM entrants WHERE name = ?", (name,)).fetchone()
            if row is None:
                entrant_id = db.execute(
                    "INSERT INTO entrants(name, created_at, author) VALUES (?, ?, ?) RETURNING id",
                    (name, now(), author),
                ).fetchone()[0]
            else:
                entrant_id = row[0]
                db.execute(
                    "UPDATE entrants SET active = 1, author = COALESCE(?, author) WHERE id = ?",
                    (author, entrant_id),
                )
            old = db.execute(
                "SELECT id FROM entrant_versions WHERE entrant_id = ? AND source_hash = ?",
                (entrant_id, source_hash),
            ).fetchone()
            if old is not None:
                db.execute(
                    "UPDATE entrant_versions SET image_id = ?, validation = ?, bot_dir = ?,"
                    " artifact = COALESCE(?, artifact) WHERE id = ?",
                    (image_id, json.dumps(dict(validation or {})), bot_dir, artifact, old[0]),
                )
                created, version_id = False, old[0]
            else:
                number = number or self._next_number(name)
                version_id = db.execute(
                    "INSERT INTO entrant_versions(entrant_id, version, source_hash, image_id, "
                    "bot_dir, kind, submitted_at, validation, artifact, author) VALUES (?, ?, ?, "
                    "?, ?, ?, ?, ?, ?, (SELECT author FROM entrants WHERE id = ?)) RETURNING id",
                    (
                        entrant_id,
                        number,
                        source_hash,
                        image_id,
                        bot_dir,
                        kind,
                        now(),
                        json.dumps(dict(validation or {})),
                        artifact,
                        entrant_id,
                    ),
                ).fetchone()[0]
                created = True
        return self.get(version_id), created

    def reserve(self, name: str, source_hash: str) -> int:
        """The version number a submission of ``name`` with this source gets if it passes, held
        for it from now (its validation games name it, and their deals are drawn for it): the
        number of the version of the same source if there is one, else a number that no other
        submission of the name is given, even one validated at the same moment by another
        process on the store. :meth:`release` gives it back when the submission fails."""
        with self._transaction() as db:
            same = db.execute(
                "SELECT v.version FROM entrant_versions v JOIN entrants e ON e.id = v.entrant_id"
                " WHERE e.name = ? AND v.source_hash = ?",
                (name, source_hash),
            ).fetchone()
            if same is not None:
                return int(same[0])
            number = self._next_number(name)
            set_meta(db, _HELD + name, str(number))
        return number

    def release(self, name: str, number: int) -> None:
        """Give back a number :meth:`reserve` held, unless a later one was held since (the
        numbers stay without a gap when submissions that failed were the last ones)."""
        with self._transaction() as db:  # the store's write lock: nobody holds one meanwhile
            if meta(db, _HELD + name) == str(number):
                set_meta(db, _HELD + name, str(number - 1))

    def _next_number(self, name: str) -> int:
        """The next version number of ``name``: past its versions and every number held."""
        top = self._db.execute(
            "SELECT COALESCE(MAX(v.version), 0) FROM entrant_versions v"
            " JOIN entrants e ON e.id = v.entrant_id WHERE e.name = ?",
            (name,),
        ).fetchone()[0]
        return max(int(top), int(meta(self._db, _HELD + name) or 0)) + 1

    _VERSION_SQL = (
        "SELECT v.*, e.name FROM entrant_versions v JOIN entrants e ON e.id = v.entrant_id"
    )

    @staticmethod
    def _version(row: sqlite3.Row | Row) -> EntrantVersion:
        return EntrantVersion(
            id=row["id"],
            name=row["name"],
            version=row["version"],
            source_hash=row["source_hash"],
            image_id=row["image_id"],
            bot_dir=row["bot_dir"],
            kind=row["kind"],
            submitted_at=row["submitted_at"],
            validation=json.loads(row["validation"] or "{}"),
            artifact=row["artifact"],
            author=row["author"],
        )

    def get(self, version_id: int) -> EntrantVersion:
        row = self._db.execute(f"{self._VERSION_SQL} WHERE v.id = ?", (version_id,)).fetchone()
        if row is None:
            raise StoreError(f"no entrant version {version_id}")
        return self._version(row)

    def all(self) -> list[EntrantVersion]:
        """Every version of every entrant, by name and version."""
        rows = self._db.execute(f"{self._VERSION_SQL} ORDER BY e.name, v.version").fetchall()
        return [self._version(r) for r in rows]

    def current(self) -> list[EntrantVersion]:
        """The latest version of every active entrant, by name: the ones a new schedule uses."""
        rows = self._db.execute(
            f"{self._VERSION_SQL} WHERE e.active = 1 AND v.version = "
            "(SELECT MAX(version) FROM entrant_versions w WHERE w.entrant_id = v.entrant_id) "
            "ORDER BY e.name"
        ).fetchall()
        return [self._version(r) for r in rows]

    def of_code(
        self, author: str, *, source_hash: str | None = None, image_id: str | None = None
    ) -> list[EntrantVersion]:
        """``author``'s versions of this code: the same archive digest (``source_hash``) or the
        same built image (``image_id``), by name and version. The arena's validation asks before
        it validates a submission again (take5_arena/referee/tournament/copies.py)."""
        if source_hash is None and image_id is None:
            return []
        rows = self._db.execute(
            f"{self._VERSION_SQL} WHERE v.author = ? AND (v.source_hash = ? OR v.image_id = ?)"
            " ORDER BY e.name, v.version",
            (author, source_hash, image_id),
        ).fetchall()
        return [self._version(r) for r in rows]

    def withdraw(self, name: str) -> bool:
        """Leave entrant ``name`` out of future schedules (its games stay recorded); whether it was
        active until now."""
        with self._transaction() as db:
            sql = "UPDATE entrants SET active = 0 WHERE name = ? AND active = 1"
            return db.execute(sql, (name,)).rowcount > 0

    def set_authors(self, authors: Mapping[str, str]) -> int:
        """Give entrants (by name) their authors where the store does not know them yet (an
        arena made before entrants had authors: its accounts know them), and to their versions
        that have none; how many entrants it set."""
        with self._transaction() as db:
            done = 0
            for n, a in sorted(authors.items()):
                done += db.execute(
                    "UPDATE entrants SET author = ? WHERE name = ? AND author IS NULL", (a, n)
                ).rowcount
                db.execute(
                    "UPDATE entrant_versions SET author = ? WHERE author IS NULL AND entrant_id ="
                    " (SELECT id FROM entrants WHERE name = ?)",
                    (a, n),
                )
            return done

    def entrant_states(self) -> dict[str, bool]:
        """Every entrant's name and whether it is active (plays in new schedules)."""
        rows = self._db.execute("SELECT name, active FROM entrants ORDER BY name")
        return {name: bool(active) for name, active in rows}


__all__ = ["EntrantVersion", "Versions"]
