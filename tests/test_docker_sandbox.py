"""take5_arena.referee.sandbox: the pure parts, the one-way-to-create-a-container rule, and
@pytest.mark.docker tests of the production launcher (the `DockerLauncher` matches and tournaments
use) against a real engine (scripts/setup-docker.sh starts one). Without an engine the docker tests
skip, except with CI set, where they fail.

The docker tests use tests/docker_bots/standin: a plain-socket stand-in for an SDK bot that runs the
hostile probes (escape attempts, fork bomb, memory hog, CPU spin, output flood) from inside, started
by the launcher exactly as a bot in a match is. Network probes only ever target 127.0.0.1, this
host's own addresses and, after the bot checked that its namespace has nothing but `lo`, a TEST-NET
documentation address (198.51.100.1)."""

from __future__ import annotations

import ast
import json
import os
import re
import secrets
import shutil
import socket
import subprocess
import threading
import time
import zipfile
from pathlib import Path

import pytest
from docker_images import image_exists, prune_bot_images
from support import DOCKER_BOTS, ROOT, unavailable

from take5_arena.referee.defaults import BASE_IMAGE
from take5_arena.referee.match.remote import CallFailedError
from take5_arena.referee.sandbox import cgroups, containers, engine, images, reaper, sockets
from take5_arena.referee.sandbox.errors import (
    ContainerStartError,
    EngineUnavailableError,
    ImageBuildError,
)
from take5_arena.referee.sandbox.launcher import DockerLauncher, image_shell
from take5_arena.referee.sandbox.limits import (
    GVISOR_PIDS,
    SECCOMP_PROFILE,
    WARM_MASKED_PATHS,
    SandboxLimits,
    container_kwargs,
    seccomp_profile,
    volume_tmpfs,
    writable_places,
)

TOKEN = secrets.token_hex(3)  # this test session's containers: run ids start with pytest-TOKEN
GVISOR = SandboxLimits().runtime == "runsc"
"""The Docker tests run under gVisor (TAKE5_RUNTIME=runsc): its own kernel shows a little less."""


# ------------------------------------------------------------------------------------------------
# Pure parts: no engine needed


def _die(cid: str, code: int) -> dict:
    return {"Action": "die", "id": cid, "Actor": {"ID": cid, "Attributes": {"exitCode": str(code)}}}


def test_an_oom_event_after_the_die_event_still_makes_the_verdict(monkeypatch):
    # Under load Docker reports the die before the oom, and the cgroup (the kernel's count) is
    # gone by then: the verdict must not depend on which came first.
    monkeypatch.setattr(reaper, "OOM_GRACE", 5.0)
    watcher = reaper.ExitLog()  # fed by hand, as the watcher's stream thread feeds it
    watcher.record(_die("c1", 137))
    late = threading.Timer(0.3, watcher.record, [{"Action": "oom", "id": "c1"}])
    late.start()
    started = time.monotonic()
    assert watcher.await_oom("c1", watcher.exit_code("c1"), lambda: False)
    assert 0.25 < time.monotonic() - started < 4.0  # woken by the event, not the grace's end
    late.join()


def test_an_exit_that_is_no_oom_kill_is_told_without_waiting_long(monkeypatch):
    monkeypatch.setattr(reaper, "OOM_GRACE", 0.3)
    watcher = reaper.ExitLog()  # fed by hand, as the watcher's stream thread feeds it
    watcher.record(_die("c2", 3))
    started = time.monotonic()
    assert not watcher.await_oom("c2", 3, lambda: False)  # not SIGKILL: no wait at all
    assert time.monotonic() - started < 0.2
    watcher.record(_die("c3", 137))
    asked: list[float] = []
    assert not watcher.await_oom("c3", 137, lambda: asked.append(time.monotonic()) is not None)
    assert len(asked) >= 2 and time.monotonic() - started >= 0.3  # waited the grace, asking
    assert watcher.await_oom("c3", 137, lambda: True)  # the engine's flag or the cgroup's count


def test_container_kwargs_lock_the_container_down():
    kw = container_kwargs(
        name="n1",
        limits=SandboxLimits(memory="128m", cpus=0.5, pids=32, runtime=None),
        socket_dir="/tmp/t5-x/c001",
        labels={"take5.run": "r1"},
        env={"A": "1"},
    )
    assert kw["network_mode"] == "none" and kw["read_only"] is True
    assert kw["user"] == "10001:10001" and kw["cap_drop"] == ["ALL"]
    assert kw["security_opt"] == ["no-new-privileges", f"seccomp={seccomp_profile()}"]
    assert set(kw["masked_paths"]) >= {"/proc/kcore", "/proc/keys", "/sys/fs/cgroup", "/dev/mqueue"}
    assert "/proc/sys" in kw["readonly_paths"]
    assert kw["mem_limit"] == kw["memswap_limit"] == "128m"
    assert kw["nano_cpus"] == 500_000_000 and kw["pids_limit"] == 32
    assert kw["restart_policy"] == {"Name": "no"} and kw["init"] is True
    assert kw["tmpfs"] == {"/tmp": "rw,noexec,nosuid,nodev,size=16m"} and kw["shm_size"] == "16m"
    assert {(u["Name"], u["Soft"], u["Hard"]) for u in kw["ulimits"]} == {
        ("nofile", 1024, 1024),
        ("core", 0, 0),
    }
    assert kw["log_config"]["Type"] == "json-file"
    assert kw["log_config"]["Config"] == {"max-size": "1m", "max-file": "1"}
    assert kw["labels"] == {"take5.arena": "1", "take5.run": "r1"}
    assert kw["environment"] == {
        "TAKE5_LISTEN": "unix:/run/take5/bot.sock",
        "HOME": "/tmp",
        "A": "1",
    }
    (mount,) = kw["mounts"]
    assert (mount["Type"], mount["Source"], mount["Target"]) == (
        "bind",
        "/tmp/t5-x/c001",
        "/run/take5",
    )
    for absent in (
        "privileged",
        "auto_remove",
        "entrypoint",
        "command",
        "runtime",
        "volumes",
        "cap_add",
    ):
        assert absent not in kw
    assert (
        container_kwargs(
            name="n", limits=SandboxLimits(runtime="runsc"), socket_dir=None, labels={}
        )["runtime"]
        == "runsc"
    )


#: What the profile must refuse (docs/security.md says why): io_uring, which newer engines refuse
#: too; state that outlives a process (System V IPC, POSIX message queues, keyrings); reading or
#: changing another process; namespaces, mounts, kernel modules, BPF, perf.
MUST_REFUSE = {
    "io_uring_setup", "io_uring_enter", "io_uring_register",
    "shmget", "shmat", "semget", "semop", "msgget", "msgsnd", "ipc",
    "mq_open", "mq_timedsend", "add_key", "keyctl", "request_key",
    "ptrace", "process_vm_readv", "process_vm_writev", "pidfd_getfd", "kcmp", "process_madvise",
    "unshare", "setns", "mount", "umount2", "pivot_root", "chroot", "open_by_handle_at",
    "init_module", "finit_module", "bpf", "perf_event_open", "userfaultfd", "kexec_load",
}  # fmt: skip


def test_the_seccomp_profile_is_an_allow_list_that_refuses_what_it_must():
    profile = json.loads(SECCOMP_PROFILE.read_text())
    assert profile["defaultAction"] == "SCMP_ACT_ERRNO" and profile["defaultErrnoRet"] == 1
    assert all(not arch["subArchitectures"] for arch in profile["archMap"])  # no 32-bit calls
    unconditional = {
        name
        for rule in profile["syscalls"]
        if rule["action"] == "SCMP_ACT_ALLOW" and not rule.get("args")
        for name in rule["names"]
    }
    conditional = {
        name: rule["args"]
        for rule in profile["syscalls"]
        if rule["action"] == "SCMP_ACT_ALLOW" and rule.get("args")
        for name in rule["names"]
    }
    assert not MUST_REFUSE & (unconditional | set(conditional))
    # What a bot's runtime needs is there.
    assert {
        "read",
        "write",
        "openat",
        "mmap",
        "futex",
        "epoll_wait",
        "execve",
        "bind",
    } <= unconditional
    # Calls that could reach another process only on the caller itself; clone never with a
    # namespace flag; clone3 is ENOSYS so that the C library falls back to clone.
    for name in ("prlimit64", "sched_setscheduler", "sched_setattr", "setpriority", "ioprio_set"):
        assert name not in unconditional and all(a["value"] == 0 for a in conditional[name]), name
    (clone,) = conditional["clone"]
    assert clone["op"] == "SCMP_CMP_MASKED_EQ" and clone["valueTwo"] == 0
    (clone3,) = [r for r in profile["syscalls"] if "clone3" in r["names"]]
    assert clone3["action"] == "SCMP_ACT_ERRNO" and clone3["errnoRet"] == 38
    families = {
        rule["args"][0]["value"] for rule in profile["syscalls"] if rule["names"] == ["socket"]
    }
    assert families == {1, 2, 10, 16}  # unix, inet, inet6, netlink
    assert json.loads(seccomp_profile()) == profile


def test_a_warm_container_writes_only_to_tmpfs_the_referee_replaces():
    limits = SandboxLimits(runtime=None)
    kw = container_kwargs(
        name="w",
        limits=limits,
        socket_dir=None,
        labels={},
        warm_root="/tmp/t5-x/w0001",
        volumes=["/data"],
    )
    assert kw["tmpfs"] == {} and kw["init"] is False  # the fork server is the init
    assert writable_places(["/data"], limits) == {
        "/run/take5": "run",
        "/tmp": "tmp",
        "/dev/shm": "shm",
        "/data": "v0",
    }
    binds = {m["Target"]: m for m in kw["mounts"]}
    for target, name in writable_places(["/data"], limits).items():
        assert binds[target]["Source"] == f"/tmp/t5-x/w0001/{name}"
        assert binds[target]["ReadOnly"] is True
        assert binds[target]["BindOptions"] == {"Propagation": "rslave"}
    assert binds["/opt/take5/forkserver.py"]["ReadOnly"] is True
    assert set(WARM_MASKED_PATHS) <= set(kw["masked_paths"])


def test_bot_memory_and_runtime_are_tournament_settings():
    from take5_arena.referee.kinds import BotMemory
    from take5_arena.referee.tournament.errors import TournamentError
    from take5_arena.referee.tournament.plan.settings import TournamentSettings

    settings = TournamentSettings.from_json({})
    assert settings.bot_memory is BotMemory.GAME  # a fresh process for every game, by default
    kept = TournamentSettings.from_json({"bot_memory": "deals"}).updated({"runtime": "runsc"})
    assert kept.bot_memory is BotMemory.DEALS and kept.limits.runtime == "runsc"
    assert "bot memory: deals, runtime runsc" in kept.describe()
    # what the store keeps reads back the same
    assert TournamentSettings.from_json(kept.to_json()) == kept
    for bad in ({"bot_memory": "forever"}, {"runtime": "run sc; rm -rf /"}, {"runtime": 3}):
        with pytest.raises(TournamentError):
            settings.updated(bad)


def test_limits_are_validated():
    assert SandboxLimits() == SandboxLimits(memory="256m", cpus=1.0, pids=64, tmpfs="16m")
    for bad in ({"memory": "lots"}, {"cpus": 0}, {"pids": 2}, {"runtime": "run sc; rm"}):
        with pytest.raises(ValueError):
            SandboxLimits(**bad)
    with pytest.raises(AttributeError):  # frozen
        SandboxLimits().memory = "1g"  # type: ignore[misc]


def test_declared_volumes_become_capped_tmpfs_or_are_refused():
    limits = SandboxLimits(tmpfs="8m")
    assert volume_tmpfs(["/data", "/var/lib/x/", "/tmp"], limits) == {
        "/data": "rw,noexec,nosuid,nodev,size=8m",
        "/var/lib/x": "rw,noexec,nosuid,nodev,size=8m",
    }
    for bad in [
        "relative",
        "/",
        "/proc/self",
        "/sys",
        "/dev/x",
        "/run/take5",
        "/run/take5/x",
        "/a,b",
        "/a:b",
        "/a\nb",
    ]:
        with pytest.raises(ContainerStartError, match="VOLUME"):
            volume_tmpfs([bad], limits)
    with pytest.raises(ContainerStartError, match="at most"):
        volume_tmpfs([f"/v{i}" for i in range(9)], limits)


def test_socket_path_length_is_checked(tmp_path):
    with pytest.raises(ValueError, match="longer than"):
        sockets.prepare_socket_dir(tmp_path / ("x" * 120), SandboxLimits())


def test_the_image_shell_comes_from_labels_only():
    assert image_shell({"take5.image": "python"}) == "/bin/sh"
    assert image_shell({"take5.image": "base"}) == "/bin/sh"
    assert image_shell({"take5.shell": "/bin/busybox"}) == "/bin/busybox"
    assert image_shell({"take5.image": "static"}) is None
    assert image_shell({}) is None
    assert image_shell({"take5.shell": "sh -c 'evil'"}) is None


def test_a_versions_digest_follows_files_not_caches(tmp_path):
    """A version's identity is its archive's digest (take5_arena/referee/artifacts.py): caches and
    VCS folders do not count, a file's content and its executable bit do."""
    from take5_arena.referee.artifacts import pack

    bot = tmp_path / "bot"
    shutil.copytree(DOCKER_BOTS / "standin", bot, ignore=shutil.ignore_patterns("__pycache__"))
    h1 = pack(bot).digest
    (bot / "__pycache__").mkdir(exist_ok=True)
    (bot / "__pycache__" / "x.pyc").write_bytes(b"junk")
    (bot / ".git").mkdir()
    (bot / ".git" / "HEAD").write_text("ref")
    assert pack(bot).digest == h1
    (bot / "extra.txt").write_text("1")
    h2 = pack(bot).digest
    assert h2 != h1
    os.chmod(bot / "extra.txt", 0o755)
    assert pack(bot).digest != h2


def test_sdk_versions_come_from_the_sdk_sources():
    version, protocol = images.sdk_versions(ROOT / "sdk")
    assert version and version != "unknown"
    assert protocol and protocol != "unknown"


def test_missing_engine_is_one_error_type(monkeypatch):
    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent/take5-docker.sock")
    with pytest.raises(EngineUnavailableError, match="setup-docker"):
        engine.connect()
    assert engine.engine_answers() is False
    monkeypatch.setenv("DOCKER_HOST", "tcp://")
    with pytest.raises(EngineUnavailableError):
        engine.connect()


@pytest.mark.docker
def test_setup_waits_for_the_engine_it_runs_not_a_stale_docker_host(client):
    """DOCKER_HOST names no engine, the default one runs: setup-docker.sh finds its own dockerd
    (the pid file) and must wait for that one, not time out on DOCKER_HOST."""
    if os.environ.get("TAKE5_DOCKERD_ROOT") or os.environ.get("DOCKER_HOST", "").strip() not in (
        "",
        "unix:///var/run/docker.sock",
    ):
        pytest.skip("the engine does not run on the default socket")
    env = {
        **os.environ,
        "DOCKER_HOST": "unix:///nonexistent/take5-docker.sock",
        "TAKE5_DOCKERD_TIMEOUT": "20",
    }
    done = subprocess.run(
        [str(ROOT / "scripts" / "setup-docker.sh"), "--engine-only"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "answers after" in done.stderr + done.stdout


# -- every container of a bot image goes through one function --------------------------------------

SCANNED = ("take5_arena", "bench", "scripts")
THE_WAY = ("take5_arena/referee/sandbox/containers.py", "_create")
ALLOWED = {
    # The bench's plainest baseline, a cold `docker run` per game, with the sandbox's flags.
    ("bench/sandbox_cli.py", "cli_run_argv"),
    # setup-docker.sh's probe of a hung engine: a no-op of the project's own image, no bot code.
    (
        "scripts/setup-docker.sh",
        'timeout -k 5 "$PROBE_TIMEOUT" docker run --rm --network none --entrypoint /bin/sh '
        '"$image" -c : >/dev/null 2>&1 && return 1',
    ),
}
_SHELL_RUN = re.compile(r"\bdocker\s+(container\s+)?(run|create)\b")
_CREATE_METHODS = {"create_container", "create_host_config"}


def _python_creations(path: Path) -> list[tuple[str, int]]:
    """(enclosing function, line) of every container creation in a Python file: docker-py's
    containers.create/run and create_container, and argument lists of a `docker run`/`create`."""
    tree = ast.parse(path.read_text(), str(path))
    found: list[tuple[str, int]] = []

    def visit(node: ast.AST, func: str) -> None:
        for child in ast.iter_child_nodes(node):
            name = (
                child.name if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) else func
            )
            if isinstance(child, ast.Call) and isinstance(child.func, ast.Attribute):
                attr, owner = child.func.attr, child.func.value
                if attr in _CREATE_METHODS or (
                    attr in ("create", "run")
                    and isinstance(owner, ast.Attribute)
                    and owner.attr == "containers"
                ):
                    found.append((name, child.lineno))
            if isinstance(child, (ast.List, ast.Tuple)):
                words = [
                    e.value
                    for e in child.elts[:3]
                    if isinstance(e, ast.Constant) and isinstance(e.value, str)
                ]
                if words[:1] in (["run"], ["create"]) or (
                    words[:1]
                    and words[0].endswith("docker")
                    and set(words[1:3]) & {"run", "create"}
                ):
                    found.append((name, child.lineno))
            if isinstance(
                child, ast.Call
            ):  # a command line handed to a call: os.system("docker run ...")
                found.extend(
                    (name, child.lineno)
                    for arg in [*child.args, *(k.value for k in child.keywords)]
                    if isinstance(arg, ast.Constant)
                    and isinstance(arg.value, str)
                    and _SHELL_RUN.search(arg.value)
                )
            visit(child, name)

    visit(tree, "<module>")
    return found


def test_every_container_of_a_bot_image_goes_through_start_container():
    bypasses, the_way = [], []
    for top in SCANNED:
        for path in sorted((ROOT / top).rglob("*")):
            rel = path.relative_to(ROOT).as_posix()
            if path.suffix == ".py":
                for func, line in _python_creations(path):
                    if (rel, func) == THE_WAY:
                        the_way.append(line)
                    elif (rel, func) not in ALLOWED:
                        bypasses.append(f"{rel}:{line} in {func}()")
            elif path.suffix == ".sh" or (path.is_file() and path.read_bytes()[:2] == b"#!"):
                for number, text in enumerate(path.read_text(errors="replace").splitlines(), 1):
                    code = text.split("#", 1)[0] if not text.lstrip().startswith("#") else ""
                    if _SHELL_RUN.search(code) and (rel, text.strip()) not in ALLOWED:
                        bypasses.append(f"{rel}:{number}: {text.strip()}")
    assert the_way, "start_container no longer creates containers: update this test"
    assert bypasses == [], (
        "containers created without take5_arena.referee.sandbox.containers.start_container "
        "(and so without the sandbox flags):\n" + "\n".join(bypasses)
    )


def test_the_scan_finds_bypasses(tmp_path):
    sample = tmp_path / "x.py"
    sample.write_text(
        "def a(c):\n    c.containers.run('img')\n"
        "def b(d):\n    d.run(['run', '--rm', 'img'])\n"
        "def e(api):\n    api.create_container('img')\n"
        "def f():\n    subprocess.run(['/usr/bin/docker', 'run', 'img'])\n"
        "def g():\n    os.system('docker run img')\n"
        "def h(c):\n    c.containers.list()\n"
    )
    assert [func for func, _ in _python_creations(sample)] == ["a", "b", "e", "f", "g"]


# ------------------------------------------------------------------------------------------------
# Against the real engine, through the production launcher


@pytest.fixture(scope="session")
def client():
    try:
        c = engine.client()
    except EngineUnavailableError as exc:
        unavailable(str(exc))
    if not image_exists(BASE_IMAGE):
        unavailable(f"base image {BASE_IMAGE} is missing (run scripts/setup-docker.sh)")
    yield c
    # Nothing of this session may be left behind.
    left = [
        s
        for s in containers.list_containers(c)
        if (s.get("Labels") or {}).get("take5.run", "").startswith(f"pytest-{TOKEN}")
    ]
    for s in left:
        containers.remove(c, s["Id"])
    assert not left, f"containers left behind: {[s['Names'] for s in left]}"
    prune_bot_images(["standin", "dockerfile_bot"], keep=1)
    prune_bot_images(["cache-probe", "wheel-bot", "foreign"], keep=0)


@pytest.fixture(scope="session")
def sdk_copy(tmp_path_factory):
    """A snapshot of the SDK, so that edits to sdk/ during the test session do not change hashes."""
    dst = tmp_path_factory.mktemp("sdk")
    shutil.copytree(
        ROOT / "sdk" / "take5", dst / "take5", ignore=shutil.ignore_patterns("__pycache__", "*.pyc")
    )
    shutil.copy(ROOT / "sdk" / "pyproject.toml", dst / "pyproject.toml")
    return dst


class Sandbox:
    """A production DockerLauncher for the stand-in bot, with a helper to start one container."""

    def __init__(self, client, sdk_dir: Path, **kwargs):
        self.launcher = DockerLauncher(
            run_id=f"pytest-{TOKEN}-{secrets.token_hex(2)}",
            sdk_dir=sdk_dir,
            reaper=False,
            clean_orphans=False,
            **kwargs,
        )
        self.handles: list = []

    def start(self, bot: Path = DOCKER_BOTS / "standin", timeout: float = 30.0):
        handle = self.launcher(str(bot))
        self.handles.append(handle)
        handle.start()
        return handle, handle.ready(timeout)

    def close(self) -> None:
        self.launcher.close()
        assert containers.list_containers(self.launcher.client, run_id=self.launcher.run_id) == []
        assert not self.launcher.socket_root.exists()


@pytest.fixture
def make_sandbox(client, sdk_copy):
    made: list[Sandbox] = []

    def make(**kwargs) -> Sandbox:
        made.append(Sandbox(client, sdk_copy, **kwargs))
        return made[-1]

    yield make
    for sb in made:
        sb.close()


class Client:
    """Talks to the stand-in bot: one JSON line per request."""

    def __init__(self, address: str, timeout: float = 30.0):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(timeout)
        self.sock.connect(address.removeprefix("unix:"))
        self.f = self.sock.makefile("rwb")

    def __call__(self, cmd, **kw):
        self.f.write(json.dumps({"cmd": cmd, **kw}).encode() + b"\n")
        self.f.flush()
        line = self.f.readline()
        if not line:
            raise ConnectionError(f"bot closed the connection during {cmd}")
        return json.loads(line)

    def close(self):
        self.f.close()
        self.sock.close()


def _host_addresses() -> list[str]:
    addrs = {"127.0.0.1"}
    try:
        out = subprocess.run(
            ["ip", "-o", "addr", "show"], capture_output=True, text=True, timeout=10, check=False
        ).stdout
        for line in out.splitlines():
            parts = line.split()
            if len(parts) > 3 and parts[2] in ("inet", "inet6"):
                ip = parts[3].split("/")[0]
                if not ip.startswith("fe80"):
                    addrs.add(ip)
    except (OSError, subprocess.SubprocessError):
        pass
    return sorted(addrs)


def _cgroup_limits(container_id: str) -> dict[str, str]:
    """The memory, memory+swap, pids and CPU limits of a container's cgroup, read on the host."""
    root = Path("/sys/fs/cgroup")

    def first(*paths: Path) -> str:
        for path in paths:
            if path.is_file():
                return path.read_text().strip()
        return ""

    if (root / "memory").is_dir():  # v1
        d = {c: root / c / "docker" / container_id for c in ("memory", "pids", "cpu")}
        quota = first(
            d["cpu"] / "cpu.cfs_quota_us",
            root / "cpu,cpuacct/docker" / container_id / "cpu.cfs_quota_us",
        )
        period = first(
            d["cpu"] / "cpu.cfs_period_us",
            root / "cpu,cpuacct/docker" / container_id / "cpu.cfs_period_us",
        )
        return {
            "memory": first(d["memory"] / "memory.limit_in_bytes"),
            "memory+swap": first(d["memory"] / "memory.memsw.limit_in_bytes"),
            "pids": first(d["pids"] / "pids.max"),
            "cpu": f"{quota} {period}",
        }
    d = next(
        p
        for p in (
            root / "system.slice" / f"docker-{container_id}.scope",
            root / "docker" / container_id,
        )
        if p.is_dir()
    )
    memory = first(d / "memory.max")
    swap = first(d / "memory.swap.max")
    return {
        "memory": memory,
        "memory+swap": str(int(memory) + int(swap)) if swap.isdigit() else swap,
        "pids": first(d / "pids.max"),
        "cpu": first(d / "cpu.max"),
    }


@pytest.mark.docker
@pytest.mark.parametrize("reuse", [True, False], ids=["warm", "fresh"])
def test_container_is_locked_down(make_sandbox, reuse):
    accepted = []
    lsock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    lsock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    lsock.bind(("0.0.0.0", 0))
    lsock.listen(8)
    lsock.settimeout(0.2)
    port = lsock.getsockname()[1]
    stop = threading.Event()

    def accept_loop():
        while not stop.is_set():
            try:
                accepted.append(lsock.accept()[1])
            except OSError:
                pass

    t = threading.Thread(target=accept_loop, daemon=True)
    t.start()
    try:
        sandbox = make_sandbox(reuse=reuse)
        handle, address = sandbox.start()
        assert (handle._current.warm is not None) == (reuse and sandbox.launcher.reuse)
        client = Client(address)
        me = client("whoami")
        assert (me["uid"], me["euid"], me["gid"]) == (10001, 10001, 10001)
        assert me["cwd"] == "/bot" and me["listen"] == "unix:/run/take5/bot.sock"
        assert me["status"]["CapEff"] == "0" * 16 and me["status"]["CapBnd"] == "0" * 16
        assert me["status"].get("NoNewPrivs", "1" if GVISOR else None) == "1"  # gVisor: not shown
        assert me["status"]["Seccomp"] == "2"  # the project's seccomp profile

        # The limits, on the container's own cgroup (from the host: inside, it is masked).
        lim = client("limits")
        assert not any(lim["v1"].values()) and not any(lim["v2"].values()), lim
        assert _cgroup_limits(handle.container_id) == {
            "memory": str(256 << 20),
            "memory+swap": str(256 << 20),
            "pids": str(64 + (GVISOR_PIDS if GVISOR else 0)),  # gVisor: its own threads too
            "cpu": "100000 100000",
        }

        # No part in the engine's network layer (whose Docker 20.10 locks can deadlock the engine
        # when containers start and exit side by side): no endpoint, not even in "none".
        seen = engine.client().api.inspect_container(handle.container_id)
        assert seen["Config"].get("NetworkDisabled") is True, seen["Config"]
        assert not seen["NetworkSettings"].get("Networks"), seen["NetworkSettings"]

        fs = client("fs")
        for d in ("/", "/bot", "/etc", "/opt/take5/site", "/usr/bin", "/var/tmp", "/home"):
            # gVisor checks the permission before the read-only mount: EACCES for root's folders
            assert fs["write"][d] in (("EROFS", "EACCES") if GVISOR else ("EROFS",)), (
                d,
                fs["write"][d],
            )
        assert fs["write"]["/root"] in ("EROFS", "EACCES")
        assert fs["write"]["/tmp"] == "ok"
        assert fs["exec_tmp"] == "EACCES"  # /tmp is noexec
        assert fs["fill_tmp"] == [16 << 20, "ENOSPC"]  # /tmp is 16m
        assert set(fs["run_take5"]) <= {"bot.sock", "output.log"}  # only its own socket folder
        if os.geteuid() == 0:
            assert fs["fill_run"][1] == "ENOSPC" and fs["fill_run"][0] <= (1 << 20) + (64 << 10)

        targets = [[a, port] for a in _host_addresses()] + [["::1", port]]
        net = client("net", targets=targets, outside=[["198.51.100.1", 443]], dns="pypi.org")
        assert net["interfaces"] == ["lo"] and net["routes"] == [] and net["isolated"]
        for target, result in net["connect"].items():
            assert result != "connected", target
        assert net["outside"] == {"198.51.100.1:443": "EHOSTUNREACH" if GVISOR else "ENETUNREACH"}
        assert net["dns"].startswith("failed")
        client.close()
        time.sleep(0.3)
        assert accepted == [], "the bot reached the host's listener"
    finally:
        stop.set()
        t.join(2)
        lsock.close()
        for s in accepted:
            s.close()


@pytest.mark.docker
def test_fork_bomb_is_contained_by_the_pids_limit(make_sandbox):
    handle, address = make_sandbox(limits=SandboxLimits(pids=32)).start()
    client = Client(address)
    if GVISOR:
        # There the cgroup's limit counts gVisor's own threads and processes too: a fork bomb
        # takes the whole sandbox down with it, which contains it as well.
        try:
            result = client("forkbomb", max=5000, seconds=3)
        except (ConnectionError, OSError):
            deadline = time.monotonic() + 30
            while handle.exit_status() is None and time.monotonic() < deadline:
                time.sleep(0.05)
            assert handle.exit_status() is not None
            return
        assert result["error"] == "EAGAIN"
        return
    result = client("forkbomb", max=5000, seconds=3)
    assert result["error"] == "EAGAIN"
    assert 0 < result["forked"] < 32
    assert client("ping") == {"pong": True}  # still alive and answering
    assert handle.exit_status() is None
    client.close()


@pytest.mark.docker
def test_memory_hog_is_oom_killed_and_reported(make_sandbox):
    sb = make_sandbox(limits=SandboxLimits(memory="64m"), env={"TAKE5_STANDIN_MODE": "memhog"})
    with pytest.raises(CallFailedError) as err:
        sb.start()
    assert err.value.kind == "resource"
    assert "OOMKilled, memory limit 64m, exit code 137" in err.value.detail
    assert "before it served" in err.value.detail

    handle, address = make_sandbox(limits=SandboxLimits(memory="64m")).start()
    client = Client(address)
    with pytest.raises((ConnectionError, OSError)):
        client("memhog")
    deadline = time.monotonic() + 10
    while handle.exit_status() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert handle.exit_fault() == (
        "resource",
        "the bot ran out of memory: its container was OOM-killed (OOMKilled, memory limit 64m, "
        "exit code 137)",
    )
    client.close()
    handle.stop()
    assert "eating memory" in handle.stderr_tail() or "memhog" not in handle.stderr_tail()


@pytest.mark.docker
def test_cpu_spinner_is_limited(make_sandbox):
    handle, address = make_sandbox(limits=SandboxLimits(cpus=0.5)).start()
    assert _cgroup_limits(handle.container_id)["cpu"] == "50000 100000"
    client = Client(address)
    # On the container's cgroup, as the host counts it (gVisor's own clock inside is its own).
    before, started = cgroups.cpu_seconds(handle.container_id), time.monotonic()
    client("spin", seconds=1.5)
    used = cgroups.cpu_seconds(handle.container_id) - before
    assert used / (time.monotonic() - started) < 0.7, used  # ~0.5 of a CPU
    client.close()


@pytest.mark.docker
def test_output_flood_is_bounded(make_sandbox):
    sb = make_sandbox(
        limits=SandboxLimits(log_max_size="256k"),
        env={"TAKE5_STANDIN_MODE": "flood", "TAKE5_STANDIN_FLOOD": str(16 << 20)},
    )
    try:
        _, address = sb.start()
        assert Client(address)("ping") == {"pong": True}
    except (
        CallFailedError
    ) as error:  # its output file is full: the write failed and the bot gave up
        assert sb.launcher.file_output and error.kind == "crash", error
    handle = sb.handles[-1]
    tail = handle.stderr_tail(4000)
    assert "flood" in tail and len(tail) <= 4000
    container, socket_dir = handle.container, handle.socket_dir
    assert container is not None and socket_dir is not None
    if sb.launcher.file_output:  # as root: a file in the bot's small tmpfs
        size = (socket_dir / "output.log").stat().st_size
        assert size <= (256 << 10) + (64 << 10), size
    else:  # Docker's json-file log, one file of at most 256k
        log_path = sb.launcher.client.api.inspect_container(container.id)["LogPath"]
        if os.access(log_path, os.R_OK):
            assert os.path.getsize(log_path) <= 400 << 10


@pytest.mark.docker
def test_start_failures_are_faults_with_their_cause(make_sandbox):
    with pytest.raises(CallFailedError) as err:
        make_sandbox(env={"TAKE5_STANDIN_MODE": "crash"}).start()
    assert (err.value.kind, err.value.detail) == (
        "crash",
        "the bot's container exited before it served with exit code 3",
    )

    # A bot whose container started but that never serves: its own timeout. (A container that
    # is not started in time is the host's failure: test_docker_reuse.py.)
    sandbox = make_sandbox(env={"TAKE5_STANDIN_MODE": "nosocket"})
    handle = sandbox.launcher(str(DOCKER_BOTS / "standin"))
    sandbox.handles.append(handle)
    handle.start()
    handle._current.future.result(120)
    with pytest.raises(CallFailedError) as err:
        handle.ready(1.5)
    assert err.value.kind == "timeout"


@pytest.mark.docker
def test_bot_with_its_own_dockerfile(make_sandbox):
    _, address = make_sandbox().start(DOCKER_BOTS / "dockerfile_bot")
    client = Client(address)
    assert client("ping") == {"pong": True, "kind": "dockerfile"}
    client.close()


@pytest.mark.docker
def test_a_foreign_base_without_labels_is_refused_and_never_run(
    make_sandbox, sdk_copy, client, tmp_path
):
    """A base image without take5's runtime labels is refused with a clear message: the referee
    reads a base image's facts from its labels and never runs an image to find out (no container
    of it is created, sandboxed or not). The test builds its own foreign image (uniquely named,
    removed after), so that no image an engine happens to hold decides the outcome."""
    from take5_arena.referee.sandbox.errors import ImageBuildError

    base = f"take5-test/foreign:{secrets.token_hex(6)}"
    _image_with(client, tmp_path, base, "FROM scratch\nCOPY bot.py /bot/bot.py\n")
    try:
        assert not client.images.get(base).labels
        bot = tmp_path / "foreign"
        shutil.copytree(DOCKER_BOTS / "standin", bot)
        (bot / "nonce.txt").write_text(secrets.token_hex(8))
        sb = make_sandbox(base_image=base)
        # One listing call each, with the image of every container in it: other sessions on the
        # engine remove theirs, which a lookup of each container afterwards would not find.
        before = {s["Id"] for s in client.api.containers(all=True)}
        with pytest.raises(ImageBuildError, match=r"take5\.python"):
            sb.launcher.image(str(bot))
        after = client.api.containers(all=True)
        assert not [s["Id"] for s in after if s["Id"] not in before and base in str(s["Image"])]
    finally:
        client.images.remove(base, force=True)


def _image_with(client, tmp_path: Path, tag: str, dockerfile: str) -> str:
    """An image built here from a known Dockerfile (no bot folder involved: this tests the
    runtime)."""
    ctx = tmp_path / tag.replace("/", "-").replace(":", "-")
    ctx.mkdir()
    shutil.copy(DOCKER_BOTS / "standin" / "bot.py", ctx / "bot.py")
    (ctx / "Dockerfile").write_text(dockerfile)
    client.images.build(path=str(ctx), tag=tag, network_mode="none", rm=True, forcerm=True)
    return tag


def _client_when_ready(path: Path, timeout: float = 30.0) -> Client:
    """A Client once the bot listens (its socket may exist a moment before it accepts)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            return Client(str(path))
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


@pytest.mark.docker
def test_declared_volumes_are_size_capped_tmpfs_never_host_disk(client, tmp_path):
    tag = _image_with(
        client,
        tmp_path,
        f"take5-test/volume:{TOKEN}",
        (
            f'FROM {BASE_IMAGE}\nCOPY bot.py /bot/bot.py\nVOLUME ["/data"]\n'
            'USER 10001:10001\nCMD ["python3", "/bot/bot.py"]\n'
        ),
    )
    run = f"pytest-{TOKEN}-vol"
    folder = sockets.SOCKET_BASE / f"t5-{run}" / "c0001"
    try:
        assert containers.image_facts(client, tag).volumes == ("/data",)
        sockets.prepare_socket_dir(folder, SandboxLimits())
        c = containers.start_container(
            client, tag, limits=SandboxLimits(tmpfs="4m"), run_id=run, socket_dir=folder
        )
        mounts = client.api.inspect_container(c.id)["Mounts"]
        assert [m for m in mounts if m.get("Type") == "volume"] == [], mounts
        bot = _client_when_ready(folder / "bot.sock")
        assert bot("fill", dir="/data", cap=64 << 20) == [4 << 20, "ENOSPC"]
        bot.close()
    finally:
        containers.remove_run(client, run)
        sockets.sweep_socket_root(folder.parent)
        client.images.remove(tag, force=True)

    bad = _image_with(
        client,
        tmp_path,
        f"take5-test/volume-bad:{TOKEN}",
        (
            f'FROM {BASE_IMAGE}\nCOPY bot.py /bot/bot.py\nVOLUME ["/run/take5/x"]\n'
            'CMD ["python3", "/bot/bot.py"]\n'
        ),
    )
    try:
        with pytest.raises(ContainerStartError, match="VOLUME '/run/take5/x'"):
            containers.start_container(
                client, bad, limits=SandboxLimits(), run_id=run, socket_dir=None
            )
        assert containers.list_containers(client, run_id=run) == []
    finally:
        client.images.remove(bad, force=True)


@pytest.mark.docker
def test_an_image_with_its_own_command_and_no_shell_runs_as_it_is(client, tmp_path):
    """A static-binary-like image (no take5 labels, so no shell is assumed): the launcher runs its
    ENTRYPOINT/CMD unchanged, and its output goes through Docker's bounded log."""
    tag = _image_with(
        client,
        tmp_path,
        f"take5-test/own-cmd:{TOKEN}",
        (
            f"FROM {BASE_IMAGE}\nCOPY bot.py /srv/standin.py\n"
            'LABEL take5.image=static\nENTRYPOINT ["python3"]\nCMD ["/srv/standin.py"]\n'
        ),
    )
    run = f"pytest-{TOKEN}-own"
    folder = sockets.SOCKET_BASE / f"t5-{run}" / "c0001"
    try:
        facts = containers.image_facts(client, tag)
        assert facts.command == ("python3", "/srv/standin.py") and image_shell(facts.labels) is None
        sockets.prepare_socket_dir(folder, SandboxLimits())
        c = containers.start_container(
            client, tag, limits=SandboxLimits(), run_id=run, socket_dir=folder
        )
        bot = _client_when_ready(folder / "bot.sock")
        assert bot("whoami")["uid"] == 10001
        bot.close()
        assert "standin bot listening" in containers.logs_tail(client, c.id)
    finally:
        containers.remove_run(client, run)
        sockets.sweep_socket_root(folder.parent)
        client.images.remove(tag, force=True)


@pytest.mark.docker
def test_the_launcher_runs_a_bot_image_with_its_own_command(make_sandbox, tmp_path):
    """A bot folder whose image starts something else than python3 /bot/bot.py: the production
    launcher runs its ENTRYPOINT and CMD unchanged (behind the base image's shell, which only
    redirects the output and sets the umask), with the sandbox flags and TAKE5_LISTEN."""
    bot = tmp_path / "own_command"
    bot.mkdir()
    shutil.copy(DOCKER_BOTS / "standin" / "bot.py", bot / "standin.py")
    (bot / "Dockerfile").write_text(
        "ARG TAKE5_BASE_IMAGE\nFROM ${TAKE5_BASE_IMAGE}\nCOPY standin.py /srv/standin.py\n"
        'USER 10001:10001\nENTRYPOINT ["python3"]\nCMD ["/srv/standin.py"]\n'
    )
    sb = make_sandbox()
    handle, address = sb.start(bot)
    assert Client(address)("whoami")["uid"] == 10001
    assert handle.container is not None
    state = sb.launcher.client.api.inspect_container(handle.container.id)
    assert [state["Path"], *state["Args"]][-2:] == ["python3", "/srv/standin.py"]
    assert state["HostConfig"]["ReadonlyRootfs"] and state["HostConfig"]["NetworkMode"] == "none"


@pytest.mark.docker
def test_build_labels_and_no_rebuild_when_unchanged(client, sdk_copy, tmp_path):
    bot = tmp_path / "cache-probe"
    shutil.copytree(DOCKER_BOTS / "standin", bot)
    (bot / "nonce.txt").write_text(secrets.token_hex(8))  # a fresh hash: really builds
    first = images.build_image(bot, sdk_dir=sdk_copy)
    assert first.built
    sdk_version, protocol = images.sdk_versions(sdk_copy)
    labels = first.labels
    assert labels["take5.bot"] == "cache-probe" and labels["take5.bot.version"] == "1.0-test"
    assert labels["take5.sdk.version"] == sdk_version and labels["take5.protocol"] == protocol
    assert labels["take5.source_hash"] == first.source_hash
    assert first.tag == f"take5-bot/cache-probe:{first.source_hash[:16]}"
    again = images.build_image(bot, sdk_dir=sdk_copy)
    assert not again.built and again.id == first.id and again.tag == first.tag


def _make_wheel(dest: Path, name: str, version: str, files: dict[str, str]) -> Path:
    dist = f"{name}-{version}.dist-info"
    meta = {
        f"{dist}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n",
        f"{dist}/WHEEL": "Wheel-Version: 1.0\nGenerator: take5-tests\nRoot-Is-Purelib: true\nTag: "
        "py3-none-any\n",
    }
    allfiles = {**files, **meta}
    record = "".join(f"{p},,\n" for p in allfiles) + f"{dist}/RECORD,,\n"
    path = dest / f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as z:
        for p, text in allfiles.items():
            z.writestr(p, text)
        z.writestr(f"{dist}/RECORD", record)
    return path


@pytest.mark.docker
def test_requirements_are_installed_from_wheels(client, sdk_copy, tmp_path):
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    _make_wheel(wheels, "t5demo", "0.1", {"t5demo/__init__.py": "VALUE = 42\n"})
    bot = tmp_path / "wheel-bot"
    shutil.copytree(DOCKER_BOTS / "standin", bot)
    (bot / "requirements.txt").write_text("t5demo==0.1\n")
    (bot / "nonce.txt").write_text(secrets.token_hex(8))
    info = images.build_image(
        bot, sdk_dir=sdk_copy, pip_args=["--no-index", "--find-links", str(wheels)]
    )
    code, out = containers.run_to_completion(
        client,
        info.tag,
        ["python3", "-c", "import t5demo, take5, grpc; print(t5demo.VALUE, t5demo.__file__)"],
        limits=SandboxLimits(),
        run_id=f"pytest-{TOKEN}-wheels",
    )
    assert code == 0 and out.split() == ["42", "/opt/take5/wheels/t5demo/__init__.py"]
    (bot / "requirements.txt").write_text("t5demo==9.9\n")  # no such wheel
    with pytest.raises(ImageBuildError) as err:
        images.build_image(
            bot, sdk_dir=sdk_copy, pip_args=["--no-index", "--find-links", str(wheels)]
        )
    assert "t5demo==9.9" in err.value.output


@pytest.mark.docker
def test_build_failure_carries_the_build_output(client, sdk_copy):
    with pytest.raises(ImageBuildError) as err:
        images.build_image(DOCKER_BOTS / "broken_build", sdk_dir=sdk_copy, force=True)
    assert "T5-BUILD-MARKER" in err.value.output and "T5-BUILD-MARKER" in str(err.value)


@pytest.mark.docker
def test_an_unregistered_runtime_is_a_clear_start_error(client):
    """--runtime runsc (gVisor) needs the runtime registered with the engine; without it the start
    fails with the engine's reason and leaves nothing behind."""
    run = f"pytest-{TOKEN}-rt"
    with pytest.raises(ContainerStartError, match="runtime"):
        containers.start_container(
            client,
            BASE_IMAGE,
            limits=SandboxLimits(runtime="take5-no-such-runtime"),
            run_id=run,
            socket_dir=None,
            entrypoint=["true"],
        )
    assert containers.list_containers(client, run_id=run) == []
