"""Warm containers against the real engine: a fresh bot process for every game, in a container that
no other game used, and nothing of one game reaches the next.

tests/docker_bots/hostile_reuse tries every way it knows to leave itself a message for its next
game (files in every writable place, a fifo, System V and POSIX IPC, an abstract socket held by a
daemon, orphans in their own session and process group, the keyrings, the fork server's limits,
priority and signals, burnt pids and inode numbers, the network namespace's counters bumped by
packets with no route) and looks for one before it serves; it reports
both, and what it sees of its own start, on a REPORT line per game. It must find nothing, see the
same start in every game, and, with ``--bot-memory deals``, keep its memory from one deal to the
next without ever seeing a deal twice. tests/docker_bots/native_syscalls is a static binary that
makes the system calls the seccomp profile refuses (io_uring first).

The same tests run under gVisor (TAKE5_RUNTIME=runsc), where every game gets a fresh container
without a fork server (warm containers need the host to see the bot's files): the bot must find
nothing there either. Without an engine they skip, except with CI set, where they fail.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import subprocess
import time
from pathlib import Path

import pytest
from support import DOCKER_BOTS, unavailable
from test_docker_match import (
    TOKEN,
    check_complete,
    engine,  # noqa: F401 - a fixture, the one `images` needs
    example,
    hostile,
    images,  # noqa: F401 - a fixture
    referee,
)

from take5 import Settings
from take5_arena.referee.errors import InfraError
from take5_arena.referee.kinds import InfraKind
from take5_arena.referee.match import CallLimits, MatchConfig, run_match
from take5_arena.referee.sandbox import containers, warm
from take5_arena.referee.sandbox import engine as docker_engine
from take5_arena.referee.sandbox.errors import ContainerStartError
from take5_arena.referee.sandbox.launcher import DockerLauncher
from take5_arena.referee.sandbox.limits import SandboxLimits

REFUSED = {"Operation not permitted"}
SECTION = re.compile(r"^\[take5: container (\S+), game (\S+)\]$")
pytestmark = [pytest.mark.docker, pytest.mark.usefixtures("images")]


def _warm_possible() -> bool:
    """Whether warm containers can be used here when asked for (runc, a referee running as root);
    the launcher does not use them by default."""
    return warm.enabled(SandboxLimits()) is None


def _reports(log: str) -> list[tuple[str, dict]]:
    """(container name, report) of each REPORT line of a bot's log, in order."""
    out, container = [], ""
    for line in log.splitlines():
        header = SECTION.match(line)
        if header:
            container = header.group(1)
        elif line.startswith("REPORT "):
            out.append((container, json.loads(line[len("REPORT ") :])))
    return out


PID_KEYS = ("pid", "ppid", "last_pid", "loadavg_last_pid")


def _start(observed: dict) -> dict:
    """What a bot sees of its start, less its pid numbers, which the container's own start sets
    (under runc the engine's start uses one pid more or less in a new pid namespace), and which
    must only be small: 50 pids burnt by an earlier game would show."""
    for key in PID_KEYS:  # gVisor has no ns_last_pid: ""
        assert not str(observed[key]).isdigit() or int(observed[key]) < 30, (key, observed[key])
    # The page faults of what the init reaped: the engine's start of this very container.
    return {k: v for k, v in observed.items() if k not in (*PID_KEYS, "init_children_faults")}


def test_a_bot_finds_nothing_an_earlier_game_left(tmp_path):
    run = referee(
        hostile("reuse"),
        example("lowest"),
        example("random"),
        "--games",
        "6",
        "--threshold",
        "20",
        "--timeout",
        "10",  # leaving messages every way it can takes a while (under gVisor most)
        tmp_path=tmp_path,
        # About 5 s as a rule; but a warm bot's start can stall for the whole 120 s start cap
        # before the restart is tried again (seen once in CI, not yet explained: issue 28's
        # "start stall"), and this test judges what a bot finds, not how fast it starts.
        timeout=400,
    )
    check_complete(run, games=6)
    assert run.code == 0, run.err[-2000:]
    reports = _reports(run.log("hostile_reuse"))
    assert [r["game"] for _, r in reports] == [f"s0-g{n}" for n in range(1, 7)]
    for _, report in reports:
        assert report["found"] == [], report
        assert report["games_in_process"] == 1  # a fresh process for every game
        left = report["left"]
        # It did leave files, a fifo, daemons and burnt pids ...
        assert left["file /tmp"] == left["file /dev/shm"] == left["file /run/take5"] == "ok"
        assert left["fifo"] == left["daemons"] == "ok" and left["pids burnt"] == 50
        # ... and the network namespace's counters (no packet, no privilege: issue 45) ...
        if SandboxLimits().runtime in (None, "runc"):
            assert "IpOutNoRoutes" in left["net counters"], left["net counters"]
        # ... and the kernel refused the rest: IPC and keys (seccomp), the fork server's limits
        # and priority (seccomp: only the caller's own); a SIGSTOP to it is dropped by the kernel.
        for way in ("shmget", "semget", "msgget", "mq_open", "add_key", "prlimit pid 1"):
            assert left[way] in REFUSED, (way, left[way])
        assert left["setpriority pid 1"] in REFUSED
    # What it sees of its own start is the same every time (its pids only small: `_start`): its
    # first inode number in /tmp, the loopback counters, its limits and affinity, its network
    # namespace's counters and tables.
    observed = [_start(report["observed"]) for _, report in reports]
    assert all(o == observed[0] for o in observed), observed
    assert observed[0]["cgroup_files"] in ([], None)  # the cgroup's counters are masked
    used = [container for container, _ in reports]
    assert len(set(used)) == len(used), used  # no container served two games


@pytest.mark.parametrize("mode", ["net", "affinity"])
def test_what_a_reset_could_not_undo_never_reaches_another_game(mode, tmp_path):
    """Loopback traffic (its counters, its sockets in TIME_WAIT) and a changed CPU affinity of the
    fork server cannot be undone in a container: the next game is played in another one."""
    with DockerLauncher(
        run_id=f"pytest-{TOKEN}-{secrets.token_hex(2)}",
        env={"TAKE5_REUSE_MODE": mode},
        log_dir=tmp_path,
        reaper=False,
    ) as launcher:
        result = run_match(
            [hostile("reuse"), example("lowest")],
            MatchConfig(
                games=4,
                game=Settings(players=2, threshold=10),
                calls=CallLimits(timeout=10.0, start_timeout=30.0),
            ),
            launcher=launcher,
        )
        assert result.exit_code == 0, result.to_dict()
        (log,) = tmp_path.glob("bot*-hostile_reuse.log")
    reports = _reports(log.read_text())
    assert len(reports) == 4
    can_change = mode == "net" or len(os.sched_getaffinity(0)) > 1  # one CPU: no other affinity
    for _, report in reports:
        assert report["found"] == [], report
        if can_change:
            assert report["left"]["loopback" if mode == "net" else "affinity pid 1"] == "ok"
    observed = [_start(report["observed"]) for _, report in reports]
    assert all(o == observed[0] for o in observed), observed
    assert len({container for container, _ in reports}) == 4


def test_memory_between_deals_when_the_organiser_allows_it(tmp_path):
    """--bot-memory deals: a process plays several deals and remembers them, never one twice."""
    run = referee(
        hostile("reuse"),
        example("lowest"),
        example("random"),
        "--games",
        "9",
        "--threshold",
        "20",
        "--bot-memory",
        "deals",
        "--timeout",
        "10",
        tmp_path=tmp_path,
    )
    check_complete(run, games=9)
    assert run.code == 0, run.err[-2000:]
    reports = [report for _, report in _reports(run.log("hostile_reuse"))]
    assert len(reports) == 9  # 3 deals, each played in 3 rotations
    assert not any(report["deal_seen_before"] for report in reports)
    # The rotations of a deal are played by different processes; each of them plays the next
    # deal too, and remembers the ones before.
    assert [r["games_in_process"] for r in reports] == [1, 1, 1, 2, 2, 2, 3, 3, 3]
    deals = [tuple(r["deal"]) for r in reports]
    assert len(set(deals)) == 3 and deals[0] == deals[1] == deals[2]


def test_a_bot_in_a_warm_container_runs_as_python_would():
    """What the stand-in bot sees of its interpreter is the same when the fork server forked it as
    when `python3 /bot/bot.py` started it in a fresh container."""
    import socket

    seen = {}
    for reuse in (True, False):
        with DockerLauncher(
            run_id=f"pytest-{TOKEN}-{secrets.token_hex(2)}", reaper=False, reuse=reuse
        ) as launcher:
            handle = launcher(str(DOCKER_BOTS / "standin"))
            handle.start()
            address = handle.ready(30)
            assert (handle._current.warm is not None) == (reuse and launcher.reuse)
            with socket.socket(socket.AF_UNIX) as sock:
                sock.connect(address.removeprefix("unix:"))
                with sock.makefile("rwb") as f:
                    f.write(b'{"cmd": "python"}\n')
                    f.flush()
                    seen[reuse] = json.loads(f.readline())
    assert seen[True] == seen[False]
    assert seen[True]["argv"] == ["/bot/bot.py"] and seen[True]["main"] == "__main__"
    assert seen[True]["path"][0] == "/bot" and seen[True]["cwd"] == "/bot"
    assert seen[True]["stdout_unbuffered"] is True and seen[True]["exit_builtin"] is True


@pytest.fixture(scope="module")
def native_bot(tmp_path_factory) -> Path:
    """tests/docker_bots/native_syscalls built (a static binary, Go from scripts/setup-go.sh)."""
    if shutil.which("go") is None:
        unavailable(
            "Go is not installed (scripts/setup-go.sh): the native test bot cannot be built"
        )
    folder = tmp_path_factory.mktemp("native") / "native_syscalls"
    shutil.copytree(DOCKER_BOTS / "native_syscalls", folder)
    gopath = tmp_path_factory.mktemp("gopath")
    done = subprocess.run(
        ["go", "build", "-trimpath", "-o", str(folder / "run"), "main.go"],
        cwd=folder,
        env={**os.environ, "GO111MODULE": "off", "GOPATH": str(gopath), "CGO_ENABLED": "0"},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    if done.returncode != 0:
        unavailable(f"building tests/docker_bots/native_syscalls failed:\n{done.stderr[-2000:]}")
    (folder / "main.go").unlink()
    return folder


def test_a_native_bot_gets_eperm_for_io_uring_and_the_other_refused_calls(native_bot):
    with DockerLauncher(run_id=f"pytest-{TOKEN}-{secrets.token_hex(2)}", reaper=False) as launcher:
        handle = launcher(str(native_bot))
        handle.start()
        deadline = time.monotonic() + 60
        while handle.exit_status() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert handle.exit_status() == 0
        output = handle.stderr_tail(4000)
    results = dict(
        line.split()[1:3]
        for line in output.splitlines()
        if line.startswith("SYSCALL ") and len(line.split()) == 3
    )
    assert "done" in output, output
    for call in ("io_uring_setup", "io_uring_enter", "io_uring_register"):
        assert results[call] in ("EPERM", "ENOSYS"), (call, results)
    for call in ("shmget", "keyctl", "ptrace", "unshare"):
        assert results[call] == "EPERM", (call, results)


def test_a_warm_container_forks_one_bot_process():
    """A warm container's fork server forks its one bot process and refuses a second: no
    container serves two games, by construction rather than by a check. Where warm containers
    cannot be used (gVisor, a referee without root), the launcher says why."""
    if not _warm_possible():
        with DockerLauncher(
            run_id=f"pytest-{TOKEN}-{secrets.token_hex(2)}", reaper=False, reuse=True
        ) as launcher:
            assert not launcher.reuse and launcher.reuse_off
            assert warm.enabled(launcher.limits) == launcher.reuse_off
        return
    client = docker_engine.client()
    with DockerLauncher(
        run_id=f"pytest-{TOKEN}-{secrets.token_hex(2)}", reaper=False, reuse=True
    ) as launcher:
        handle = launcher(str(DOCKER_BOTS / "standin"))
        handle.start()
        handle.ready(30)
        box = handle._current.warm
        assert box is not None and box.alive
        with pytest.raises(warm.ForkServerError, match="one bot process per container"):
            box.spawn()
        handle.stop()
    assert containers.list_containers(client, run_id=launcher.run_id) == []


def _stalled_fork_server(launcher_cls, monkeypatch):
    """Every container's start stalls (as on a host at load 150: a warm container's fork server,
    or the engine) until it is abandoned, then fails as the real one would."""

    def stalled_warm(self, inst, image, root, labels):
        inst.abandon.wait(60)
        raise ContainerStartError("the fork server's start was abandoned")

    def stalled(self, image, socket_dir, labels):
        time.sleep(8)  # longer than the start allowance below
        raise ContainerStartError("starting a container: the engine did not answer")

    monkeypatch.setattr(launcher_cls, "_start_warm", stalled_warm)
    monkeypatch.setattr(launcher_cls, "_create", stalled)


def test_a_start_that_does_not_answer_is_the_hosts_failure(monkeypatch, referee_cli):
    """A container (or a warm container's fork server) that does not come up within --start-wall
    is nobody's fault: the match stops with InfraError (kind ``sandbox``), no bot is charged a
    fault; `referee match` says so in one line and exits 4."""
    _stalled_fork_server(DockerLauncher, monkeypatch)
    with DockerLauncher(run_id=f"pytest-{TOKEN}-{secrets.token_hex(2)}", reaper=False) as launcher:
        with pytest.raises(InfraError) as caught:
            run_match(
                [example("lowest"), example("random")],
                MatchConfig(
                    games=1,
                    game=Settings(players=2, threshold=10),
                    calls=CallLimits(start_timeout=1.0, start_wall=3.0),
                ),
                launcher=launcher,
            )
        assert caught.value.kind == InfraKind.SANDBOX
        # the wall cap of the options (3 s), not a fixed one: said in the detail, not timed here
        assert "not started within 3 s" in caught.value.detail
    done = referee_cli(
        [
            "match",
            "--sandbox",
            "docker",
            example("lowest"),
            example("random"),
            "--games",
            "1",
            "--start-timeout",
            "1",
            "--start-wall",
            "3",
        ]
    )
    assert done.exit_code == 4, done.output
    lines = [line for line in done.output.splitlines() if line.startswith("referee:")]
    assert lines == [lines[0]] and "sandbox:" in lines[0] and "--start-wall" in lines[0]
    assert "Traceback" not in done.output and "Usage:" not in done.output


def test_spares_have_a_lifetime():
    """Containers started ahead that no game takes are evicted: the least recently used beyond the
    count cap at once, beyond the memory cap at once, and every one after its idle time."""
    bots = [example("lowest"), example("random"), example("heuristic")]
    run_id = f"pytest-{TOKEN}-{secrets.token_hex(2)}"
    with DockerLauncher(run_id=run_id, reaper=False, spare_idle=4.0, max_spares=2) as launcher:
        client = launcher.client
        for bot in bots:  # built (or found) first: a slow build is no spare's idle time
            launcher.image(bot)
        for bot in bots:
            launcher.prefetch([bot])
            time.sleep(0.05)  # an order of use
        spares = {tag: list(pool) for tag, pool in launcher._standby.items() if pool}
        assert launcher.evicted == 1 and len(spares) == 2  # the first one went
        assert launcher.image(bots[0]).tag not in spares
        for pool in spares.values():
            pool[0].future.result(120)
        deadline = time.monotonic() + 60
        while containers.list_containers(client, run_id=run_id) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert launcher.evicted == 3  # idle for longer than 4 s
        assert containers.list_containers(client, run_id=run_id) == []
        assert not any(launcher._standby.values())
    with DockerLauncher(run_id=run_id, reaper=False, spare_memory="1m") as launcher:
        launcher.prefetch(bots[:1])
        launcher._standby[launcher.image(bots[0]).tag][0].future.result(120)
        launcher._prune()  # a container holds more than 1 MiB: over the cap
        assert launcher.evicted == 1 and not any(launcher._standby.values())
