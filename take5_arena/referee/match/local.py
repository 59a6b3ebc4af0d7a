"""Bots as local processes: the referee's embedded default (no Docker).

Each bot gets a private temporary folder (mode 0700) holding its Unix socket, inside one folder per
referee process that a reaper removes when the referee ends, even by SIGKILL. Each bot runs in its
own process group (so that stopping it also stops anything it started, and a Ctrl-C in the terminal
reaches only the referee, which then stops every bot itself), and dies with the referee on Linux
even if the referee is killed (PR_SET_PDEATHSIG; the kernel ties the bot to the *thread* that
started it, so start bots from a thread that outlives the match, as `Match` does from its caller's).
Its stdout and stderr go to a log file of bounded size; the last few kilobytes stay in memory for
fault reports. Its CPU clock is its process tree's CPU time, read from /proc (`tree_cpu_seconds`).
"""

from __future__ import annotations

import collections
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import IO, BinaryIO, NamedTuple

import take5

from . import runqueue
from .botlogs import READ_BYTES
from .botref import BadBotRefError, BotRef
from .handle import AddressHandle, BotHandle

SOCKET_NAME = "bot.sock"
LOG_LIMIT = 1024 * 1024
"""Bytes of a bot's output kept in its log file; the rest is read and dropped."""
TAIL_BYTES = 8192


def _parent_death_prefix() -> list[str]:
    """A command prefix that makes the kernel kill the bot when the referee dies (Linux only).

    util-linux's setpriv sets PR_SET_PDEATHSIG in the child and then execs the bot. A Python
    preexec_fn would do the same, but it makes subprocess fork() and run Python code in a child of a
    multi-threaded process, where gRPC's fork handlers abort it (SIGABRT) now and then.
    """
    if not sys.platform.startswith("linux"):
        return []
    setpriv = shutil.which("setpriv")
    return [setpriv, "--pdeathsig", "KILL", "--"] if setpriv else []


_PDEATHSIG_PREFIX = _parent_death_prefix()


_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _process_clock(pid: int) -> int:
    """Linux's id of the CPU clock of process `pid` (all its threads, ended ones included, in
    nanoseconds): MAKE_PROCESS_CPUCLOCK(pid, CPUCLOCK_SCHED) of the kernel's posix-timers.h."""
    return ((~pid) << 3) | 2


class TreeReading(NamedTuple):
    """One walk of a local bot's process tree: what its CPU clock and its run-queue waits need."""

    cpu_seconds: float
    threads: list[int]
    """Every thread of every process in the tree, by host thread id (runqueue.thread_waits)."""


def read_tree(pid: int) -> TreeReading | None:
    """The CPU seconds used by process `pid` and every process below it, and their threads: the
    one walk of a local bot's process tree (its CPU clock, `tree_cpu_seconds`, and the threads
    whose run-queue waits tell a starved bot apart, runqueue.py).

    Each process counts its own threads (the kernel's per-process CPU clock, exact to the
    nanosecond) and the children it has reaped (their ``cutime`` and ``cstime`` in /proc, in clock
    ticks); the children still alive are found through /proc/PID/task/TID/children and counted
    likewise. A process that leaves the tree (a double fork, reparented to init) is no longer
    counted: the wall-clock cap still bounds what it can do for the bot. None when `pid` is gone
    or this is not Linux.
    """
    total = 0.0
    threads: list[int] = []
    stack = [pid]
    seen: set[int] = set()
    while stack:
        current = stack.pop()
        if current in seen:
            continue
        seen.add(current)
        try:
            with open(f"/proc/{current}/stat", "rb") as file:
                stat = file.read()
        except OSError:
            if current == pid:
                return None
            continue  # ended meanwhile: its parent's cutime has it, or will
        fields = stat.rsplit(b")", 1)[-1].split()
        try:
            user, system, child_user, child_system = (int(x) for x in fields[11:15])
        except ValueError:
            return None
        try:
            own = time.clock_gettime(_process_clock(current))
        except (OSError, OverflowError):  # a zombie, or no per-process clocks: the ticks
            own = (user + system) / _TICKS
        total += own + (child_user + child_system) / _TICKS
        try:
            tasks = os.listdir(f"/proc/{current}/task")
        except OSError:
            continue
        for task in tasks:
            if not task.isdigit():
                continue
            threads.append(int(task))
            try:
                with open(f"/proc/{current}/task/{task}/children", "rb") as file:
                    stack.extend(int(child) for child in file.read().split())
            except (OSError, ValueError):
                pass
    return TreeReading(total, threads)


def tree_cpu_seconds(pid: int) -> float | None:
    """CPU seconds used by process `pid` and every process below it: the CPU clock of a local bot
    (`read_tree`); None when `pid` is gone or this is not Linux."""
    reading = read_tree(pid)
    return reading.cpu_seconds if reading is not None else None


def _can_measure() -> bool:
    return sys.platform.startswith("linux") and os.path.exists(f"/proc/{os.getpid()}/stat")


def sdk_path() -> str:
    """The folder holding the referee's own take5 package, so bots can import it uninstalled."""
    return str(Path(take5.__file__).resolve().parent.parent)


class _OutputPump(threading.Thread):
    """Drains a bot's output pipe (so the bot never blocks on it) into a bounded log and a tail."""

    def __init__(self, pipe: IO[bytes], log_path: Path, limit: int) -> None:
        super().__init__(name=f"take5-log-{log_path.name}", daemon=True)
        self.pipe = pipe
        self.log_path = log_path
        self.limit = limit
        self.tail: collections.deque[bytes] = collections.deque()
        self.tail_size = 0
        self.lock = threading.Lock()
        self.recent = bytearray()  # since the last take_output(): the bot's log of the current turn
        self.log: BinaryIO | None = None
        self.written = log_path.stat().st_size if log_path.exists() else 0
        self.eof = False

    def run(self) -> None:
        fd = self.pipe.fileno()
        os.set_blocking(fd, False)  # reads happen here and in take_output(), always under the lock
        with open(self.log_path, "ab") as log:
            self.log = log
            while True:
                select.select([fd], [], [])
                with self.lock:
                    if not self._read_available():
                        break
        self.pipe.close()

    def _read_available(self) -> bool:
        """Read what the pipe holds now (lock held); False at the end of the bot's output."""
        fd = self.pipe.fileno()
        while True:
            try:
                chunk = os.read(fd, 65536)
            except BlockingIOError:
                return True
            except OSError:
                self.eof = True
                return False
            if not chunk:
                self.eof = True
                return False
            self._keep(chunk)

    def _keep(self, chunk: bytes) -> None:
        self.tail.append(chunk)
        self.tail_size += len(chunk)
        while self.tail_size - len(self.tail[0]) >= TAIL_BYTES:
            self.tail_size -= len(self.tail.popleft())
        if len(self.recent) < READ_BYTES:
            self.recent += chunk[: READ_BYTES - len(self.recent)]
        if self.written < self.limit and self.log is not None:
            part = chunk[: self.limit - self.written]
            self.log.write(part)
            self.written += len(part)
            if self.written >= self.limit:
                self.log.write(b"\n[take5: output truncated here; the log is limited]\n")
            self.log.flush()

    def take_output(self) -> str:
        """What the bot wrote since the last call (bounded), including what the pipe holds right
        now: a bot's output for a turn is in the pipe before its answer reaches the referee."""
        with self.lock:
            if self.log is not None and not self.eof:
                self._read_available()
            data = bytes(self.recent)
            self.recent.clear()
        return data.decode("utf-8", errors="replace")

    def text(self, limit: int) -> str:
        with self.lock:
            data = b"".join(self.tail)
        return data[-limit:].decode("utf-8", errors="replace")


class LocalBot(BotHandle):
    """A bot folder run as a local process serving on a Unix socket in a private temporary
    folder."""

    def __init__(
        self,
        ref: BotRef,
        *,
        log_path: Path | None = None,
        log_limit: int = LOG_LIMIT,
        python: str = sys.executable,
        env: dict[str, str] | None = None,
    ) -> None:
        if ref.path is None:
            raise ValueError(f"{ref.text}: not a bot folder or file")
        self.ref = ref
        self.label = ref.text
        self.log_limit = log_limit
        self.python = python
        self.extra_env = dict(env or {})
        self.log_path = log_path
        self.dir: Path | None = None
        self.proc: subprocess.Popen[bytes] | None = None
        self.pump: _OutputPump | None = None
        self.starts = 0

    def command(self) -> list[str]:
        assert self.ref.path is not None
        if self.ref.kind == "python":
            return [self.python, str(self.ref.path)]
        return [str(self.ref.path)]

    def start(self) -> str:
        if self.proc is not None:
            self.stop()
        self.dir = Path(
            tempfile.mkdtemp(prefix="b", dir=_session_root())
        )  # mode 0700; short: socket paths are capped
        socket_path = self.dir / SOCKET_NAME
        address = f"unix:{socket_path}"
        log_path = self.log_path or self.dir / "output.log"
        log_path.parent.mkdir(parents=True, exist_ok=True)
        if self.starts:
            with open(log_path, "ab") as log:
                log.write(f"\n[take5: bot restarted ({self.starts})]\n".encode())
        elif log_path.exists():
            log_path.unlink()
        self.starts += 1
        env = dict(os.environ)
        env.update(self.extra_env)
        env["TAKE5_LISTEN"] = address
        env["PYTHONUNBUFFERED"] = "1"
        env["PYTHONPATH"] = os.pathsep.join(p for p in (sdk_path(), env.get("PYTHONPATH", "")) if p)
        assert self.ref.path is not None
        self.proc = subprocess.Popen(
            [*_PDEATHSIG_PREFIX, *self.command()],
            cwd=self.ref.path.parent,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        assert self.proc.stdout is not None  # stdout=PIPE
        self.pump = _OutputPump(self.proc.stdout, log_path, self.log_limit)
        self.pump.start()
        return address

    def exit_status(self) -> int | None:
        return None if self.proc is None else self.proc.poll()

    def stop(self, grace: float = 1.0) -> None:
        proc = self.proc
        if proc is None:
            return
        if proc.poll() is None:
            _signal_group(proc.pid, signal.SIGTERM)
            try:
                proc.wait(grace)
            except subprocess.TimeoutExpired:
                pass
        # Whatever is left of the group (the bot, or children it started) is killed.
        _signal_group(proc.pid, signal.SIGKILL)
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:  # pragma: no cover - unkillable (D state)
            pass
        if self.pump is not None:
            self.pump.join(2)
        if self.dir is not None:
            shutil.rmtree(
                self.dir, ignore_errors=True
            )  # the socket, and the log unless kept elsewhere
            self.dir = None
        self.proc = None

    def stderr_tail(self, limit: int = 2000) -> str:
        return self.pump.text(limit) if self.pump is not None else ""

    cpu_clock = _can_measure()

    def _tree(self) -> TreeReading | None:
        proc = self.proc
        if proc is None or not self.cpu_clock or proc.poll() is not None:
            return None
        return read_tree(proc.pid)

    def cpu_time(self) -> float | None:
        """CPU seconds of the bot's process tree (`read_tree`); None once it has ended."""
        reading = self._tree()
        return reading.cpu_seconds if reading is not None else None

    def run_waits(self) -> dict[int, int] | None:
        """The run-queue wait of every thread of the bot's process tree (runqueue.py)."""
        return self.meters()[1]

    def meters(self) -> tuple[float | None, runqueue.Waits | None]:
        """Both from one walk of the process tree (`read_tree`): a decision's first reading."""
        reading = self._tree()
        if reading is None:
            return None, None
        return reading.cpu_seconds, runqueue.thread_waits(reading.threads)

    def take_output(self) -> str:
        """What the bot wrote since the last call: its log lines of the turn just played."""
        return self.pump.take_output() if self.pump is not None else ""

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc is not None else None

    def __repr__(self) -> str:
        return f"<LocalBot {self.label} pid={self.pid}>"


_root_lock = threading.Lock()
_root: tuple[int, Path, subprocess.Popen[bytes]] | None = None  # (pid that made it, folder, reaper)


def _session_root() -> Path:
    """This referee's folder for its bots' folders, removed whenever the referee ends.

    A bot's folder is removed when the bot is stopped; but a referee killed with SIGKILL stops
    nobody. So the folders live under one root per referee process, and a reaper (``sh``, in its
    own session so that a Ctrl-C in the terminal does not reach it) waits for end of file on a pipe
    only the referee holds: when the referee exits, however it exits, the kernel closes the pipe and
    the reaper removes the root. The bots themselves die with the referee (PR_SET_PDEATHSIG).
    """
    global _root
    with _root_lock:
        if _root is not None and _root[0] == os.getpid() and _root[1].is_dir():
            return _root[1]
        root = Path(tempfile.mkdtemp(prefix=f"take5-bot-{os.getpid()}-"))
        reaper = subprocess.Popen(
            ["sh", "-c", 'cat >/dev/null; rm -rf -- "$1"', "take5-reaper", str(root)],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            close_fds=True,
            env={
                "PATH": os.environ.get("PATH", os.defpath)
            },  # nothing of the referee's environment
        )
        _root = (os.getpid(), root, reaper)
        return root


def _signal_group(pid: int, sig: int) -> None:
    try:
        os.killpg(pid, sig)  # start_new_session: the group id is the bot's pid
    except (ProcessLookupError, PermissionError):
        pass


def local_handle(ref: BotRef, *, log_path: Path | None = None) -> BotHandle:
    """The embedded default: a local process for a bot folder or file, or just its address."""
    if ref.kind == "address":
        return AddressHandle(ref.address)
    if ref.path is None:
        raise BadBotRefError(f"{ref.text!r}: not a bot folder, file or address")
    return LocalBot(ref, log_path=log_path)
