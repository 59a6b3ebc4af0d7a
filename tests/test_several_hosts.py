"""What several hosts of one arena share through its PostgreSQL store, beyond the ladder
(docs/operators/several-hosts.md): the web pages' sign-ins, which any web process knows and any
ends. Real `referee serve --no-ladder --web` processes on copies of the arena's directory, a real
server (scripts/setup-postgres.sh), real HTTP."""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import shutil
import signal
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import psycopg
import pytest
from arena_support import WebServer, add_author, cli

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
