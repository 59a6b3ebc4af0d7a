"""Arena under attack: honest authors' latency and validations while hostile clients press on the
server, against the same honest work with no attack, measured in the same run.

    python bench/arena_load.py                  # 50 hostile clients, 5 honest authors, 60 s
    python bench/arena_load.py --hostile 20 --seconds 30

A real `referee serve --sandbox local --no-ladder` on loopback. Honest: ``--honest`` authors, each
submits one example bot (upload, then the long poll to its verdict) and reads Standings and its own
bots in a loop until the window ends. Hostile, ``--hostile`` clients on their own connections and
tokens, in four kinds (a quarter each): idle SubmitBot streams that never send their metadata,
stalled uploads (metadata, then nothing), floods of small calls (ListMyBots and Standings without
pause) and oversized messages (a chunk far past the limit), each kind starting again as soon as
the server cuts it off.

Printed: the honest calls' p50/p99 latency (wall time of the call, which is what an author waits)
and the share of honest submissions validated, for the baseline (no hostile clients) and under
attack, their ratio, and the server's CPU time in each phase. Target: p99 under 1 s and 100%
validated under attack.
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "sdk")]

import grpc

from take5_arena.service.api import arena_pb2 as pb
from take5_arena.service.api import arena_pb2_grpc as pb_grpc
from take5_arena.service.authors import Accounts, Limits
from take5_arena.service.client import ArenaClient, pack_folder

ENV = {
    **os.environ,
    "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "sdk"), os.environ.get("PYTHONPATH", "")]),
}
EXAMPLES = ROOT / "example_bots"
HONEST_BOTS = ("random", "lowest", "heuristic")
KINDS = ("idle", "stalled", "flood", "oversized")


class Server:
    def __init__(self, directory: Path) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "take5_arena", "serve", "-t", str(directory), "--listen"]
            + ["127.0.0.1:0", "--sandbox", "local", "--players", "2", "--no-ladder"]
            + ["--validators", "2"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            env=ENV,
            start_new_session=True,
        )
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            m = re.search(r"on 127\.0\.0\.1:(\d+)", line)
            if m:
                self.address = f"127.0.0.1:{m.group(1)}"
                break
        else:
            raise SystemExit("the server did not start")
        threading.Thread(target=self.proc.stderr.read, daemon=True).start()

    def cpu_seconds(self) -> float:
        fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def stop(self) -> None:
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(60)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def _auth(token: str) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {token}"),)


def hostile(kind: str, address: str, token: str, stop: threading.Event) -> None:
    """One hostile client: its attack, again and again until ``stop``."""
    # A connection of its own, as a client on another machine has (channels of one process to one
    # address otherwise share a connection, and the honest clients' calls would queue behind the
    # hostile streams in the benchmark's own process).
    channel = grpc.insecure_channel(address, options=[("grpc.use_local_subchannel_pool", 1)])
    stub = pb_grpc.ArenaStub(channel)  # type: ignore[no-untyped-call]  # generated gRPC code

    def idle() -> Iterator[pb.SubmitBotRequest]:
        stop.wait(300)
        return
        yield

    def stalled() -> Iterator[pb.SubmitBotRequest]:
        yield pb.SubmitBotRequest(
            metadata=pb.SubmitMetadata(
                bot_name=f"stall{token[4:10]}", archive_size=1000, archive_sha256="0" * 64
            )
        )
        stop.wait(300)

    def oversized() -> Iterator[pb.SubmitBotRequest]:
        yield pb.SubmitBotRequest(
            metadata=pb.SubmitMetadata(
                bot_name=f"big{token[4:10]}", archive_size=4 << 20, archive_sha256="0" * 64
            )
        )
        yield pb.SubmitBotRequest(chunk=b"\0" * (4 << 20))

    try:
        while not stop.is_set():
            try:
                if kind == "flood":
                    stub.ListMyBots(pb.ListMyBotsRequest(), metadata=_auth(token), timeout=30)
                    stub.Standings(pb.StandingsRequest(), timeout=30)
                else:
                    body = {"idle": idle, "stalled": stalled, "oversized": oversized}[kind]
                    stub.SubmitBot(body(), metadata=_auth(token), timeout=300)
            except grpc.RpcError:
                if kind != "flood":
                    stop.wait(0.05)
    finally:
        channel.close()


def honest(
    address: str, token: str, bot: Path, name: str, until: float, latencies: list[float]
) -> bool:
    """Submit ``bot``, follow it to its verdict, read the standings until ``until``; whether the
    bot was validated (accepted)."""

    def timed(call: Callable[[], object]) -> object:
        t0 = time.perf_counter()
        result = call()
        latencies.append(time.perf_counter() - t0)
        return result

    validated = False
    with ArenaClient(address, token=token, timeout=60) as client:
        reply = timed(lambda: client.upload(name, pack_folder(bot)))
        assert isinstance(reply, pb.SubmitBotResponse)
        while time.monotonic() < until:
            timed(client.standings)
            timed(client.my_bots)
            if not validated:
                reply = client.submission(reply.submission_id, wait_seconds=1)
                validated = reply.outcome == pb.SUBMIT_ACCEPTED
    return validated


def phase(
    address: str,
    tokens: list[str],
    hostile_tokens: list[str],
    seconds: float,
    tag: str,
    kinds: tuple[str, ...] = KINDS,
) -> tuple[list[float], list[bool]]:
    stop = threading.Event()
    attackers = [
        threading.Thread(
            target=hostile,
            args=(kinds[i % len(kinds)], address, t, stop),
            daemon=True,
            name=f"h{i}",
        )
        for i, t in enumerate(hostile_tokens)
    ]
    for a in attackers:
        a.start()
    time.sleep(2 if attackers else 0)  # let the attack take hold
    latencies: list[float] = []
    results: list[bool] = []
    until = time.monotonic() + seconds

    def one(i: int, token: str) -> None:
        bot = EXAMPLES / HONEST_BOTS[i % len(HONEST_BOTS)]
        results.append(honest(address, token, bot, f"{tag}{i}", until, latencies))

    workers = [threading.Thread(target=one, args=(i, t)) for i, t in enumerate(tokens)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    stop.set()
    for a in attackers:
        a.join(10)
    return latencies, results


def quantile(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100)[int(q * 100) - 1] if len(values) > 1 else values[0]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--hostile", type=int, default=50)
    ap.add_argument("--honest", type=int, default=5)
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--kinds", default=",".join(KINDS), help="The hostile kinds, comma-separated.")
    args = ap.parse_args()
    kinds = tuple(args.kinds.split(","))
    with tempfile.TemporaryDirectory(prefix="arena-load-") as tmp:
        directory = Path(tmp) / "T"
        accounts = Accounts(directory, create=True)
        limits = Limits(max_submissions_per_hour=1000)
        base = [accounts.add_author(f"base{i}", limits) for i in range(args.honest)]
        under = [accounts.add_author(f"honest{i}", limits) for i in range(args.honest)]
        evil = [accounts.add_author(f"evil{i}", limits) for i in range(args.hostile)]
        accounts.close()
        server = Server(directory)
        try:
            cpu0 = server.cpu_seconds()
            lat_b, ok_b = phase(server.address, base, [], args.seconds, "base")
            cpu1 = server.cpu_seconds()
            lat_a, ok_a = phase(server.address, under, evil, args.seconds, "honest", kinds)
            cpu2 = server.cpu_seconds()
        finally:
            server.stop()
    for label, lat, ok, cpu in (
        ("baseline (no attack)", lat_b, ok_b, cpu1 - cpu0),
        (f"under attack ({args.hostile} hostile)", lat_a, ok_a, cpu2 - cpu1),
    ):
        print(
            f"{label:<28} honest calls {len(lat):5d}  p50 {quantile(lat, 0.5) * 1000:7.1f} ms  "
            f"p99 {quantile(lat, 0.99) * 1000:7.1f} ms  validated {sum(ok)}/{len(ok)}  "
            f"server CPU {cpu:6.1f} s"
        )
    ratio = quantile(lat_a, 0.99) / quantile(lat_b, 0.99)
    print(f"p99 under attack / baseline: {ratio:.2f}x")
    met = quantile(lat_a, 0.99) < 1.0 and all(ok_a) and len(ok_a) == args.honest
    print(f"target (p99 < 1 s, 100% validated): {'met' if met else 'NOT met'}")


if __name__ == "__main__":
    main()
