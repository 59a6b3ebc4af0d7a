"""What a user runs, timed as a user runs it (bench/sandbox.py --cli; issue 49).

* ``match``: `referee match` as a subprocess, cold start included (the interpreter, the imports,
  the image check, the launcher, the reaper, the first containers), ``--sandbox local`` (the
  baseline) and ``--sandbox docker`` (today: a fresh container per game, started ahead), taking
  turns; the wall time of the whole command and its CPU: the command and the children it reaped
  (os.wait4), its containers' cgroups and the engine's daemons and its containers' shims
  (sandbox.EngineClock's helper, which samples every 20 ms and keeps the last value of a
  container that is gone);
* ``tournament``: `referee tournament run` of the same bots as a subprocess, local and docker,
  each in a fresh tournament whose bots were submitted before (an organiser's set-up, untimed):
  the schedule, the store, every record and the containers, as an organiser runs it;
* ``docker-run``: the plainest baseline of a container per game, in the same run: a cold
  ``docker run -d`` (the CLI, the sandbox's flags) per bot process, its first answer, then
  ``docker rm -f``; against the launcher's own start of a process for one game
  (`sandbox.one_start`), CPU split the same way (the CLI processes are this process's children);
* ``spares``: 1,000 synthetic bot versions (tags of one image) each asking for a spare, as a
  worker of a long tournament would: the eviction's count and memory caps, measured.

A container is the run's when the engine's create event carries the run's label (a live event
stream per measurement: other users of the engine are left out).
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from sandbox import ROOT, Clocks, EngineClock, alternating, one_start

from take5_arena.referee.match.botref import parse_bot
from take5_arena.referee.match.remote import RemoteBot
from take5_arena.referee.sandbox import containers, engine
from take5_arena.referee.sandbox.instances import BotImage
from take5_arena.referee.sandbox.launcher import DockerLauncher
from take5_arena.referee.sandbox.limits import (
    BOT_GID,
    BOT_UID,
    CONTAINER_SOCKET_DIR,
    LABEL_ARENA,
    LABEL_RUN,
    SandboxLimits,
    seccomp_profile,
)


class RunContainers:
    """The ids of the containers the engine creates with a run label starting with `prefix`."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self.ids: set[str] = set()
        self.client = engine.client()
        self.stream = self.client.api.events(
            decode=True,
            filters={"type": "container", "event": "create", "label": f"{LABEL_ARENA}=1"},
        )
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        try:
            for event in self.stream:
                attributes = (event.get("Actor") or {}).get("Attributes") or {}
                if str(attributes.get(LABEL_RUN, "")).startswith(self.prefix):
                    self.ids.add(str(event["Actor"]["ID"]))
        except Exception:  # noqa: BLE001 - the stream closed
            return

    def close(self) -> frozenset[str]:
        time.sleep(0.2)  # the last events
        self.stream.close()
        return frozenset(self.ids)


def timed(argv: list[str], env: dict[str, str], clock: EngineClock) -> dict[str, Any]:
    """Run `argv` (a referee command) and time it: wall seconds, CPU of the command and its
    reaped children, of its containers and of the engine; its exit code and JSON output."""
    prefix = f"bench{secrets.token_hex(3)}"
    watch = RunContainers(prefix)
    before = clock.read(frozenset())
    started = time.monotonic()
    proc = subprocess.Popen(
        argv,
        cwd=ROOT,
        env={**env, "TAKE5_RUN_PREFIX": prefix},
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert proc.stdout is not None
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    wall = time.monotonic() - started
    ids = watch.close()
    after = clock.read(ids)
    try:
        doc = json.loads(out)
    except ValueError:
        doc = {}
    faults = sum(len(f) for g in doc.get("games", []) for f in g.get("faults", []))
    return {
        "wall_s": wall,
        "referee": usage.ru_utime + usage.ru_stime,
        "containers": after["containers"],
        "engine": after["engine"] - before["engine"],
        "created": len(ids),
        "code": proc.returncode,
        "faults": faults,
    }


def user_matches(
    bots: list[str], games: int, rounds: int, clock: EngineClock, runtime: str | None
) -> dict[str, list[dict[str, Any]]]:
    """`referee match` of `games` games, local and docker, `rounds` times each, taking turns."""
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{ROOT / 'sdk'}"}
    base = [sys.executable, "-m", "take5_arena", "match", *bots, "--games", str(games), "--json"]
    argv = {
        "local": [*base, "--sandbox", "local"],
        "docker": [*base, "--sandbox", "docker", *(["--runtime", runtime] if runtime else [])],
    }
    out: dict[str, list[dict[str, Any]]] = {path: [] for path in argv}
    for path in alternating(list(argv), rounds):
        out[path].append(timed(argv[path], env, clock))
    return out


def user_tournaments(
    bots: list[str], games: int, rounds: int, clock: EngineClock, runtime: str | None
) -> dict[str, list[dict[str, Any]]]:
    """`referee tournament run` of `games` games among `bots` (submitted beforehand, untimed: an
    organiser's set-up), local and docker, each round in a fresh tournament, taking turns."""
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{ROOT / 'sdk'}"}
    referee = [sys.executable, "-m", "take5_arena"]
    out: dict[str, list[dict[str, Any]]] = {"local": [], "docker": []}
    for path in alternating(list(out), rounds):
        with tempfile.TemporaryDirectory(prefix="bench-tournament-") as folder:
            extra = ["--runtime", runtime] if runtime and path == "docker" else []
            for i, bot in enumerate(bots):
                subprocess.run(
                    [*referee, "submit", bot, "--name", f"bot{i}", "--tournament", folder]
                    + ["--sandbox", path, *extra],
                    cwd=ROOT,
                    env=env,
                    check=True,
                    capture_output=True,
                )
            argv = [*referee, "tournament", "run", "--tournament", folder, "--sandbox", path]
            argv += ["--players", str(len(bots)), "--games", str(games), "--json", *extra]
            out[path].append(timed(argv, env, clock))
    return out


def cli_run_argv(tag: str, socket_dir: Path, run_id: str, limits: SandboxLimits) -> list[str]:
    """`docker run` of a bot image with the sandbox's flags (limits.container_kwargs, as the CLI
    spells them; the masked paths have no CLI flag), its own command."""
    return [
        "docker", "run", "-d", "--network", "none", "--read-only",
        "--user", f"{BOT_UID}:{BOT_GID}", "--cap-drop", "ALL",
        "--security-opt", "no-new-privileges",
        "--security-opt", f"seccomp={_profile_file(limits)}",
        "--memory", limits.memory, "--memory-swap", limits.memory,
        "--cpus", f"{limits.cpus:g}", "--pids-limit", str(limits.pids),
        "--tmpfs", f"/tmp:rw,noexec,nosuid,nodev,size={limits.tmpfs}", "--init",
        "--label", f"{LABEL_ARENA}=1", "--label", f"{LABEL_RUN}={run_id}",
        "--mount", f"type=bind,source={socket_dir},target={CONTAINER_SOCKET_DIR}",
        "-e", f"TAKE5_LISTEN=unix:{CONTAINER_SOCKET_DIR}/bot.sock", "-e", "HOME=/tmp",
        *(["--runtime", limits.runtime] if limits.runtime else []),
        tag,
    ]  # fmt: skip


def _profile_file(limits: SandboxLimits) -> str:
    """The seccomp profile in a file, as the CLI takes it (the API takes its text)."""
    path = Path(tempfile.gettempdir()) / f"take5-bench-seccomp-{limits.runtime or 'runc'}.json"
    path.write_text(seccomp_profile(limits.runtime))
    return str(path)


def _children_cpu() -> float:
    t = os.times()
    return t.children_user + t.children_system


def docker_run_start(tag: str, clock: EngineClock, limits: SandboxLimits) -> dict[str, float]:
    """One bot process for one game the plainest way: a cold `docker run`, its first answer
    (Handshake), `docker rm -f`; seconds to the first answer and the CPU of each clock."""
    run_id = f"bench{secrets.token_hex(3)}"
    folder = Path(tempfile.mkdtemp(prefix="t5-bench-"))
    folder.chmod(0o777)  # uid 10001 makes its socket here
    before, c0 = clock.read(frozenset()), _children_cpu()
    started = time.monotonic()
    cid = subprocess.run(
        cli_run_argv(tag, folder, run_id, limits), capture_output=True, text=True, check=True
    ).stdout.strip()
    try:
        deadline = time.monotonic() + 60
        while not (folder / "bot.sock").exists() and time.monotonic() < deadline:
            time.sleep(0.002)
        remote = RemoteBot(f"unix:{folder / 'bot.sock'}")
        try:
            remote.wait_ready(10)
            remote.handshake(5)
            answer = time.monotonic() - started
        finally:
            remote.close()
    finally:
        subprocess.run(["docker", "rm", "-f", cid], capture_output=True, check=False)
        shutil.rmtree(folder, ignore_errors=True)
    after, c1 = clock.read(frozenset({cid})), _children_cpu()
    return {
        "answer": answer,
        "referee": c1 - c0,
        "containers": after["containers"],
        "engine": after["engine"] - before["engine"],
    }


def spares_at_scale(
    bot: str, versions: int, max_spares: int, spare_memory: str, idle: float
) -> dict[str, Any]:
    """`versions` bot versions (tags of one image) each asking for a spare, one after the other,
    as a worker of a long tournament would; the live containers and the spares' memory are read
    from the engine and the cgroups after each."""
    client = engine.client()
    prefix = f"bench{secrets.token_hex(3)}"
    watch = RunContainers(prefix)
    with DockerLauncher(
        max_spares=max_spares,
        spare_memory=spare_memory,
        spare_idle=idle,
        run_id=f"{prefix}-s",
        clean_orphans=False,  # other users' dead runs are theirs (a test may leave one on purpose)
    ) as dl:
        info = dl.image(bot)
        got = dl._image(parse_bot(bot))
        assert isinstance(got, BotImage)
        repo = "take5-bench/spare"
        tags = [f"{repo}:v{n:04d}" for n in range(versions)]
        live_max, memory_max, started = 0, 0, time.monotonic()
        cpu0 = time.process_time()
        try:
            for tag in tags:
                client.api.tag(info.id, repo, tag.split(":")[1])
                image = BotImage(
                    info=type(info)(**{**info.__dict__, "tag": tag}),
                    entrypoint=got.entrypoint,
                    command=got.command,
                    file_output=got.file_output,
                    forkserver=got.forkserver,
                    volumes=got.volumes,
                )
                dl._prefetch(image, "")
                live = containers.list_containers(client, run_id=dl.run_id)
                live_max = max(live_max, len(live))
                memory_max = max(memory_max, sum(dl._memory(i) for i in _spares(dl)))
            seconds = time.monotonic() - started
            cpu = time.process_time() - cpu0
            for inst in _spares(dl):  # the last ones started, then the caps applied again
                with contextlib.suppress(Exception):
                    inst.future.result(300)
            dl._prune()
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:  # the evicted ones' removal, in the background
                live = containers.list_containers(client, run_id=dl.run_id)
                if len(live) <= max_spares:
                    break
                time.sleep(0.5)
            live_end = len(live)
            memory_end = sum(dl._memory(i) for i in _spares(dl))
            asked, evicted = dl.containers_created, dl.evicted
        finally:
            for tag in tags:
                with contextlib.suppress(Exception):  # not tagged
                    client.api.remove_image(tag, noprune=True)
    created = len(watch.close())
    return {
        "versions": versions,
        "asked": asked,
        "created": created,
        "evicted": evicted,
        "live_max": live_max,
        "live_end": live_end,
        "spares_memory_max_mib": round(memory_max / (1 << 20), 1),
        "spares_memory_end_mib": round(memory_end / (1 << 20), 1),
        "seconds": round(seconds, 2),
        "referee_cpu_s": round(cpu, 2),
    }


def _median(rows: list[dict[str, Any]], key: str) -> float:
    return float(statistics.median(float(r[key]) for r in rows))


def starts(bot: str, count: int, clock: EngineClock, limits: SandboxLimits) -> dict[str, Any]:
    """A bot process for one game, `count` times per path, taking turns: the launcher (the
    image's own command, its default), the launcher with warm containers (``reuse=True``; where
    they cannot be used it runs the image's own command too) and a cold `docker run`."""
    out: dict[str, list[dict[str, float]]] = {}
    with contextlib.ExitStack() as stack:
        paths = {
            "launcher": stack.enter_context(DockerLauncher(limits=limits, clean_orphans=False)),
            "warm": stack.enter_context(
                DockerLauncher(limits=limits, reuse=True, clean_orphans=False)
            ),
        }
        tag = paths["launcher"].image(bot).tag
        ref = parse_bot(bot)
        for name in [*paths, "docker-run"]:  # a first, cold one each, not kept
            out[name] = []
            if name == "docker-run":
                docker_run_start(tag, clock, limits)
            else:
                one_start(paths[name], ref, Clocks(clock, [paths[name]]))
        for name in alternating([*paths, "docker-run"], count):
            if name == "docker-run":
                out[name].append(docker_run_start(tag, clock, limits))
            else:
                out[name].append(one_start(paths[name], ref, Clocks(clock, [paths[name]])))
        if not paths["warm"].reuse:
            print(f"(warm containers cannot be used here: {paths['warm'].reuse_off})")
    return {
        name: {
            "answer_s": round(_median(rows, "answer"), 3),
            "cpu_s": round(sum(_median(rows, k) for k in ("referee", "containers", "engine")), 3),
            **{
                f"cpu_{k}_s": round(_median(rows, k), 3)
                for k in ("referee", "containers", "engine")
            },
        }
        for name, rows in out.items()
    }


def cli_bench(args: Any, sock: str) -> dict[str, Any]:
    """The three measurements of this module, printed; their figures."""
    clock = EngineClock(sock)
    limits = SandboxLimits(runtime=args.runtime)
    lowest = str(ROOT / "example_bots" / "lowest")
    results: dict[str, Any] = {"load_start": round(os.getloadavg()[0], 2)}
    try:
        print(f"cores {os.cpu_count()}, load {os.getloadavg()[0]:.1f}, runtime {args.runtime}")
        st = results["start"] = starts(lowest, args.starts, clock, limits) if args.starts else {}
        print(
            "\none bot process for one game (median; CPU s = referee or CLI + container + engine)"
        )
        base = st["docker-run"]["cpu_s"] if st else 1.0
        for name, row in st.items():
            split = f"{row['cpu_referee_s']:.3f} + {row['cpu_containers_s']:.3f} + "
            print(
                f"  {name:<12} first answer {row['answer_s']:.3f} s  CPU {row['cpu_s']:.3f} "
                f"(= {split}{row['cpu_engine_s']:.3f})  {row['cpu_s'] / base:.2f}x docker run"
            )
        bots = [lowest, *(str(ROOT / "example_bots" / b) for b in ("random", "heuristic"))]
        runs = results["match"] = user_matches(bots, args.games, args.repeat, clock, args.runtime)
        if not args.repeat:
            runs = {}
        print(
            f"\n`referee match` of {len(bots)} bots, {args.games} games, as a subprocess "
            f"(median of {args.repeat})"
        )
        _print_paths(runs)
        tours = results["tournament"] = user_tournaments(
            bots, args.games, args.repeat, clock, args.runtime
        )
        print(
            f"\n`referee tournament run` of {len(bots)} bots, {args.games} games, as a subprocess "
            f"(median of {args.repeat}; the bots submitted before, untimed)"
        )
        _print_paths(tours)
        if args.spares:
            sp = results["spares"] = spares_at_scale(lowest, args.spares, 16, "512m", 3600.0)
            print(f"\nspares at {args.spares} bot versions (caps 16 and 512m): {sp}")
    finally:
        clock.close()
    results["load_end"] = round(os.getloadavg()[0], 2)
    return results


def _print_paths(runs: dict[str, list[dict[str, Any]]]) -> None:
    """One line a path (local, docker): median wall and CPU (referee or CLI + containers +
    engine), containers created, faults, exit codes."""
    local_wall = _median(runs["local"], "wall_s") if runs.get("local") else 1.0
    for name, rows in runs.items():
        if not rows:
            continue
        cpu = {k: _median(rows, k) for k in ("referee", "containers", "engine")}
        wall = _median(rows, "wall_s")
        split = f"{cpu['referee']:.2f} + {cpu['containers']:.2f} + {cpu['engine']:.2f}"
        print(
            f"  {name:<7} wall {wall:.2f} s ({wall / local_wall:.2f}x local)  CPU "
            f"{sum(cpu.values()):.2f} (= {split})  containers "
            f"{max(r['created'] for r in rows)}  faults {sum(r['faults'] for r in rows)}  "
            f"exit {sorted({r['code'] for r in rows})}"
        )


def _spares(dl: DockerLauncher) -> list[Any]:
    with dl._lock:
        return [inst for pool in dl._standby.values() for inst in pool]


__all__ = [
    "RunContainers",
    "cli_bench",
    "cli_run_argv",
    "docker_run_start",
    "spares_at_scale",
    "starts",
    "timed",
    "user_matches",
]
