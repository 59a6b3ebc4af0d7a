"""Protocol speed: games per second of 4 random bots as local processes over gRPC, against bare echo
calls.

What is measured, in one run:

* match: `take5_arena.referee.match.Match` with 4 copies of example_bots/random, each a local
  process serving on its own Unix socket. Time per turn = time inside games / turns played (PickCard
  to all 4 seats at once, the engine, the occasional ChooseRow, and the GameOver calls at the end of
  each game).
* echo: 4 processes each serving a gRPC method that returns its request unchanged, on its own Unix
  socket; 4 concurrent calls (one per process) with a request of the size of a mid-game
  PickCardRequest, made both the referee's way and with grpc futures. This is the floor: transport
  alone, no game, no bot. Echo batches run between the games, for as long as each game took, so
  both are measured under the same machine load.

Target: time per turn at most 1.5 x the (best) echo time.
Run: python bench/protocol.py [--seconds S]
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent import futures
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "sdk"))
sys.path.insert(0, str(ROOT))

import grpc

import take5_arena.referee.match.turns
from take5_arena.referee.match import CallLimits, Match, MatchConfig
from take5_arena.referee.match.turns import GameTurns

ECHO_METHOD = "/bench.Echo/Echo"
REQUEST_BYTES = 300  # about a mid-game PickCardRequest


def echo_server(address: str) -> None:
    """Serve the echo method until SIGTERM (run in a child process)."""
    handler = grpc.method_handlers_generic_handler(
        "bench.Echo",
        {"Echo": grpc.unary_unary_rpc_method_handler(lambda request, context: request)},
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


class EchoTable:
    """4 echo processes, each on its own Unix socket, and the two ways of calling them at once.

    "threads": blocking calls on long-lived threads, as the referee makes them
    (take5_arena/referee/match/remote.py); "futures": grpc's own futures (each call on an idle
    channel starts a polling thread).
    """

    def __init__(self, fan_out: int = 4) -> None:
        self.folder = Path(tempfile.mkdtemp(prefix="take5-bench-"))
        addresses = [f"unix:{self.folder / f'echo{i}.sock'}" for i in range(fan_out)]
        self.procs = [
            subprocess.Popen(
                [sys.executable, __file__, "--echo-server", address], start_new_session=True
            )
            for address in addresses
        ]
        self.channels = []
        for address in addresses:
            channel = grpc.insecure_channel(address)
            grpc.channel_ready_future(channel).result(timeout=30)
            self.channels.append(channel)
        self.calls = [channel.unary_unary(ECHO_METHOD) for channel in self.channels]
        self.threads = [futures.ThreadPoolExecutor(max_workers=2) for _ in range(fan_out)]
        self.payload = b"x" * REQUEST_BYTES
        self.samples: dict[str, list[float]] = {"threads": [], "futures": []}
        self.sample(0.5, keep=False)  # warm up

    def with_threads(self) -> None:
        pending = [
            pool.submit(call, self.payload, timeout=5)
            for pool, call in zip(self.threads, self.calls)
        ]
        for future in pending:
            future.result()

    def with_futures(self) -> None:
        pending = [call.future(self.payload, timeout=5) for call in self.calls]
        for future in pending:
            future.result()

    def sample(self, seconds: float, keep: bool = True) -> None:
        """Both ways alternately for `seconds`, so that both see the same machine load."""
        ways = (("threads", self.with_threads), ("futures", self.with_futures))
        end = time.perf_counter() + seconds
        while time.perf_counter() < end:
            for name, way in ways:
                started = time.perf_counter()
                way()
                if keep:
                    self.samples[name].append(time.perf_counter() - started)

    def close(self) -> None:
        for channel in self.channels:
            channel.close()
        for pool in self.threads:
            pool.shutdown()
        for proc in self.procs:
            proc.terminate()
        for proc in self.procs:
            proc.wait(5)
        shutil.rmtree(self.folder, ignore_errors=True)


class Timed:
    """Time spent in the referee's PickCard rounds and ChooseRow calls (wraps the turn protocol,
    take5_arena.referee.match.turns.GameTurns)."""

    def __init__(self) -> None:
        self.pick: list[float] = [0, 0.0]  # calls, seconds
        self.row: list[float] = [0, 0.0]
        table = take5_arena.referee.match.turns.GameTurns
        for name, slot in (("play_turn", self.pick), ("choose_row", self.row)):
            original: Callable[[GameTurns], None] = getattr(table, name)

            def timed(
                self_: GameTurns,
                original: Callable[[GameTurns], None] = original,
                slot: list[float] = slot,
            ) -> None:
                started = time.perf_counter()
                original(self_)
                slot[0] += 1
                slot[1] += time.perf_counter() - started

            setattr(table, name, timed)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=10.0, help="time of the measurement")
    parser.add_argument("--echo-server", metavar="ADDRESS", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.echo_server:
        echo_server(args.echo_server)
        return
    print(
        "take5 protocol benchmark: 4 bots as local processes over gRPC on Unix sockets "
        f"({os.cpu_count()} cores)"
    )
    timed = Timed()
    echo = EchoTable()
    bot = str(ROOT / "example_bots" / "random")
    try:
        with Match(
            [bot] * 4, MatchConfig(games=10**6, seed=1, calls=CallLimits(timeout=5.0))
        ) as match:
            match.play_game(0)  # warm up: connections, first calls
            match.games.clear()
            timed.pick[:] = [0, 0.0]
            timed.row[:] = [0, 0.0]
            started = time.perf_counter()
            index = 1
            in_games = 0.0
            while time.perf_counter() - started < args.seconds:
                # Games and echo calls take turns, so both are measured under the same load.
                summary = match.play_game(index)
                index += 1
                echo.sample(summary.seconds)
                in_games += summary.seconds
            games = list(match.games)
    finally:
        echo.close()
    turns = sum(g.turns for g in games)
    per_turn = in_games / turns
    mean = {name: statistics.fmean(values) for name, values in echo.samples.items()}
    print(
        f"  match: {len(games)} games, {turns} turns: {len(games) / in_games:.1f} games/s, "
        f"{turns / in_games:.0f} turns/s"
    )
    print(f"  time per turn:           {per_turn * 1000:.3f} ms")
    print(
        f"    PickCard to 4 bots:    {timed.pick[1] / timed.pick[0] * 1000:.3f} ms per turn "
        "(views, encoding, 4 calls at once)"
    )
    print(
        f"    ChooseRow:             {timed.row[1] / turns * 1000:.3f} ms per turn "
        f"({timed.row[0] / turns:.2f} calls per turn, "
        f"{timed.row[1] / max(1, timed.row[0]) * 1000:.3f} ms each)"
    )
    print(
        "    the rest:              "
        f"{(per_turn - (timed.pick[1] + timed.row[1]) / turns) * 1000:.3f} ms per turn (engine, "
        "GameOver)"
    )
    for name, label in (("threads", "as the referee calls"), ("futures", "with grpc futures")):
        values = echo.samples[name]
        print(
            f"  4 concurrent echo calls: {mean[name] * 1000:.3f} ms mean, "
            f"{statistics.median(values) * 1000:.3f} ms median ({label}, {len(values)} samples "
            "between the games)"
        )
    baseline = min(mean.values())
    for what, value in (("turn", per_turn), ("PickCard round", timed.pick[1] / timed.pick[0])):
        ratio = value / baseline
        verdict = "within" if ratio <= 1.5 else "ABOVE"
        print(f"  ratio {what} / best echo: {ratio:.2f} ({verdict} the 1.5 target)")


if __name__ == "__main__":
    main()
