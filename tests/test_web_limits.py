"""The web pages against idle and slow clients (take5_arena/web/guard.py, docs/web.md "Limits"):
a real `referee serve --web` on loopback with small caps (200 connections, 20 streams of 8 s, a
body time of 3 s), attacked from other loopback addresses (127.0.0.2 and up: all of 127/8 is
local). Every attack is bounded in sockets and seconds and ends with the test.
"""

from __future__ import annotations

import contextlib
import socket
import time
from collections.abc import Iterator

import pytest
from arena_support import WebServer, web_arena

from take5_arena.web import defaults

httpx = pytest.importorskip("httpx")

MAX_CONNECTIONS = 200
MAX_STREAMS = 20
STREAM_SECONDS = 8
BODY_SECONDS = 3


@pytest.fixture(scope="module")
def arena(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WebServer]:
    yield from web_arena(
        tmp_path_factory,
        "limits",
        *("--web-max-connections", str(MAX_CONNECTIONS), "--web-max-streams", str(MAX_STREAMS)),
        *("--web-stream-seconds", str(STREAM_SECONDS), "--upload-seconds", str(BODY_SECONDS)),
    )


def slow(arena: WebServer, source: str, head: bytes = b"GET / HTTP/1.1\r\n") -> socket.socket:
    """A connection from ``source`` that sends the start of a request's head and no more."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind((source, 0))
    sock.settimeout(30)
    sock.connect(("127.0.0.1", arena.port))
    sock.sendall(head)
    return sock


def answer(sock: socket.socket, wait: float = 0.2) -> bytes:
    """What the server sent (b"" once it closed, None-like b"?" while it is still open)."""
    sock.settimeout(wait)
    try:
        return sock.recv(4096)
    except TimeoutError:
        return b"?"
    except ConnectionResetError:
        return b""


def client(source: str) -> httpx.Client:
    return httpx.Client(transport=httpx.HTTPTransport(local_address=source), timeout=30)


def pages_answer(arena: WebServer, source: str = "127.0.0.1") -> None:
    with client(source) as http:
        for path in ("/", "/games", "/standings.json"):
            got = http.get(arena.url + path)
            assert got.status_code in (200, 404), (path, got.status_code, got.text[:200])
        assert http.get(arena.url + "/").status_code == 200


def test_slowloris_from_many_addresses_leaves_the_pages_answering(arena):
    """300 connections that never finish their heads: 100 from one address (past its cap of 64:
    the rest get 429 at once), then 200 from four others (past the 200 in all: they take the
    places of the busiest address's idle ones). A normal visitor from yet another address gets
    every page all along, and the header deadline closes every slow connection by itself."""
    per_client = defaults.CONNECTIONS_PER_CLIENT
    socks: list[socket.socket] = []
    try:
        hog = [slow(arena, "127.0.0.2") for _ in range(100)]
        socks += hog
        time.sleep(0.5)
        refused = [a for a in map(answer, hog) if a.startswith(b"HTTP/1.1 429")]
        assert len(refused) == 100 - per_client, len(refused)
        pages_answer(arena)
        for i in range(200):
            socks.append(slow(arena, f"127.0.0.{3 + i % 4}"))
        time.sleep(0.5)
        pages_answer(arena)
        pages_answer(arena, "127.0.0.200")
        full = [a for a in map(answer, socks[100:]) if a.startswith(b"HTTP/1.1 503")]
        assert full == [], full[:1]  # each newcomer found an idle place of the busiest address
        # Trickling bytes does not extend the deadline (uvicorn's keep-alive timer would).
        trickler = slow(arena, "127.0.0.9", b"G")
        deadline = time.monotonic() + defaults.HEADER_SECONDS + 10
        closed = False
        while time.monotonic() < deadline and not closed:
            try:
                trickler.sendall(b"E")
            except OSError:
                closed = True
            closed = closed or answer(trickler, 1.0) == b""
        assert closed, "a trickled head was never cut off"
        time.sleep(1)
        still = [s for s in socks if answer(s, 0.01) == b"?"]
        assert still == [], f"{len(still)} slow connections still open"
        pages_answer(arena)
    finally:
        for sock in socks:
            sock.close()


def test_a_body_that_never_ends_is_cut_off(arena):
    """A POST that declares 1,000 bytes and sends 10 is closed after the body time (3 s here),
    and the pages answer meanwhile."""
    sock = slow(
        arena,
        "127.0.0.20",
        b"POST /signin HTTP/1.1\r\nHost: x\r\nOrigin: http://x\r\n"
        b"Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 1000\r\n\r\n"
        b"token=abcd",
    )
    with sock:
        pages_answer(arena)
        deadline = time.monotonic() + BODY_SECONDS + 10
        got = b"?"
        while got == b"?" and time.monotonic() < deadline:
            got = answer(sock, 0.5)
        assert got == b"", got


def read_to_end(response: httpx.Response, seconds: float) -> bytes:
    """The rest of a stream, which must end within ``seconds`` (checked at each chunk: the server
    sends a keep-alive every 15 s, so a stream that never ends fails here)."""
    deadline = time.monotonic() + seconds
    body = b""
    for chunk in response.iter_bytes():
        body += chunk
        assert time.monotonic() < deadline, "the stream did not end in time"
    return body


def test_one_address_cannot_hold_every_stream(arena):
    """An address opens live streams past its cap: the one past it gets 429. Another holds four
    more, and the 20 places are all taken: a newcomer from a third address still gets a stream,
    in the place of the busiest address's oldest, which ends at once. Every stream ends by
    itself after its time (8 s here)."""
    cap = defaults.STREAMS_PER_CLIENT
    live = arena.url + "/events/live"
    with contextlib.ExitStack() as stack:
        hog = stack.enter_context(client("127.0.0.30"))
        opened = time.monotonic()
        held = [stack.enter_context(hog.stream("GET", live)) for _ in range(cap)]
        assert [r.status_code for r in held] == [200] * cap
        assert hog.get(live).status_code == 429
        few = stack.enter_context(client("127.0.0.32"))
        rest = [stack.enter_context(few.stream("GET", live)) for _ in range(MAX_STREAMS - cap)]
        assert [r.status_code for r in rest] == [200] * len(rest)
        with client("127.0.0.31") as other, other.stream("GET", live) as got:
            assert got.status_code == 200
            assert got.headers["content-type"].startswith("text/event-stream")
            read_to_end(held[0], STREAM_SECONDS - 2)  # the hog's oldest gave its place
            assert time.monotonic() - opened < STREAM_SECONDS - 1
            body = read_to_end(got, STREAM_SECONDS + 10)  # ends after its time
            assert body.startswith(b"retry: 2000"), body[:100]


def test_a_client_that_stops_reading_is_cut_off():
    """A slow reader: a client that asks for a large answer and reads none of it is cut off once
    the server's buffers have been full for the write deadline (1 s here), instead of holding its
    connection for ever. uvicorn with the guarded protocol in this process, on loopback; the
    answer is 256 MiB, far more than the kernel's buffers hold."""
    import asyncio
    import threading

    import uvicorn

    from take5_arena.web.guard import ConnectionGuard, Deadlines, guarded_protocol

    async def app(scope, receive, send):
        await send({"type": "http.response.start", "status": 200, "headers": []})
        block = b"x" * (1 << 20)
        for _ in range(256):
            await send({"type": "http.response.body", "body": block, "more_body": True})
        await send({"type": "http.response.body", "body": b""})

    guard = ConnectionGuard(total=10, per_client=5)
    protocol = guarded_protocol(guard, Deadlines(5.0, 5.0, write_seconds=1.0))
    config = uvicorn.Config(app, http=protocol, lifespan="off", log_level="error")
    server = uvicorn.Server(config)
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    thread = threading.Thread(target=lambda: asyncio.run(server.serve(sockets=[listener])))
    thread.start()
    try:
        deadline = time.monotonic() + 30
        while not server.started and time.monotonic() < deadline:
            time.sleep(0.05)
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        with sock:
            sock.connect(("127.0.0.1", port))
            sock.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            time.sleep(5)  # reads nothing: the server's buffers fill, then the deadline passes
            assert guard.open == 0, "the slow reader is still held"
            got = 0
            sock.settimeout(10)
            with contextlib.suppress(ConnectionResetError):
                while chunk := sock.recv(1 << 16):
                    got += len(chunk)
            assert got < 256 << 20, got
    finally:
        server.should_exit = True
        thread.join(30)
