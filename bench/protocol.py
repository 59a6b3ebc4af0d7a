"""Protocol speed: games per second of 4 random bots as local processes over gRPC, against bare echo calls.

What is measured, in one run:

* match: `referee.match.Match` with 4 copies of example_bots/random, each a local process serving on
  its own Unix socket. Time per turn = time inside games / turns played (PickCard to all 4 seats at
  once, the engine, the occasional ChooseRow, and the GameOver calls at the end of each game).
* echo: 4 processes each serving a gRPC method that returns its request unchanged, on its own Unix
  socket; 4 concurrent calls (one per process, as futures, like the referee's turn) with a request of
  the size of a mid-game PickCardRequest. This is the floor: transport alone, no game, no bot.

Target: time per turn at most 1.5 x the echo time. Run: python bench/protocol.py [--seconds S]
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from concurrent import futures
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "sdk"))
sys.path.insert(0, str(ROOT))

import grpc  # noqa: E402

from referee.match import Match, MatchConfig  # noqa: E402

ECHO_METHOD = "/bench.Echo/Echo"
REQUEST_BYTES = 300  # about a mid-game PickCardRequest


def echo_server(address: str) -> None:
    """Serve the echo method until SIGTERM (run in a child process)."""
    handler = grpc.method_handlers_generic_handler(
        "bench.Echo", {"Echo": grpc.unary_unary_rpc_method_handler(lambda request, context: request)}
    )
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    server.add_generic_rpc_handlers((handler,))
    server.add_insecure_port(address)
    server.start()
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    while not stop.wait(0.5):
        pass
    server.stop(0)


def measure_echo(seconds: float, fan_out: int = 4) -> dict[str, list[float]]:
    """Seconds of `fan_out` concurrent echo calls to `fan_out` processes, by way of calling.

    "threads": blocking calls on long-lived threads, as the referee makes them (referee/remote.py);
    "futures": grpc's own futures (each call on an idle channel starts a polling thread).
    The two are sampled alternately so that both see the same machine load.
    """
    folder = Path(tempfile.mkdtemp(prefix="take5-bench-"))
    addresses = [f"unix:{folder / f'echo{i}.sock'}" for i in range(fan_out)]
    procs = [
        subprocess.Popen([sys.executable, __file__, "--echo-server", address], start_new_session=True)
        for address in addresses
    ]
    channels = []
    threads = [futures.ThreadPoolExecutor(max_workers=2) for _ in range(fan_out)]
    try:
        for address in addresses:
            channel = grpc.insecure_channel(address)
            grpc.channel_ready_future(channel).result(timeout=30)
            channels.append(channel)
        calls = [channel.unary_unary(ECHO_METHOD) for channel in channels]
        payload = b"x" * REQUEST_BYTES

        def with_threads() -> None:
            pending = [pool.submit(call, payload, timeout=5) for pool, call in zip(threads, calls)]
            for future in pending:
                future.result()

        def with_futures() -> None:
            pending = [call.future(payload, timeout=5) for call in calls]
            for future in pending:
                future.result()

        ways = {"threads": with_threads, "futures": with_futures}
        for _ in range(100):  # warm up
            for way in ways.values():
                way()
        samples: dict[str, list[float]] = {name: [] for name in ways}
        end = time.perf_counter() + seconds
        while time.perf_counter() < end:
            for name, way in ways.items():
                started = time.perf_counter()
                way()
                samples[name].append(time.perf_counter() - started)
        return samples
    finally:
        for channel in channels:
            channel.close()
        for pool in threads:
            pool.shutdown()
        for proc in procs:
            proc.terminate()
        for proc in procs:
            proc.wait(5)
        for child in folder.iterdir():
            child.unlink()
        folder.rmdir()


def measure_match(seconds: float) -> tuple[int, int, float, float]:
    """(games, turns, seconds inside games, wall seconds) of random bots for about `seconds`."""
    bot = str(ROOT / "example_bots" / "random")
    config = MatchConfig(games=10**6, seed=1, timeout=5.0)
    with Match([bot] * 4, config) as match:
        match.play_game(0)  # warm up: connections, first calls
        match.games.clear()
        started = time.perf_counter()
        index = 1
        while time.perf_counter() - started < seconds:
            match.play_game(index)
            index += 1
        wall = time.perf_counter() - started
        games = list(match.games)
    return len(games), sum(g.turns for g in games), sum(g.seconds for g in games), wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5.0, help="time for each measurement")
    parser.add_argument("--echo-server", metavar="ADDRESS", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.echo_server:
        echo_server(args.echo_server)
        return
    print(f"take5 protocol benchmark: 4 bots as local processes over gRPC on Unix sockets ({os.cpu_count()} cores)")
    before = measure_echo(args.seconds / 2)
    games, turns, inside, wall = measure_match(args.seconds)
    after = measure_echo(args.seconds / 2)
    echo = {name: before[name] + after[name] for name in before}
    mean = {name: statistics.fmean(values) for name, values in echo.items()}
    per_turn = inside / turns
    print(f"  match: {games} games, {turns} turns in {wall:.2f} s: {games / wall:.1f} games/s, {turns / wall:.0f} turns/s")
    print(f"  time per turn:            {per_turn * 1000:.3f} ms (4 PickCards at once, engine, ChooseRows, GameOver)")
    for name, label in (("threads", "as the referee calls"), ("futures", "grpc futures")):
        print(
            f"  4 concurrent echo calls:  {mean[name] * 1000:.3f} ms mean, {statistics.median(echo[name]) * 1000:.3f} ms "
            f"median ({label}; before {statistics.fmean(before[name]) * 1000:.3f}, after {statistics.fmean(after[name]) * 1000:.3f})"
        )
    baseline = min(mean.values())
    ratio = per_turn / baseline
    verdict = "within" if ratio <= 1.5 else "ABOVE"
    print(f"  ratio turn / best echo:   {ratio:.2f} ({verdict} the 1.5 target)")

if __name__ == "__main__":
    main()
