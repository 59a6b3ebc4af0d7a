"""X-Forwarded-For (take5_arena/web/proxies.py): a real `referee serve --web` on loopback that
trusts one proxy address (127.0.0.5), attacked from other loopback addresses. A direct client
cannot move its requests, sign-ins or connections to another address by sending the header; the
trusted proxy's visitors are limited one by one, and the proxy itself is not held to one address's
connection cap.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from arena_support import WebServer, web_arena
from support import referee_env

from take5_arena.web import defaults
from take5_arena.web.proxies import Proxies

httpx = pytest.importorskip("httpx")

PROXY = "127.0.0.5"
BURST = int(defaults.CLIENT_RATE.burst)
SIGNINS = int(defaults.SIGNIN_RATE.burst)


@pytest.fixture(scope="module")
def arena(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WebServer]:
    yield from web_arena(
        tmp_path_factory, "proxies", "--web-forwarded-allow-ips", f"{PROXY},10.99.0.0/16"
    )


def client(source: str) -> httpx.Client:
    return httpx.Client(transport=httpx.HTTPTransport(local_address=source), timeout=30)


def statuses(http: httpx.Client, url: str, n: int, forwarded: str | None = None) -> list[int]:
    """``n`` requests (each with a header that names another client unless ``forwarded``)."""
    out: list[int] = []
    for i in range(n):
        spoof = forwarded if forwarded is not None else f"198.51.100.{i % 250}"
        out.append(http.get(url + "/healthz", headers={"x-forwarded-for": spoof}).status_code)
    return out


def flood(source: str, url: str, forwarded: str | None = None) -> list[int]:
    """Requests from ``source`` on 16 connections at once, faster than the per-client rate
    however slow the machine: their statuses."""

    def one(_: int) -> list[int]:
        with client(source) as http:
            return statuses(http, url, 2 * BURST // 16 + 10, forwarded)

    with concurrent.futures.ThreadPoolExecutor(16) as pool:
        return [code for codes in pool.map(one, range(16)) for code in codes]


def test_a_direct_client_cannot_spoof_its_address(arena):
    # Every request names another client; the server counts them all as 127.0.0.2's.
    got = flood("127.0.0.2", arena.url)
    assert got.count(429) > BURST // 2, got
    # the flood emptied this address's request bucket: let it fill again, so that what refuses
    # the sign-ins below is the sign-in limit, not the request limit (which would take some of
    # the attempts and leave the sign-in bucket short of empty)
    time.sleep(BURST / defaults.CLIENT_RATE.per_second + 1)
    with client("127.0.0.2") as http:
        # a sign-in attempt from "someone else" is still this address's
        for i in range(SIGNINS + 2):
            r = http.post(
                arena.url + "/signin",
                data={"token": f"t5a_{i:012x}_nope"},
                headers={"x-forwarded-for": f"203.0.113.{i}", "origin": arena.url},
            )
        assert r.status_code == 429 and "sign-in attempts" in r.text, r.status_code


def test_behind_the_proxy_each_visitor_has_its_own_limits(arena):
    # visitor A uses up its own requests ...
    got = flood(PROXY, arena.url, "192.0.2.10")
    assert got.count(429) > BURST // 2, got
    with client(PROXY) as http:
        # ... and visitor B, through the same proxy, is not held by A's bucket; a left-most
        # address that B's browser made up is not believed either (the proxy appended B's)
        assert statuses(http, arena.url, 5, "192.0.2.10, 192.0.2.11") == [404] * 5
        # a chain through a second trusted hop (10.99.x) reaches the client before it
        assert statuses(http, arena.url, 5, "192.0.2.12, 10.99.0.7") == [404] * 5
        # sign-in attempts: A's are counted apart from B's
        codes = [
            http.post(
                arena.url + "/signin",
                data={"token": f"t5a_{i:012x}_nope"},
                headers={"x-forwarded-for": "192.0.2.20", "origin": arena.url},
            ).status_code
            for i in range(SIGNINS + 2)
        ]
        assert codes[-1] == 429 and codes[0] == 403, codes
        other = http.post(
            arena.url + "/signin",
            data={"token": "t5a_000000000000_nope"},
            headers={"x-forwarded-for": "192.0.2.21", "origin": arena.url},
        )
        assert other.status_code == 403, other.status_code


def _connect(source: str, port: int) -> socket.socket:
    sock = socket.socket()
    sock.bind((source, 0))
    sock.settimeout(10)
    sock.connect(("127.0.0.1", port))
    return sock


def _refused(sock: socket.socket) -> bool:
    sock.settimeout(0.3)
    try:
        return sock.recv(64).startswith(b"HTTP/1.1 429")
    except TimeoutError:
        return False


def test_the_proxy_holds_more_connections_than_one_address(arena):
    n = defaults.CONNECTIONS_PER_CLIENT + 16
    direct = [_connect("127.0.0.3", arena.port) for _ in range(n)]
    proxied = [_connect(PROXY, arena.port) for _ in range(n)]
    try:
        assert sum(_refused(s) for s in direct) >= 16
        assert not any(_refused(s) for s in proxied)
    finally:
        for s in direct + proxied:
            s.close()


def test_parsing():
    proxies = Proxies.parse("127.0.0.5, 10.0.0.0/8,::1")
    assert proxies.trusts("10.1.2.3") and proxies.trusts("::ffff:127.0.0.5")
    assert not proxies.trusts("127.0.0.1") and not Proxies.parse("").trusts("127.0.0.1")
    assert proxies.client("127.0.0.9", ["1.2.3.4"]) == "127.0.0.9"  # not a proxy: ignored
    assert proxies.client("127.0.0.5", []) == "127.0.0.5"  # no header: the proxy itself
    assert proxies.client("127.0.0.5", ["1.2.3.4, 5.6.7.8"]) == "5.6.7.8"
    assert proxies.client("127.0.0.5", ["1.2.3.4", "10.0.0.2"]) == "1.2.3.4"
    assert proxies.client("127.0.0.5", ["junk, 5.6.7.8:443"]) == "5.6.7.8"
    assert proxies.client("127.0.0.5", ["5.6.7.8, junk"]) == "127.0.0.5"
    with pytest.raises(ValueError, match="not an address"):
        Proxies.parse("10.0.0.0/8, example.org")


def test_a_bad_option_is_one_line_and_exit_2(tmp_path):
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "take5_arena",
            "serve",
            "-t",
            str(tmp_path / "T"),
            "--web",
            "127.0.0.1:0",
            "--web-forwarded-allow-ips",
            "nginx.local",
        ],
        capture_output=True,
        text=True,
        env=referee_env(),
        timeout=60,
    )
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert "not an address or a network" in done.stderr


def _nginx_config(tmp_path, listen: int, upstream: int) -> Path:
    """docs/operations.md's nginx settings as they are, on loopback: plain HTTP on ``listen``
    instead of 443 with TLS, the arena's port for 8080, and nginx's connections to the arena
    made from the trusted proxy address (``proxy_bind``)."""
    doc = (Path(__file__).parent.parent / "docs" / "operations.md").read_text()
    block = doc.split("```nginx\n", 1)[1].split("```", 1)[0]
    assert "listen 443 ssl;" in block and "proxy_set_header X-Forwarded-For $remote_addr;" in block
    block = block.replace("listen 443 ssl;", f"listen 127.0.0.1:{listen};\n    proxy_bind {PROXY};")
    block = block.replace("127.0.0.1:8080", f"127.0.0.1:{upstream}")
    conf = tmp_path / "nginx.conf"
    conf.write_text(
        f"daemon off;\npid {tmp_path}/nginx.pid;\nerror_log {tmp_path}/error.log;\n"
        "events { worker_connections 1024; }\n"
        f"http {{\naccess_log off;\nclient_body_temp_path {tmp_path}/body;\n"
        f"proxy_temp_path {tmp_path}/proxy;\n{block}\n}}\n"
    )
    return conf


def test_the_documented_nginx_settings_pass_the_real_client(arena, tmp_path):
    nginx = shutil.which("nginx")
    if nginx is None:
        pytest.skip("nginx is not installed (apt-get install nginx)")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    conf = _nginx_config(tmp_path, port, arena.port)
    checked = subprocess.run([nginx, "-t", "-c", str(conf)], capture_output=True, text=True)
    assert checked.returncode == 0, checked.stderr
    proc = subprocess.Popen([nginx, "-c", str(conf)], stderr=subprocess.PIPE, text=True)
    try:
        url = f"http://127.0.0.1:{port}"
        for _ in range(100):
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(url + "/healthz", timeout=2).status_code == 404:
                    break
            time.sleep(0.1)
        # A visitor behind nginx that names another address itself: the arena sees the visitor's
        # own address (nginx replaced the header), as its sign-in log line shows.
        with client("127.0.0.7") as http:
            r = http.post(
                url + "/signin",
                data={"token": arena.token},
                headers={"x-forwarded-for": "203.0.113.99", "origin": url},
            )
            assert r.status_code == 303, (r.status_code, r.text[:300])
        arena.wait_for(r"web: dave signed in from 127\.0\.0\.7")
        assert "203.0.113.99" not in arena.log
    finally:
        proc.terminate()
        proc.wait(30)


GUESSERS = 30


def _guesses(http: httpx.Client, url: str, n: int, forwarded: str | None = None) -> list[int]:
    """``n`` wrong sign-in tokens in a row: their statuses (403 wrong, 429 limited)."""
    headers = {"origin": url} | ({"x-forwarded-for": forwarded} if forwarded else {})
    return [
        http.post(
            url + "/signin", data={"token": f"t5a_{i:012x}_nope"}, headers=headers
        ).status_code
        for i in range(n)
    ]


def test_guessing_from_many_addresses_is_bounded_and_never_refuses_the_owner(arena):
    """Issue 46: thirty addresses guess a sign-in token at once, directly (127.0.0.10-39) and
    through the trusted proxy (thirty X-Forwarded-For visitors). Each is answered "wrong" for its
    own ten tries at most, then limited, so the wrong tries the server answers grow with the
    addresses and the time, never with the guessers' speed; and the owner's correct token, sent
    from an address whose tries ran out and as a visitor of the proxy whose tries ran out, is
    answered at once (docs/security.md, "Guessing tokens": what bounds guessing from any number
    of addresses is the secret's size)."""
    tries = SIGNINS + 4
    started = time.monotonic()

    def direct(i: int) -> list[int]:
        with client(f"127.0.0.{10 + i}") as http:
            return _guesses(http, arena.url, tries)

    def proxied(i: int) -> list[int]:
        with client(PROXY) as http:
            return _guesses(http, arena.url, tries, f"198.18.0.{10 + i}")

    with concurrent.futures.ThreadPoolExecutor(GUESSERS) as pool:
        answered = list(pool.map(direct, range(GUESSERS)))
        answered += list(pool.map(proxied, range(GUESSERS)))
    elapsed = time.monotonic() - started
    refill = int(elapsed * defaults.SIGNIN_RATE.per_second) + 1
    for codes in answered:
        assert set(codes) <= {403, 429}, codes
        assert codes.count(403) <= SIGNINS + refill, codes  # each address: its own tries only
        assert codes[-1] == 429, codes
    wrong = sum(codes.count(403) for codes in answered)
    assert wrong <= 2 * GUESSERS * (SIGNINS + refill), wrong

    # the owner, from a direct address whose tries ran out and as a proxied visitor whose did
    with client("127.0.0.10") as http:
        signed = http.post(
            arena.url + "/signin", data={"token": arena.token}, headers={"origin": arena.url}
        )
        assert signed.status_code == 303 and signed.headers["location"] == "/me", signed.status_code
    with client(PROXY) as http:
        signed = http.post(
            arena.url + "/signin",
            data={"token": arena.token},
            headers={"origin": arena.url, "x-forwarded-for": "198.18.0.10"},
        )
        assert signed.status_code == 303 and signed.headers["location"] == "/me", signed.status_code
