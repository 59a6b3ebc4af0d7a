"""Docker sandbox cost: what a fresh bot process for each game costs, and games per second of 4
containerised bots against the same bots as local processes, side by side in the same run.

``--cli`` measures instead what a user runs (bench/sandbox_cli.py): `referee match` as a
subprocess, cold start included, local against docker; one bot process for one game by the
launcher against the plainest baseline, a cold `docker run`; spares at ``--spares N`` bot
versions. The rest of this docstring is about the in-process measurements below, which time a
long-lived launcher (a worker's) after a warm-up.

Paths measured, taking turns so that load from elsewhere hits them alike: every other round runs
them in the reverse order (local first, then last), since a fixed order gave the same side the
rising or falling load of a shared host at every round and biased the ratio.

* ``local``: the bots as local processes (take5_arena.referee.match.local), started once per match:
  the baseline;
* ``warm``: the launcher with ``reuse=True``: a fresh bot process for every game, forked by the
  fork server of a warm container started ahead for that game and removed after it (take5_arena/
  referee/sandbox/warm.py; no container serves two games: issue 45);
* ``fresh``: the launcher as it is (``reuse=False``, its default): the image's own command in a
  fresh container for every game;
* ``runsc`` (with ``--runsc``): fresh containers under gVisor (warm containers need runc).

What is counted (CPU seconds, user + system):

* the referee: this process and the children it reaped (the local bots, the ``nsenter`` of each
  warm container's pid counter);
* the containers: their cgroups (`DockerLauncher.cpu_seconds`: every process that ran in them,
  the bot and the fork server, read before and after, removed containers included);
* the engine: this engine's own dockerd and containerd (with the children they reaped) and the
  containerd-shim of each container (with the runc processes it ran and reaped), found by the
  engine's socket; other engines on the machine (tests/test_cluster.py starts some) are not
  counted. Shims end with their container, so a helper process samples them every 20 ms and keeps
  the last value seen: a shim's last few milliseconds before it ends are missed, which flatters
  the fresh path, not the warm one. Other users of the same engine are counted too: use
  ``--engine-root DIR`` for an engine of the benchmark's own (the base image is copied into it
  under its name and tag the first time).

The host's load average (1 minute) is read after every timed match and printed with each row
(``load``: lowest-highest of its rounds; in the JSON, each round's), so that a figure is read
with the load it was measured at.

Figures: ``start``: one bot at a time, a process for one game (take it, wait for its socket, its
first answer, stop it and clean up after it), CPU per process split as above; ``games``: matches
of 4 bots, 1 and 2 matches at once, trivial bots (`lowest`) and bots thinking 20 ms per decision
(busy on the CPU), games/s and CPU per game; ``cost/bot/game`` = (CPU per game of the path - CPU
per game of local processes) / 4. Targets (issue 28): cost <= 0.1 CPU-s per bot per game; games/s
>= 0.8 of local for trivial bots and >= 0.9 for thinking bots, at 1 and 2 matches at once.

Run: python bench/sandbox.py [--games 12] [--repeat 2] [--concurrency 1 2] [--runsc]
     [--engine-root /var/tmp/take5-bench-engine]
Needs a Docker engine with the base images (scripts/setup-docker.sh), as root for warm containers.
Not a test: it prints numbers.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10: the same parser, as take5_arena.referee.sandbox.manifest uses
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "sdk"))

from take5_arena.referee import defaults
from take5_arena.referee.match import CallLimits, Launcher, Match, MatchConfig
from take5_arena.referee.match.botref import BotRef, parse_bot
from take5_arena.referee.match.local import LocalBot
from take5_arena.referee.match.remote import RemoteBot
from take5_arena.referee.sandbox import engine
from take5_arena.referee.sandbox.dockerbot import DockerBot
from take5_arena.referee.sandbox.launcher import DockerLauncher
from take5_arena.referee.sandbox.limits import SandboxLimits

BOTS = 4
COST_TARGET = 0.1
"""CPU seconds per bot per game that a container may add to local processes (issue 28)."""
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


def _resetting(launcher: DockerLauncher) -> bool:
    return False  # no container is reset any more (issue 45)


# -- the engine's own processes ------------------------------------------------------------------


def _ticks(pid: int) -> int | None:
    """utime + stime + cutime + cstime of a process, in clock ticks (None if it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return sum(int(x) for x in fields[11:15])


def _cmdline(pid: int) -> list[str]:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").split("\0")
    except OSError:
        return []


def _listener(path: str) -> int | None:
    """The pid of the process listening on the Unix socket `path`."""
    inodes = set()
    for line in Path("/proc/net/unix").read_text().splitlines()[1:]:
        fields = line.split()
        if len(fields) >= 8 and fields[7] == path and fields[5] == "01":
            inodes.add(f"socket:[{fields[6]}]")
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            for fd in (entry / "fd").iterdir():
                if os.readlink(fd) in inodes:
                    return int(entry.name)
        except OSError:
            continue
    return None


def engine_processes(socket_path: str) -> tuple[list[int], str]:
    """(pids of the engine's dockerd and containerd, containerd's socket, which its shims name)."""
    dockerd = _listener(socket_path)
    if dockerd is None:
        raise SystemExit(f"no process listens on {socket_path}")
    args = _cmdline(dockerd)
    external = next((a.split("=", 1)[1] for a in args if a.startswith("--containerd=")), None)
    if external is None and "--containerd" in args:
        external = args[args.index("--containerd") + 1]
    if external:
        containerd = _listener(external)
        return [dockerd] + ([containerd] if containerd else []), external
    for child in Path(f"/proc/{dockerd}/task").glob("*/children"):
        for pid in map(int, child.read_text().split()):
            cmd = _cmdline(pid)
            if cmd and cmd[0].endswith("containerd") and "--config" in cmd:
                config = tomllib.loads(Path(cmd[cmd.index("--config") + 1]).read_text())
                return [dockerd, pid], config["grpc"]["address"]
    raise SystemExit(f"cannot find the containerd of the dockerd on {socket_path}")


def sample(daemons: list[int], address: str) -> None:
    """The helper process: on each line of stdin, print as JSON the engine's CPU seconds so far:
    its daemons' now, and the last value seen of each shim of its containerd and of its
    container's cgroup, by container id."""
    from take5_arena.referee.sandbox import cgroups

    tick = os.sysconf("SC_CLK_TCK")
    shims: dict[tuple[int, str], tuple[str, int]] = {}
    groups: dict[str, float] = {}
    seen: set[int] = set()
    lock = threading.Lock()

    def scan() -> None:
        while True:
            now = {int(e) for e in os.listdir("/proc") if e.isdigit()}
            seen.intersection_update(now)  # a pid that ended may come back as another process
            for pid in now:
                if pid not in seen:
                    seen.add(pid)
                    cmd = _cmdline(pid)
                    if cmd and "containerd-shim" in cmd[0] and address in cmd and "-id" in cmd:
                        try:
                            stat = Path(f"/proc/{pid}/stat").read_text()
                        except OSError:
                            continue
                        start = stat.rsplit(")", 1)[1].split()[19]
                        with lock:
                            shims[(pid, start)] = (cmd[cmd.index("-id") + 1], 0)
            with lock:
                for key, (cid, _) in list(shims.items()):
                    ticks = _ticks(key[0])
                    if ticks is not None:
                        shims[key] = (cid, ticks)
                        used = cgroups.cpu_seconds(cid)
                        if used is not None:
                            groups[cid] = used
            time.sleep(0.02)

    threading.Thread(target=scan, daemon=True).start()
    for _ in sys.stdin:
        by_id: dict[str, float] = {}
        with lock:
            for cid, ticks in shims.values():
                by_id[cid] = by_id.get(cid, 0.0) + ticks / tick
            cg = dict(groups)
        daemon_seconds = sum(_ticks(p) or 0 for p in daemons) / tick
        print(json.dumps({"daemons": daemon_seconds, "shims": by_id, "cgroups": cg}), flush=True)


class EngineClock:
    """CPU seconds of one engine's daemons and shims (the helper process above)."""

    def __init__(self, socket_path: str) -> None:
        daemons, address = engine_processes(socket_path)
        self.proc = subprocess.Popen(
            [sys.executable, __file__, "--sample", json.dumps([daemons, address])],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        self.daemons = daemons
        time.sleep(0.2)

    def __call__(self, containers: frozenset[str]) -> float:
        """The daemons' CPU seconds so far, and the shims' of `containers` (ids)."""
        return self.read(containers)["engine"]

    def read(self, containers: frozenset[str]) -> dict[str, float]:
        """``engine``: the daemons' CPU seconds so far and the shims' of `containers` (ids);
        ``containers``: their cgroups' (the last value seen of each)."""
        assert self.proc.stdin is not None and self.proc.stdout is not None
        time.sleep(0.05)  # a sample of the shims taken after what is measured
        self.proc.stdin.write("\n")
        self.proc.stdin.flush()
        got = json.loads(self.proc.stdout.readline())
        shims = sum(v for k, v in got["shims"].items() if k in containers)
        groups = sum(v for k, v in got["cgroups"].items() if k in containers)
        return {"engine": float(got["daemons"]) + float(shims), "containers": float(groups)}

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        self.proc.wait(5)


def self_cpu() -> float:
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


class Clocks:
    """The three clocks of a measurement: referee, containers (of the given launchers), engine."""

    def __init__(self, engine_clock: EngineClock | None, launchers: list[DockerLauncher]) -> None:
        self.engine = engine_clock
        self.launchers = launchers

    def read(self) -> tuple[float, float, float]:
        containers = sum(launcher.cpu_seconds() for launcher in self.launchers)
        ids = frozenset().union(*(launcher.container_ids for launcher in self.launchers))
        daemons = self.engine(ids) if self.engine is not None and self.launchers else 0.0
        return self_cpu(), containers, daemons


# -- a private engine -----------------------------------------------------------------------------


@contextlib.contextmanager
def private_engine(root: Path, images: list[str]) -> Iterator[str]:
    """A dockerd of the benchmark's own (its data root kept under `root`, so images stay), with
    runsc registered when it is installed; yields its socket path. The base images are copied in
    from the engine of the environment the first time."""
    root.mkdir(parents=True, exist_ok=True)
    sock = root / "docker.sock"
    config = root / "daemon.json"
    runsc = shutil.which("runsc")
    config.write_text(
        json.dumps(
            {
                "runtimes": {
                    "runsc": {
                        "path": runsc,
                        "runtimeArgs": ["--host-uds=create", "--network=none", "--oci-seccomp"],
                    }
                }
            }
            if runsc
            else {}
        )
    )
    log = open(root / "dockerd.log", "ab")  # noqa: SIM115 - the daemon's, closed after it ends
    proc = subprocess.Popen(
        [
            "dockerd",
            "--config-file",
            str(config),
            "--iptables=false",
            "--bridge=none",
            "--data-root",
            str(root / "data"),
            "--exec-root",
            str(root / "exec"),
            "--pidfile",
            str(root / "docker.pid"),
            "-H",
            f"unix://{sock}",
        ],
        stdin=subprocess.DEVNULL,
        stdout=log,
        stderr=log,
    )
    import docker

    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                mine = docker.DockerClient(base_url=f"unix://{sock}", timeout=300)
                mine.ping()
                break
            except Exception:  # noqa: BLE001 - not up yet
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise SystemExit(
                        f"the private dockerd did not start (see {root}/dockerd.log)"
                    ) from None
                time.sleep(0.3)
        main = docker.from_env(timeout=300)
        for image in images:
            try:
                mine.images.get(image)
            except docker.errors.ImageNotFound:
                print(f"copying {image} into the private engine ...", flush=True)
                # named: without it the archive has no repository and tag, and the image loads
                # as a bare id that no build or container of the bench can name.
                mine.images.load(b"".join(main.images.get(image).save(named=image)))
                mine.images.get(image)  # ImageNotFound here rather than at the first build
        yield str(sock)
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


# -- start: a process for one game ---------------------------------------------------------------


_deals = iter(range(1, 1 << 62))


def one_start(launcher: DockerLauncher, ref: BotRef, clocks: Clocks) -> dict[str, float]:
    """Take a bot process for a game, wait for its first answer (Handshake), stop it, wait for
    the cleanup after it: seconds to the first answer and the CPU of each clock."""
    r0, c0, d0 = clocks.read()
    started = time.monotonic()
    handle = launcher(ref)
    assert isinstance(handle, DockerBot)  # what a DockerLauncher gives for a bot folder
    handle.start()
    handle.serve_game("start", next(_deals))  # it plays a game: it may not play another
    address = handle.ready(60)
    remote = RemoteBot(address)
    try:
        remote.wait_ready(10)
        remote.handshake(5)
        answer = time.monotonic() - started
    finally:
        remote.close()
    handle.stop()
    for future in handle._retiring:
        future.result()
    deadline = time.monotonic() + 10  # a warm container's reset, in the background
    while _resetting(launcher) and time.monotonic() < deadline:
        time.sleep(0.01)
    r1, c1, d1 = clocks.read()
    return {"answer": answer, "referee": r1 - r0, "containers": c1 - c0, "engine": d1 - d0}


def start_costs(
    launchers: dict[str, DockerLauncher], bot: str, count: int, clocks: Callable[[str], Clocks]
) -> dict[str, dict[str, Any]]:
    ref = parse_bot(bot)
    samples: dict[str, list[dict[str, float]]] = {path: [] for path in launchers}
    first: dict[str, dict[str, float]] = {}
    for path, launcher in launchers.items():  # a cold start each: a warm container is made here
        first[path] = one_start(launcher, ref, clocks(path))
    for path in alternating(list(launchers), count):
        samples[path].append(one_start(launchers[path], ref, clocks(path)))
    out = {}
    for path, rows in samples.items():
        med = {k: statistics.median(r[k] for r in rows) for k in rows[0]}
        out[path] = {
            "first_answer_s": round(med["answer"], 3),
            "cpu_s": round(med["referee"] + med["containers"] + med["engine"], 3),
            "cpu_referee_s": round(med["referee"], 3),
            "cpu_containers_s": round(med["containers"], 3),
            "cpu_engine_s": round(med["engine"], 3),
            "first_cpu_s": round(sum(v for k, v in first[path].items() if k != "answer"), 3),
            "count": count,
        }
    return out


# -- games ----------------------------------------------------------------------------------------


def alternating(paths: list[str], rounds: int) -> Iterator[str]:
    """`paths` once per round, every other round in the reverse order (a b, b a, a b, ...): a load
    that rises or falls over the run then falls on each path alike, where a fixed order gives it
    to the same side every round."""
    for i in range(rounds):
        yield from paths if i % 2 == 0 else reversed(paths)


def run_matches(
    bots: list[str], games: int, concurrency: int, launcher: Launcher, clocks: Clocks
) -> tuple[float, tuple[float, float, float], int]:
    """(seconds, CPU seconds of each clock: referee, containers, engine; faults) of
    `concurrency` matches at once."""
    config = MatchConfig(games=games, calls=CallLimits(timeout=2.0, start_timeout=60.0))
    faults = [0] * concurrency
    errors: list[BaseException] = []

    def one(i: int) -> None:
        try:
            with Match(bots, config, launcher=launcher) as match:
                result = match.play()
            faults[i] = result.fault_count + len(result.rejections)
        except BaseException as error:  # noqa: BLE001 - re-raised in the caller's thread
            errors.append(error)

    before = clocks.read()
    started = time.perf_counter()
    threads = [threading.Thread(target=one, args=(i,)) for i in range(concurrency)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    seconds = time.perf_counter() - started
    if errors:
        raise errors[0]
    settle(launcher)
    after = clocks.read()
    split = (after[0] - before[0], after[1] - before[1], after[2] - before[2])
    return seconds, split, sum(faults)


def settle(launcher: Launcher, timeout: float = 10.0) -> None:
    """Wait for a launcher's resets in the background (after the last game of a match), so that
    each measurement counts the work its own games caused."""
    if not isinstance(launcher, DockerLauncher):
        return
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with launcher._lock:
            busy = _resetting(launcher) or any(
                not inst.future.done() for inst in launcher._instances
            )
        if not busy and not launcher._removals._work_queue.qsize():
            return
        time.sleep(0.01)


def local_launcher(env: dict[str, str]) -> Callable[[BotRef], LocalBot]:
    def launch(ref: BotRef) -> LocalBot:
        return LocalBot(ref, env=env)

    return launch


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--games", type=int, default=12, help="games per match (default 12)")
    ap.add_argument("--think-ms", type=float, default=20.0)
    ap.add_argument("--think-mode", nargs="+", choices=["cpu", "sleep"], default=["cpu"])
    ap.add_argument("--no-trivial", action="store_true", help="leave out the trivial bots")
    ap.add_argument("--concurrency", type=int, nargs="+", default=[1, 2], help="matches at once")
    ap.add_argument("--repeat", type=int, default=2, help="rounds of every path per setting")
    ap.add_argument(
        "--warmup", type=int, default=2, help="games of the untimed match before each setting"
    )
    ap.add_argument("--starts", type=int, default=8, help="processes per path for `start`")
    ap.add_argument(
        "--paths",
        nargs="+",
        choices=["warm", "fresh"],
        default=["warm", "fresh"],
    )
    ap.add_argument("--runsc", action="store_true", help="also fresh containers under gVisor")
    ap.add_argument(
        "--base-image", default=defaults.BASE_IMAGE, help="what the bot images are built on"
    )
    ap.add_argument(
        "--engine-root",
        type=Path,
        help="start a dockerd of the benchmark's own here (its data kept: images stay)",
    )
    ap.add_argument("--only-start", action="store_true", help="measure the start only")
    ap.add_argument("--json", type=Path, help="also write the results here")
    ap.add_argument(
        "--cli",
        action="store_true",
        help="what a user runs (bench/sandbox_cli.py): `referee match` as a subprocess, a "
        "process's start against the plainest baseline, spares at --spares versions",
    )
    ap.add_argument("--spares", type=int, default=0, help="with --cli: bot versions for spares")
    ap.add_argument("--runtime", default=None, help="with --cli: runc or runsc")
    ap.add_argument("--sample", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.sample:
        daemons, address = json.loads(args.sample)
        sample(daemons, address)
        return

    with contextlib.ExitStack() as stack:
        if args.engine_root is not None:
            sock = stack.enter_context(private_engine(args.engine_root, [args.base_image]))
            os.environ["DOCKER_HOST"] = f"unix://{sock}"
        else:
            sock = os.environ.get("DOCKER_HOST", "unix:///var/run/docker.sock").removeprefix(
                "unix://"
            )
        if args.cli:
            sys.path.insert(0, str(Path(__file__).parent))
            from sandbox_cli import cli_bench

            got = cli_bench(args, sock)
            if args.json:
                args.json.write_text(json.dumps(got, indent=1) + "\n")
            return
        bench(args, sock)


def bench(args: argparse.Namespace, sock: str) -> None:
    engine_clock = EngineClock(sock)
    lowest = str(ROOT / "example_bots" / "lowest")
    think = think_bot()
    version = engine.engine_version()
    print(
        f"cores: {os.cpu_count()}, load average: {os.getloadavg()[0]:.2f}; engine {version} on "
        f"{sock} (dockerd+containerd pids {engine_clock.daemons}); bots on {args.base_image}"
    )
    results: dict[str, Any] = {
        "cores": os.cpu_count(),
        "games_per_match": args.games,
        "load_start": round(os.getloadavg()[0], 2),
    }
    trivial: list[tuple[str, str, dict[str, str]]] = [("trivial", lowest, {})]  # kind, bot, env
    kinds = trivial * (not args.no_trivial) + [
        (f"think-{mode}", think, {"TAKE5_THINK_MS": f"{args.think_ms:g}", "TAKE5_THINK_MODE": mode})
        for mode in args.think_mode
    ]
    paths: dict[str, dict[str, Any]] = {
        "warm": {"reuse": True},
        "fresh": {"reuse": False},
    }
    paths = {p: paths[p] for p in args.paths}
    if args.runsc:
        paths["runsc"] = {"reuse": False, "limits": SandboxLimits(runtime="runsc")}
    launchers: dict[tuple[str, str], DockerLauncher] = {}
    try:
        for kind, bot, env in kinds:
            for path, options in paths.items():
                options = dict(options)
                cls = DockerLauncher
                launcher = launchers[kind, path] = cls(
                    env=env, base_image=args.base_image, **options
                )
                launcher.prepare([bot])
        if "warm" in paths and not launchers[kinds[0][0], "warm"].reuse:
            print(f"warm containers are off here: {launchers[kinds[0][0], 'warm'].reuse_off}")

        def clocks(path: str, kind: str = kinds[0][0]) -> Clocks:
            return Clocks(engine_clock, [launchers[kind, path]])

        start_kind = kinds[0][0]
        results["start"] = start_costs(
            {p: launchers[start_kind, p] for p in paths}, kinds[0][1], args.starts, clocks
        )
        print(f"\nstart: a bot process for one game, one at a time (median of {args.starts}):")
        print(
            f"  {'path':<6} {'-> answer':>10} {'CPU-s':>7} = {'referee':>8} + {'containers':>10} "
            f"+ {'engine':>7}   {'first (cold) CPU-s':>18}"
        )
        for path, st in results["start"].items():
            print(
                f"  {path:<6} {st['first_answer_s']:>9.3f}s {st['cpu_s']:>7.3f}   "
                f"{st['cpu_referee_s']:>8.3f}   {st['cpu_containers_s']:>10.3f}   "
                f"{st['cpu_engine_s']:>7.3f}   {st['first_cpu_s']:>18.3f}"
            )
        if args.only_start:
            return
        print(
            f"\nmatches of {BOTS} bots, {args.games} games each, after an untimed warm-up match "
            f"of {args.warmup} games per path; median of "
            f"{args.repeat} interleaved rounds (every other one in the reverse order), [min-max] "
            f"of the round's ratio to local; load: the 1-minute load average after each round, "
            f"lowest-highest"
        )
        print(
            f"{'bots':<11} {'conc':>4} {'path':>6} {'games/s':>8} {'vs local':>8} "
            f"{'[spread]':>13} {'CPU-s/game':>10} {'=ref':>6} {'+cont':>6} {'+eng':>6} "
            f"{'cost/bot/game':>13} {'[spread]':>13} {'faults':>6} {'load':>9}"
        )
        rows = []
        for kind, bot, env in kinds:
            bots = [bot] * BOTS
            for conc in args.concurrency:
                every = ["local", *paths]

                how: dict[str, tuple[Launcher, Clocks]] = {
                    "local": (local_launcher(env), Clocks(None, []))
                }
                how.update((path, (launchers[kind, path], clocks(path, kind))) for path in paths)

                if args.warmup:
                    for path in every:
                        run_matches(bots, args.warmup, conc, *how[path])
                rates: dict[str, list[float]] = {p: [] for p in every}
                splits: dict[str, list[tuple[float, float, float]]] = {p: [] for p in every}
                faults = dict.fromkeys(every, 0)
                loads: dict[str, list[float]] = {p: [] for p in every}
                for path in alternating(every, args.repeat):
                    secs, split, f = run_matches(bots, args.games, conc, *how[path])
                    rates[path].append(conc * args.games / secs)
                    splits[path].append(tuple(x / (conc * args.games) for x in split))
                    faults[path] += f
                    loads[path].append(os.getloadavg()[0])
                local_rate = statistics.median(rates["local"])
                local_cpu = statistics.median(sum(x) for x in splits["local"])
                for path in every:
                    rate = statistics.median(rates[path])
                    parts = [statistics.median(x[i] for x in splits[path]) for i in range(3)]
                    cpu = statistics.median(sum(x) for x in splits[path])
                    ratios = [r / lr for r, lr in zip(rates[path], rates["local"])]
                    costs = [
                        (sum(x) - sum(lx)) / BOTS for x, lx in zip(splits[path], splits["local"])
                    ]
                    row = {
                        "bots": kind,
                        "concurrency": conc,
                        "path": path,
                        "games_per_s": round(rate, 3),
                        "ratio": round(rate / local_rate, 3),
                        "ratio_spread": [round(min(ratios), 3), round(max(ratios), 3)],
                        "cpu_per_game_s": round(cpu, 3),
                        "cpu_referee_s": round(parts[0], 3),
                        "cpu_containers_s": round(parts[1], 3),
                        "cpu_engine_s": round(parts[2], 3),
                        "cost_per_bot_game_s": round((cpu - local_cpu) / BOTS, 3),
                        "cost_spread": [round(min(costs), 3), round(max(costs), 3)],
                        "faults": faults[path],
                        "load": [round(x, 2) for x in loads[path]],
                    }
                    rows.append(row)
                    spread = f"[{min(ratios):.2f}-{max(ratios):.2f}]"
                    cspread = f"[{min(costs):.3f}-{max(costs):.3f}]"
                    load = f"{min(loads[path]):.1f}-{max(loads[path]):.1f}"
                    print(
                        f"{kind:<11} {conc:>4} {path:>6} {rate:>8.2f} {row['ratio']:>8.2f} "
                        f"{spread:>13} {cpu:>10.3f} {parts[0]:>6.3f} {parts[1]:>6.3f} "
                        f"{parts[2]:>6.3f} {row['cost_per_bot_game_s']:>13.3f} {cspread:>13} "
                        f"{faults[path]:>6} {load:>9}",
                        flush=True,
                    )
        if "warm" in paths:
            print("\ntargets (issue 28), warm containers:")
            for row in rows:
                if row["path"] != "warm":
                    continue
                want = 0.8 if row["bots"] == "trivial" else 0.9
                ok_rate = row["ratio"] >= want
                ok_cost = row["cost_per_bot_game_s"] <= COST_TARGET
                print(
                    f"  {row['bots']:<11} x{row['concurrency']}: games/s {row['ratio']:.2f} of "
                    f"local (target >= {want}) {'met' if ok_rate else 'MISSED'}; cost/bot/game "
                    f"{row['cost_per_bot_game_s']:.3f} CPU-s (target <= {COST_TARGET}) "
                    f"{'met' if ok_cost else 'MISSED'}"
                )
        results["games"] = rows
    finally:
        for launcher in launchers.values():
            launcher.close()
        engine_clock.close()
        results["load_end"] = round(os.getloadavg()[0], 2)
        if args.json:
            args.json.write_text(json.dumps(results, indent=1) + "\n")
    print(f"\nload average at the end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
