"""Docker sandbox cost: container start to first answer, and games per second of 4 containerised
bots against the same 4 bots as local processes, in the same run, at the same concurrency.

* start: `docker run` of a bot image -> its socket appears -> its first answer (Handshake), one
  container at a time; also the CPU a start costs (dockerd + containerd + the container itself).
* throughput: matches of 4 bots, `--concurrency` of them at once, each of `--games` games, with the
  bots as local processes (started once per match) and in containers (a fresh one per bot per game,
  the next game's started while a game plays). Two kinds of bots: trivial (`lowest`, answers at
  once) and thinking bots that spend `--think-ms` (20) per decision, busy on the CPU (`cpu`) or
  waiting (`sleep`). Local and docker runs alternate, so load from elsewhere hits both alike.

Run: python bench/sandbox.py [--games 12] [--think-ms 20] [--concurrency 1 2] [--repeat 2]
Needs a Docker engine and the base image (scripts/setup-docker.sh). Not a test: it prints numbers.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from referee.match.botref import parse_bot
from referee.docker_launch import DockerLauncher
from referee.match.local import LocalBot
from referee.match import Match, MatchConfig
from referee.match.remote import RemoteBot

THINK_BOT = '''\
"""Bench bot: spends TAKE5_THINK_MS per decision (busy on the CPU, or asleep), then plays low."""
import os
import time

from take5 import Bot, run

MS = float(os.environ.get("TAKE5_THINK_MS", "20")) / 1000
SLEEP = os.environ.get("TAKE5_THINK_MODE", "cpu") == "sleep"


def think():
    if SLEEP:
        time.sleep(MS)
        return
    end = time.perf_counter() + MS
    while time.perf_counter() < end:
        pass


class Thinker(Bot):
    name = "think"
    version = "1"

    def pick_card(self, view):
        think()
        return min(view.hand)

    def choose_row(self, view):
        think()
        return super().choose_row(view)


if __name__ == "__main__":
    run(Thinker())
'''


def think_bot() -> str:
    folder = Path(tempfile.gettempdir()) / "take5-bench" / "think"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "bot.py"
    if not path.exists() or path.read_text() != THINK_BOT:
        path.write_text(THINK_BOT)
    return str(folder)


# -- CPU accounting -----------------------------------------------------------------------------


def _pids(name: str) -> list[int]:
    out = subprocess.run(["pgrep", "-x", name], check=False, capture_output=True, text=True).stdout.split()
    return [int(p) for p in out]


def daemon_cpu() -> float:
    """CPU seconds so far of dockerd and containerd (with the children they reaped). Shared by
    everything using the engine: other Docker work on the machine shows up here too."""
    total = 0.0
    tick = os.sysconf("SC_CLK_TCK")
    for pid in _pids("dockerd") + _pids("containerd"):
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            total += sum(int(x) for x in fields[11:15]) / tick
        except OSError:
            pass
    return total


LAUNCHERS: list[DockerLauncher] = []


def docker_cpu() -> float:
    """CPU seconds of the Docker daemons plus the bench's own removed containers (their cgroups)."""
    return daemon_cpu() + sum(launcher.container_cpu for launcher in LAUNCHERS)


def self_cpu() -> float:
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


# -- start latency --------------------------------------------------------------------------------


def start_latency(launcher: DockerLauncher, bot: str, count: int) -> dict:
    """One container at a time: docker run -> socket -> first answer (Handshake)."""
    ref = parse_bot(bot)
    socket_s, answer_s, cpu = [], [], []
    for _ in range(count):
        c0, s0 = docker_cpu(), self_cpu()
        handle = launcher(ref)
        handle.start()
        address = handle.ready(30)
        inst = handle._current
        container = inst.container
        socket_s.append(time.monotonic() - container.started)
        remote = RemoteBot(address)
        try:
            remote.wait_ready(10)
            remote.handshake(5)
            answer_s.append(time.monotonic() - container.started)
        finally:
            remote.close()
        handle.stop()
        for future in handle._retiring:
            future.result()
        cpu.append(docker_cpu() - c0 + self_cpu() - s0)
    return {
        "socket_median_s": round(statistics.median(socket_s), 3),
        "first_answer_median_s": round(statistics.median(answer_s), 3),
        "first_answer_max_s": round(max(answer_s), 3),
        "cpu_per_container_s": round(statistics.median(cpu), 3),
        "count": count,
    }


# -- throughput -----------------------------------------------------------------------------------


def run_matches(bots: list[str], games: int, concurrency: int, launcher) -> tuple[float, float, int]:
    """(seconds, CPU seconds of the referee + Docker, faults) for `concurrency` matches at once."""
    config = MatchConfig(games=games, timeout=2.0, start_timeout=30.0)
    faults = [0] * concurrency
    errors: list[BaseException] = []

    def one(i: int) -> None:
        try:
            with Match(bots, config, launcher=launcher) as match:
                result = match.play()
            faults[i] = result.fault_count + len(result.rejections)
        except BaseException as error:
            errors.append(error)

    c0, s0 = docker_cpu(), self_cpu()
    started = time.perf_counter()
    threads = [threading.Thread(target=one, args=(i,)) for i in range(concurrency)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    seconds = time.perf_counter() - started
    if errors:
        raise errors[0]
    return seconds, docker_cpu() - c0 + self_cpu() - s0, sum(faults)


def local_launcher(env: dict[str, str]):
    def launch(ref):
        return LocalBot(ref, env=env)

    return launch


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--games", type=int, default=12, help="games per match (default 12)")
    ap.add_argument("--think-ms", type=float, default=20.0)
    ap.add_argument("--think-mode", nargs="+", choices=["cpu", "sleep"], default=["cpu", "sleep"])
    ap.add_argument("--concurrency", type=int, nargs="+", default=[1, 2], help="matches at once")
    ap.add_argument("--repeat", type=int, default=2, help="local/docker pairs per setting")
    ap.add_argument("--starts", type=int, default=8, help="containers for the start latency")
    ap.add_argument("--base-image", default="take5/python:3.11", help="what the bot images are built on")
    ap.add_argument("--only-start", action="store_true", help="measure the start only")
    ap.add_argument("--json", type=Path, help="also write the results here")
    args = ap.parse_args()

    lowest = str(ROOT / "example_bots" / "lowest")
    think = think_bot()
    print(f"cores: {os.cpu_count()}, load average: {os.getloadavg()[0]:.2f}")
    results: dict = {"cores": os.cpu_count(), "think_ms": args.think_ms, "games_per_match": args.games}
    kinds = [("trivial", lowest, {})] + [
        (f"think-{mode}", think, {"TAKE5_THINK_MS": f"{args.think_ms:g}", "TAKE5_THINK_MODE": mode})
        for mode in args.think_mode
    ]
    launchers = {}
    try:
        for kind, bot, env in kinds:
            launchers[kind] = DockerLauncher(env=env, base_image=args.base_image)
            LAUNCHERS.append(launchers[kind])
            launchers[kind].prepare([bot])
        results["start"] = start_latency(launchers["trivial"], lowest, args.starts)
        s = results["start"]
        print(f"\ncontainer start -> socket {s['socket_median_s']:.3f} s, -> first answer "
              f"{s['first_answer_median_s']:.3f} s (median of {s['count']}, max {s['first_answer_max_s']:.3f} s); "
              f"CPU per container (dockerd, containerd, container, referee) {s['cpu_per_container_s']:.2f} s")

        if args.only_start:
            return
        print(f"\n{'bots':<12} {'conc':>4} {'local g/s':>10} {'docker g/s':>11} {'ratio':>6} "
              f"{'local cpu/g':>11} {'docker cpu/g':>12} {'faults':>6}")
        rows = []
        for kind, bot, env in kinds:
            bots = [bot] * 4
            for conc in args.concurrency:
                local_rates, docker_rates, local_cpu, docker_cpu_ = [], [], [], []
                faults = 0
                for _ in range(args.repeat):
                    secs, cpu, f = run_matches(bots, args.games, conc, local_launcher(env))
                    local_rates.append(conc * args.games / secs)
                    local_cpu.append(cpu / (conc * args.games))
                    faults += f
                    secs, cpu, f = run_matches(bots, args.games, conc, launchers[kind])
                    docker_rates.append(conc * args.games / secs)
                    docker_cpu_.append(cpu / (conc * args.games))
                    faults += f
                local_rate, docker_rate = statistics.median(local_rates), statistics.median(docker_rates)
                row = {
                    "bots": kind, "concurrency": conc,
                    "local_games_per_s": round(local_rate, 3), "docker_games_per_s": round(docker_rate, 3),
                    "ratio": round(docker_rate / local_rate, 3),
                    "local_cpu_per_game_s": round(statistics.median(local_cpu), 3),
                    "docker_cpu_per_game_s": round(statistics.median(docker_cpu_), 3),
                    "faults": faults,
                }
                rows.append(row)
                print(f"{kind:<12} {conc:>4} {local_rate:>10.2f} {docker_rate:>11.2f} {row['ratio']:>6.2f} "
                      f"{row['local_cpu_per_game_s']:>11.2f} {row['docker_cpu_per_game_s']:>12.2f} {faults:>6}",
                      flush=True)
        results["throughput"] = rows
        starts = [x for launcher in launchers.values() for x in launcher.start_seconds]
        if starts:
            results["socket_seconds_in_matches"] = {"median": round(statistics.median(starts), 3),
                                                    "max": round(max(starts), 3), "count": len(starts)}
    finally:
        for launcher in launchers.values():
            launcher.close()
        if args.json:
            args.json.write_text(json.dumps(results, indent=1) + "\n")
    print(f"\nload average at the end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
