"""What several hosts of one arena share through its PostgreSQL store, beyond the ladder
(docs/operators/several-hosts.md): the web pages' sign-ins, which any web process knows and any
ends, and the bots' archives, which a referee on any host gets from the store. Real `referee
serve` processes on copies of the arena's directory, a real server (scripts/setup-postgres.sh),
real HTTP."""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import shutil
import signal
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import psycopg
import pytest
from arena_support import Server, WebServer, add_author, cli, wait_until
from support import EXAMPLES

from take5_arena.referee.artifacts import ArtifactError, pack
from take5_arena.referee.store import Store, archives

pytestmark = [pytest.mark.postgres, pytest.mark.slow]


def _host(directory: Path, name: str) -> Path:
    """Another host's copy of the arena's directory (the store's URL, the secrets), nothing else
    shared: no file of one process is read by another."""
    copy = directory.with_name(name)
    shutil.copytree(directory, copy, ignore=shutil.ignore_patterns("run.lock", "site"))
    return copy


@contextlib.contextmanager
def _webs(*directories: Path) -> Iterator[list[WebServer]]:
    servers: list[WebServer] = []
    try:
        servers.extend(WebServer(directory) for directory in directories)
        yield servers
    finally:
        for server in servers:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(server.proc.pid, signal.SIGTERM)
            server.proc.wait(30)
            assert "Traceback" not in server.log, server.log


def _browser(url: str) -> httpx.Client:
    return httpx.Client(base_url=url, headers={"origin": url}, follow_redirects=False, timeout=60)


def _sign_in(url: str, token: str) -> tuple[str, str]:
    """Sign in on the web process at ``url``: the session's cookie and its page's CSRF token."""
    with _browser(url) as http:
        done = http.post("/signin", data={"token": token})
        assert done.status_code == 303, done.text
        page = http.get("/me")
        assert page.status_code == 200, page.text
        csrf = re.search(r'name="csrf" value="([^"]+)"', page.text)
        assert csrf is not None
        return str(http.cookies["take5"]), csrf.group(1)


def _recorded(directory: Path) -> int:
    with Store(directory, readonly=True) as store:
        return store.results.recorded_count()


def _me(url: str, cookie: str) -> int:
    """The status of ``/me`` on the web process at ``url`` for this cookie (303: signed out)."""
    return httpx.get(url + "/me", cookies={"take5": cookie}, timeout=60).status_code


def test_a_sign_in_on_one_web_process_holds_on_the_other_and_ends_on_both(
    tmp_path: Path, new_postgres_database: Callable[[], str]
) -> None:
    """No sticky sessions: a browser signed in on web process A is signed in on B (its form's
    CSRF token accepted there too); signing out on B ends it on A at once, and so does a
    revocation made on another host's command line. The store holds the session's id only as
    its SHA-256."""
    url = new_postgres_database()
    directory = tmp_path / "A"
    token = add_author(directory, "dave", "--store", url)
    other = add_author(directory, "erin")
    with _webs(directory, _host(directory, "B")) as (a, b):
        cookie, csrf = _sign_in(a.url, token)
        assert _me(a.url, cookie) == 200 and _me(b.url, cookie) == 200
        with _browser(b.url) as http:  # a form shown by A, posted to B
            http.cookies.set("take5", cookie)
            withdrawn = http.post("/me/bots/nothing/withdraw", data={"csrf": csrf})
            assert withdrawn.status_code != 403, withdrawn.text
            assert (
                http.post("/me/bots/nothing/withdraw", data={"csrf": "x" * 43}).status_code == 403
            )
        with psycopg.connect(url) as db:
            kept = [bytes(r[0]) for r in db.execute("SELECT id_hash FROM arena_sessions")]
        assert kept == [hashlib.sha256(cookie.encode()).digest()]
        with _browser(b.url) as http:  # signed out on B ...
            http.cookies.set("take5", cookie)
            assert http.post("/signout", data={"csrf": csrf}).status_code == 303
        assert _me(a.url, cookie) == 303 and _me(b.url, cookie) == 303  # ... is out on A at once

        cookie, _ = _sign_in(b.url, token)
        erins, _ = _sign_in(a.url, other)
        assert _me(a.url, cookie) == 200
        revoked = cli("authors", "revoke", "dave", "-t", str(_host(directory, "C")))
        assert revoked.returncode == 0, revoked.stderr
        assert _me(a.url, cookie) == 303 and _me(b.url, cookie) == 303
        assert _me(a.url, erins) == 200 and _me(b.url, erins) == 200  # another author stays


def test_a_version_validated_on_one_host_is_played_by_a_referee_on_another(
    tmp_path: Path, new_postgres_database: Callable[[], str]
) -> None:
    """The archives travel through the store: bots validated in A are played by a referee whose
    directory B holds nothing but the store's URL (no copy of A's ``artifacts/``)."""
    url = new_postgres_database()
    a, b = tmp_path / "A", tmp_path / "B"
    for name in ("random", "lowest"):
        done = cli(
            "submit", str(EXAMPLES / name), "--name", name, "-t", str(a), "--sandbox", "local",
            "--store", url, timeout=300,
        )  # fmt: skip
        assert done.returncode == 0, done.stdout + done.stderr
    b.mkdir()
    shutil.copy2(a / "store.url", b / "store.url")
    server = Server(b, "--sandbox", "local", "--players", "2", "-j", "1", "--bootstrap", "0")
    try:
        wait_until(lambda: _recorded(b) >= 2, what="games played in B", server=server)
    finally:
        assert server.stop() == 0, server.log
    assert "left to the other referees" not in server.log
    with Store(b, readonly=True) as store:
        digests = {str(v.artifact) for v in store.versions.all()}
    assert len(digests) == 2
    for digest in digests:  # B's own copies, each as A validated it
        assert (b / "artifacts" / f"{digest[7:]}.tar").read_bytes() == (
            a / "artifacts" / f"{digest[7:]}.tar"
        ).read_bytes()


def test_an_archive_changed_in_the_store_is_refused_and_never_played(
    tmp_path: Path, postgres_url: str
) -> None:
    """A stored archive whose bytes no longer match its digest is refused by the host that
    fetches it (nothing written in its ``artifacts/``), and the tables that need it are not
    played there (a TournamentError, which the ladder records as an infrastructure failure)."""
    a, b = tmp_path / "A", tmp_path / "B"
    artifact = pack(EXAMPLES / "lowest")
    with Store(a, create=True, url=postgres_url) as store:
        store.archives.put(artifact)
    b.mkdir()
    shutil.copy2(a / "store.url", b / "store.url")
    with psycopg.connect(postgres_url) as db:
        db.execute(
            "UPDATE archive_blobs SET data = data || '\\x00'::bytea WHERE digest = %s",
            (artifact.digest,),
        )
    with Store(b) as store:
        with pytest.raises(ArtifactError, match="does not match its digest"):
            store.archives.get(artifact.digest)
        assert not (b / "artifacts").exists() or not any((b / "artifacts").iterdir())
    with Store(a, readonly=True) as store:  # the validating host's own file is still good
        assert store.archives.get(artifact.digest) == artifact


def test_a_refused_archive_is_asked_of_the_store_again_later_not_every_second(
    tmp_path: Path, postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The ladder looks for its tables every second: a digest the store refused is not read out of
    the database again at each look, but after a wait that doubles (archives.REFETCH_FIRST, up to
    REFETCH_LONGEST); once the store's copy is good again, the next ask after the wait takes it."""
    monkeypatch.setattr(archives, "REFETCH_FIRST", 0.5)
    monkeypatch.setattr(archives, "REFETCH_LONGEST", 1.0)
    a, b = tmp_path / "A", tmp_path / "B"
    artifact = pack(EXAMPLES / "lowest")
    with Store(a, create=True, url=postgres_url) as store:
        store.archives.put(artifact)
    b.mkdir()
    shutil.copy2(a / "store.url", b / "store.url")

    def damage(data: str) -> None:
        with psycopg.connect(postgres_url) as db:
            db.execute(
                f"UPDATE archive_blobs SET data = {data} WHERE digest = %s", (artifact.digest,)
            )

    damage("data || '\\x00'::bytea")
    with Store(b) as store:
        reads: list[str] = []
        fetch = store.archives._fetch  # the seam: one read of the database
        monkeypatch.setattr(store.archives, "_fetch", lambda d: reads.append(d) or fetch(d))
        started = time.monotonic()
        while time.monotonic() - started < 2.4:  # the ladder's looks, far more often than 1/s
            with pytest.raises(ArtifactError, match="does not match its digest"):
                store.archives.get(artifact.digest)
            time.sleep(0.05)
        assert 2 <= len(reads) <= 4, reads  # at 0, 0.5, 1.5 (then 2.5): not ~48 reads
        damage("substring(data from 1 for length(data) - 1)")  # mended in the store
        time.sleep(1.1)
        assert store.archives.get(artifact.digest) == artifact
        assert store.archives.get(artifact.digest) == artifact  # from its own file now


BUILDS = "this process builds the site"
PLAY = ("--sandbox", "local", "--players", "2", "-j", "1", "--bootstrap", "0")


def test_one_process_builds_the_site_and_another_takes_over_when_it_dies(
    tmp_path: Path, new_postgres_database: Callable[[], str]
) -> None:
    """Of the processes on one store, the holder of the store's site claim alone builds the site
    (the two web processes keep the standings only); when it is killed, one process, and one
    only, of those left builds it from the next publication on."""
    url = new_postgres_database()
    a = tmp_path / "A"
    for name in ("random", "lowest"):
        done = cli(
            "submit", str(EXAMPLES / name), "--name", name, "-t", str(a), "--sandbox", "local",
            "--store", url, timeout=300,
        )  # fmt: skip
        assert done.returncode == 0, done.stdout + done.stderr
    every = ("--publish-every-seconds", "1")
    first = Server(_host(a, "R1"), *PLAY, *every)
    servers = [first]
    try:
        first.wait_for(BUILDS, timeout=120)
        webs = [
            Server(_host(a, name), *PLAY, *every, "--no-ladder", "--web", "127.0.0.1:0")
            for name in ("W1", "W2")
        ]
        servers += webs
        for web in webs:
            web.wait_for("another process of this store builds the site", timeout=120)
        assert not any((web.directory / "site").exists() for web in webs)
        first.kill()
        second = Server(_host(a, "R2"), *PLAY, *every)
        servers.append(second)
        left = [second, *webs]
        wait_until(lambda: any(BUILDS in s.log for s in left), what="a new builder", timeout=120)
        builder = next(s for s in left if BUILDS in s.log)
        site = builder.directory / "site"
        wait_until(site.exists, what="the new builder's site")
        time.sleep(5)  # the others' next publications (every second while games land)
        assert [s for s in left if BUILDS in s.log] == [builder]
        assert [s for s in left if (s.directory / "site").exists()] == [builder]
    finally:
        for server in servers:
            if server.proc.poll() is None:
                server.kill()
