"""Each bot once per worker (take5_arena/referee/tournament/run/shipping.py), on a real Dask
cluster.

A ``dask:local`` cluster of two worker processes (loopback only) plays tables of two bots in the
local sandbox: ``heavy`` (the random example bot with a 1 MB file beside it, so that its archive
stands out in every byte count, as a compiled or Node bot's would) and ``lowest``. Each test gives
the workers fresh, empty artifact caches of their own. What is checked: a spec never carries an
archive; a second table for the same bots puts nothing into the cluster again; a worker whose cache
lacks a bot fetches it from the cluster (from the other worker) and plays; a worker that holds
every digest is sent nothing; a worker that lacks an archive it was thought to hold fails the table
as infrastructure, and the retry ships it; an archive that does not match its digest is refused
before anything is unpacked; and thread executors read the tournament's own files as before.
"""

from __future__ import annotations

import dataclasses
import os
import pickle
import shutil
from pathlib import Path

import pytest
from support import EXAMPLES

from take5 import Settings
from take5_arena.referee.artifacts import CACHE_ENV, ArtifactStore, is_cached
from take5_arena.referee.kinds import SandboxKind
from take5_arena.referee.store import Store
from take5_arena.referee.tournament import SeatSpec, TableSpec, run_table, submit
from take5_arena.referee.tournament.plan.settings import TournamentSettings
from take5_arena.referee.tournament.run.archives import ClusterArchive, StoredArchive
from take5_arena.referee.tournament.run.executors import avoiding, open_executor
from take5_arena.referee.tournament.run.shipping import ClusterShipping, shipping_for

pytest.importorskip("distributed")

SETTINGS = TournamentSettings(game=Settings(players=2), sandbox=SandboxKind.LOCAL)


@pytest.fixture(scope="module")
def tournament(tmp_path_factory) -> Path:
    """A tournament with two bots: ``heavy`` (1 MB more than its code) and ``lowest``."""
    base = tmp_path_factory.mktemp("shipping")
    heavy = base / "heavy"
    shutil.copytree(EXAMPLES / "random", heavy)
    (heavy / "weights.bin").write_bytes(os.urandom(1 << 20))
    target = base / "t"
    submit(target, heavy, "heavy", sandbox="local")
    submit(target, EXAMPLES / "lowest", "lowest", sandbox="local")
    return target


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """A ``dask:local`` executor with two workers, and its client."""
    before = os.environ.get(CACHE_ENV)
    os.environ[CACHE_ENV] = str(tmp_path_factory.mktemp("first-cache"))
    try:
        with open_executor("dask:local", 2) as (executor, info):
            client = executor._client  # type: ignore[attr-defined]
            client.wait_for_workers(2)
            yield executor, info, client
    finally:
        if before is None:
            os.environ.pop(CACHE_ENV, None)
        else:
            os.environ[CACHE_ENV] = before


def _set_cache(path: str) -> None:
    os.environ[CACHE_ENV] = path


def _fetched() -> int:
    from take5_arena.referee.tournament.run import archives

    return archives.fetched_bytes


def _fresh_caches(client, tmp_path: Path) -> dict[str, Path]:
    """Every worker gets an empty artifact cache of its own: worker address -> its folder."""
    caches = {}
    for i, worker in enumerate(sorted(client.scheduler_info()["workers"])):
        caches[worker] = tmp_path / f"cache-{i}"
        client.run(_set_cache, str(caches[worker]), workers=[worker])
    return caches


def _spec(tournament: Path, table: int) -> TableSpec:
    """A table of heavy against lowest, its archives named as table_specs names them."""
    with Store(tournament) as store:
        versions = [v for v in store.versions.current() if v.name in ("heavy", "lowest")]
    archives = ArtifactStore(tournament / "artifacts")
    seats = tuple(SeatSpec(v.key, v.name, v.version, v.id, v.bot_dir, v.artifact) for v in versions)
    return TableSpec(
        table,
        100 + table,
        seats,
        ((f"t{table}-g1", 0), (f"t{table}-g2", 1)),
        SETTINGS,
        sources={s.artifact: StoredArchive(str(archives.path(s.artifact))) for s in seats},
    )


def _sizes(tournament: Path, spec: TableSpec) -> dict[str, int]:
    archives = ArtifactStore(tournament / "artifacts")
    return {digest: archives.get(digest).size for digest in spec.sources}


def _play(executor, spec: TableSpec, worker: str):
    return executor.submit(run_table, spec, workers=[worker]).result()


def test_a_second_table_sends_no_archive_and_an_empty_cache_fetches_it(
    tournament, cluster, tmp_path
):
    executor, _info, client = cluster
    caches = _fresh_caches(client, tmp_path)
    first_worker, second_worker = sorted(caches)
    shipping = ClusterShipping(client)
    first = shipping.ship(_spec(tournament, 1))
    sizes = _sizes(tournament, first)
    assert max(sizes.values()) > 1 << 20
    # Both workers said their caches lack both bots: each archive went into the cluster once.
    assert shipping.scattered_bytes == sum(sizes.values())
    assert all(isinstance(s, ClusterArchive) for s in first.sources.values())
    assert len(pickle.dumps(first)) < 20_000  # names, not archives
    second = shipping.ship(_spec(tournament, 2))
    assert shipping.scattered_bytes == sum(sizes.values())  # nothing again
    assert len(pickle.dumps(second)) < 20_000

    # Each worker, its cache empty, fetches the archives from the cluster and plays.
    before = client.run(_fetched)
    for spec, worker in ((first, first_worker), (second, second_worker)):
        outcomes = _play(executor, spec, worker)
        assert [o.game_id for o in outcomes] == [g for g, _ in spec.games]
        assert all(o.ok for o in outcomes), [o.infra_detail for o in outcomes]
        assert {s["entrant"] for o in outcomes for s in o.record["seats"]} == {
            "heavy@1",
            "lowest@1",
        }
    after = client.run(_fetched)
    for worker in caches:
        assert after[worker] - before[worker] == sum(sizes.values())
        assert all(is_cached(d, caches[worker]) for d in sizes)

    # A third table for the same bots: the workers now hold both digests; asked first, nothing
    # is sent to them.
    warm = ClusterShipping(client)
    third = warm.ship(_spec(tournament, 3))
    assert warm.scattered_bytes == 0
    outcomes = _play(executor, third, second_worker)
    assert all(o.ok for o in outcomes)
    assert client.run(_fetched) == after  # played from the caches
    shipping.close()
    warm.close()


def test_a_worker_that_lost_an_archive_is_asked_again(tournament, cluster, tmp_path):
    """The referee was told a worker had a bot; the worker's cache was pruned since: the table is
    an ``artifact`` infrastructure failure (rates no one), and once the driver forgets the answer
    the archive is shipped and the table plays there."""
    executor, _info, client = cluster
    caches = _fresh_caches(client, tmp_path)
    worker = sorted(caches)[0]
    shipping = ClusterShipping(client)
    _play(executor, shipping.ship(_spec(tournament, 4)), worker)  # worker 0 has both now
    shipping.close()
    warm = ClusterShipping(client)
    spec = _spec(tournament, 5)
    warm.cached = {d: set(caches) for d in spec.sources}  # as if both had said yes
    shutil.rmtree(caches[worker])  # pruned
    outcomes = _play(executor, warm.ship(spec), worker)
    assert warm.scattered_bytes == 0
    assert all(o.infra_kind == "artifact" and o.worker == worker for o in outcomes)
    assert "not in the cluster" in (outcomes[0].infra_detail or "")
    warm.forget(worker)
    outcomes = _play(executor, warm.ship(spec), worker)
    assert warm.scattered_bytes == sum(_sizes(tournament, spec).values())
    assert all(o.ok for o in outcomes), [o.infra_detail for o in outcomes]
    warm.close()


def test_an_archive_that_does_not_match_its_digest_is_refused(tournament, cluster, tmp_path):
    executor, _info, client = cluster
    caches = _fresh_caches(client, tmp_path)
    worker = sorted(caches)[1]
    spec = _spec(tournament, 6)
    heavy = next(s.artifact for s in spec.seats if s.name == "heavy")
    assert heavy is not None
    data = bytearray(ArtifactStore(tournament / "artifacts").get(heavy).data)
    data[-600] ^= 0xFF  # one byte of the archive changed in the cluster
    name = "take5-archive-tampered-test"
    future = client.scatter({name: bytes(data)}, broadcast=False, hash=False)[name]
    client.publish_dataset(future, name=name, override=True)
    other = ClusterShipping(client)
    try:
        tampered = other.ship(spec)
        tampered = dataclasses.replace(
            tampered, sources={**tampered.sources, heavy: ClusterArchive(name)}
        )
        outcomes = _play(executor, tampered, worker)
    finally:
        other.close()
        client.unpublish_dataset(name)
    assert all(o.infra_kind == "artifact" for o in outcomes)
    assert "does not match its digest" in (outcomes[0].infra_detail or "")
    assert not is_cached(heavy, caches[worker])
    assert not any(p.name.startswith(".") for p in caches[worker].iterdir())  # nothing left over

    # The referee's own copy changed on disk: it is not put into the cluster at all.
    corrupt = tmp_path / "corrupt.tar"
    corrupt.write_bytes(bytes(data))
    shipping = ClusterShipping(client)
    shipped = shipping.ship(
        dataclasses.replace(spec, sources={**spec.sources, heavy: StoredArchive(str(corrupt))})
    )
    others = sum(n for d, n in _sizes(tournament, spec).items() if d != heavy)
    assert shipping.scattered_bytes == others
    outcomes = _play(executor, shipped, worker)
    assert all(o.infra_kind == "artifact" for o in outcomes)
    shipping.close()


def test_thread_executors_read_the_tournaments_files(tournament, tmp_path, monkeypatch):
    """Threads (and processes) are given the specs as they are: the archive is read from the
    tournament's artifacts/ folder by the worker whose cache lacks it, and played."""
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache"))
    spec = _spec(tournament, 7)
    with open_executor("local", 1) as (executor, _info):
        assert shipping_for(executor).ship(spec) is spec
        outcomes = executor.submit(run_table, spec).result()
    assert all(o.ok for o in outcomes), [o.infra_detail for o in outcomes]
    assert all(is_cached(d, tmp_path / "cache") for d in spec.sources)


def test_a_run_recovers_when_workers_said_they_held_what_they_lack(
    tournament, cluster, tmp_path, monkeypatch
):
    """Through the driver: every worker is taken to hold every bot (as if it had said so), but
    their caches are empty. Each table fails as ``artifact`` on the worker that lacked it (rating no
    one), the driver forgets what that worker said, and the retry ships the archive: every game is
    played, and the archives went into the cluster."""
    from take5_arena.referee.tournament import run_tournament
    from take5_arena.referee.tournament.run import shipping

    real = shipping.ClusterShipping._ship_one
    told: set[str] = set()
    scattered: list[int] = []

    def said_yes_first(self, digest, source):
        if digest not in told:
            told.add(digest)
            self.cached[digest] = self._workers()
        out = real(self, digest, source)
        scattered.append(self.scattered_bytes)
        return out

    monkeypatch.setattr(shipping.ClusterShipping, "_ship_one", said_yes_first)
    _executor, _info, client = cluster
    caches = _fresh_caches(client, tmp_path)
    target = tmp_path / "t"
    shutil.copytree(tournament, target)
    report = run_tournament(
        target,
        {
            "players": 2,
            "games": 4,
            "sandbox": "local",
            "executor": f"dask:{client.scheduler.address}",
            "concurrency": 2,
            "retries": 4,
        },
        retry_delay=0.1,
    )
    assert report.exit_code == 0 and report.played == 4 and not report.unplayed
    assert report.infra and {kind for _, kind, _ in report.infra} == {"artifact"}
    assert max(scattered) >= max(_sizes(tournament, _spec(tournament, 0)).values())
    for digest in _spec(tournament, 0).sources:
        assert any(is_cached(digest, cache) for cache in caches.values())


def _scrape(client, worker: str) -> dict[str, float]:
    """The worker's own /metrics page (Dask's, on its dashboard port), over HTTP: take5 lines."""
    import urllib.request

    port = client.scheduler_info()["workers"][worker]["services"]["dashboard"]
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=30) as page:
        text = page.read().decode()
    values = {}
    for line in text.splitlines():
        if line.startswith("take5_worker_"):
            name, _, value = line.rpartition(" ")
            values[name] = float(value)
    return values


def test_each_worker_serves_its_own_tables_on_its_metrics_page(tournament, cluster, tmp_path):
    """A worker's tables, games and engine are on the /metrics page Dask already serves for it
    (take5_arena/referee/tournament/run/worker_metrics.py), put there by the referee's plugin."""
    executor, _info, client = cluster
    caches = _fresh_caches(client, tmp_path)
    first, second = sorted(caches)
    before = {w: _scrape(client, w) for w in caches}
    assert "take5_worker_engine_up" in before[first]
    shipping = ClusterShipping(client)
    spec = shipping.ship(_spec(tournament, 20))
    outcomes = _play(executor, spec, first)
    assert all(o.ok for o in outcomes)
    shipping.close()
    after = {w: _scrape(client, w) for w in caches}
    played = after[first]["take5_worker_games_total"] - before[first]["take5_worker_games_total"]
    assert played == len(spec.games)
    assert (
        after[first]["take5_worker_tables_total"] == before[first]["take5_worker_tables_total"] + 1
    )
    assert after[first]["take5_worker_tables_in_flight"] == 0
    assert after[second]["take5_worker_games_total"] == before[second]["take5_worker_games_total"]


def test_work_steered_away_from_a_worker_goes_to_every_other(cluster, monkeypatch):
    """`executors.avoiding` names every healthy worker, even where the scheduler's summary
    (``scheduler_info()["workers"]``, which some distributed releases cut to 5) lists fewer."""
    executor, info, client = cluster
    workers = sorted(client.nthreads())
    assert len(workers) == 2
    monkeypatch.setattr(client, "scheduler_info", lambda *a, **k: {"workers": {}})
    steer = avoiding(executor, info, {workers[0]})
    assert steer == {"workers": [workers[1]], "allow_other_workers": True}
    assert avoiding(executor, info, set(workers)) == {}
