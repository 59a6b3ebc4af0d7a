"""What the host can do to a store, and how the store answers: one line that names the fault and
the operator's way out, never a traceback, and never a write into a store that is damaged.

A store lives on a disk that fills, turns read-only, fails, or is damaged by a power cut or a bad
block. SQLite reports each as an error of any statement, anywhere in the code; so instead of a
list of places that catch them, every store connection is made here (:func:`connect`) and is one
whose statements and cursors translate them as they happen (:class:`GuardedConnection`):

* a full disk, a read-only disk or folder, a file that cannot be opened, a failed read or write:
  :class:`StoreFaultError` (the transaction under way is rolled back by SQLite: nothing recorded is
  lost, the game being recorded is played again at the next run);
* a damaged file ("database disk image is malformed", "file is not a database"):
  :class:`StoreDamagedError`. The connection refuses every statement after it, and a mark is left
  beside the file (``tournament.sqlite.damaged``, one line: when and what) that every later open
  refuses, read-only ones included, until the operator restores the last backup
  (docs/operations.md, "When the host fails").

A store opened for writing is also checked first (``PRAGMA quick_check``: every page and index,
no cross-check of rows; 0.35 s for a store of 82 MB, about 5,000 games), so that nothing is
ever written into a store that fails it; once per file and process, since an arena opens its store
for writing at each withdrawal. Readers are not checked at open (the web and the arena open one per
request); they, and a long-running `serve` after its first check, meet a damaged page as an error
of the query that reads it, which marks the store as above. `referee tournament status` checks
it whole.

Both are :class:`sqlite3.DatabaseError` too, so code that already reads a broken file as a finding
(`referee verify`, `standings`) goes on doing so. Their exit code is :data:`EXIT_CODE` (4) on the
command line (take5_arena/cli/main.py).
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from pathlib import Path
from typing import Any

from .base import SQLITE, Dialect, StoreError, now

EXIT_CODE = 4
"""The command line's exit code for a store the host failed (docs/organisers/command-line.md)."""

DAMAGED_SUFFIX = ".damaged"
"""The mark beside a damaged database file (``tournament.sqlite.damaged``)."""

RESTORE = (
    "stop the referee and restore the last backup (`referee restore BACKUP NEW_DIR --key KEY`, "
    'docs/operations.md "When the host fails")'
)

# SQLite's primary result codes (stable numbers of its C API; Python names them from 3.11 only)
_PERM, _READONLY, _IOERR, _CORRUPT, _FULL, _CANTOPEN, _NOTADB = 3, 8, 10, 11, 13, 14, 26
_DAMAGED = {_CORRUPT, _NOTADB}
_HOST = {_READONLY, _CANTOPEN, _IOERR, _PERM}
#: SQLite's own text of each code (sqlite3_errstr), for Python 3.10, whose errors carry no code
_TEXTS = {
    "access permission denied": _PERM,
    "attempt to write a readonly database": _READONLY,
    "disk I/O error": _IOERR,
    "database disk image is malformed": _CORRUPT,
    "database or disk is full": _FULL,
    "unable to open database file": _CANTOPEN,
    "file is not a database": _NOTADB,
}


def _code(error: sqlite3.Error) -> int:
    """The primary result code of ``error`` (0: unknown)."""
    code = getattr(error, "sqlite_errorcode", None)
    if isinstance(code, int):
        return code & 0xFF
    return _TEXTS.get(str(error), 0)


def disk_full(path: Path) -> bool:
    """Whether the file system holding ``path``'s folder has no block left for this user."""
    try:
        return os.statvfs(path.parent).f_bavail == 0
    except OSError:
        return False


def os_fault(path: Path, error: OSError) -> StoreFaultError:
    """A file beside a store (its run lock, an upload) that the host would not write, as one
    line: a full disk, a read-only disk or folder, a missing folder."""
    what = error.strerror or str(error)
    if disk_full(path):
        cause = "the disk is full: free space on its disk"
    elif read_only_disk(path):
        cause = "its disk is mounted read-only (often after disk errors: see `dmesg`): mount it"
        cause += " read-write"
    else:
        cause = f"make {path.parent} writable by this user"
    return StoreFaultError(f"{path} cannot be written ({what}): {cause}, and run it again")


def read_only_disk(path: Path) -> bool:
    """Whether the file system holding ``path``'s folder is mounted read-only: nobody writes
    there, not even the kernel on behalf of another process."""
    try:
        return bool(os.statvfs(path.parent).f_flag & os.ST_RDONLY)
    except OSError:
        return False


class StoreFaultError(StoreError, sqlite3.DatabaseError):
    """The host failed the store: a full disk, a read-only disk or folder, a file that cannot be
    opened or read. Nothing was written by the statement that met it."""

    exit_code = EXIT_CODE


class StoreDamagedError(StoreFaultError):
    """The store's file is damaged: nothing more is read from or written to it."""


SYNCHRONOUS = ("normal", "full")
"""How durable each commit is, SQLite's ``synchronous`` (in WAL mode): ``normal`` survives a
crash of the process, and a power cut may lose the last commits (never tear the file); ``full``
survives a power cut too, at an fsync per commit (2 to 7 ms each on the reference host's SSD,
against 0.3 to 0.4 ms: nothing beside a game of seconds, or an upload)."""

_synchronous = "normal"


def set_synchronous(mode: str) -> None:
    """The durability of this process's store and accounts connections opened from now on:
    ``full`` for an arena (`referee serve`: an acknowledged upload or a recorded game survives a
    power cut), ``normal`` for `referee tournament run` (a lost game is played again)."""
    global _synchronous
    if mode not in SYNCHRONOUS:
        raise ValueError(f"synchronous must be one of {', '.join(SYNCHRONOUS)}, not {mode!r}")
    _synchronous = mode


def synchronous() -> str:
    """The ``PRAGMA synchronous`` value of a connection opened now (:func:`set_synchronous`)."""
    return _synchronous.upper()


def damaged_mark(path: Path) -> Path:
    return path.with_name(path.name + DAMAGED_SUFFIX)


def fault(path: Path, error: sqlite3.Error) -> StoreFaultError | None:
    """The fault of the host ``error`` is, as one line naming ``path`` and what to do (None: not a
    fault of the host, such as a constraint or a lock held too long)."""
    code = _code(error)
    what = str(error)
    if code in _HOST and read_only_disk(path):
        return StoreFaultError(
            f"{path} cannot be written ({what}): its disk is mounted read-only (often after disk "
            "errors: see `dmesg`); readers still work; mount it read-write, or "
            + RESTORE.replace("stop the referee and ", "")
        )
    if code in _DAMAGED:  # by its code: "malformed JSON" is a query's error, not the file's
        return StoreDamagedError(
            f"{path} is damaged ({what}): nothing more is written to it; {RESTORE}"
        )
    if code == _FULL or (code == _IOERR and disk_full(path)):
        return StoreFaultError(
            f"{path}: the disk is full ({what}); what was being written was rolled back and "
            f"nothing recorded is lost: free space on {path.parent}'s disk and run it again"
        )
    if code in (_READONLY, _PERM):
        return StoreFaultError(
            f"{path} cannot be written ({what}): the disk or folder is read-only, or this user "
            f"does not own it; make {path.parent} writable by this user and run it again"
        )
    if code == _CANTOPEN:
        return StoreFaultError(
            f"{path} cannot be opened ({what}): {path.parent} must exist and be readable and "
            "writable by this user (its -wal and -shm files are made beside it)"
        )
    if code == _IOERR:
        return StoreFaultError(
            f"{path}: the disk failed a read or write ({what}): check the disk (full? failing? "
            f"`dmesg`) and run it again; if it fails again, {RESTORE}"
        )
    return None


class GuardedConnection(sqlite3.Connection):
    """A connection whose statements and cursors raise :func:`fault`'s errors for SQLite's, and
    that refuses every statement once its file was found damaged."""

    path: Path = Path()
    damaged: StoreDamagedError | None = None
    dialect: Dialect = SQLITE

    def translated(self, error: sqlite3.Error) -> sqlite3.Error:
        """The error to raise for ``error`` (marking the store when it is damaged)."""
        if isinstance(error, StoreFaultError):
            return error
        found = fault(self.path, error)
        if found is None:
            return error
        if isinstance(found, StoreDamagedError):
            self.damaged = found
            mark(self.path, str(error))
        return found

    def refuse_if_damaged(self) -> None:
        if self.damaged is not None:
            raise StoreDamagedError(str(self.damaged))

    def cursor(self, factory: Any = None) -> Any:
        return super().cursor(factory or GuardedCursor)

    def execute(self, sql: str, parameters: Any = (), /) -> Any:
        return self.cursor().execute(sql, parameters)

    def executemany(self, sql: str, parameters: Any, /) -> Any:
        return self.cursor().executemany(sql, parameters)

    def executescript(self, script: str, /) -> Any:
        return self.cursor().executescript(script)

    def commit(self) -> None:
        self.refuse_if_damaged()
        try:
            super().commit()
        except sqlite3.Error as error:
            raise self.translated(error) from error


class GuardedCursor(sqlite3.Cursor):
    """A cursor of a :class:`GuardedConnection`: its errors are translated as they happen, rows
    fetched included (SQLite reads a damaged page when a row needs it)."""

    def _translated(self, error: sqlite3.Error) -> sqlite3.Error:
        connection = self.connection
        return connection.translated(error) if isinstance(connection, GuardedConnection) else error

    def _refuse_if_damaged(self) -> None:
        connection = self.connection
        if isinstance(connection, GuardedConnection):
            connection.refuse_if_damaged()

    def execute(self, sql: str, parameters: Any = (), /) -> Any:
        self._refuse_if_damaged()
        try:
            return super().execute(sql, parameters)
        except sqlite3.Error as error:
            raise self._translated(error) from error

    def executemany(self, sql: str, parameters: Any, /) -> Any:
        self._refuse_if_damaged()
        try:
            return super().executemany(sql, parameters)
        except sqlite3.Error as error:
            raise self._translated(error) from error

    def executescript(self, script: str, /) -> Any:
        self._refuse_if_damaged()
        try:
            return super().executescript(script)
        except sqlite3.Error as error:
            raise self._translated(error) from error

    def fetchone(self) -> Any:
        try:
            return super().fetchone()
        except sqlite3.Error as error:
            raise self._translated(error) from error

    def fetchmany(self, size: int | None = 1) -> list[Any]:
        try:
            return super().fetchmany(size)
        except sqlite3.Error as error:
            raise self._translated(error) from error

    def fetchall(self) -> list[Any]:
        try:
            return super().fetchall()
        except sqlite3.Error as error:
            raise self._translated(error) from error

    def __next__(self) -> Any:
        try:
            return super().__next__()
        except sqlite3.Error as error:
            raise self._translated(error) from error


def mark(path: Path, reason: str) -> None:
    """Leave the mark that a store is damaged (best effort: a read-only folder keeps none, and its
    store is refused by the check at open anyway)."""
    target = damaged_mark(path)
    if target.exists():
        return
    partial = target.with_name(f".{target.name}.{os.getpid()}")
    try:
        partial.write_text(f"{now()} {reason}\n")
        os.replace(partial, target)
    except OSError:
        with contextlib.suppress(OSError):
            partial.unlink(missing_ok=True)


def refuse_marked(path: Path) -> None:
    """A StoreDamagedError when ``path`` was found damaged before (its mark is there)."""
    try:
        seen = damaged_mark(path).read_text(errors="replace").strip()[:200]
    except FileNotFoundError:
        return
    except OSError as error:
        seen = f"its mark cannot be read: {error.strerror}"
    raise StoreDamagedError(f"{path} was found damaged ({seen}): {RESTORE}")


def check(db: sqlite3.Connection, path: Path) -> None:
    """``PRAGMA quick_check`` of the file: a StoreDamagedError (and the mark) when it fails."""
    try:
        problems = [row[0] for row in db.execute("PRAGMA quick_check(5)")]
    except StoreFaultError:  # the host's fault, said as such: not a verdict on the file
        raise
    except sqlite3.Error as error:  # not a fault of the host: still not a store to write into
        problems = [str(error)]
    if problems != ["ok"]:
        found = "; ".join(str(p) for p in problems)[:300]
        mark(path, f"quick_check: {found}")
        raise StoreDamagedError(f"{path} is damaged (quick_check: {found}): {RESTORE}")


def _empty(path: Path) -> bool:
    """A file of 0 bytes with no write-ahead log holding its first commits."""
    try:
        if path.stat().st_size:
            return False
        return Path(f"{path}-wal").stat().st_size == 0
    except FileNotFoundError:
        return True
    except OSError:
        return False


def connect(path: Path, *, readonly: bool) -> GuardedConnection:
    """The store's connection (:class:`GuardedConnection`): refused when the store was found
    damaged, checked first when it is opened for writing."""
    refuse_marked(path)
    if readonly and _empty(path):
        raise StoreFaultError(
            f"{path} is empty (0 bytes: its creation was cut off, nothing was ever recorded in "
            "it): remove it, or open it for writing (`referee submit`, `serve`) to make it again"
        )
    uri = f"file:{path}?mode=ro" if readonly else str(path)
    if readonly and read_only_disk(path):
        # A store in WAL mode is read through its -shm file, which a read-only disk may lack
        # and nobody can make; nothing can change the file there, so it is read as immutable.
        uri += "&immutable=1"
    try:
        db = sqlite3.connect(
            uri,
            uri=readonly,
            timeout=30.0,
            isolation_level=None,
            check_same_thread=False,
            factory=GuardedConnection,
        )
    except sqlite3.Error as error:
        raise fault(path, error) or StoreError(f"{path} cannot be opened: {error}") from error
    db.path = path
    if not readonly:
        try:
            identity = _identity(path)
            if identity not in _CHECKED:
                check(db, path)
                _CHECKED.add(identity)
        except BaseException:
            db.close()
            raise
    return db


#: The files (device, inode) this process checked already: once each, since an arena opens its
#: store for each withdrawal and each validated bot, and a check reads the whole file. A file put
#: in its place (a restore) is another inode, checked again.
_CHECKED: set[tuple[int, int]] = set()


def _identity(path: Path) -> tuple[int, int]:
    try:
        stat = path.stat()
    except OSError:
        return (0, 0)  # not made yet: nothing to check
    return (stat.st_dev, stat.st_ino)


__all__ = [
    "DAMAGED_SUFFIX",
    "EXIT_CODE",
    "RESTORE",
    "SYNCHRONOUS",
    "GuardedConnection",
    "GuardedCursor",
    "StoreDamagedError",
    "StoreFaultError",
    "check",
    "connect",
    "damaged_mark",
    "disk_full",
    "fault",
    "mark",
    "os_fault",
    "read_only_disk",
    "refuse_marked",
    "set_synchronous",
    "synchronous",
]
