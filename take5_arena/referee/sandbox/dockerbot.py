"""`DockerBot`: the match handle of a bot run by the Docker launcher, a fresh process per game.

It takes its processes from its launcher (launcher.py), which starts them ahead and removes them
after their game; it waits for a process to serve (`DockerBot.ready`: a host that is too slow is
`InfraError`, nobody's fault), reads its CPU clock from its container's cgroup, and turns a
container's end into a fault (`exit_fault`).
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import signal
import time
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from ..errors import InfraError
from ..kinds import InfraKind
from ..match import faults, runqueue
from ..match.botlogs import READ_BYTES
from ..match.botref import BotRef
from ..match.faults import FaultKind
from ..match.handle import BotHandle, Spent
from ..match.remote import RUN_HINT, CallFailedError
from ..timings import Timings
from . import cgroups, containers, sockets
from .errors import ImageBuildError
from .instances import TAIL_BYTES, BotImage, Instance, Output

if TYPE_CHECKING:
    import docker

    from .limits import SandboxLimits


class Pool(Protocol):
    """What a DockerBot asks of its launcher (launcher.DockerLauncher), which imports this module:
    the processes it takes, gives back and asks ahead, and how they ended."""

    limits: SandboxLimits
    start_seconds: Timings
    client: docker.DockerClient

    def usable(self, inst: Instance, deal: int | None) -> bool: ...

    def _take(self, image: BotImage, deal: int | None = None, game_id: str = "") -> Instance: ...

    def _retire(self, inst: Instance, sink: Output | None) -> concurrent.futures.Future[None]: ...

    def _prefetch(self, image: BotImage, game_id: str) -> None: ...

    def exit_of(self, inst: Instance) -> int | None: ...

    def oom_killed(self, inst: Instance) -> bool: ...


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
        launcher: Pool,
        ref: BotRef,
        image: BotImage | ImageBuildError,
        *,
        log_path: Path | None = None,
    ) -> None:
        self.launcher = launcher
        self.ref = ref
        self.label = ref.text
        self.image = image
        self.output = Output(log_path)
        self._retiring: list[concurrent.futures.Future[None]] = []
        self._cgroup: tuple[str, cgroups.CgroupPaths] | None = None
        self._current: Instance | None = None
        self._next: Instance | None = None
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
        paths = self._paths()
        return cgroups.cpu_seconds(paths) if paths is not None else None

    def _paths(self) -> cgroups.CgroupPaths | None:
        """The current container's cgroup (found once per container); None before it started."""
        inst = self._current
        container = inst.container if inst is not None else None
        if container is None:
            return None
        if self._cgroup is None or self._cgroup[0] != container.id:
            paths = cgroups.CgroupPaths.of_container(container.id)
            if paths is None:
                return None
            self._cgroup = (container.id, paths)
        return self._cgroup[1]

    def run_waits(self) -> dict[int, int] | None:
        """The run-queue wait of every thread in the current container's cgroup (runqueue.py;
        under gVisor the sentry's host threads, which run the bot's code). None where the cgroup
        or its threads' /proc files cannot be read."""
        paths = self._paths()
        tids = cgroups.procs(paths, threads=True) if paths is not None else None
        if not tids:
            return None
        waits = runqueue.thread_waits(tids)
        return waits or None

    def ready(self, timeout: float, spent: Spent | None = None) -> str:
        """Wait until the bot serves; the address to connect to (its pinned socket).

        `timeout` bounds the wait on the wall clock; `spent` (the start allowance on the CPU
        clock, read from the container's cgroup) may end it sooner. The engine's own work (creating
        and starting the container) counts on the wall clock only.

        Raises CallFailedError: timeout (no socket in time), crash or resource (the container ended
        first, with its cause). Raises
        InfraError (kind ``sandbox``), nobody's fault, when the container was not started within
        `timeout`, the engine refused to start it (its command was checked at build:
        command.py) or a warm container's fork server failed: the bot's code had not run yet."""
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
            # The fork server is the referee's code, the engine's errors are the host's, and the
            # image's own command was checked when it was built (command.py): nobody's fault.
            first = str(error).splitlines()[0] if str(error) else type(error).__name__
            raise InfraError(
                InfraKind.SANDBOX, f"{self.label}: its container did not start: {first}"
            ) from None
        delay = 0.002
        while True:
            if inst.pin is None:
                inst.pin = sockets.pin(inst.socket_path)
            # Bound is not yet listening: connecting now would cost gRPC a reconnect backoff.
            if inst.pin is not None and sockets.accepts(inst.pin):
                container = inst.container
                if container is not None:
                    self.launcher.start_seconds.add(time.monotonic() - container.started)
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


__all__ = ["DockerBot", "Pool", "exit_fault"]
