"""Bots in Docker containers for matches and tournaments: the launcher behind `--sandbox docker`.

    from take5_arena.referee.sandbox.launcher import DockerLauncher
    from take5_arena.referee.sandbox.limits import SandboxLimits

    with DockerLauncher(limits=SandboxLimits(memory="256m", cpus=1.0, pids=64)) as launcher:
        launcher.prepare(refs)                                # optional: build the images now
        result = run_match(refs, config, launcher=launcher)   # take5_arena/referee/match/play.py

`DockerLauncher` is a match `Launcher`: called with a BotRef it returns a `DockerBot`, a `BotHandle`
(take5_arena/referee/match/handle.py). What it does:

* Images: each bot folder becomes an image (`images.build_image`, the checked builder; reused while
  its sources are unchanged). A bot whose image cannot be built is rejected before play; the
  build's output is its log.
* The image's own command: an image says how its bot starts (its ENTRYPOINT and CMD, e.g.
  ``python3 /bot/bot.py`` or a static binary); the launcher runs exactly that, in any language,
  with the sandbox flags (`limits.container_kwargs`) and ``TAKE5_LISTEN``. It never runs anything
  else in a bot image, and asks nothing of an image by running it: what it needs comes from the
  image's config and labels.
* Output: the bot's stdout and stderr are best kept out of Docker's log pipeline (a flooding bot
  makes dockerd and the container shim burn about a core of the host, outside the bot's CPU
  quota). When the image has a POSIX shell (label ``take5.shell=/bin/sh``, or an image built on the
  arena's Debian bases, label ``take5.image`` = ``base`` or ``python``) and the referee runs as root
  (the socket folder is then a small tmpfs), the image's command is started through that shell
  as ``umask 0; exec "$@" >/run/take5/output.log 2>&1``: the output goes to a file bounded by the
  tmpfs, read without following links. Other images (a static binary) write to Docker's
  json-file log, capped at `SandboxLimits.log_max_size`.
* A fresh bot process for every game (`DockerBot.per_game`, `DockerBot.serve_game`), so that no
  memory carries over from one game to the next; with ``bot_memory="deals"`` a process may play
  several different deals instead (kinds.BotMemory), and never the same deal twice either way.
  No container ever serves two games: where it can (runc, a referee running as root, an image
  labelled ``take5.forkserver=1``: a ``bot.py`` bot on the arena's Python image), each game's
  process is forked by the fork server of a warm container (warm.py) that was started for it and
  is removed after it, so the bot's start costs a fork instead of an interpreter's imports;
  elsewhere the process is the container's own. Either way the next game's container and process
  start while the current game plays (`DockerBot.prefetch`, `DockerLauncher.prefetch`), off the
  critical path; with ``bot_memory="deals"`` the kept process keeps its container, and nothing
  else ever runs in it (docs/security.md: what a game leaves in the kernel is gone with its
  namespaces). Spares have a lifetime: `SPARE_IDLE` seconds unused, `MAX_SPARES` and
  `SPARE_MEMORY` per launcher (a worker), the least recently used evicted first.
* Pinned sockets (take5_arena.referee.sandbox.sockets): the referee connects through an O_PATH
  descriptor of the bot's socket, never again through the path in the bot's writable folder.
* Exits: one event stream reports every container's exit code and OOM kill (reaper.ExitWatcher).
  A bot that dies is a fault carrying the cause: ``resource`` for an out-of-memory kill
  ("OOMKilled, memory limit 256m, exit code 137"), ``crash`` for any other exit ("exit code 3").
* Cleanup (take5_arena.referee.sandbox.reaper): containers are labelled ``take5.arena=1``,
  ``take5.run=RUN``, ``take5.owner=...`` and removed after their game, all of them at `close()`
  (also on Ctrl-C and SIGTERM through the match command), and when the referee is killed outright
  (SIGKILL) by a reaper process that outlives it. A new launcher first removes containers of dead
  referees, and starts this process's sweep of the engine (sweep.py), which does it again every
  20 s and also removes what a closed run left stopped (an engine restart during `close()`).

Every engine request is an Engine API call (docker-py); no ``docker`` process is spawned during a
match.
"""

from __future__ import annotations

import atexit
import collections
import concurrent.futures
import contextlib
import dataclasses
import logging
import os
import re
import secrets
import signal
import threading
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from .. import defaults
from ..errors import InfraError
from ..kinds import BotMemory, InfraKind
from ..match import faults
from ..match.botlogs import READ_BYTES
from ..match.botref import BotRef, parse_bot
from ..match.faults import FaultKind
from ..match.handle import AddressHandle, BotHandle, Spent
from ..match.remote import RUN_HINT, CallFailedError
from . import cgroups, containers, engine, sockets, sweep, warm
from .errors import ContainerStartError, ImageBuildError, SandboxError
from .images import LABEL_FORKSERVER, ImageInfo, build_image
from .limits import (
    CONTAINER_SOCKET_DIR,
    LABEL_GAME,
    LABEL_OWNER,
    SOCKET_NAME,
    SandboxLimits,
    size_bytes,
    volume_tmpfs,
)
from .reaper import ExitWatcher, owner_label, remove_orphans, start_reaper, stop_reaper

log = logging.getLogger("take5.referee")

TAIL_BYTES = 8192
MAX_STANDBY = 8
"""Containers started ahead per image at most (prefetch beyond this is ignored)."""
SPARE_IDLE = 120.0
"""Seconds a spare (a container started ahead that no game took yet) is kept unused."""
MAX_SPARES = 16
"""Spares a launcher (a worker) keeps at most, over all images: the least recently used go."""
SPARE_MEMORY = "512m"
"""Memory the spares of a launcher may hold at most, from their cgroups (page cache included)."""
SHELL_LABEL = "take5.shell"
"""Image label: the path of a POSIX shell in the image (set by the image builder)."""
SHELL_IMAGES = ("base", "python")
"""Values of the inherited ``take5.image`` label of the arena's Debian images, which have /bin/sh.
"""


def image_shell(labels: Mapping[str, str]) -> str | None:
    """The POSIX shell an image has, by its labels (never by running it); None if unknown."""
    shell = labels.get(SHELL_LABEL, "")
    if shell:
        return shell if re.fullmatch(r"/[A-Za-z0-9_./-]{1,100}", shell) else None
    return "/bin/sh" if labels.get("take5.image") in SHELL_IMAGES else None


def _signal_name(code: int) -> str:
    try:
        return signal.Signals(code - 128).name
    except ValueError:
        return ""


def exit_fault(
    code: int, oom: bool, memory: str, *, before_serving: bool = False
) -> tuple[FaultKind, str]:
    """(fault kind, detail) of a bot container that ended with `code` (docs:
    DockerBot.exit_fault)."""
    when = " before it served" if before_serving else ""
    if oom:
        detail = (
            f"the bot ran out of memory{when}: its container was OOM-killed "
            f"(OOMKilled, memory limit {memory}, exit code {code})"
        )
        return faults.RESOURCE, detail
    name = _signal_name(code) if code > 128 else ""
    how = f" (killed by {name})" if name else ""
    hint = RUN_HINT if before_serving and code == 0 else ""  # a bot file that never serves
    return faults.CRASH, f"the bot's container exited{when} with exit code {code}{how}{hint}"


# -- one container of a bot -----------------------------------------------------------------------


@dataclasses.dataclass(eq=False)
class _Image:
    info: ImageInfo
    entrypoint: list[str] | None
    command: list[str] | None
    file_output: bool
    """The bot's output goes to OUTPUT_NAME in its socket tmpfs (else through Docker's logs)."""
    forkserver: bool = False
    """The image may run in a warm container (label take5.forkserver=1, set by images.py)."""
    volumes: tuple[str, ...] = ()


class _Instance:
    """One bot process (starting, running or ended), in a container of its own or in a warm one,
    and the referee's pin on its socket."""

    def __init__(
        self, image: _Image, socket_dir: Path, game_id: str, warm: warm.WarmContainer | None = None
    ) -> None:
        self.image = image
        self.socket_dir = socket_dir
        self.game_id = game_id
        self.warm = warm
        """The warm container this process was forked in (None: a container of its own)."""
        self.bot_pid: int | None = None
        self.seen: set[int] = set()
        """The deals this process (and whatever it left in its container) may remember."""
        self.output_offset = 0
        """Bytes of its output already collected (a process kept for several games)."""
        self.output_taken = 0
        """Bytes of its output file already handed to the match, turn by turn (take_output)."""
        self.log_taken_ns = 0
        """Without an output file: the stamp of the last line of its Docker log handed over."""
        self.future: concurrent.futures.Future[containers.Container] = concurrent.futures.Future()
        self.pin: int | None = None
        self.oom: bool | None = None
        self.last_inspect = 0.0
        self.inspected_code: int | None = None
        self.retired = False
        self.idle_since = time.monotonic()
        """When it was last put among the spares (the least recently used are evicted first)."""
        self.forked = False
        """Its process is forked by a warm container's fork server (the referee's own code)."""
        self.abandon = threading.Event()
        """Set when the wait for this process's start was given up (`DockerBot.ready`) or the
        launcher closes: a warm container's start then ends."""

    @property
    def socket_path(self) -> Path:
        return self.socket_dir / SOCKET_NAME

    @property
    def output_file(self) -> Path | None:
        """The file its output goes to (None: Docker's log, an image without a shell)."""
        if self.image.file_output or self.warm is not None:
            return self.socket_dir / sockets.OUTPUT_NAME
        return None

    @property
    def container(self) -> containers.Container | None:
        if self.future.done() and not self.future.cancelled() and self.future.exception() is None:
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
    """Starts bots in locked-down containers, a fresh process per game; see the module docstring.

    `limits`: memory (no swap), CPUs, pids, tmpfs and log sizes of each container. `base_image`:
    what bot images are built on. `env`: extra environment for every bot. `log_dir`: where each
    bot's output is kept (``bot<N>-<name>.log``, one section per process), as with local bots.
    `run_id`: the take5.run label (default ``$TAKE5_RUN_PREFIX-<random>``, the prefix "ref" by
    default). `bot_memory`: ``game`` (a fresh process for every game) or ``deals``
    (kinds.BotMemory). `reuse`: bot processes forked by a warm container's fork server where that
    can be used (None: wherever `warm.enabled` allows; False: the image's own command in every
    container). Each container serves one game either way. Spares (containers started ahead
    that no game took yet, or processes kept across deals) live at most `spare_idle` seconds
    unused, and at most `max_spares` of them and `spare_memory` of memory (their cgroups) are
    kept, the least recently used evicted first. `clean_orphans`: remove what dead
    referees left on the engine now, and start this process's sweep that goes on doing it
    (sweep.py); `reaper`: a reaper process for this run (reaper.py). The launcher is thread-safe.
    Raises EngineUnavailableError when no engine answers.
    """

    def __init__(
        self,
        *,
        limits: SandboxLimits = SandboxLimits(),
        base_image: str = defaults.BASE_IMAGE,
        sdk_dir: str | os.PathLike[str] = defaults.SDK_DIR,
        env: Mapping[str, str] | None = None,
        log_dir: str | os.PathLike[str] | None = None,
        run_id: str | None = None,
        max_parallel_starts: int = 8,
        reaper: bool = True,
        clean_orphans: bool = True,
        build_options: Mapping[str, Any] | None = None,
        bot_memory: str = defaults.BOT_MEMORY,
        reuse: bool | None = None,
        spare_idle: float = SPARE_IDLE,
        max_spares: int = MAX_SPARES,
        spare_memory: str = SPARE_MEMORY,
    ) -> None:
        self.client = (
            engine.client()
        )  # EngineUnavailableError, with the reason, before anything else
        prefix = (
            os.environ.get("TAKE5_RUN_PREFIX", "") or "ref"
        )  # tests tell their runs apart by it
        self.run_id = run_id or f"{prefix}-{secrets.token_hex(4)}"
        if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,40}", self.run_id):
            raise ValueError(f"run_id {self.run_id!r}: use letters, digits, _ . - (at most 41)")
        self.base_image = base_image
        self.sdk_dir = Path(sdk_dir)
        self.env = dict(env or {})
        self.log_dir = Path(log_dir) if log_dir is not None else None
        self.build_options = dict(build_options or {})
        self.owner = owner_label()
        self.socket_root = (
            sockets.SOCKET_BASE / f"t5-{self.run_id}"
        )  # short: socket paths have 107 bytes
        self.file_output = sockets.can_mount_tmpfs() and limits.socket_dir_size is not None
        if self.file_output:
            room = size_bytes(limits.log_max_size) + (64 << 10)
            have = size_bytes(limits.socket_dir_size) if limits.socket_dir_size else 0
            if have < room:
                limits = dataclasses.replace(limits, socket_dir_size=f"{room >> 10}k")
        self.limits = limits
        self.bot_memory = BotMemory(bot_memory)
        self.spare_idle = spare_idle
        self.max_spares = max_spares
        self.spare_memory = size_bytes(spare_memory)
        self.evicted = 0
        """Spares removed unused (idle too long, or beyond the count or memory cap)."""
        self._tending = threading.Event()
        sweep.open_run(self.run_id)  # before its first container: the sweep leaves the run alone
        self.orphans_removed = remove_orphans(self.client) if clean_orphans else 0
        if clean_orphans:
            sweep.start()
        self.socket_root.mkdir(mode=0o755, parents=True, exist_ok=True)
        (self.socket_root / sockets.OWNER_FILE).write_text(self.owner + "\n")
        why = warm.enabled(limits) if reuse is not False else "reuse=False"
        if why is None and not sockets.share_root(self.socket_root):
            why = "the socket root cannot be made a shared mount"
        self.reuse = why is None
        self.reuse_off = why or ""
        """Why warm containers are not used ("" when they are)."""
        self._lock = threading.RLock()
        self._images: dict[Path, _Image | ImageBuildError] = {}
        self._standby: dict[str, list[_Instance]] = collections.defaultdict(list)
        """Processes ready for a game, by image: started ahead, or kept (bot_memory=deals)."""
        self._leased: collections.Counter[str] = collections.Counter()
        self._instances: set[_Instance] = set()
        self._warm: set[warm.WarmContainer] = set()
        self._live: dict[str, containers.Container] = {}
        """Containers not yet removed, by id (their CPU is read from their cgroups)."""
        self._ids: set[str] = set()
        self._counter = 0
        self._handles = 0
        self._starts = concurrent.futures.ThreadPoolExecutor(
            max_parallel_starts, thread_name_prefix="take5-docker-start"
        )
        self._removals = concurrent.futures.ThreadPoolExecutor(
            4, thread_name_prefix="take5-docker-rm"
        )
        self._closed = False
        self.events = ExitWatcher(self.run_id)
        self._reaper = start_reaper(self.run_id, self.socket_root) if reaper else None
        self.container_cpu = 0.0
        """CPU seconds used by the containers removed so far (from their cgroups; 0 where unknown);
        `cpu_seconds` adds those still there."""
        self.start_seconds: list[float] = []
        """Seconds from each container's creation to its bot's socket, as measured by
        `DockerBot.ready`."""
        threading.Thread(target=self._tend, name="take5-spares", daemon=True).start()
        atexit.register(self.close)

    @property
    def containers_created(self) -> int:
        """Bot containers this launcher has created so far, the ones started ahead included."""
        return self._counter

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
        for item in refs:
            ref = item if isinstance(item, BotRef) else parse_bot(item)
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
        try:
            info = build_image(
                folder,
                base_image=self.base_image,
                sdk_dir=self.sdk_dir,
                docker=self.client,
                **self.build_options,
            )
            image: _Image | ImageBuildError = self._runner(info)
        except ImageBuildError as error:
            image = error
        except ContainerStartError as error:
            image = ImageBuildError(f"{ref.text}: {error}")
        with self._lock:
            return self._images.setdefault(folder, image)

    def _runner(self, info: ImageInfo) -> _Image:
        """How to run an image: its own command, through its shell when it has one and the output
        can go to a file (see the module docstring); the shell also sets umask 0, so that a referee
        that is not root may connect to a socket made by uid 10001."""
        facts = containers.image_facts(self.client, info.tag)
        command = list(facts.command)
        if not command:
            raise ImageBuildError(
                f"the image {info.tag} has no command (CMD or ENTRYPOINT) to start the bot"
            )
        volume_tmpfs(facts.volumes, self.limits)  # refused VOLUMEs reject the bot before play
        forkserver = facts.labels.get(LABEL_FORKSERVER) == "1"
        shell = image_shell(facts.labels)
        if shell is None:
            return _Image(info, None, None, False, forkserver, facts.volumes)
        script = 'umask 0000; exec "$@"'
        if self.file_output:
            script += f" >{CONTAINER_SOCKET_DIR}/{sockets.OUTPUT_NAME} 2>&1"
        return _Image(
            info,
            [shell],
            ["-c", script, "take5-bot", *command],
            self.file_output,
            forkserver,
            facts.volumes,
        )

    # -- processes and containers ------------------------------------------------------------

    def _spawn(self, image: _Image, game_id: str) -> _Instance:
        """Start a bot process in the background (see _Instance.future), in a container never used
        before: forked by a new warm container's fork server when the image allows it, else the
        container's own command."""
        with self._lock:
            if self._closed:
                raise SandboxError("the docker launcher is closed")
            self._counter += 1
            number = self._counter
        if self.reuse and image.forkserver:
            root = self.socket_root / f"w{number:04d}"
            inst = _Instance(image, root / "run", game_id)
            inst.forked = True
        else:
            root = None
            inst = _Instance(image, self.socket_root / f"c{number:04d}", game_id)
        with self._lock:
            self._instances.add(inst)
        labels = {LABEL_OWNER: self.owner, LABEL_GAME: game_id, "take5.bot": image.info.bot_name}

        def start() -> None:
            if not inst.future.set_running_or_notify_cancel():
                return
            try:
                if root is not None:
                    container = self._start_warm(inst, image, root, labels)
                else:
                    sockets.prepare_socket_dir(inst.socket_dir, self.limits)
                    container = self._create(image, inst.socket_dir, labels)
                    with self._lock:
                        self._live[container.id] = container
                        self._ids.add(container.id)
            except BaseException as error:  # noqa: BLE001 - handed to whoever waits for it
                if root is None:
                    sockets.release_socket_dir(inst.socket_dir)
                inst.future.set_exception(error)
            else:
                inst.future.set_result(container)

        try:
            self._starts.submit(start)
        except RuntimeError as error:  # the pool was shut down: closing
            inst.future.set_exception(SandboxError(str(error)))
        return inst

    def _start_warm(
        self, inst: _Instance, image: _Image, root: Path, labels: Mapping[str, str]
    ) -> containers.Container:
        """A new warm container with its one bot process."""
        box = warm.WarmContainer(
            self.client,
            image.info.tag,
            limits=self.limits,
            run_id=self.run_id,
            root=root,
            volumes=image.volumes,
            labels=labels,
            env=self.env,
            abandon=inst.abandon,
        )
        with self._lock:
            self._warm.add(box)
            self._live[box.container.id] = box.container
            self._ids.add(box.container.id)
            closed = self._closed
        if closed:
            raise SandboxError("the docker launcher is closed")
        try:
            return self._fork(inst, box)
        except BaseException:
            self._drop_warm(box)
            raise

    def _fork(self, inst: _Instance, box: warm.WarmContainer) -> containers.Container:
        inst.warm = box
        inst.bot_pid = box.spawn()
        return dataclasses.replace(box.container, socket_dir=box.run_dir, started=box.spawned_at)

    def _drop_warm(self, box: warm.WarmContainer) -> None:
        used = box.cpu_seconds()
        try:
            box.close()
        except Exception as error:  # noqa: BLE001 - the run's sweep at close() tries again
            log.warning("removing %s: %s", box.container.name, error)
        with self._lock:
            self._warm.discard(box)
            self._live.pop(box.container.id, None)
            self.container_cpu += used

    def _create(
        self, image: _Image, socket_dir: Path, labels: Mapping[str, str]
    ) -> containers.Container:
        """Create and start one fresh container."""
        return containers.start_container(
            self.client,
            image.info.tag,
            limits=self.limits,
            run_id=self.run_id,
            socket_dir=socket_dir,
            labels=labels,
            env=self.env,
            entrypoint=image.entrypoint,
            command=image.command,
        )

    def usable(self, inst: _Instance, deal: int | None) -> bool:
        """Whether `inst` may play a game of `deal` (None: not known yet) under `bot_memory`."""
        return not inst.retired and self._fit(inst, deal)

    def _fit(self, inst: _Instance, deal: int | None) -> bool:
        if deal is not None and deal in inst.seen:
            return False
        if inst.seen and self.bot_memory is BotMemory.GAME:
            return False
        if inst.future.done() and (inst.future.cancelled() or inst.future.exception() is not None):
            return False
        return self.exit_of(inst) is None

    def _take(self, image: _Image, deal: int | None = None, game_id: str = "") -> _Instance:
        """A process ready for a game of `deal`: from the pool if one may play it, else a new
        one."""
        tag = image.info.tag
        with self._lock:
            pool = self._standby.get(tag, [])
            for index, inst in enumerate(pool):
                if self.usable(inst, deal):
                    del pool[index]
                    self._leased[tag] += 1
                    return inst
            self._leased[tag] += 1
        return self._spawn(image, game_id)

    def _prefetch(self, image: _Image, game_id: str) -> None:
        """Keep one spare process per process in use, so that the next game's start waits for
        nothing."""
        tag = image.info.tag
        with self._lock:
            spare = len(self._standby[tag])
            if self._closed or spare >= max(1, self._leased[tag]) or spare >= MAX_STANDBY:
                return
        inst = self._spawn(image, game_id)
        with self._lock:
            self._standby[tag].append(inst)
        self._prune()

    # -- spares: their lifetime ------------------------------------------------------------------

    def _tend(self) -> None:
        """Evict idle spares now and then, until the launcher closes (a worker between runs keeps
        nothing longer than `spare_idle`)."""
        while not self._tending.wait(min(5.0, max(0.05, self.spare_idle / 4))):
            try:
                self._prune()
            except Exception as error:  # noqa: BLE001 - tried again at the next tick
                log.warning("evicting spare containers: %s", error)

    def _memory(self, inst: _Instance) -> int:
        container = inst.container
        if container is None:
            return 0
        paths = inst.warm.cgroup if inst.warm is not None else None
        paths = paths or cgroups.CgroupPaths.of_container(container.id)
        return (cgroups.memory_bytes(paths) if paths is not None else None) or 0

    def _prune(self) -> None:
        """Evict the spares idle longer than `spare_idle`, then the least recently used beyond
        `max_spares` or `spare_memory`."""
        now = time.monotonic()
        with self._lock:
            spares = sorted(
                (inst for pool in self._standby.values() for inst in pool),
                key=lambda inst: inst.idle_since,
            )
        if not spares:
            return
        out = [inst for inst in spares if now - inst.idle_since > self.spare_idle]
        kept = [inst for inst in spares if now - inst.idle_since <= self.spare_idle]
        while len(kept) > self.max_spares:
            out.append(kept.pop(0))
        sizes = [self._memory(inst) for inst in kept]
        while kept and sum(sizes) > self.spare_memory:
            sizes.pop(0)
            out.append(kept.pop(0))
        with self._lock:
            gone = []
            for inst in out:
                pool = self._standby.get(inst.image.info.tag, [])
                if inst in pool:  # not taken by a game meanwhile
                    pool.remove(inst)
                    inst.retired = True
                    gone.append(inst)
            self.evicted += len(gone)
        for inst in gone:
            self._evict(inst)

    def _evict(self, inst: _Instance) -> None:
        """A spare no game took: its start abandoned, its container removed in the background."""
        inst.abandon.set()

        def drop() -> None:
            try:
                try:
                    container = inst.future.result()
                except BaseException:  # noqa: BLE001 - it never started: nothing to remove
                    return
                inst.unpin()
                if inst.warm is not None:
                    self._drop_warm(inst.warm)
                else:
                    self._remove(inst, container)
            finally:
                with self._lock:
                    self._instances.discard(inst)

        try:
            self._removals.submit(drop)
        except RuntimeError:  # closing: close() removes what is left
            pass

    def prefetch(self, refs: Iterable[BotRef | str], *, game_id: str = "") -> None:
        """Start one process per bot folder in `refs` now, for the next game that needs one.

        For tournaments: call it with the next table's bots while a game plays; the handles of
        that table then take these processes instead of starting their own."""
        for item in refs:
            ref = item if isinstance(item, BotRef) else parse_bot(item)
            if ref.kind == "address":
                continue
            got = self._image(ref)
            if not isinstance(got, ImageBuildError):
                self._prefetch(got, game_id)

    def _remove(self, inst: _Instance, container: containers.Container) -> None:
        used = containers.cpu_seconds(container.id)
        try:
            containers.remove(self.client, container.id)
        except Exception as error:  # noqa: BLE001 - the run's sweep at close() tries again
            log.warning("removing %s: %s", container.name, error)
        with self._lock:
            self._live.pop(container.id, None)
            self.container_cpu += used
        sockets.release_socket_dir(inst.socket_dir)

    def _retire(self, inst: _Instance, sink: _Output | None) -> concurrent.futures.Future[None]:
        """A handle is done with `inst`: keep what it wrote, then, in the background, put it back
        in the pool (a process that may still play: it never played, or bot_memory=deals), or
        remove its container (`_end_warm` for a warm one)."""
        with self._lock:
            if inst.retired:
                done: concurrent.futures.Future[None] = concurrent.futures.Future()
                done.set_result(None)
                return done
            inst.retired = True
            self._leased[inst.image.info.tag] -= 1

        def release() -> None:
            tag = inst.image.info.tag
            keep = False
            try:
                try:
                    container = inst.future.result()
                except BaseException:  # noqa: BLE001 - it never started: nothing to remove
                    return
                if sink is not None:
                    inst.output_offset = sink.collect(inst, container, self.client)
                keep = not self._closed and self._fit(inst, None)  # unused, or kept across deals
                if keep:
                    inst.game_id = ""
                    inst.retired = False
                    inst.idle_since = time.monotonic()
                    with self._lock:
                        self._standby[tag].append(inst)
                    self._prune()
                    return
                inst.unpin()
                if inst.warm is not None:
                    self._end_warm(inst)
                else:
                    self._remove(inst, container)
            finally:
                if not keep:
                    with self._lock:
                        self._instances.discard(inst)

        try:
            return self._removals.submit(release)
        except RuntimeError:  # closing: do it now
            release()
            now: concurrent.futures.Future[None] = concurrent.futures.Future()
            now.set_result(None)
            return now

    def _end_warm(self, inst: _Instance) -> None:
        """After its process's last game: the warm container is removed, never reset for another
        game (what the game left in the container's namespaces goes with them)."""
        if inst.warm is not None:
            self._drop_warm(inst.warm)

    def exit_of(self, inst: _Instance) -> int | None:
        """The bot's exit code once it ended, as the engine reports a container's (128+N: killed
        by signal N): from the fork server, the event stream, or an inspection."""
        box = inst.warm
        if box is not None:
            if box.bot_pid != inst.bot_pid:
                return 137  # its container was reset for another process: it was killed
            if box.alive:
                return None
            if box.exit_status is None:  # the fork server is gone (the container ended)
                return self.events.exit_code(box.container.id) or 137
            exit_code = os.waitstatus_to_exitcode(box.exit_status)
            return 128 - exit_code if exit_code < 0 else exit_code
        container = inst.container
        if container is None:
            return None
        code = self.events.exit_code(container.id)
        if code is not None or self.events.healthy:
            return code
        now = time.monotonic()
        if inst.inspected_code is None and now - inst.last_inspect >= 0.25:
            inst.last_inspect = now
            st = containers.status(self.client, container.id)
            if st is not None and not st.running and st.exit_code is not None:
                inst.inspected_code = st.exit_code
                inst.oom = st.oom_killed
        return inst.inspected_code

    def oom_killed(self, inst: _Instance) -> bool:
        if inst.warm is not None:
            return inst.warm.oom_killed()
        container = inst.container
        if container is None:
            return False
        if container.id in self.events.oom:
            return True
        if inst.oom is None:
            try:  # the container is kept until retired
                st = containers.status(self.client, container.id)
                inst.oom = bool(st and st.oom_killed)
            except Exception:  # noqa: BLE001 - unknown counts as no
                inst.oom = False
        if not inst.oom:
            # The kernel's own count: gVisor's runtime reports no OOM event nor OOMKilled, so a
            # "no" from the engine (here, or from exit_of's inspection when the event stream
            # lagged) is not the last word.
            paths = cgroups.CgroupPaths.of_container(container.id)
            inst.oom = bool(paths is not None and cgroups.oom_kills(paths))
        return bool(inst.oom)

    @property
    def container_ids(self) -> frozenset[str]:
        """Every container this launcher has started, removed ones included."""
        with self._lock:
            return frozenset(self._ids)

    def cpu_seconds(self) -> float:
        """CPU seconds of every container of this launcher so far, removed ones included, from
        their cgroups (`cgroups.cpu_seconds`): what the bots and their fork servers used."""
        with self._lock:
            live = list(self._live)
            total = self.container_cpu
        return total + sum(cgroups.cpu_seconds(cid) or 0.0 for cid in live)

    # -- the launcher interface ----------------------------------------------------------------

    def __call__(self, ref: BotRef | str) -> BotHandle:
        ref = ref if isinstance(ref, BotRef) else parse_bot(ref)
        if ref.kind == "address":
            return AddressHandle(ref.address)
        with self._lock:
            self._handles += 1
            number = self._handles
        log_path = (
            self.log_dir / f"bot{number}-{ref.default_name}.log"
            if self.log_dir is not None
            else None
        )
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
        self._tending.set()
        try:
            with self._lock:
                for inst in self._instances:
                    inst.abandon.set()
            self._starts.shutdown(wait=True, cancel_futures=True)
            with self._lock:
                left = list(self._instances)
                self._standby.clear()
            for inst in left:
                inst.unpin()
                if not inst.future.done():
                    inst.future.cancel()
            self._removals.shutdown(wait=True)
            started = [
                (inst, inst.container)
                for inst in left
                if inst.container is not None and inst.warm is None
            ]
            with self._lock:
                boxes = list(self._warm)
            _each(lambda pair: self._remove(*pair), started)
            _each(self._drop_warm, boxes)
            try:
                containers.remove_run(self.client, self.run_id)
            except Exception as error:  # noqa: BLE001 - the reaper or the next launcher cleans up
                log.warning("cleaning up run %s: %s", self.run_id, error)
            sockets.sweep_socket_root(self.socket_root)
            self.events.close()
            stop_reaper(self._reaper)
        finally:
            sweep.close_run(self.run_id)  # what could not be removed now, the sweep removes later
            for sig, handler in zip(sigs, previous):
                signal.signal(sig, handler)
            atexit.unregister(self.close)

    def __enter__(self) -> DockerLauncher:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _each(fn: Any, items: list[Any]) -> None:
    """fn(item) for each item, four at a time; one by one when threads cannot start any more
    (close() runs at interpreter exit too)."""
    if not items:
        return
    try:
        with concurrent.futures.ThreadPoolExecutor(4) as pool:
            list(pool.map(fn, items))
    except RuntimeError:
        for item in items:
            fn(item)


def _bot_folder(ref: BotRef) -> Path | ImageBuildError:
    if ref.path is None:
        return ImageBuildError(f"{ref.text}: not a bot folder")
    if ref.path.name not in ("bot.py", "run") and not (ref.path.parent / "Dockerfile").is_file():
        return ImageBuildError(
            f"{ref.text}: --sandbox docker runs bot folders (with bot.py or a Dockerfile), "
            f"not single files: put it in a folder as bot.py"
        )
    return ref.path.parent


# -- the handle ------------------------------------------------------------------------------------


class _Output:
    """What a bot wrote, kept across its containers: a bounded tail, and its log file if any."""

    def __init__(self, log_path: Path | None) -> None:
        self.log_path = log_path
        self.tails: collections.deque[str] = collections.deque(maxlen=3)
        self.lock = threading.Lock()
        self.sections = 0

    def collect(self, inst: _Instance, container: containers.Container, client: Any) -> int:
        """Keep what `inst` wrote since its last collection; the new offset in its output file."""
        offset = inst.output_offset
        if inst.output_file is not None:
            data = sockets.read_output(inst.output_file, None)[offset:]
            offset += len(data)
            if self.log_path is None:
                data = data[-TAIL_BYTES:]
            text = data[-TAIL_BYTES:].decode("utf-8", errors="replace")
        else:
            text = containers.logs_tail(client, container.id, lines=100, max_bytes=TAIL_BYTES)
            data = text.encode()
        with self.lock:
            self.sections += 1
            if text.strip():
                self.tails.append(text)
            if self.log_path is not None:
                self.log_path.parent.mkdir(parents=True, exist_ok=True)
                mode = "ab" if self.sections > 1 else "wb"
                with open(self.log_path, mode) as fh:
                    heading = f"[take5: container {container.name}, game {inst.game_id or '-'}]\n"
                    fh.write(heading.encode())
                    fh.write(data)
                    if data and not data.endswith(b"\n"):
                        fh.write(b"\n")
        return offset

    def text(self, limit: int) -> str:
        with self.lock:
            return "\n".join(self.tails)[-limit:]


class DockerBot(BotHandle):
    """A bot folder run in a fresh process for each game (a `BotHandle`, made by DockerLauncher).

    Besides the four methods every handle has, it overrides `per_game` and `serve_game(game_id,
    deal)` (whether the bot must be restarted before a game), `ready(timeout)` (wait for the socket
    and pin it), `prefetch(game_id)` (start the next game's process now) and `exit_fault()` (why
    the bot ended, as a fault). `container_id` names the container of the current process, whose
    cgroup counts its CPU time (cgroups.cpu_seconds).
    """

    per_game = True

    def __init__(
        self,
        launcher: DockerLauncher,
        ref: BotRef,
        image: _Image | ImageBuildError,
        *,
        log_path: Path | None = None,
    ) -> None:
        self.launcher = launcher
        self.ref = ref
        self.label = ref.text
        self.image = image
        self.output = _Output(log_path)
        self._retiring: list[concurrent.futures.Future[None]] = []
        self._cgroup: tuple[str, cgroups.CgroupPaths] | None = None
        self._current: _Instance | None = None
        self._next: _Instance | None = None
        self._deal: int | None = None
        """The deal of the game about to be played (see `serve_game`)."""
        self._game_id = ""
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
        if inst is not None and not self.launcher.usable(inst, self._deal):
            self._retiring.append(self.launcher._retire(inst, None))
            inst = None
        self._current = inst or self.launcher._take(self.image, self._deal, self._game_id)
        if self._deal is not None:
            self._current.seen.add(self._deal)
            self._current.game_id = self._game_id
        return f"unix:{self._current.socket_path}"

    def serve_game(self, game_id: str, deal: int) -> bool:
        """The next game is `game_id`, of `deal`: whether the bot must be (re)started for it.

        The current process may play it if it has not played that deal and, unless the launcher's
        bot_memory is ``deals``, no game at all; it then counts as having seen the deal. Otherwise
        the match stops and starts the bot, and `start` takes a process that may play it."""
        self._deal, self._game_id = deal, game_id
        inst = self._current
        if inst is None or not self.launcher.usable(inst, deal):
            return True
        inst.seen.add(deal)
        inst.game_id = game_id
        return False

    @property
    def container_id(self) -> str | None:
        """The container of the current process (a warm container is shared by one game's
        process at a time): its cgroup holds the bot's CPU clock. None before it started."""
        inst = self._current
        container = inst.container if inst is not None else None
        return container.id if container is not None else None

    @property
    def container(self) -> containers.Container | None:
        """The container of the game being played (None before it is created or between games)."""
        return self._current.container if self._current is not None else None

    @property
    def socket_dir(self) -> Path | None:
        """The host folder mounted at /run/take5 in the current container (its socket, and its
        output file when the sandbox runs as root)."""
        return self._current.socket_dir if self._current is not None else None

    cpu_clock = True

    def cpu_time(self) -> float | None:
        """CPU seconds of the current container so far, from its cgroup (`cgroups.cpu_seconds`):
        the bot's CPU clock. None before it started, or where the cgroup cannot be read."""
        inst = self._current
        container = inst.container if inst is not None else None
        if container is None:
            return None
        if self._cgroup is None or self._cgroup[0] != container.id:
            paths = cgroups.CgroupPaths.of_container(container.id)
            if paths is None:
                return None
            self._cgroup = (container.id, paths)
        return cgroups.cpu_seconds(self._cgroup[1])

    def ready(self, timeout: float, spent: Spent | None = None) -> str:
        """Wait until the bot serves; the address to connect to (its pinned socket).

        `timeout` bounds the wait on the wall clock; `spent` (the start allowance on the CPU
        clock, read from the container's cgroup) may end it sooner. The engine's own work (creating
        and starting the container) counts on the wall clock only.

        Raises CallFailedError: timeout (no socket in time), crash or resource (the container ended
        first, with its cause), crash (the engine refused the image's own command). Raises
        InfraError (kind ``sandbox``), nobody's fault, when the container was not started within
        `timeout` or a warm container's fork server failed: the bot's code had not run yet."""
        inst = self._current
        if inst is None:
            raise CallFailedError(faults.CRASH, "the bot was not started")
        deadline = time.monotonic() + timeout
        try:
            inst.future.result(timeout=max(0.0, deadline - time.monotonic()))
        except concurrent.futures.TimeoutError:
            inst.abandon.set()
            raise InfraError(
                InfraKind.SANDBOX,
                f"{self.label}: its container was not started within {timeout:g} s "
                "(--start-wall; the host or its engine is too slow)",
            ) from None
        except (Exception, concurrent.futures.CancelledError) as error:  # noqa: BLE001 - reported
            first = str(error).splitlines()[0] if str(error) else type(error).__name__
            if inst.forked or not isinstance(error, ContainerStartError):
                # The fork server is the referee's code, and the engine's errors are the host's.
                raise InfraError(
                    InfraKind.SANDBOX, f"{self.label}: its container did not start: {first}"
                ) from None
            raise CallFailedError(
                faults.CRASH, f"the bot's container could not be started: {first}"
            ) from None
        delay = 0.002
        while True:
            if inst.pin is None:
                inst.pin = sockets.pin(inst.socket_path)
            # Bound is not yet listening: connecting now would cost gRPC a reconnect backoff.
            if inst.pin is not None and sockets.accepts(inst.pin):
                container = inst.container
                if container is not None:
                    self.launcher.start_seconds.append(time.monotonic() - container.started)
                return f"unix:/proc/self/fd/{inst.pin}"
            code = self.launcher.exit_of(inst)
            if code is not None:
                raise CallFailedError(
                    *exit_fault(
                        code,
                        self.launcher.oom_killed(inst),
                        self.launcher.limits.memory,
                        before_serving=True,
                    )
                )
            used_up = spent() if spent is not None else None
            if used_up is not None:
                raise CallFailedError(faults.TIMEOUT, used_up)
            if time.monotonic() >= deadline:
                raise CallFailedError(
                    faults.TIMEOUT, f"the bot did not start serving within {timeout:g} s"
                )
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

    def exit_fault(self) -> tuple[FaultKind, str]:
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

    def take_output(self) -> str:
        """What the bot wrote since the last call, read from its output file: the match keeps it
        with the turn just played (take5_arena/referee/match/botlogs.py), in every game it plays
        here, the ladder's and a Dask worker's alike. At most READ_BYTES a call. An image
        without a shell (the static runtime) writes to Docker's log instead, read from the line
        after the last one taken (its tail is also in `stderr_tail`, with a fault); Docker writes
        it a moment after the bot, so a line printed just before an answer may go with the next
        turn."""
        inst = self._current
        if inst is None:
            return ""
        path = inst.output_file
        if path is None:
            container = inst.container
            if container is None or container.id is None:
                return ""
            text, inst.log_taken_ns = containers.logs_since(
                self.launcher.client, container.id, inst.log_taken_ns, READ_BYTES
            )
            return text
        data, inst.output_taken = sockets.read_output_since(path, inst.output_taken, READ_BYTES)
        return data.decode("utf-8", errors="replace")

    def stderr_tail(self, limit: int = 2000) -> str:
        for future in self._retiring:
            with contextlib.suppress(Exception):  # only for diagnostics
                future.result(timeout=10)
        self._retiring = [f for f in self._retiring if not f.done()]
        text = self.output.text(limit)
        inst = self._current
        if inst is not None and inst.image.file_output:
            live = sockets.read_output(inst.socket_dir / sockets.OUTPUT_NAME, limit).decode(
                "utf-8", errors="replace"
            )
            text = (text + "\n" + live) if text else live
        return text[-limit:]

    def __repr__(self) -> str:
        return f"<DockerBot {self.label}>"


def docker_launcher(
    *,
    memory: str = defaults.MEMORY,
    cpus: float = defaults.CPUS,
    pids: int = defaults.PIDS,
    base_image: str = defaults.BASE_IMAGE,
    runtime: str | None = None,
    log_dir: str | os.PathLike[str] | None = None,
    **kwargs: Any,
) -> DockerLauncher:
    """A DockerLauncher from the command-line options (--memory, --cpus, --pids, --base-image)."""
    limits = SandboxLimits(memory=memory, cpus=cpus, pids=pids, runtime=runtime)
    return DockerLauncher(limits=limits, base_image=base_image, log_dir=log_dir, **kwargs)


__all__ = [
    "MAX_SPARES",
    "MAX_STANDBY",
    "SHELL_IMAGES",
    "SHELL_LABEL",
    "SPARE_IDLE",
    "SPARE_MEMORY",
    "TAIL_BYTES",
    "DockerBot",
    "DockerLauncher",
    "docker_launcher",
    "exit_fault",
    "image_shell",
]
