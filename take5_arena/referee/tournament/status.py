"""Reading a tournament back: where it stands (`referee tournament status`) and how its entrant
versions are labelled in standings. Ratings are not computed here: the referee knows nothing of
the leaderboard; the app layer (take5_arena/standings.py) turns the store's results into ratings."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ..kinds import RunStatus
from ..store import Store, pid_alive, seconds_since
from .errors import TournamentError
from .plan.settings import TournamentSettings
from .season import season_of, utc_now


def entrant_labels(store: Store) -> dict[int, str]:
    """Version id -> label in standings: the entrant's name for its latest version, name@vN for
    older."""
    latest: dict[str, int] = {}
    versions = store.versions.all()
    for v in versions:
        latest[v.name] = max(latest.get(v.name, 0), v.version)
    return {
        v.id: v.name if v.version == latest[v.name] else f"{v.name}@v{v.version}" for v in versions
    }


def tournament_status(directory: str | os.PathLike[str]) -> dict[str, Any]:
    """Where a tournament stands: settings, entrants, schedule progress, runs, failures.

    Plain data (JSON-ready); the store is closed again before it returns. A store that fails
    SQLite's quick check is a StoreDamagedError (take5_arena/referee/store/health.py)."""
    with Store(directory, readonly=True) as store:
        # an operator's look at the store: a damaged one is said so, whatever page is damaged
        store.check()
        current = store.schedules.current()
        progress = (
            store.schedules.progress(current["schedule_id"])
            if current
            else {"total": 0, "done": 0, "infra_failures": 0}
        )
        run = store.runs.last()
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
            for f in store.results.infra_failures(current["schedule_id"] if current else None)
        ]
        usage = store.results.output_usage()
        settings = TournamentSettings.from_json(store.settings.get())
        budget = settings.output_budget
        return {
            "directory": str(Path(directory)),
            "settings": store.settings.get(),
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
                for v in store.versions.all()
            ],
            "output_budget": budget,
            "schedule": current,
            "progress": progress,
            "recorded": store.results.recorded_count(),
            "run": run,
            "state": state,
            "infra_failures": pending_errors,
            "ladder": store.settings.note("ladder"),
            # the deal keys' commitments from the start, each key once revealed (docs/security.md)
            "deal_keys": [
                {
                    "season": k.season,
                    "commitment": k.commitment,
                    "created_at": k.created_at,
                    "key": k.key,
                    "revealed_at": k.revealed_at,
                }
                for k in store.deal_keys.seasons()
            ],
            "season": _season(store),
            "disk": disk_used(Path(directory)),
            "workers": visible_workers(settings.executor),
        }


def _season(store: Store) -> dict[str, Any] | None:
    """The season's calendar and where it stands (season.py; None: none was opened)."""
    try:
        season = season_of(store)
    except TournamentError as error:
        return {"error": str(error)}
    return None if season is None else {**season.to_json(), "phase": season.phase(utc_now())}


def disk_used(directory: Path) -> dict[str, int]:
    """Bytes on disk under each entry of the tournament's directory (the store with its WAL, the
    archives, an arena's uploads and folders, the site, ...), largest first, and their ``total``.
    Counted in blocks allocated, as ``du`` does, and each file once."""
    sizes: dict[str, int] = {}
    seen: set[tuple[int, int]] = set()
    for entry in sorted(directory.iterdir()):
        total = 0
        for path in [
            entry,
            *(entry.rglob("*") if entry.is_dir() and not entry.is_symlink() else ()),
        ]:
            try:
                st = path.lstat()
            except OSError:  # removed meanwhile (a server prunes, a game lands)
                continue
            if (st.st_dev, st.st_ino) in seen:
                continue
            seen.add((st.st_dev, st.st_ino))
            total += st.st_blocks * 512
        sizes[entry.name] = total
    ordered = dict(sorted(sizes.items(), key=lambda item: (-item[1], item[0])))
    return {**ordered, "total": sum(sizes.values())}


def visible_workers(executor: str, timeout: float = 5.0) -> dict[str, Any] | None:
    """The Dask workers the scheduler of ``executor`` (``dask:tcp://...``) reports now: their
    names, addresses, threads and tables running; ``error`` when it cannot be asked. None for the
    other executors (and ``dask:local``, whose cluster lives only as long as its referee)."""
    if not executor.startswith("dask:") or executor == "dask:local":
        return None
    address = executor[len("dask:") :]
    try:
        import distributed  # the [dask] extra: only for a tournament played on a cluster
    except ImportError:
        return {"scheduler": address, "error": "dask is not installed here", "workers": []}
    try:
        client = distributed.Client(  # type: ignore[no-untyped-call]
            address, timeout=timeout, set_as_default=False
        )
    except (OSError, TimeoutError) as error:
        return {"scheduler": address, "error": f"cannot reach it: {error}", "workers": []}
    try:
        info = client.scheduler_info()
        processing = client.processing()  # type: ignore[no-untyped-call]
    except (OSError, TimeoutError) as error:  # it went away meanwhile
        return {"scheduler": address, "error": f"cannot ask it: {error}", "workers": []}
    finally:
        client.close()  # type: ignore[no-untyped-call]
    workers = [
        {
            "name": str(w.get("name", "")),
            "address": address_,
            "threads": int(w.get("nthreads", 0)),
            "tables": len(processing.get(address_, ())),
            "memory": int(w.get("metrics", {}).get("memory", 0)),
        }
        for address_, w in sorted(info.get("workers", {}).items())
    ]
    return {"scheduler": address, "error": None, "workers": workers}
