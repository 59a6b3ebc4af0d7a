"""Tournament benchmark: games per second, and schedule creation time.

    python bench/tournament.py                 # everything (docker rows: only with an engine)
    python bench/tournament.py --no-docker     # local processes only
    python bench/tournament.py --schedule-only
    python bench/tournament.py --cluster       # scale-out, as root: Dask workers, own engines
    python bench/tournament.py --shipping      # bytes sent to a Dask cluster, per archive/table

Games per second: the example bots random, lowest, heuristic and random (as a 4th entrant) at tables
of 2 with duplicate deals, at concurrency 1 and 2, each bot a local process (`--sandbox local`) or a
fresh locked-down container per game (`--sandbox docker`), through the whole tournament path
(schedule, store, executor, match layer, one transaction per game). Bot start-up is included: that
is what a tournament pays.

Scale-out (``--cluster``, root: it starts Docker engines): a local cluster from
scripts/cluster-local.sh (one engine and one single-threaded Dask worker per worker, nothing
shared), the same 4 bots in Docker at tables of 2: games/s with 1 worker, then with 2 (the second
one added fresh), both after a warm-up run so that image builds are not counted; and the cost of
shipping a bot to a fresh worker: the bytes of its archive and of one table's spec as sent, and the
seconds from receiving the archive to an image ready on that worker's engine (digest check, unpack,
build).

Shipping (``--shipping``, no root, no Docker): the bytes the referee sends a local Dask cluster (two
single-threaded worker processes, each with its own artifact cache) for a 12-game round robin of 4
bots at tables of 2 in the local sandbox, two of them as large as a compiled and a Node bot (the
random and lowest example bots with 10 MB and 9 MB of incompressible files: a static Go binary with
gRPC and a Node bot's node_modules, 19 MB together); measured as the pickled size of each table's
spec as submitted plus the archives put into the cluster, and the archive bytes the workers fetched
from the cluster (worker to worker; the worker that holds a scattered copy counts it too).
Three runs on the same cluster: every spec carrying its archives (the way tables travelled before:
the baseline), then archives shipped once with empty worker caches, then again with warm caches; and
how many of Dask's "large graph" warnings each run raised.

Schedule creation: `take5_arena.referee.tournament.plan.schedule.make_schedule` for 10, 100 and
1,000 entrants at tables of 4, each entrant at 10 tables (40 games with duplicate deals), best of 3.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import os
import pickle
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path
from typing import TypedDict
from unittest import mock

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from take5_arena.referee.store import Store
from take5_arena.referee.tournament import run_tournament, submit
from take5_arena.referee.tournament.plan.schedule import make_schedule
from take5_arena.referee.tournament.run.executors import local_cluster


def bench_schedule() -> None:
    print("schedule creation (tables of 4, 10 tables per entrant, duplicate deals), best of 3:")
    for n in (10, 100, 1000):
        best = float("inf")
        for _ in range(3):
            t0 = time.perf_counter()
            s = make_schedule(
                [f"bot{i:04d}@1" for i in range(n)], table_size=4, games=10 * n, seed=1
            )
            best = min(best, time.perf_counter() - t0)
        print(
            f"  {n:>5} entrants: {best * 1000:8.1f} ms  ({len(s.tables)} tables, {len(s.games)} "
            f"games, {s.mode}, pair spread {s.pair_spread}, table spread {s.table_spread})"
        )


def bench_games(sandbox: str, games: int) -> None:
    base = Path(tempfile.mkdtemp(prefix="take5-bench-"))
    try:
        entrants = base / "entrants"
        for name, folder in (
            ("random", "random"),
            ("lowest", "lowest"),
            ("heuristic", "heuristic"),
            ("random2", "random"),
        ):
            submit(entrants, ROOT / "example_bots" / folder, name, sandbox=sandbox)
        for concurrency in (1, 2):
            target = base / f"{sandbox}-{concurrency}"
            shutil.copytree(entrants, target)
            t0 = time.perf_counter()
            report = run_tournament(
                target,
                {"players": 2, "games": games, "sandbox": sandbox, "concurrency": concurrency},
            )
            seconds = time.perf_counter() - t0
            with Store(target) as store:
                faults = sum(1 for g in store.results.seat_results() for kinds in g.faults if kinds)
            print(
                f"  {sandbox:>6}, concurrency {concurrency}: {report.played / seconds:6.2f} "
                f"games/s ({report.played} games in {seconds:.1f} s, {faults} seats with faults)"
            )
    finally:
        shutil.rmtree(base, ignore_errors=True)


class ShipLimits(TypedDict):
    """The sandbox limits a worker's launcher gets (SandboxLimits' fields of the same names)."""

    memory: str
    cpus: float
    pids: int


class ShipCost(TypedDict):
    unpack: float
    build: float
    host: str


def _ship(digest: str, data: bytes, limits: ShipLimits, base_image: str) -> ShipCost:
    """On a worker: what a first table costs it for one bot (digest check, unpack, image build)."""
    from take5_arena.referee.artifacts import materialize
    from take5_arena.referee.match.botref import parse_bot
    from take5_arena.referee.sandbox.launcher import DockerLauncher
    from take5_arena.referee.sandbox.limits import SandboxLimits

    t0 = time.perf_counter()
    folder = materialize(digest, data)
    t1 = time.perf_counter()
    launcher = DockerLauncher(limits=SandboxLimits(**limits), base_image=base_image)
    try:
        launcher.prepare([parse_bot(str(folder))])
    finally:
        launcher.close()
    return {
        "unpack": t1 - t0,
        "build": time.perf_counter() - t1,
        "host": os.environ.get("DOCKER_HOST", ""),
    }


def bench_cluster(games: int) -> None:
    import distributed

    from take5_arena.referee.artifacts import ArtifactStore
    from take5_arena.referee.tournament.plan.settings import TournamentSettings
    from take5_arena.referee.tournament.run.archives import ClusterArchive
    from take5_arena.referee.tournament.run.spec import SeatSpec, TableSpec

    script = ROOT / "scripts" / "cluster-local.sh"
    base = Path(tempfile.mkdtemp(prefix="t5b-", dir="/tmp"))  # short: engine sockets live under it
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    address = f"tcp://127.0.0.1:{port}"

    def cluster(*args: str) -> None:
        subprocess.run(
            ["bash", str(script), *args, "--root", str(base / "cluster")],
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )

    def play(target: Path) -> float:
        t0 = time.perf_counter()
        report = run_tournament(
            target,
            {
                "players": 2,
                "games": games,
                "sandbox": "docker",
                "concurrency": 2,
                "executor": f"dask:{address}",
            },
        )
        seconds = time.perf_counter() - t0
        if report.unplayed:
            raise SystemExit(f"{report.unplayed} games unplayed: {report.infra[:1]}")
        return report.played / seconds

    try:
        entrants = base / "entrants"
        for name, folder in (
            ("random", "random"),
            ("lowest", "lowest"),
            ("heuristic", "heuristic"),
            ("random2", "random"),
        ):
            submit(entrants, ROOT / "example_bots" / folder, name, sandbox="docker")
        cluster("start", "--workers", "1", "--threads", "1", "--port", str(port))
        copies = [Path(shutil.copytree(entrants, base / f"t{i}")) for i in range(3)]
        play(copies[0])  # warm-up: worker 1 builds the images
        one = play(copies[1])
        cluster("start", "--workers", "2", "--threads", "1", "--port", str(port))
        with Store(entrants) as store:
            version = next(v for v in store.versions.all() if v.name == "heuristic")
            others = [v for v in store.versions.all() if v.name in ("random", "lowest")]
            settings = TournamentSettings.from_json(store.settings.get()).updated(
                {"players": 2, "games": games, "sandbox": "docker"}
            )
        assert version.artifact is not None  # submitted just now: every version has its archive
        archive = ArtifactStore(entrants / "artifacts").get(version.artifact)
        with distributed.Client(address, timeout=30) as client:  # type: ignore[no-untyped-call]
            fresh = [
                a
                for a, w in client.scheduler_info()["workers"].items()
                if w["name"] == "take5-worker-2"
            ]
            limits: ShipLimits = {
                "memory": settings.limits.memory,
                "cpus": settings.limits.cpus,
                "pids": settings.limits.pids,
            }
            t0 = time.perf_counter()
            cost = client.submit(
                _ship,
                archive.digest,
                archive.data,
                limits,
                settings.base_image,
                workers=fresh,
                pure=False,
            ).result()
            total = time.perf_counter() - t0
            for v in others:  # the other bots too, so that the 2-worker figure counts no build
                assert v.artifact is not None
                data = ArtifactStore(entrants / "artifacts").get(v.artifact).data
                client.submit(
                    _ship,
                    v.artifact,
                    data,
                    limits,
                    settings.base_image,
                    workers=fresh,
                    pure=False,
                ).result()
        with Store(copies[1]) as store:
            record_bytes = max(len(pickle.dumps(r)) for _, r in store.records.all())
            seated = [v for v in store.versions.all() if v.name in ("heuristic", "lowest")]
            spec = TableSpec(
                table=0,
                deal_seed=1,
                seats=tuple(
                    SeatSpec(v.key, v.name, v.version, v.id, v.bot_dir, v.artifact) for v in seated
                ),
                games=(("0" * 16, 0), ("1" * 16, 1)),
                settings=settings,
                sources={  # as a Dask executor sends it: names, the archives once per worker
                    v.artifact: ClusterArchive(f"take5-archive-{v.artifact[7:31]}-{'0' * 12}")
                    for v in seated
                    if v.artifact
                },
            )
            spec_bytes = len(pickle.dumps(spec))
        two = play(copies[2])
        print(
            f"scale-out (4 bots in Docker, tables of 2, {games} games, one single-threaded worker "
            "per engine):"
        )
        print(f"  1 worker : {one:6.2f} games/s")
        print(f"  2 workers: {two:6.2f} games/s  ({two / one:.2f}x the 1-worker figure, same run)")
        print(
            f"  shipping a bot to a fresh worker: archive {archive.size:,} bytes; digest check + "
            f"unpack {cost['unpack'] * 1000:.0f} ms, image build {cost['build']:.1f} s, "
            f"{total:.1f} s from submit to ready"
        )
        print(
            f"  a table's spec going out (2 seats, their archives named): {spec_bytes:,} bytes; "
            f"a game record coming back: up to {record_bytes:,} bytes"
        )
    finally:
        cluster("stop")
        shutil.rmtree(base, ignore_errors=True)


def _set_cache(path: str) -> None:
    from take5_arena.referee.artifacts import CACHE_ENV

    os.environ[CACHE_ENV] = path


def _fetched() -> int:
    from take5_arena.referee.tournament.run import archives

    return archives.fetched_bytes


def bench_shipping() -> None:
    import warnings

    import distributed

    from take5_arena.referee.tournament.run import driver, shipping
    from take5_arena.referee.tournament.run.spec import TableSpec

    class Counting(shipping.Shipping):
        """The run's shipping, counting the pickled specs it hands out."""

        def __init__(self, inner: shipping.Shipping) -> None:
            self.inner = inner
            self.spec_bytes = 0
            self.tables = 0

        def ship(self, spec: TableSpec) -> TableSpec:
            out = self.inner.ship(spec)
            self.spec_bytes += len(pickle.dumps(out))
            self.tables += 1
            return out

        def retain(self, digests: Iterable[str]) -> None:
            self.inner.retain(digests)

        def forget(self, worker: str) -> None:
            self.inner.forget(worker)

    base = Path(tempfile.mkdtemp(prefix="take5-ship-"))
    # The workers are other processes: they import this checkout, as the referee does.
    os.environ["PYTHONPATH"] = os.pathsep.join(
        [str(ROOT), str(ROOT / "sdk"), *filter(None, [os.environ.get("PYTHONPATH")])]
    )
    entrants = base / "entrants"
    sizes = {"compiled": 10_000_000, "node": 9_000_000}
    for name, folder in (
        ("compiled", "random"),
        ("node", "lowest"),
        ("heuristic", "heuristic"),
        ("random", "random"),
    ):
        bot = base / "bots" / name
        shutil.copytree(ROOT / "example_bots" / folder, bot)
        if name in sizes:
            (bot / "payload.bin").write_bytes(os.urandom(sizes[name]))
        submit(entrants, bot, name, sandbox="local")
    original = shipping.shipping_for  # what driver calls (its import of it), patched for each run
    rows: list[tuple[str, int, int, int, int, int, float]] = []
    try:
        with (
            local_cluster(2) as cluster,
            distributed.Client(cluster) as client,  # type: ignore[no-untyped-call]
        ):
            client.wait_for_workers(2)
            workers = sorted(client.scheduler_info()["workers"])
            for label, inline, fresh in (
                ("every spec carries its archives (before)", True, True),
                ("each archive once, empty worker caches", False, True),
                ("each archive once, warm worker caches", False, False),
            ):
                if fresh:
                    for i, worker in enumerate(workers):
                        cache = base / f"cache-{len(rows)}-{i}"
                        client.run(_set_cache, str(cache), workers=[worker])
                counting: list[Counting] = []

                def measured(
                    executor: concurrent.futures.Executor,
                    inline: bool = inline,
                    counting: list[Counting] = counting,
                ) -> Counting:
                    inner = shipping.InlineShipping() if inline else original(executor)
                    counting.append(Counting(inner))
                    return counting[-1]

                target = Path(shutil.copytree(entrants, base / f"run-{len(rows)}"))
                before = sum(client.run(_fetched).values())
                with (
                    warnings.catch_warnings(record=True) as caught,
                    mock.patch.object(driver, "shipping_for", measured),
                ):
                    warnings.simplefilter("always")
                    t0 = time.perf_counter()
                    report = run_tournament(
                        target,
                        {
                            "players": 2,
                            "games": 12,
                            "sandbox": "local",
                            "concurrency": 2,
                            "executor": f"dask:{cluster.scheduler_address}",
                        },
                    )
                    seconds = time.perf_counter() - t0
                if report.unplayed:
                    raise SystemExit(f"{report.unplayed} games unplayed: {report.infra[:1]}")
                large = sum("large graph" in str(w.message) for w in caught)
                fetched = sum(client.run(_fetched).values()) - before
                c = counting[-1]
                sent = c.spec_bytes + c.inner.scattered_bytes
                rows.append((label, sent, c.spec_bytes, c.tables, fetched, large, seconds))
    finally:
        shutil.rmtree(base, ignore_errors=True)
    mb = 1e6
    baseline = rows[0][1]
    print(
        "shipping (4 bots, 2 as large as a Go and a Node bot: 19 MB of archives; 12 games at "
        "tables of 2; 2 Dask workers):"
    )
    for label, sent, specs, tables, fetched, large, seconds in rows:
        print(
            f"  {label}: {sent / mb:6.2f} MB sent by the referee ({sent / baseline:.3f}x; "
            f"{tables} table specs {specs / mb:.2f} MB), {fetched / mb:6.2f} MB fetched "
            f"from the cluster by workers, {large} large-graph warnings, {seconds:.1f} s"
        )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--no-docker", action="store_true")
    parser.add_argument("--schedule-only", action="store_true")
    parser.add_argument(
        "--cluster", action="store_true", help="only the scale-out figures (needs root)"
    )
    parser.add_argument(
        "--shipping", action="store_true", help="only the bytes sent to a Dask cluster"
    )
    parser.add_argument("--games", type=int, default=24, help="games per measurement (default 24)")
    args = parser.parse_args()
    if args.cluster:
        bench_cluster(args.games)
        return
    if args.shipping:
        bench_shipping()
        return
    bench_schedule()
    if args.schedule_only:
        return
    print(f"games per second (4 example bots, tables of 2, duplicate deals, {args.games} games):")
    bench_games("local", args.games)
    if not args.no_docker:
        from take5_arena.referee.sandbox.engine import engine_answers

        if engine_answers():
            bench_games("docker", args.games)
        else:
            print("  docker: skipped (no engine answers; scripts/setup-docker.sh)")


if __name__ == "__main__":
    main()
