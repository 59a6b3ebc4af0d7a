"""The runs of the referee: the ``runs`` table (who runs the tournament, since when, its last
heartbeat; what ``referee tournament status`` reads to say whether a run is alive)."""

from __future__ import annotations

import json
import os
import socket
import time
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from .base import Repository, now

STALE = 60.0
"""Seconds without a heartbeat (every 2 s while a referee plays) after which a run of another host
is taken for dead."""


class Runs(Repository):
    """``store.runs``: a run begun, its heartbeats, its end."""

    def begin(
        self, run_id: str, *, schedule_id: str, settings: Mapping[str, Any], games: int
    ) -> None:
        """A run begins (under the directory's run lock, take5_arena/referee/tournament/
        run/lifecycle.py). A run still marked running whose referee died is closed as killed at its
        last heartbeat: on SQLite every one (the run lock lets one referee play), on PostgreSQL,
        where several referees on several hosts share the store, one of this host whose process
        is gone, or any whose heartbeat stopped :data:`STALE` seconds ago."""
        here = socket.gethostname()
        with self._transaction() as db:
            running = db.execute(
                "SELECT run_id, pid, host, heartbeat_at FROM runs WHERE status = 'running'"
            ).fetchall()
            alone = self._dialect.claim is None  # SQLite: the run lock's one referee per store
            for run, pid, host, beat in running:
                stale = (seconds_since(beat) or STALE + 1) > STALE
                if alone or pid_alive(pid, host) is False or stale:
                    db.execute(
                        "UPDATE runs SET status = 'killed', ended_at = heartbeat_at"
                        " WHERE run_id = ?",
                        (run,),
                    )
            db.execute(
                "INSERT INTO runs(run_id, pid, host, started_at, heartbeat_at, status, schedule_id,"
                " settings, games) VALUES (?, ?, ?, ?, ?, 'running', ?, ?, ?)",
                (
                    run_id,
                    os.getpid(),
                    here,
                    now(),
                    now(),
                    schedule_id,
                    json.dumps(dict(settings), sort_keys=True),
                    games,
                ),
            )

    def heartbeat(self, run_id: str, done: int) -> None:
        with self._transaction() as db:
            db.execute(
                "UPDATE runs SET heartbeat_at = ?, done = ? WHERE run_id = ?", (now(), done, run_id)
            )

    def end(self, run_id: str, status: str, done: int) -> None:
        with self._transaction() as db:
            db.execute(
                "UPDATE runs SET ended_at = ?, status = ?, done = ?, heartbeat_at = ? WHERE "
                "run_id = ?",
                (now(), status, done, now(), run_id),
            )

    def all(self) -> list[dict[str, Any]]:
        return [dict(r) for r in self._db.execute("SELECT * FROM runs ORDER BY started_at")]

    def last(self) -> dict[str, Any] | None:
        row = self._db.execute("SELECT * FROM runs ORDER BY started_at DESC LIMIT 1").fetchone()
        return None if row is None else dict(row)


def pid_alive(pid: int | None, host: str | None) -> bool | None:
    """Whether process ``pid`` on ``host`` still runs (None: another host, cannot tell)."""
    if pid is None:
        return False
    if host and host != socket.gethostname():
        return None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie (killed, not yet reaped by its parent) is not running.
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return True


def seconds_since(stamp: str | None) -> float | None:
    if not stamp:
        return None
    return time.time() - datetime.fromisoformat(stamp).timestamp()


__all__ = ["STALE", "Runs", "pid_alive", "seconds_since"]
