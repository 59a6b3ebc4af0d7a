"""Reading a tournament back: where it stands (`referee tournament status`) and how its entrant
versions are labelled in standings. Ratings are not computed here: the referee knows nothing of
the leaderboard; the app layer (take5_arena/standings.py) turns the store's results into ratings."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ..kinds import RunStatus
from ..store import Store, pid_alive, seconds_since
from .settings import TournamentSettings


def entrant_labels(store: Store) -> dict[int, str]:
    """Version id -> label in standings: the entrant's name for its latest version, name@vN for
    older."""
    latest: dict[str, int] = {}
    versions = store.versions()
    for v in versions:
        latest[v.name] = max(latest.get(v.name, 0), v.version)
    return {
        v.id: v.name if v.version == latest[v.name] else f"{v.name}@v{v.version}" for v in versions
    }


def tournament_status(directory: str | os.PathLike[str]) -> dict[str, Any]:
    """Where a tournament stands: settings, entrants, schedule progress, runs, failures.

    Plain data (JSON-ready); the store is closed again before it returns."""
    with Store(directory, readonly=True) as store:
        current = store.current_schedule()
        progress = (
            store.progress(current["schedule_id"])
            if current
            else {"total": 0, "done": 0, "infra_failures": 0}
        )
        run = store.last_run()
        state = "not started"
        if run is not None:
            state = run["status"]
            if state == RunStatus.RUNNING:
                alive = pid_alive(run["pid"], run["host"])
                if alive is False:
                    state = "stopped (the referee was killed)"
                elif alive is None:
                    age = seconds_since(run["heartbeat_at"]) or 0
                    state = "running (on another host)" if age < 60 else "stopped?"
        pending_errors = [
            {
                "game_id": f["game_id"],
                "kind": f["kind"],
                "detail": f["detail"].splitlines()[0] if f["detail"] else "",
            }
            for f in store.infra_failures(current["schedule_id"] if current else None)
        ]
        usage = store.output_usage()
        budget = TournamentSettings.from_json(store.settings()).output_budget
        return {
            "directory": str(Path(directory)),
            "settings": store.settings(),
            "entrants": [
                {
                    "name": v.name,
                    "version": v.version,
                    "kind": v.kind,
                    "source_hash": v.source_hash[:12],
                    "image_id": (v.image_id or "")[:19],
                    "artifact": (v.artifact or "")[:19],
                    "submitted_at": v.submitted_at,
                    "output": usage.get(
                        v.id, {"kept_bytes": 0, "kept_games": 0, "dropped_games": 0}
                    ),
                }
                for v in store.versions()
            ],
            "output_budget": budget,
            "schedule": current,
            "progress": progress,
            "recorded": store.recorded_count(),
            "run": run,
            "state": state,
            "infra_failures": pending_errors,
        }
