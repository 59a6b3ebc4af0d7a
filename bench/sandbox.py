"""Docker sandbox cost: container start to first answer, and games per second of 4 containerised
bots against the same 4 bots as local processes, in the same run, at the same concurrency.

Two ways of running the containers are measured side by side, on the same images:

* ``api``: the production launcher (take5_arena.referee.sandbox.launcher.DockerLauncher), every
  container request an Engine API call through docker-py;
* ``cli``: the baseline, the way the referee worked before: the same launcher, but each container
  is created with a ``docker run`` process and removed with a ``docker rm -f`` process (its flags
  are made from the same `container_kwargs`, see `cli_run_argv`). It lives here only, to keep
  the comparison honest in every run; the referee has no command-line path any more.

* start: create a bot container -> its socket appears -> its first answer (Handshake), one
  container at a time; also the CPU a start costs (dockerd + containerd + the container itself +
  the referee and the processes it spawned).
* throughput: matches of 4 bots, `--concurrency` of them at once, each of `--games` games, with the
  bots as local processes (started once per match) and in containers (a fresh one per bot per game,
  the next game's started while a game plays). Two kinds of bots: trivial (`lowest`, answers at
  once) and thinking bots that spend `--think-ms` (20) per decision, busy on the CPU (`cpu`) or
  waiting (`sleep`). Local, cli and api runs alternate, so load from elsewhere hits all alike.

Targets (issue 11): start to first answer <= 0.15 CPU-s; think-cpu at 2 matches at once >= 0.8 of
the local rate.

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

from take5_arena.referee import defaults
from take5_arena.referee.match import CallLimits, Match, MatchConfig
from take5_arena.referee.match.botref import parse_bot
from take5_arena.referee.match.local import LocalBot
from take5_arena.referee.match.remote import RemoteBot
from take5_arena.referee.sandbox import containers
from take5_arena.referee.sandbox.launcher import DockerLauncher
from take5_arena.referee.sandbox.limits import container_kwargs

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


# -- the baseline: the docker command line ---------------------------------------------------------


def cli_run_argv(kwargs: dict, image: str) -> list[str]:
    """``docker run`` arguments equal to `containers.create(image, **kwargs)` (every key mapped, or
    KeyError: the baseline never silently runs with fewer flags than production)."""
    kw = dict(kwargs)
    argv = ["run", "--detach", "--name", kw.pop("name")]
    assert kw.pop("detach") is True
    argv += ["--network", kw.pop("network_mode")]
    if kw.pop("read_only"):
        argv.append("--read-only")
    argv += ["--user", kw.pop("user")]
    argv += [a for cap in kw.pop("cap_drop") for a in ("--cap-drop", cap)]
    argv += [a for opt in kw.pop("security_opt") for a in ("--security-opt", opt)]
    argv += ["--memory", kw.pop("mem_limit"), "--memory-swap", kw.pop("memswap_limit")]
    argv += ["--cpus", f"{kw.pop('nano_cpus') / 1e9:g}", "--pids-limit", str(kw.pop("pids_limit"))]
    argv += [
        a for u in kw.pop("ulimits") for a in ("--ulimit", f"{u['Name']}={u['Soft']}:{u['Hard']}")
    ]
    argv += [a for path, opts in kw.pop("tmpfs").items() for a in ("--tmpfs", f"{path}:{opts}")]
    argv += ["--shm-size", kw.pop("shm_size"), "--restart", kw.pop("restart_policy")["Name"]]
    if kw.pop("init"):
        argv.append("--init")
    argv += ["--hostname", kw.pop("hostname")]
    log = kw.pop("log_config")
    argv += [
        "--log-driver",
        log["Type"],
        *(a for k, v in log["Config"].items() for a in ("--log-opt", f"{k}={v}")),
    ]
    argv += [a for k, v in kw.pop("environment").items() for a in ("--env", f"{k}={v}")]
    argv += [a for k, v in kw.pop("labels").items() for a in ("--label", f"{k}={v}")]
    argv += [
        a
        for m in kw.pop("mounts")
        for a in ("--mount", f"type={m['Type']},source={m['Source']},target={m['Target']}")
    ]
    if "runtime" in kw:
        argv += ["--runtime", kw.pop("runtime")]
    entrypoint = kw.pop("entrypoint", None)
    command = kw.pop("command", None) or []
    if entrypoint is not None:
        argv += ["--entrypoint", entrypoint[0]]
        command = [*entrypoint[1:], *command]
    if kw:
        raise KeyError(f"cli_run_argv does not map {sorted(kw)}")
    return [*argv, image, *command]


class CliLauncher(DockerLauncher):
    """The production launcher with the old command-line container path (the baseline)."""

    def _create(self, image, socket_dir, labels):
        facts = containers.image_facts(self.client, image.info.tag)
        name = containers.container_name(self.run_id)
        kwargs = container_kwargs(
            name=name,
            limits=self.limits,
            socket_dir=str(socket_dir),
            labels={"take5.run": self.run_id, **labels},
            env=self.env,
            entrypoint=image.entrypoint,
            command=image.command,
            volumes=facts.volumes,
        )
        started = time.monotonic()
        proc = subprocess.run(
            ["docker", *cli_run_argv(kwargs, image.info.tag)],
            capture_output=True,
            text=True,
            check=False,
            timeout=120,
        )
        if proc.returncode != 0:
            subprocess.run(
                ["docker", "rm", "-f", name], capture_output=True, check=False, timeout=120
            )
            raise RuntimeError(
                f"docker run failed (exit {proc.returncode}): {proc.stderr.strip()[-500:]}"
            )
        return containers.Container(
            id=proc.stdout.strip(),
            name=name,
            image=image.info.tag,
            socket_dir=socket_dir,
            started=started,
        )

    def _delete(self, container):
        subprocess.run(
            ["docker", "rm", "-f", "-v", container.id],
            capture_output=True,
            check=False,
            timeout=120,
        )


# -- CPU accounting -----------------------------------------------------------------------------


def _pids(name: str) -> list[int]:
    out = subprocess.run(
        ["pgrep", "-x", name], check=False, capture_output=True, text=True
    ).stdout.split()
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


def _one_start(launcher: DockerLauncher, ref) -> tuple[float, float, float, float, float]:
    """(seconds to the socket, seconds to the first answer, CPU seconds of the daemons, of the
    container, of the referee and the processes it spawned) of one container."""
    d0, c0, s0 = daemon_cpu(), launcher.container_cpu, self_cpu()
    handle = launcher(ref)
    handle.start()
    address = handle.ready(30)
    container = handle._current.container
    socket_s = time.monotonic() - container.started
    remote = RemoteBot(address)
    try:
        remote.wait_ready(10)
        remote.handshake(5)
        answer_s = time.monotonic() - container.started
    finally:
        remote.close()
    handle.stop()
    for future in handle._retiring:
        future.result()
    return socket_s, answer_s, daemon_cpu() - d0, launcher.container_cpu - c0, self_cpu() - s0


def start_latency(launchers: dict[str, DockerLauncher], bot: str, count: int) -> dict[str, dict]:
    """One container at a time, the paths taking turns: create -> socket -> first answer
    (Handshake)."""
    ref = parse_bot(bot)
    samples: dict[str, list[tuple[float, ...]]] = {path: [] for path in launchers}
    for _ in range(count):
        for path, launcher in launchers.items():
            samples[path].append(_one_start(launcher, ref))
    out = {}
    for path, rows in samples.items():
        socket_s, answer_s, daemons, container, referee = zip(*rows)
        out[path] = {
            "socket_median_s": round(statistics.median(socket_s), 3),
            "first_answer_median_s": round(statistics.median(answer_s), 3),
            "first_answer_max_s": round(max(answer_s), 3),
            "cpu_per_container_s": round(statistics.median([sum(r[2:]) for r in rows]), 3),
            "cpu_daemons_s": round(statistics.median(daemons), 3),
            "cpu_container_s": round(statistics.median(container), 3),
            "cpu_referee_s": round(statistics.median(referee), 3),
            "count": count,
        }
    return out


# -- throughput -----------------------------------------------------------------------------------


def run_matches(
    bots: list[str], games: int, concurrency: int, launcher
) -> tuple[float, float, int]:
    """(seconds, CPU seconds of the referee + Docker, faults) for `concurrency` matches at once."""
    config = MatchConfig(games=games, calls=CallLimits(timeout=2.0, start_timeout=30.0))
    faults = [0] * concurrency
    errors: list[BaseException] = []

    def one(i: int) -> None:
        try:
            with Match(bots, config, launcher=launcher) as match:
                result = match.play()
            faults[i] = result.fault_count + len(result.rejections)
        except BaseException as error:  # noqa: BLE001 - raised again once the threads joined
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


PATHS = {"cli": CliLauncher, "api": DockerLauncher}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--games", type=int, default=12, help="games per match (default 12)")
    ap.add_argument("--think-ms", type=float, default=20.0)
    ap.add_argument("--think-mode", nargs="+", choices=["cpu", "sleep"], default=["cpu", "sleep"])
    ap.add_argument(
        "--no-trivial", action="store_true", help="leave out the matches of trivial bots"
    )
    ap.add_argument("--concurrency", type=int, nargs="+", default=[1, 2], help="matches at once")
    ap.add_argument("--repeat", type=int, default=2, help="local/cli/api rounds per setting")
    ap.add_argument(
        "--starts", type=int, default=8, help="containers per path for the start latency"
    )
    ap.add_argument(
        "--paths",
        nargs="+",
        choices=list(PATHS),
        default=list(PATHS),
        help="container paths to measure (default both: the cli baseline and the api)",
    )
    ap.add_argument(
        "--base-image", default=defaults.BASE_IMAGE, help="what the bot images are built on"
    )
    ap.add_argument(
        "--baseline-image",
        help="base image of the cli baseline's bot images (default: --base-image), "
        "e.g. an image from before the standard library was byte-compiled",
    )
    ap.add_argument("--only-start", action="store_true", help="measure the start only")
    ap.add_argument("--json", type=Path, help="also write the results here")
    args = ap.parse_args()

    lowest = str(ROOT / "example_bots" / "lowest")
    think = think_bot()
    print(
        f"cores: {os.cpu_count()}, load average: {os.getloadavg()[0]:.2f}; images: cli on "
        f"{args.baseline_image or args.base_image}, api on {args.base_image}"
    )
    results: dict = {
        "cores": os.cpu_count(),
        "think_ms": args.think_ms,
        "games_per_match": args.games,
    }
    kinds = [("trivial", lowest, {})] * (not args.no_trivial) + [
        (f"think-{mode}", think, {"TAKE5_THINK_MS": f"{args.think_ms:g}", "TAKE5_THINK_MODE": mode})
        for mode in args.think_mode
    ]
    launchers: dict[tuple[str, str], DockerLauncher] = {}
    try:
        for kind, bot, env in kinds:
            for path in args.paths:
                base = (
                    (args.baseline_image or args.base_image) if path == "cli" else args.base_image
                )
                launcher = launchers[kind, path] = PATHS[path](env=env, base_image=base)
                LAUNCHERS.append(launcher)
                launcher.prepare([bot])
        start_kind = kinds[0][0]
        results["start"] = start_latency(
            {p: launchers[start_kind, p] for p in args.paths}, kinds[0][1], args.starts
        )
        print(f"\ncontainer start (median of {args.starts}, one at a time):")
        for path, st in results["start"].items():
            print(
                f"  {path}: -> socket {st['socket_median_s']:.3f} s, -> first answer "
                f"{st['first_answer_median_s']:.3f} s (max {st['first_answer_max_s']:.3f} s); "
                f"CPU-s per container {st['cpu_per_container_s']:.3f} = dockerd+containerd "
                f"{st['cpu_daemons_s']:.3f} (shared: other users of the engine count too) + "
                f"container {st['cpu_container_s']:.3f} + referee and the processes it spawned "
                f"{st['cpu_referee_s']:.3f}"
            )

        if args.only_start:
            return
        print(
            f"\n{'bots':<12} {'conc':>4} {'path':>4} {'local g/s':>10} {'docker g/s':>11} "
            f"{'ratio':>6} {'local cpu/g':>11} {'docker cpu/g':>12} {'faults':>6}"
        )
        rows = []
        for kind, bot, env in kinds:
            bots = [bot] * 4
            for conc in args.concurrency:
                local_rates, local_cpu = [], []
                rates: dict[str, list[float]] = {p: [] for p in args.paths}
                cpus: dict[str, list[float]] = {p: [] for p in args.paths}
                faults = dict.fromkeys(args.paths, 0)
                for _ in range(args.repeat):
                    secs, cpu, f = run_matches(bots, args.games, conc, local_launcher(env))
                    local_rates.append(conc * args.games / secs)
                    local_cpu.append(cpu / (conc * args.games))
                    for path in args.paths:
                        secs, cpu, f = run_matches(bots, args.games, conc, launchers[kind, path])
                        rates[path].append(conc * args.games / secs)
                        cpus[path].append(cpu / (conc * args.games))
                        faults[path] += f
                local_rate = statistics.median(local_rates)
                for path in args.paths:
                    rate = statistics.median(rates[path])
                    row = {
                        "bots": kind,
                        "concurrency": conc,
                        "path": path,
                        "local_games_per_s": round(local_rate, 3),
                        "docker_games_per_s": round(rate, 3),
                        "ratio": round(rate / local_rate, 3),
                        "local_cpu_per_game_s": round(statistics.median(local_cpu), 3),
                        "docker_cpu_per_game_s": round(statistics.median(cpus[path]), 3),
                        "faults": faults[path],
                    }
                    rows.append(row)
                    print(
                        f"{kind:<12} {conc:>4} {path:>4} {local_rate:>10.2f} {rate:>11.2f} "
                        f"{row['ratio']:>6.2f} {row['local_cpu_per_game_s']:>11.2f} "
                        f"{row['docker_cpu_per_game_s']:>12.2f} {faults[path]:>6}",
                        flush=True,
                    )
        results["throughput"] = rows
    finally:
        for launcher in launchers.values():
            launcher.close()
        if args.json:
            args.json.write_text(json.dumps(results, indent=1) + "\n")
    print(f"\nload average at the end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
