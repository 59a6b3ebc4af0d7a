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
  No container ever serves two games: each game's process is the image's own command in a
  container started for it and removed after it. (With ``reuse=True``, where it can: runc, a
  referee running as root, an image labelled ``take5.forkserver=1``, the process is forked
  instead by the fork server of a warm container (warm.py), also started for that one game; off
  by default, since with a container per game it costs more CPU and time than the image's own
  command: docs/benchmarks.md.) The next game's container and process start while the current
  game plays (`DockerBot.prefetch`, `DockerLauncher.prefetch`), off the
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
from ..kinds import BotMemory
from ..match.botref import BotRef, parse_bot
from ..match.handle import AddressHandle, BotHandle
from ..timings import Timings
from . import cgroups, containers, engine, sockets, sweep, warm
from .dockerbot import DockerBot
from .errors import ContainerStartError, ImageBuildError, SandboxError
from .images import LABEL_FORKSERVER, ImageInfo, build_image
from .instances import BotImage, Instance, Output
from .limits import (
    CONTAINER_SOCKET_DIR,
    LABEL_GAME,
    LABEL_OWNER,
    SandboxLimits,
    size_bytes,
    volume_tmpfs,
)
from .reaper import ExitWatcher, owner_label, remove_orphans, start_reaper, stop_reaper

log = logging.getLogger("take5.referee")

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


class DockerLauncher:
    """Starts bots in locked-down containers, a fresh process per game; see the module docstring.

    `limits`: memory (no swap), CPUs, pids, tmpfs and log sizes of each container. `base_image`:
    what bot images are built on. `env`: extra environment for every bot. `log_dir`: where each
    bot's output is kept (``bot<N>-<name>.log``, one section per process), as with local bots.
    `run_id`: the take5.run label (default ``$TAKE5_RUN_PREFIX-<random>``, the prefix "ref" by
    default). `bot_memory`: ``game`` (a fresh process for every game) or ``deals``
    (kinds.BotMemory). `reuse`: True, bot processes forked by a warm container's fork server
    wherever `warm.enabled` allows; False (the default), the image's own command in every
    container. Each container serves one game either way. Spares (containers started ahead
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
        reuse: bool = False,
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
        why = warm.enabled(limits) if reuse else "reuse=False (the default: docs/benchmarks.md)"
        if why is None and not sockets.share_root(self.socket_root):
            why = "the socket root cannot be made a shared mount"
        self.reuse = why is None
        self.reuse_off = why or ""
        """Why warm containers are not used ("" when they are)."""
        self._lock = threading.RLock()
        self._images: dict[Path, BotImage | ImageBuildError] = {}
        self._standby: dict[str, list[Instance]] = collections.defaultdict(list)
        """Processes ready for a game, by image: started ahead, or kept (bot_memory=deals)."""
        self._leased: collections.Counter[str] = collections.Counter()
        self._instances: set[Instance] = set()
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
        self.start_seconds = Timings()
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

    def _image(self, ref: BotRef) -> BotImage | ImageBuildError:
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
            image: BotImage | ImageBuildError = self._runner(info)
        except ImageBuildError as error:
            image = error
        except ContainerStartError as error:
            image = ImageBuildError(f"{ref.text}: {error}")
        with self._lock:
            return self._images.setdefault(folder, image)

    def _runner(self, info: ImageInfo) -> BotImage:
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
            return BotImage(info, None, None, False, forkserver, facts.volumes)
        script = 'umask 0000; exec "$@"'
        if self.file_output:
            script += f" >{CONTAINER_SOCKET_DIR}/{sockets.OUTPUT_NAME} 2>&1"
        return BotImage(
            info,
            [shell],
            ["-c", script, "take5-bot", *command],
            self.file_output,
            forkserver,
            facts.volumes,
        )

    # -- processes and containers ------------------------------------------------------------

    def _spawn(self, image: BotImage, game_id: str) -> Instance:
        """Start a bot process in the background (see Instance.future), in a container never used
        before: forked by a new warm container's fork server when the image allows it, else the
        container's own command."""
        with self._lock:
            if self._closed:
                raise SandboxError("the docker launcher is closed")
            self._counter += 1
            number = self._counter
        if self.reuse and image.forkserver:
            root = self.socket_root / f"w{number:04d}"
            inst = Instance(image, root / "run", game_id)
        else:
            root = None
            inst = Instance(image, self.socket_root / f"c{number:04d}", game_id)
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
        self, inst: Instance, image: BotImage, root: Path, labels: Mapping[str, str]
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

    def _fork(self, inst: Instance, box: warm.WarmContainer) -> containers.Container:
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
        self, image: BotImage, socket_dir: Path, labels: Mapping[str, str]
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

    def usable(self, inst: Instance, deal: int | None) -> bool:
        """Whether `inst` may play a game of `deal` (None: not known yet) under `bot_memory`."""
        return not inst.retired and self._fit(inst, deal)

    def _fit(self, inst: Instance, deal: int | None) -> bool:
        if deal is not None and deal in inst.seen:
            return False
        if inst.seen and self.bot_memory is BotMemory.GAME:
            return False
        if inst.future.done() and (inst.future.cancelled() or inst.future.exception() is not None):
            return False
        return self.exit_of(inst) is None

    def _take(self, image: BotImage, deal: int | None = None, game_id: str = "") -> Instance:
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

    def _prefetch(self, image: BotImage, game_id: str) -> None:
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

    def _memory(self, inst: Instance) -> int:
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

    def _evict(self, inst: Instance) -> None:
        """A spare no game took: its start cancelled if it has not begun (no container is made
        for nothing), else abandoned, and its container removed in the background."""
        inst.abandon.set()
        if inst.future.cancel():
            with self._lock:
                self._instances.discard(inst)
            return

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

    def _remove(self, inst: Instance, container: containers.Container) -> None:
        used = containers.cpu_seconds(container.id)
        try:
            containers.remove(self.client, container.id)
        except Exception as error:  # noqa: BLE001 - the run's sweep at close() tries again
            log.warning("removing %s: %s", container.name, error)
        with self._lock:
            self._live.pop(container.id, None)
            self.container_cpu += used
        sockets.release_socket_dir(inst.socket_dir)

    def _retire(self, inst: Instance, sink: Output | None) -> concurrent.futures.Future[None]:
        """A handle is done with `inst`: keep what it wrote, then, in the background, put it back
        in the pool (a process that may still play: it never played, or bot_memory=deals), or
        remove its container."""
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
                if inst.warm is not None:  # removed, never reset for another game
                    self._drop_warm(inst.warm)
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

    def exit_of(self, inst: Instance) -> int | None:
        """The bot's exit code once it ended, as the engine reports a container's (128+N: killed
        by signal N): from the fork server, the event stream, or an inspection."""
        box = inst.warm
        if box is not None:
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
                inst.oom = inst.oom or st.oom_killed  # a "no" may still turn (oom_killed)
        return inst.inspected_code

    def oom_killed(self, inst: Instance) -> bool:
        """Whether the bot's process was killed for memory. A cold container's verdict waits for
        the engine's word after a SIGKILL exit (reaper.OOM_GRACE says why) and a "no" is never
        kept: the word may still come."""
        if inst.warm is not None:
            return inst.warm.oom_killed()
        container = inst.container
        if container is None:
            return False
        if not inst.oom:
            cid = container.id
            inst.oom = self.events.await_oom(cid, self.exit_of(inst), lambda: self._oom_probe(cid))
        return bool(inst.oom)

    def _oom_probe(self, container_id: str) -> bool:
        """The engine's OOMKilled flag, else the kernel's own count while the cgroup is there
        (gVisor's runtime may report neither an OOM event nor OOMKilled)."""
        try:
            st = containers.status(self.client, container_id)
        except Exception:  # noqa: BLE001 - unknown counts as no
            st = None
        if st is not None and st.oom_killed:
            return True
        paths = cgroups.CgroupPaths.of_container(container_id)
        return bool(paths is not None and cgroups.oom_kills(paths))

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
    "DockerLauncher",
    "docker_launcher",
    "image_shell",
]
