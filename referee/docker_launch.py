"""Bots in Docker containers for matches and tournaments: the launcher behind `--sandbox docker`.

    from referee.docker_launch import DockerLauncher
    from referee.docker_sandbox import SandboxLimits

    with DockerLauncher(limits=SandboxLimits(memory="256m", cpus=1.0, pids=64)) as launcher:
        launcher.prepare(refs)                                # optional: build the images now
        result = run_match(refs, config, launcher=launcher)   # referee/match.py

`DockerLauncher` is a match `Launcher`: called with a BotRef it returns a `DockerBot`, a `BotHandle`
(referee/launch.py). What it does beyond the local launcher:

* Images: each bot folder becomes an image with `docker_sandbox.build_image` (reused while its
  sources are unchanged). A bot whose image cannot be built is rejected before play; the build's
  output is its log.
* A fresh container per bot per game (`DockerBot.per_game`): the match starts every Docker bot
  anew before each game, so no memory carries over from one game to the next. The next game's
  containers start while the current game plays (`DockerBot.prefetch`, `DockerLauncher.prefetch`),
  so starting them costs the games CPU time but no waiting.
* Pinned sockets: when a bot's socket appears, the referee opens it (O_PATH, not following links)
  and connects through that descriptor (``unix:/proc/self/fd/N``) from then on, never again through
  the path in the bot's writable socket folder: deleting the socket or replacing it with a symlink
  cannot send the referee anywhere else.
* Output: as root (the socket folder is then a small tmpfs) the bot's stdout and stderr go to a
  file in that tmpfs, bounded by its size, instead of through Docker's log pipeline: a bot flooding
  its output would otherwise make dockerd and the container shim burn about a core of the host,
  outside the bot's CPU quota. The referee reads the file without following links.
* Exits: one ``docker events`` stream reports every container's exit code and OOM kill at once. A
  bot that dies is a fault carrying the cause: ``resource`` for an out-of-memory kill ("OOMKilled,
  memory limit 256m, exit code 137"), ``crash`` for any other exit ("exit code 3"); see
  `DockerBot.exit_fault`.
* Cleanup: containers are labelled ``take5.arena=1``, ``take5.run=RUN``, ``take5.owner=...`` and
  removed after their game, all of them at `close()` (also on Ctrl-C and SIGTERM through the match
  command), and when the referee is killed outright (SIGKILL) by a small reaper process that
  outlives it. A new launcher first removes containers whose owning referee process is gone.
"""

from __future__ import annotations

import atexit
import collections
import concurrent.futures
import dataclasses
import json
import logging
import os
import re
import secrets
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from . import faults
from .botref import BotRef, parse_bot
from .docker_sandbox import (
    CONTAINER_SOCKET_DIR,
    DEFAULT_BASE_IMAGE,
    DEFAULT_SDK_DIR,
    LABEL_ARENA,
    LABEL_RUN,
    REPO_ROOT,
    SOCKET_NAME,
    ContainerStartError,
    Docker,
    ImageBuildError,
    ImageInfo,
    RunningContainer,
    SandboxError,
    SandboxLimits,
    cleanup_leftovers,
    default_docker,
    start_bot_container,
)
from .launch import AddressHandle, BotHandle
from .remote import CallFailed

log = logging.getLogger("take5.referee")

LABEL_OWNER = "take5.owner"
"""``host:boot-id:pid:start-time`` of the referee process that started the container."""
OUTPUT_NAME = "output.log"
"""The bot's stdout and stderr, in its socket folder (file output mode)."""
TAIL_BYTES = 8192
SOCKET_BASE = Path("/tmp")
"""Where the socket folders of a run go (``/tmp/t5-RUN/cNNNN``), as with DockerSandbox."""
MAX_STANDBY = 8
"""Containers started ahead per image at most (prefetch beyond this is ignored)."""


# -- owners and orphans ----------------------------------------------------------------------------


def _boot_id() -> str:
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip()[:8]
    except OSError:
        return "-"


def _start_time(pid: int) -> str:
    """The kernel's start time of a process (clock ticks since boot), "" when it does not exist."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return ""
    return text.rsplit(")", 1)[1].split()[19]


def owner_label(pid: int | None = None) -> str:
    pid = os.getpid() if pid is None else pid
    return f"{socket.gethostname()}:{_boot_id()}:{pid}:{_start_time(pid) or '?'}"


def owner_alive(owner: str) -> bool:
    """Whether the referee process named by a take5.owner label may still run (unknown: True)."""
    parts = owner.split(":")
    if len(parts) != 4 or not parts[2].isdigit():
        return True
    host, boot, pid, started = parts
    if host != socket.gethostname():
        return True  # another machine's referee using the same engine: not ours to judge
    if boot != _boot_id():
        return False  # started before this machine's last boot
    return _start_time(int(pid)) == started


def remove_orphans(docker: Docker | None = None) -> int:
    """Remove the containers (and socket folders) of runs whose referee process is gone.

    Only containers with a take5.owner label are considered: a run without one (tests, tools using
    docker_sandbox directly) cleans up after itself."""
    docker = docker or default_docker()
    fmt = '{{.Label "' + LABEL_RUN + '"}}\t{{.Label "' + LABEL_OWNER + '"}}'
    proc = docker.run(["ps", "-a", "--filter", f"label={LABEL_ARENA}=1", "--filter", f"label={LABEL_OWNER}",
                       "--format", fmt])
    dead = set()
    for line in proc.stdout.splitlines():
        run, _, owner = line.partition("\t")
        if run and not owner_alive(owner):
            dead.add(run)
    removed = 0
    for run in sorted(dead):
        removed += cleanup_leftovers(run, docker=docker)
        sweep_socket_root(SOCKET_BASE / f"t5-{run}")
    _sweep_dead_roots()
    if removed:
        log.warning("removed %d container(s) left over by earlier referee runs (%s)", removed, ", ".join(sorted(dead)))
    return removed


OWNER_FILE = "owner"
"""In a run's socket root: the take5.owner label of the referee process that made it."""


def sweep_socket_root(root: Path) -> None:
    """Unmount whatever tmpfs is left under a run's socket root (a socket folder whose container
    never came to be, because the referee died between mounting it and `docker run`), then
    remove the root."""
    try:
        children = list(root.iterdir())
    except OSError:
        children = []
    for child in children:
        if os.path.ismount(child):
            r = subprocess.run(["umount", str(child)], capture_output=True, check=False)
            if r.returncode != 0:
                subprocess.run(["umount", "-l", str(child)], capture_output=True, check=False)
    shutil.rmtree(root, ignore_errors=True)


def _sweep_dead_roots() -> int:
    """Socket roots (``/tmp/t5-RUN``) whose owner file names a referee process that is gone."""
    swept = 0
    for owner_file in SOCKET_BASE.glob(f"t5-*/{OWNER_FILE}"):
        try:
            owner = owner_file.read_text().strip()
        except OSError:
            continue
        if not owner_alive(owner):
            sweep_socket_root(owner_file.parent)
            swept += 1
    return swept


# -- the reaper: cleans up when the referee is killed -----------------------------------------------


def _start_reaper(run_id: str, socket_root: Path, docker: Docker) -> subprocess.Popen[bytes] | None:
    """A process in its own session that removes the run's containers once the referee is gone.

    It waits for end-of-file on a pipe only the referee holds: the referee closes it at `close()`
    (after writing "done": nothing to do) or the kernel does when the referee dies in any way."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO_ROOT), env.get("PYTHONPATH", "")) if p)
    env["TAKE5_DOCKER"] = docker.binary
    try:
        return subprocess.Popen(
            [sys.executable, "-m", "referee.docker_launch", "reap", run_id, str(socket_root)],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # neither a Ctrl-C in the terminal nor a group kill reach it
            env=env,
            cwd=str(REPO_ROOT),
        )
    except OSError as error:
        log.warning("no reaper for the bot containers (%s): a killed referee leaves them until its next start", error)
        return None


def _reap(run_id: str, socket_root: str) -> int:
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, signal.SIG_IGN)
    data = sys.stdin.buffer.read()
    if data.strip() == b"done":
        return 0
    # The referee died. A `docker run` it had in flight may still create a container: look again.
    for pause in (0.0, 1.0, 2.0, 4.0):
        time.sleep(pause)
        try:
            cleanup_leftovers(run_id)
        except SandboxError:
            pass
    sweep_socket_root(Path(socket_root))
    return 0


# -- container exits, as they happen -------------------------------------------------------------


class _ExitWatcher:
    """Follows ``docker events`` for one run: the exit code and OOM kill of each container."""

    def __init__(self, docker: Docker, run_id: str) -> None:
        self.codes: dict[str, int] = {}
        self.oom: set[str] = set()
        self.closing = False
        self.healthy = True
        exe = shutil.which(docker.binary) or docker.binary
        argv = [
            exe, "events", "--since", f"{time.time() - 1:.3f}", "--format", "{{json .}}",
            "--filter", "type=container", "--filter", f"label={LABEL_RUN}={run_id}",
            "--filter", "event=die", "--filter", "event=oom",
        ]
        self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL)
        self.thread = threading.Thread(target=self._run, name=f"take5-events-{run_id}", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            try:
                event = json.loads(line)
            except ValueError:
                continue
            cid = event.get("id") or (event.get("Actor") or {}).get("ID", "")
            action = event.get("Action") or event.get("status", "")
            if action == "oom":
                self.oom.add(cid)
            elif action == "die":
                code = ((event.get("Actor") or {}).get("Attributes") or {}).get("exitCode", "")
                self.codes[cid] = int(code) if str(code).lstrip("-").isdigit() else -1
        if not self.closing:
            self.healthy = False
            log.warning("the docker events stream ended; bot exits are now found by docker inspect")

    def exit_code(self, cid: str) -> int | None:
        return self.codes.get(cid)

    def close(self) -> None:
        self.closing = True
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(2)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(2)
        if self.proc.stdout is not None:
            self.proc.stdout.close()


# -- helpers ---------------------------------------------------------------------------------------


def _size_bytes(text: str) -> int:
    m = re.fullmatch(r"(\d+)([bkmg]?)", text.strip().lower())
    if not m:
        raise ValueError(f"not a size: {text!r}")
    return int(m.group(1)) * {"": 1, "b": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30}[m.group(2)]


def _pin(path: Path) -> int | None:
    """An O_PATH descriptor of the socket at `path`, if a socket (not a link to one) is there."""
    try:
        if not stat.S_ISSOCK(os.lstat(path).st_mode):
            return None
        fd = os.open(path, os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        if stat.S_ISSOCK(os.fstat(fd).st_mode):
            return fd
    except OSError:
        pass
    os.close(fd)
    return None


def _container_cpu(cid: str) -> float:
    """CPU seconds a running container has used, from its cgroup (cgroup v1 or v2); 0.0 if unknown."""
    for path in (f"/sys/fs/cgroup/cpuacct/docker/{cid}/cpuacct.usage",
                 f"/sys/fs/cgroup/cpu,cpuacct/docker/{cid}/cpuacct.usage"):
        try:
            return int(Path(path).read_text()) / 1e9
        except (OSError, ValueError):
            pass
    for path in (f"/sys/fs/cgroup/system.slice/docker-{cid}.scope/cpu.stat", f"/sys/fs/cgroup/docker/{cid}/cpu.stat"):
        try:
            for line in Path(path).read_text().splitlines():
                if line.startswith("usage_usec "):
                    return int(line.split()[1]) / 1e6
        except (OSError, ValueError):
            pass
    return 0.0


def _accepts(fd: int) -> bool:
    """Whether the pinned socket accepts a connection (the bot's server listens)."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.settimeout(1.0)
        s.connect(f"/proc/self/fd/{fd}")
        return True
    except OSError:
        return False
    finally:
        s.close()


def _read_output(path: Path, limit: int | None = TAIL_BYTES) -> bytes:
    """The end (or all, limit None) of a regular file the bot may have tampered with; never follows links."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return b""
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return b""
        start = 0 if limit is None else max(0, st.st_size - limit)
        os.lseek(fd, start, os.SEEK_SET)
        chunks, left = [], st.st_size - start
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)
    except OSError:
        return b""
    finally:
        os.close(fd)


def _signal_name(code: int) -> str:
    try:
        return signal.Signals(code - 128).name
    except ValueError:
        return ""


def exit_fault(code: int, oom: bool, memory: str, *, before_serving: bool = False) -> tuple[str, str]:
    """(fault kind, detail) of a bot container that ended with `code` (docs: DockerBot.exit_fault)."""
    when = " before it served" if before_serving else ""
    if oom:
        detail = (f"the bot ran out of memory{when}: its container was OOM-killed "
                  f"(OOMKilled, memory limit {memory}, exit code {code})")
        return faults.RESOURCE, detail
    name = _signal_name(code) if code > 128 else ""
    how = f" (killed by {name})" if name else ""
    return faults.CRASH, f"the bot's container exited{when} with exit code {code}{how}"


# -- one container of a bot -----------------------------------------------------------------------


@dataclasses.dataclass(eq=False)
class _Image:
    info: ImageInfo
    entrypoint: str | None
    command: list[str] | None
    file_output: bool
    """The bot's output goes to OUTPUT_NAME in its socket tmpfs (else through Docker's logs)."""


class _Instance:
    """One container of a bot (starting, running or ended) and the referee's pin on its socket."""

    def __init__(self, image: _Image, socket_dir: Path, game_id: str) -> None:
        self.image = image
        self.socket_dir = socket_dir
        self.game_id = game_id
        self.future: concurrent.futures.Future[RunningContainer] = concurrent.futures.Future()
        self.pin: int | None = None
        self.oom: bool | None = None
        self.last_inspect = 0.0
        self.inspected_code: int | None = None
        self.retired = False

    @property
    def socket_path(self) -> Path:
        return self.socket_dir / SOCKET_NAME

    @property
    def container(self) -> RunningContainer | None:
        if self.future.done() and self.future.exception() is None:
            return self.future.result()
        return None

    def unpin(self) -> None:
        if self.pin is not None:
            try:
                os.close(self.pin)
            except OSError:
                pass
            self.pin = None


class DockerLauncher:
    """Starts bots in locked-down containers, a fresh one per game; see the module docstring.

    `limits`: memory (no swap), CPUs, pids, tmpfs and log sizes of each container. `base_image`:
    what bot images are built on. `env`: extra environment for every bot. `log_dir`: where each
    bot's output is kept (``bot<N>-<name>.log``, one section per container), as with local bots.
    `run_id`: the take5.run label (default ``$TAKE5_RUN_PREFIX-<random>``, the prefix "ref" by default).
    The launcher is thread-safe.
    """

    def __init__(
        self,
        *,
        limits: SandboxLimits = SandboxLimits(),
        base_image: str = DEFAULT_BASE_IMAGE,
        sdk_dir: str | os.PathLike[str] = DEFAULT_SDK_DIR,
        env: Mapping[str, str] | None = None,
        log_dir: str | os.PathLike[str] | None = None,
        run_id: str | None = None,
        docker: Docker | None = None,
        max_parallel_starts: int = 8,
        reaper: bool = True,
        clean_orphans: bool = True,
        build_options: Mapping[str, object] | None = None,
    ) -> None:
        self.docker = docker or default_docker()
        self.docker.check()  # DockerUnavailable, with the reason, before anything else
        prefix = os.environ.get("TAKE5_RUN_PREFIX", "") or "ref"  # tests tell their runs apart by it
        self.run_id = run_id or f"{prefix}-{secrets.token_hex(4)}"
        if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,40}", self.run_id):
            raise ValueError(f"run_id {self.run_id!r}: use letters, digits, _ . - (at most 41)")
        self.base_image = base_image
        self.sdk_dir = Path(sdk_dir)
        self.env = dict(env or {})
        self.log_dir = Path(log_dir) if log_dir is not None else None
        self.build_options = dict(build_options or {})
        self.owner = owner_label()
        self.socket_root = SOCKET_BASE / f"t5-{self.run_id}"  # short: socket paths have 107 bytes
        self.file_output = _can_mount_tmpfs()
        if self.file_output:
            room = _size_bytes(limits.log_max_size) + (64 << 10)
            have = _size_bytes(limits.socket_dir_size) if limits.socket_dir_size else 0
            if have < room:
                limits = dataclasses.replace(limits, socket_dir_size=f"{room >> 10}k")
        self.limits = limits
        self.orphans_removed = remove_orphans(self.docker) if clean_orphans else 0
        self.socket_root.mkdir(mode=0o755, parents=True, exist_ok=True)
        (self.socket_root / OWNER_FILE).write_text(self.owner + "\n")
        self._lock = threading.RLock()
        self._images: dict[Path, _Image | ImageBuildError] = {}
        self._standby: dict[str, list[_Instance]] = collections.defaultdict(list)
        self._instances: set[_Instance] = set()
        self._counter = 0
        self._handles = 0
        self._starts = concurrent.futures.ThreadPoolExecutor(max_parallel_starts, thread_name_prefix="take5-docker-start")
        self._removals = concurrent.futures.ThreadPoolExecutor(4, thread_name_prefix="take5-docker-rm")
        self._closed = False
        self.events = _ExitWatcher(self.docker, self.run_id)
        self._reaper = _start_reaper(self.run_id, self.socket_root, self.docker) if reaper else None
        self.container_cpu = 0.0
        """CPU seconds used by the containers removed so far (from their cgroups; 0 where unknown)."""
        self.start_seconds: list[float] = []
        """Seconds from each `docker run` to its bot's socket, as measured by `DockerBot.ready`."""
        atexit.register(self.close)

    # -- images ------------------------------------------------------------------------------

    def image(self, ref: BotRef | str) -> ImageInfo:
        """The image of a bot folder, built now unless up to date; raises ImageBuildError."""
        got = self._image(ref if isinstance(ref, BotRef) else parse_bot(ref))
        if isinstance(got, ImageBuildError):
            raise got
        return got.info

    def prepare(self, refs: Iterable[BotRef | str]) -> dict[str, ImageInfo | ImageBuildError]:
        """Build (or find) the image of every bot folder among `refs`, by BOT argument text."""
        out: dict[str, ImageInfo | ImageBuildError] = {}
        for ref in refs:
            ref = ref if isinstance(ref, BotRef) else parse_bot(ref)
            if ref.kind == "address":
                continue
            got = self._image(ref)
            out[ref.text] = got if isinstance(got, ImageBuildError) else got.info
        return out

    def _image(self, ref: BotRef) -> _Image | ImageBuildError:
        folder = _bot_folder(ref)
        if isinstance(folder, ImageBuildError):
            return folder
        with self._lock:
            if folder in self._images:
                return self._images[folder]
        from .sandbox import build_errors, images  # the checked builder (issue 10); port to the new launcher

        try:
            info = images.build_image(folder, base_image=self.base_image, sdk_dir=self.sdk_dir,
                                      **self.build_options)  # type: ignore[arg-type]
            image: _Image | ImageBuildError = self._runner(info)  # type: ignore[arg-type]
        except ImageBuildError as error:
            image = error
        except build_errors.ImageBuildError as error:
            image = ImageBuildError(error.message, error.output, bot_dir=folder)
        with self._lock:
            return self._images.setdefault(folder, image)

    def _runner(self, info: ImageInfo) -> _Image:
        """How to run an image: its own command, wrapped in /bin/sh to send its output to a file
        (with a tmpfs socket folder) and to create its socket with mode 0777 (umask 0: a referee
        that is not root must be allowed to connect to a socket made by uid 10001)."""
        data = self.docker.image_inspect(info.tag) or {}
        config = data.get("Config") or {}
        entry = list(config.get("Entrypoint") or [])
        cmd = list(config.get("Cmd") or [])
        if not (entry or cmd):
            return _Image(info, None, None, False)
        base = info.labels.get("take5.base", "")
        if not base.startswith("take5/") and not _has_shell(self.docker, info.tag):
            log.warning("%s has no /bin/sh: its output goes through docker logs", info.tag)
            return _Image(info, None, None, False)
        script = 'umask 0000; exec "$@"'
        if self.file_output:
            script += f" >{CONTAINER_SOCKET_DIR}/{OUTPUT_NAME} 2>&1"
        return _Image(info, "/bin/sh", ["-c", script, "take5-bot", *entry, *cmd], self.file_output)

    # -- containers --------------------------------------------------------------------------

    def _spawn(self, image: _Image, game_id: str) -> _Instance:
        """Start a container in the background (see _Instance.future)."""
        with self._lock:
            if self._closed:
                raise SandboxError("the docker launcher is closed")
            self._counter += 1
            inst = _Instance(image, self.socket_root / f"c{self._counter:04d}", game_id)
            self._instances.add(inst)
        self.socket_root.mkdir(mode=0o755, parents=True, exist_ok=True)
        labels = {LABEL_OWNER: self.owner, "take5.bot": image.info.bot_name}

        def start() -> None:
            if not inst.future.set_running_or_notify_cancel():
                return
            try:
                container = start_bot_container(
                    image.info.tag, socket_dir=inst.socket_dir, limits=self.limits, labels=labels,
                    run_id=self.run_id, game_id=game_id, env=self.env, command=image.command,
                    entrypoint=image.entrypoint, docker=self.docker, owns_socket_dir=True,
                )
            except BaseException as error:  # noqa: BLE001 - handed to whoever waits for it
                inst.future.set_exception(error)
            else:
                inst.future.set_result(container)

        try:
            self._starts.submit(start)
        except RuntimeError as error:  # the pool was shut down: closing
            inst.future.set_exception(SandboxError(str(error)))
        return inst

    def _take(self, image: _Image, game_id: str = "") -> _Instance:
        """A container started ahead for `image` if there is one, else a new one."""
        with self._lock:
            pool = self._standby.get(image.info.tag)
            if pool:
                return pool.pop(0)
        return self._spawn(image, game_id)

    def _prefetch(self, image: _Image, game_id: str) -> None:
        with self._lock:
            if self._closed or len(self._standby[image.info.tag]) >= MAX_STANDBY:
                return
        inst = self._spawn(image, game_id)
        with self._lock:
            self._standby[image.info.tag].append(inst)

    def prefetch(self, refs: Iterable[BotRef | str], *, game_id: str = "") -> None:
        """Start one container per bot folder in `refs` now, for the next game that needs one.

        For tournaments: call it with the next table's bots while a game plays; the handles of
        that table then take these containers instead of starting their own."""
        for ref in refs:
            ref = ref if isinstance(ref, BotRef) else parse_bot(ref)
            if ref.kind == "address":
                continue
            got = self._image(ref)
            if not isinstance(got, ImageBuildError):
                self._prefetch(got, game_id)

    def _retire(self, inst: _Instance, sink: _Output | None) -> concurrent.futures.Future[None]:
        """Stop and remove a container in the background, keeping the end of its output."""
        with self._lock:
            if inst.retired:
                done: concurrent.futures.Future[None] = concurrent.futures.Future()
                done.set_result(None)
                return done
            inst.retired = True
        inst.unpin()

        def remove() -> None:
            try:
                try:
                    container = inst.future.result()
                except BaseException:  # noqa: BLE001 - it never started: nothing to remove
                    return
                if sink is not None:
                    sink.collect(inst, container)
                used = _container_cpu(container.id)
                with self._lock:
                    self.container_cpu += used
                try:
                    container.remove(keep_record=False)
                except SandboxError as error:
                    log.warning("removing %s: %s", container.name, error)
            finally:
                with self._lock:
                    self._instances.discard(inst)

        try:
            return self._removals.submit(remove)
        except RuntimeError:  # closing: do it now
            remove()
            done = concurrent.futures.Future()
            done.set_result(None)
            return done

    def exit_of(self, inst: _Instance) -> int | None:
        """The container's exit code once it ended (from the events stream, else docker inspect)."""
        container = inst.container
        if container is None:
            return None
        code = self.events.exit_code(container.id)
        if code is not None or self.events.healthy:
            return code
        now = time.monotonic()
        if inst.inspected_code is None and now - inst.last_inspect >= 0.25:
            inst.last_inspect = now
            st = container.status()
            if not st.running and st.exit_code is not None:
                inst.inspected_code = st.exit_code
                inst.oom = st.oom_killed
        return inst.inspected_code

    def oom_killed(self, inst: _Instance) -> bool:
        container = inst.container
        if container is None:
            return False
        if container.id in self.events.oom:
            return True
        if inst.oom is None:
            try:
                inst.oom = container.status().oom_killed  # the container is kept until retired
            except SandboxError:
                inst.oom = False
        return bool(inst.oom)

    # -- the launcher interface ----------------------------------------------------------------

    def __call__(self, ref: BotRef | str) -> BotHandle:
        ref = ref if isinstance(ref, BotRef) else parse_bot(ref)
        if ref.kind == "address":
            return AddressHandle(ref.address)
        with self._lock:
            self._handles += 1
            number = self._handles
        log_path = self.log_dir / f"bot{number}-{ref.default_name}.log" if self.log_dir is not None else None
        return DockerBot(self, ref, self._image(ref), log_path=log_path)

    def close(self) -> None:
        """Remove every container of the run (waiting for starts in flight); idempotent."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
        main = threading.current_thread() is threading.main_thread()
        sigs = (signal.SIGINT, signal.SIGTERM)
        previous = [signal.signal(sig, signal.SIG_IGN) for sig in sigs] if main else []
        try:
            self._starts.shutdown(wait=True, cancel_futures=True)
            with self._lock:
                left = list(self._instances)
                self._standby.clear()
            for inst in left:
                inst.unpin()
                if not inst.future.done():
                    inst.future.cancel()
            self._removals.shutdown(wait=True)
            containers = [inst.container for inst in left if inst.container is not None]
            with concurrent.futures.ThreadPoolExecutor(4) as pool:
                list(pool.map(lambda c: c.remove(keep_record=False), containers))
            try:
                cleanup_leftovers(self.run_id, docker=self.docker)
            except SandboxError as error:
                log.warning("cleaning up run %s: %s", self.run_id, error)
            sweep_socket_root(self.socket_root)
            self.events.close()
            if self._reaper is not None and self._reaper.stdin is not None:
                try:
                    self._reaper.stdin.write(b"done")
                    self._reaper.stdin.close()
                except OSError:
                    pass
                try:
                    self._reaper.wait(5)
                except subprocess.TimeoutExpired:
                    pass
        finally:
            for sig, handler in zip(sigs, previous):
                signal.signal(sig, handler)
            atexit.unregister(self.close)

    def __enter__(self) -> DockerLauncher:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _bot_folder(ref: BotRef) -> Path | ImageBuildError:
    if ref.path is None:
        return ImageBuildError(f"{ref.text}: not a bot folder")
    if ref.path.name not in ("bot.py", "run") and not (ref.path.parent / "Dockerfile").is_file():
        return ImageBuildError(
            f"{ref.text}: --sandbox docker runs bot folders (with bot.py or a Dockerfile), "
            f"not single files: put it in a folder as bot.py"
        )
    return ref.path.parent


_shell_cache: dict[str, bool] = {}


def _has_shell(docker: Docker, tag: str) -> bool:
    if tag not in _shell_cache:
        proc = docker.run(["run", "--rm", "--network", "none", "--entrypoint", "/bin/sh", tag, "-c", "exit 0"],
                          check=False, timeout=60)
        _shell_cache[tag] = proc.returncode == 0
    return _shell_cache[tag]


_tmpfs_ok: bool | None = None


def _can_mount_tmpfs() -> bool:
    """Whether the referee can give each bot a tmpfs socket folder (root, with mount(8))."""
    global _tmpfs_ok
    if _tmpfs_ok is None:
        _tmpfs_ok = False
        if os.geteuid() == 0 and shutil.which("mount"):
            probe = Path(tempfile.mkdtemp(prefix="t5-probe-"))
            try:
                r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "take5-probe", str(probe)],
                                   capture_output=True, check=False)
                if r.returncode == 0:
                    _tmpfs_ok = True
                    subprocess.run(["umount", str(probe)], capture_output=True, check=False)
            finally:
                shutil.rmtree(probe, ignore_errors=True)
    return _tmpfs_ok


# -- the handle ------------------------------------------------------------------------------------


class _Output:
    """What a bot wrote, kept across its containers: a bounded tail, and its log file if any."""

    def __init__(self, log_path: Path | None) -> None:
        self.log_path = log_path
        self.tails: collections.deque[str] = collections.deque(maxlen=3)
        self.lock = threading.Lock()
        self.sections = 0

    def collect(self, inst: _Instance, container: RunningContainer) -> None:
        if inst.image.file_output:
            data = _read_output(inst.socket_dir / OUTPUT_NAME, None if self.log_path else TAIL_BYTES)
            text = data[-TAIL_BYTES:].decode("utf-8", errors="replace")
        else:
            text = container.logs_tail(lines=100, max_bytes=TAIL_BYTES)
            data = text.encode()
        with self.lock:
            self.sections += 1
            if text.strip():
                self.tails.append(text)
            if self.log_path is not None:
                self.log_path.parent.mkdir(parents=True, exist_ok=True)
                mode = "ab" if self.sections > 1 else "wb"
                with open(self.log_path, mode) as fh:
                    fh.write(f"[take5: container {container.name}, game {inst.game_id or '-'}]\n".encode())
                    fh.write(data)
                    if data and not data.endswith(b"\n"):
                        fh.write(b"\n")

    def text(self, limit: int) -> str:
        with self.lock:
            return "\n".join(self.tails)[-limit:]


class DockerBot:
    """A bot folder run in a fresh container for each game (a `BotHandle`, made by DockerLauncher).

    Besides the BotHandle methods, the match uses: `per_game` (restart before every game),
    `ready(timeout)` (wait for the socket and pin it), `prefetch(game_id)` (start the next game's
    container now) and `exit_fault()` (why the container ended, as a fault).
    """

    per_game = True

    def __init__(self, launcher: DockerLauncher, ref: BotRef, image: _Image | ImageBuildError,
                 *, log_path: Path | None = None) -> None:
        self.launcher = launcher
        self.ref = ref
        self.label = ref.text
        self.image = image
        self.output = _Output(log_path)
        self._retiring: list[concurrent.futures.Future[None]] = []
        self._current: _Instance | None = None
        self._next: _Instance | None = None
        if isinstance(image, ImageBuildError):
            if log_path is not None:
                log_path.parent.mkdir(parents=True, exist_ok=True)
                log_path.write_text(f"{image}\n{image.output}", encoding="utf-8")
            self.output.tails.append(f"{image}\n{image.output[-TAIL_BYTES:]}")
        else:
            self._next = launcher._take(image)  # the first game's container starts now

    def start(self) -> str:
        if isinstance(self.image, ImageBuildError):
            raise OSError(f"its image could not be built: {str(self.image).splitlines()[0]}")
        if self._current is not None:
            self._retire_current()
        inst, self._next = self._next, None
        self._current = inst or self.launcher._take(self.image)
        return f"unix:{self._current.socket_path}"

    def ready(self, timeout: float) -> str:
        """Wait until the bot serves; the address to connect to (its pinned socket).

        Raises CallFailed: timeout (no socket in time), crash or resource (the container ended
        first, with its cause), crash (docker could not start it)."""
        inst = self._current
        if inst is None:
            raise CallFailed(faults.CRASH, "the bot was not started")
        started = time.monotonic()
        deadline = started + timeout
        try:
            inst.future.result(timeout=max(0.0, deadline - time.monotonic()))
        except concurrent.futures.TimeoutError:
            raise CallFailed(faults.TIMEOUT, f"the bot's container did not start within {timeout:g} s") from None
        except (Exception, concurrent.futures.CancelledError) as error:  # noqa: BLE001 - it is the bot's fault report
            first = str(error).splitlines()[0] if str(error) else type(error).__name__
            raise CallFailed(faults.CRASH, f"the bot's container could not be started: {first}") from None
        delay = 0.002
        while True:
            if inst.pin is None:
                inst.pin = _pin(inst.socket_path)
            # Bound is not yet listening: connecting now would cost gRPC a reconnect backoff.
            if inst.pin is not None and _accepts(inst.pin):
                container = inst.container
                if container is not None:
                    self.launcher.start_seconds.append(time.monotonic() - container.started)
                return f"unix:/proc/self/fd/{inst.pin}"
            code = self.launcher.exit_of(inst)
            if code is not None:
                raise CallFailed(*exit_fault(code, self.launcher.oom_killed(inst), self.launcher.limits.memory,
                                             before_serving=True))
            if time.monotonic() >= deadline:
                raise CallFailed(faults.TIMEOUT, f"the bot did not start serving within {timeout:g} s")
            time.sleep(delay)
            delay = min(delay * 1.5, 0.05)

    def prefetch(self, game_id: str = "") -> None:
        """Start a container for the next game now (it waits, ready, for the next `start`)."""
        if not isinstance(self.image, ImageBuildError):
            self.launcher._prefetch(self.image, game_id)

    def exit_status(self) -> int | None:
        """The container's exit code once it ended; 128+N (killed by signal N) as -N."""
        inst = self._current
        if inst is None:
            return None
        code = self.launcher.exit_of(inst)
        if code is None:
            return None
        return -(code - 128) if code > 128 and _signal_name(code) else code

    def exit_fault(self) -> tuple[str, str]:
        """(kind, detail) for a bot whose container ended: resource when it was OOM-killed
        ("OOMKilled, memory limit 256m, exit code 137"), else crash ("exit code 3")."""
        inst = self._current
        code = self.launcher.exit_of(inst) if inst is not None else None
        if inst is None or code is None:
            return faults.CRASH, "the bot's container ended"
        return exit_fault(code, self.launcher.oom_killed(inst), self.launcher.limits.memory)

    def _retire_current(self) -> None:
        if self._current is not None:
            self._retiring.append(self.launcher._retire(self._current, self.output))
            self._current = None

    def stop(self, grace: float = 1.0) -> None:
        """Remove the bot's container (in the background: `DockerLauncher.close` waits for it)."""
        self._retire_current()
        if self._next is not None:
            self.launcher._retire(self._next, None)
            self._next = None

    def stderr_tail(self, limit: int = 2000) -> str:
        for future in self._retiring:
            try:
                future.result(timeout=10)
            except Exception:  # noqa: BLE001 - only for diagnostics
                pass
        self._retiring = [f for f in self._retiring if not f.done()]
        text = self.output.text(limit)
        inst = self._current
        if inst is not None and inst.image.file_output:
            live = _read_output(inst.socket_dir / OUTPUT_NAME, limit).decode("utf-8", errors="replace")
            text = (text + "\n" + live) if text else live
        return text[-limit:]

    def __repr__(self) -> str:
        return f"<DockerBot {self.label}>"


def docker_launcher(
    *,
    memory: str = "256m",
    cpus: float = 1.0,
    pids: int = 64,
    base_image: str = DEFAULT_BASE_IMAGE,
    log_dir: str | os.PathLike[str] | None = None,
    **kwargs,
) -> DockerLauncher:
    """A DockerLauncher from the command-line options (--memory, --cpus, --pids, --base-image)."""
    limits = SandboxLimits(memory=memory, cpus=cpus, pids=pids)
    return DockerLauncher(limits=limits, base_image=base_image, log_dir=log_dir, **kwargs)


__all__ = [
    "ContainerStartError",
    "DockerBot",
    "DockerLauncher",
    "SandboxLimits",
    "docker_launcher",
    "exit_fault",
    "owner_alive",
    "owner_label",
    "remove_orphans",
]


def _main(argv: Sequence[str]) -> int:
    if len(argv) == 3 and argv[0] == "reap":
        return _reap(argv[1], argv[2])
    print("usage: python -m referee.docker_launch reap RUN_ID SOCKET_ROOT", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
