"""Live viewers of the arena's web pages (`referee serve --web`): N concurrent server-sent-event
viewers of the games in progress on loopback, the lag from a game's turn to its delivery, and the
server's CPU per viewer.

A real arena (``--sandbox local``, tables of 2, one table at a time) plays two bots of its own
uploaded through the web pages: `lowest` and a copy of it that sleeps a little each turn, so that a
game lasts a few seconds and has turns to watch. Each viewer is a plain asyncio HTTP/1.1 client
(from its own loopback address, 127.0.1.x, as distinct people would be: the server caps streams per
address) that follows the game in progress (``/events/games/ID``), and when it ends, the next one.
Every message carries the wall-clock time the turn was handed to the web layer (``sent_at``); the
lag is the time it was read minus that (one machine, one clock).

Three phases of the same length, in the same run: no viewer (the baseline: the server's CPU with
the ladder playing and nobody watching), one viewer (the baseline lag), N viewers. CPU is the
server process's own user+system time (/proc/PID/stat; the bots are other processes), and the
figure per viewer is (CPU with N - CPU with none) / N per second.

With ``--slow N`` it measures instead the pages under slowloris: a visitor (127.0.0.1) asks for
``/`` and ``/games`` one after the other for the phase's seconds, first alone, then while N slow
clients (40 per address, from 127.0.2.x) each send a request's head a line every two seconds and
never finish it, connecting again whenever the server cuts them off. It prints the visitor's
answers by status and its p50/p99 (over every request: a refusal counts at its own time), and how
many times the slow clients were cut off. ``--streams M`` holds M live-standings streams open
meanwhile (16 per address, from 127.0.3.x, opened again when they end).

Usage: python3 bench/web.py [--viewers 200] [--seconds 20] [--slow 4000 [--streams 2000]]
"""

from __future__ import annotations

import argparse
import asyncio
import io
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import TypedDict

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "sdk")]

import httpx

SLOW = """
import time
from take5 import Bot, run


class Slow(Bot):
    name = "slow"

    def pick_card(self, view):
        time.sleep(0.04)
        return min(view.hand)


if __name__ == "__main__":
    run(Slow())
"""


REFUSED: dict[str, int] = {}
"""Streams the server refused, by status (printed: a figure under refusal would be meaningless)."""


def env() -> dict[str, str]:
    e = dict(os.environ)
    e["PYTHONPATH"] = os.pathsep.join([str(ROOT), str(ROOT / "sdk"), e.get("PYTHONPATH", "")])
    return e


def tgz(files: dict[str, bytes]) -> bytes:
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w:gz") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return raw.getvalue()


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Arena:
    def __init__(self, directory: Path) -> None:
        token = subprocess.run(
            [sys.executable, "-m", "take5_arena", "authors", "add", "bench", "-t", str(directory)],
            check=True,
            env=env(),
            capture_output=True,
            text=True,
        ).stdout.strip()
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "take5_arena",
                "serve",
                "-t",
                str(directory),
                "--listen",
                "127.0.0.1:0",
                "--web",
                "127.0.0.1:0",
                "--sandbox",
                "local",
                "--players",
                "2",
                "-j",
                "1",
                "--gauntlet",
                "0",
                "--bootstrap",
                "0",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            env=env(),
        )
        self.url = ""
        found = threading.Event()

        def pump() -> None:
            assert self.proc.stderr is not None
            for line in self.proc.stderr:
                m = re.search(r"web pages on (http://127\.0\.0\.1:\d+)/", line)
                if m:
                    self.url = m.group(1)
                    found.set()

        threading.Thread(target=pump, daemon=True).start()
        if not found.wait(120):
            raise SystemExit("the arena did not start")
        self.token = token

    def submit(self) -> None:
        http = httpx.Client(base_url=self.url, headers={"origin": self.url}, timeout=120)
        http.post("/signin", data={"token": self.token})
        field = re.search(r'name="csrf" value="([^"]+)"', http.get("/me").text)
        if field is None:
            raise SystemExit("no CSRF token on /me: the sign-in did not work")
        csrf = field[1]
        lowest = ROOT / "example_bots" / "lowest"
        bots = {
            "lowest": tgz({p.name: p.read_bytes() for p in lowest.iterdir() if p.is_file()}),
            "slow": tgz({"bot.py": SLOW.encode()}),
        }
        for name, archive in bots.items():
            r = http.post(
                "/me/upload",
                data={"csrf": csrf, "bot_name": name},
                files={"archive": ("a.tar.gz", archive)},
            )
            sid = r.headers["location"].rsplit("/", 1)[1]
            while not http.get(f"/me/submissions/{sid}.json").json()["finished"]:
                time.sleep(0.5)

    def stop(self) -> None:
        self.proc.send_signal(signal.SIGTERM)
        self.proc.wait(60)


async def sse(host: str, port: int, path: str, source: str) -> AsyncIterator[str]:
    """The data lines of a server-sent-event stream, from local address ``source``."""
    reader, writer = await asyncio.open_connection(host, port, local_addr=(source, 0))
    writer.write(
        f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nAccept: text/event-stream\r\n\r\n".encode()
    )
    await writer.drain()
    status = await reader.readline()
    if b" 200 " not in status:
        REFUSED[status.split(b" ")[1:2][0].decode() if status.count(b" ") else "closed"] = (
            REFUSED.get(status.decode(), 0) + 1
        )
        writer.close()
        return
    while (await reader.readline()) not in (b"\r\n", b""):
        pass
    try:
        while True:  # chunked: size line, data, CRLF
            size = int((await reader.readline()).strip() or b"0", 16)
            if size == 0:
                return
            chunk = await reader.readexactly(size + 2)
            for line in chunk.decode().splitlines():
                if line.startswith("data: "):
                    yield line[6:]
    finally:
        writer.close()


class Phase(TypedDict):
    """What the viewers of a phase share: the server's pid, and whether the phase is measured."""

    pid: int
    measuring: bool


_TAIL = re.compile(r'"done":(true|false),"sent_at":([0-9.e+-]+)\}$')


def tail(data: str) -> tuple[float, bool]:
    """``sent_at`` and ``done`` of a game message, read from its end (the server writes them
    last): a viewer here does not parse the whole record, so that 200 of them in one Python process
    measure the server, not this client's JSON parser."""
    m = _TAIL.search(data[-80:])
    if m is None:
        msg = json.loads(data)
        return float(msg["sent_at"]), bool(msg["done"])
    return float(m.group(2)), m.group(1) == "true"


async def watch(
    host: str, port: int, phase: Phase, viewers: int, seconds: float
) -> dict[str, float]:
    lags: list[float] = []
    messages = [0]
    current: dict[str, str | None] = {"game": None}
    stop = asyncio.Event()

    async def control() -> None:
        async for data in sse(host, port, "/events/live", "127.0.0.1"):
            games = [g for g in json.loads(data)["games"] if not g["done"]]
            current["game"] = games[0]["id"] if games else None
            if stop.is_set():
                return

    async def viewer(i: int) -> None:
        source = f"127.0.1.{1 + i // 8}"
        seen: set[str] = set()
        while not stop.is_set():
            game = current["game"]
            if game is None or game in seen:
                await asyncio.sleep(0.05)
                continue
            seen.add(game)
            first = True
            async for data in sse(host, port, f"/events/games/{game}", source):
                now = time.time()
                sent_at, done = tail(data)
                if phase["measuring"] and not first:  # the first is the state on arrival
                    lags.append(now - sent_at)
                    messages[0] += 1
                first = False
                if done or stop.is_set():
                    break

    tasks = [asyncio.create_task(control())]
    tasks += [asyncio.create_task(viewer(i)) for i in range(viewers)]
    await asyncio.sleep(3)  # everyone connected
    phase["measuring"] = True
    cpu0 = cpu_seconds(phase["pid"])
    mine0 = time.process_time()
    t0 = time.monotonic()
    await asyncio.sleep(seconds)
    phase["measuring"] = False
    cpu = cpu_seconds(phase["pid"]) - cpu0
    wall = time.monotonic() - t0
    mine = time.process_time() - mine0
    stop.set()
    for t in tasks:
        t.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    lags.sort()
    return {
        "viewers": viewers,
        "cpu_per_s": cpu / wall,
        "client_cpu_per_s": mine / wall,
        "messages_per_s": messages[0] / wall,
        "lag_median_ms": 1000 * statistics.median(lags) if lags else float("nan"),
        "lag_p95_ms": 1000 * lags[int(0.95 * (len(lags) - 1))] if lags else float("nan"),
    }


async def slowloris(host: str, port: int, n: int, cuts: list[int], stop: asyncio.Event) -> None:
    """``n`` clients that never finish a request's head (a line every 2 s), 40 per address."""

    async def one(i: int) -> None:
        source = f"127.0.{2 + i // 10000}.{1 + (i // 40) % 250}"
        while not stop.is_set():
            try:
                _, writer = await asyncio.open_connection(host, port, local_addr=(source, 0))
            except OSError:
                await asyncio.sleep(0.5)
                continue
            try:
                writer.write(f"GET / HTTP/1.1\r\nHost: {host}\r\n".encode())
                while not stop.is_set():
                    await writer.drain()
                    await asyncio.sleep(2)
                    if writer.transport.is_closing():
                        break
                    writer.write(b"x-slow: 1\r\n")
            except OSError:
                pass
            finally:
                writer.close()
            if not stop.is_set():
                cuts[0] += 1
                await asyncio.sleep(0.5)

    await asyncio.gather(*(one(i) for i in range(n)))


def visit(url: str, seconds: float) -> dict[str, object]:
    """A visitor's pages for ``seconds``: statuses, and the p50 and p99 of every request."""
    times: list[float] = []
    statuses: dict[str, int] = {}
    end = time.monotonic() + seconds
    with httpx.Client(base_url=url, timeout=30) as http:
        while time.monotonic() < end:
            for path in ("/", "/games"):
                t0 = time.monotonic()
                try:
                    status = str(http.get(path).status_code)
                except httpx.HTTPError as error:
                    status = type(error).__name__
                times.append(time.monotonic() - t0)
                statuses[status] = statuses.get(status, 0) + 1
    times.sort()
    return {
        "statuses": statuses,
        "p50_ms": 1000 * times[len(times) // 2],
        "p99_ms": 1000 * times[int(0.99 * (len(times) - 1))],
    }


async def hold_streams(host: str, port: int, n: int, stop: asyncio.Event) -> None:
    """``n`` live-standings streams, 16 per address (127.0.3.x), each opened again when it ends."""

    async def one(i: int) -> None:
        while not stop.is_set():
            async for _ in sse(host, port, "/events/standings", f"127.0.3.{1 + i // 16}"):
                if stop.is_set():
                    return
            await asyncio.sleep(2)  # the browser's retry

    await asyncio.gather(*(one(i) for i in range(n)))


def slow_bench(arena: Arena, n: int, streams: int, seconds: float) -> None:
    host, port = "127.0.0.1", int(arena.url.rsplit(":", 1)[1])
    alone = visit(arena.url, seconds)
    cuts = [0]

    async def flood() -> dict[str, object]:
        stop = asyncio.Event()
        tasks = [
            asyncio.create_task(slowloris(host, port, n, cuts, stop)),
            asyncio.create_task(hold_streams(host, port, streams, stop)),
        ]
        await asyncio.sleep(min(10.0, seconds))  # every slow client connected
        got = await asyncio.to_thread(visit, arena.url, seconds)
        stop.set()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        return got

    under = asyncio.run(flood())
    print(f"{'slow clients':>12} {'streams':>8} {'p50 ms':>8} {'p99 ms':>8}  answers")
    for count, held, r in ((0, 0, alone), (n, streams, under)):
        print(f"{count:>12} {held:>8} {r['p50_ms']:>8.1f} {r['p99_ms']:>8.1f}  {r['statuses']}")
    print(f"slow clients cut off by the server: {cuts[0]}")
    if REFUSED:
        print(f"streams refused by the server: {REFUSED}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--viewers", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--slow", type=int, default=0, help="slow clients (see above)")
    parser.add_argument("--streams", type=int, default=0, help="with --slow: streams held too")
    args = parser.parse_args()
    if args.slow:
        with tempfile.TemporaryDirectory() as tmp:
            arena = Arena(Path(tmp) / "T")
            try:
                slow_bench(arena, args.slow, args.streams, args.seconds)
            finally:
                arena.stop()
        return
    with tempfile.TemporaryDirectory() as tmp:
        arena = Arena(Path(tmp) / "T")
        try:
            arena.submit()
            host, port = "127.0.0.1", int(arena.url.rsplit(":", 1)[1])
            rows = []
            for n in (0, 1, args.viewers):
                phase: Phase = {"pid": arena.proc.pid, "measuring": False}
                rows.append(asyncio.run(watch(host, port, phase, n, args.seconds)))
        finally:
            arena.stop()
    if REFUSED:
        print(f"streams refused by the server: {REFUSED}")
    base = rows[0]["cpu_per_s"]
    print(
        f"{'viewers':>8} {'server CPU s/s':>15} {'viewers CPU s/s':>16} {'msgs/s read':>12} "
        f"{'lag median ms':>14} {'lag p95 ms':>11}"
    )
    for r in rows:
        print(
            f"{r['viewers']:>8} {r['cpu_per_s']:>15.3f} {r['client_cpu_per_s']:>16.3f} "
            f"{r['messages_per_s']:>12.1f} "
            f"{r['lag_median_ms']:>14.1f} {r['lag_p95_ms']:>11.1f}"
        )
    n = rows[2]
    print(
        f"server CPU per viewer: {1000 * (n['cpu_per_s'] - base) / n['viewers']:.2f} ms/s "
        f"(baseline, nobody watching: {base:.3f} CPU s/s)"
    )
    if rows[1]["lag_median_ms"] == rows[1]["lag_median_ms"]:
        print(
            f"lag with {n['viewers']} viewers / lag with one viewer (median): "
            f"{n['lag_median_ms'] / rows[1]['lag_median_ms']:.2f}"
        )


if __name__ == "__main__":
    main()
