"""The fork server of a warm bot container: a fresh bot process for every game, in milliseconds.

This file runs inside a bot's container, never on the host: the launcher mounts it read-only at
/opt/take5/forkserver.py and makes it the container's first process (PID 1), started as
``python3 -I -S /opt/take5/forkserver.py --site /opt/take5/site ...``. It only ever runs code that
the referee trusts: the interpreter and standard library of the arena's base image, the gRPC and
protobuf of its ``--site`` folder and the SDK the referee put there (``-I -S``: no environment
variable, no script folder, no ``site`` hook can add another path). Only images built by the arena
from a ``bot.py`` qualify (images.py labels them ``take5.forkserver=1``); nothing of the bot is
imported here.

It imports the SDK once (with it gRPC and protobuf, most of a Python bot's start-up), then, when
the referee asks, forks the bot process that runs ``/bot/bot.py`` as ``python3 /bot/bot.py``
would: `__main__`, its ``sys.argv`` and ``sys.path``, unbuffered output into
``/run/take5/output.log``. That is all it is for: a faster start (docs/benchmarks.md). It forks
one bot process in its life: the referee starts a container for each game and removes it after
(take5_arena/referee/sandbox/warm.py; the argument is in docs/security.md), so that process has
never seen a game, and neither has its container (with ``bot_memory="deals"`` the one process
plays that process's deals). What keeps the fork server itself out of the bot's reach:

* it is the namespace's init: a signal from a bot process reaches it only if it has a handler,
  and it has none (SIGCHLD and SIGPIPE are ignored, everything else left at the default), so a
  bot can neither stop nor kill it;
* it is not dumpable (PR_SET_DUMPABLE 0): no bot process may ptrace it or open its memory or file
  descriptors through /proc (the seccomp profile refuses ptrace and process_vm_* besides);
* the bot process is the child of a short-lived leader, which tells the referee the bot's pid
  and, later, its exit status itself; the bot holds no descriptor of either (all are closed
  before any of its code runs);
* it talks to the referee only: it accepts one connection on ``/run/take5/ctl.sock``, from uid 0
  (SO_PEERCRED), then closes and removes the listening socket.

The protocol, one message each (a SOCK_SEQPACKET socket): ``spawn`` -> ``spawned PID`` (from the
leader), then ``exit PID STATUS`` when that bot process ends (STATUS as from waitpid); a second
``spawn`` or anything else -> ``error ...``. End of file on the connection ends the fork server
and with it the container.
"""

from __future__ import annotations

import argparse
import ctypes
import gc
import os
import signal
import socket
import struct
import sys
import time
from collections.abc import Sequence

CTL_NAME = "ctl.sock"
OUTPUT_NAME = "output.log"
PR_SET_DUMPABLE = 4
PRELOAD = ("take5", "take5.bot", "grpc", "google.protobuf", "concurrent.futures", "runpy", "site")
"""What every bot process finds imported: the SDK with gRPC and protobuf (most of the start-up)."""


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def set_dumpable(value: int) -> None:
    if _libc().prctl(PR_SET_DUMPABLE, value, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_DUMPABLE)")


def listen(folder: str, timeout: float | None) -> socket.socket:
    """The control socket (one message per request and per answer), once the referee's tmpfs is
    mounted on `folder` (writable); `timeout` None: as long as it takes (the referee, which
    decides how long a start may take, removes the container when it gives up)."""
    path = os.path.join(folder, CTL_NAME)
    deadline = None if timeout is None else time.monotonic() + timeout
    while True:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            sock.bind(path)
            sock.listen(1)
            return sock
        except OSError:
            sock.close()
            if deadline is not None and time.monotonic() >= deadline:
                raise
            time.sleep(0.01)


def accept_referee(listener: socket.socket, path: str) -> socket.socket:
    """The one connection from uid 0 (the referee); the listening socket is closed and removed."""
    try:
        while True:
            conn, _ = listener.accept()
            creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
            _, uid, _ = struct.unpack("3i", creds)
            if uid == 0:
                return conn
            conn.close()
    finally:
        listener.close()
        os.unlink(path)


def run_bot(script: str, paths: Sequence[str], folder: str) -> None:
    """In the new bot process: become ``python3 SCRIPT`` and run it; never returns."""
    code = 1
    try:
        os.closerange(3, os.sysconf("SC_OPEN_MAX"))
        for sig in range(1, signal.NSIG):
            try:
                signal.signal(sig, signal.SIG_DFL)
            except (OSError, ValueError):
                pass
        # What a fresh interpreter sets up: Python's own signal dispositions, an unbuffered
        # output (PYTHONUNBUFFERED in the image), no bytecode written (PYTHONDONTWRITEBYTECODE).
        signal.signal(signal.SIGINT, signal.default_int_handler)
        signal.signal(signal.SIGPIPE, signal.SIG_IGN)
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        set_dumpable(1)
        os.umask(0)  # as the launcher's shell wrapper sets it for a bot in a fresh container
        null = os.open(os.devnull, os.O_RDONLY)
        out = os.open(
            os.path.join(folder, OUTPUT_NAME), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600
        )
        os.dup2(null, 0)
        os.dup2(out, 1)
        os.dup2(out, 2)
        os.close(null)
        os.close(out)
        import io
        import runpy
        import site

        streams = {
            "stdin": io.TextIOWrapper(io.FileIO(0, "r", closefd=False)),
            "stdout": io.TextIOWrapper(io.FileIO(1, "w", closefd=False), write_through=True),
            "stderr": io.TextIOWrapper(
                io.FileIO(2, "w", closefd=False), write_through=True, errors="backslashreplace"
            ),
        }
        for name, stream in streams.items():  # and sys.__stdout__ ..., as at a fresh start
            setattr(sys, name, stream)
            setattr(sys, f"__{name}__", stream)
        sys.dont_write_bytecode = True
        stdlib = [p for p in sys.path if p not in paths]
        sys.path[:] = [os.path.dirname(script), *paths, *stdlib]
        site.main()
        sys.argv[:] = [script]
        os.chdir(os.path.dirname(script))
        os.environ["PWD"] = (
            os.getcwd()
        )  # as the shell that starts a bot in a fresh container sets it
        try:
            runpy.run_path(script, run_name="__main__")
            code = 0
        except SystemExit as end:
            if end.code is None:
                code = 0
            elif isinstance(end.code, int):
                code = end.code
            else:
                print(end.code, file=sys.stderr)
                code = 1
        except BaseException:  # noqa: BLE001 - reported as python3 would, then exit 1
            import traceback

            traceback.print_exc()
            code = 1
        for text in (sys.stdout, sys.stderr):
            try:
                text.flush()
            except Exception:  # noqa: BLE001 - a closed or full output: nothing to do
                continue
    finally:
        os._exit(code & 0xFF)


def spawn(script: str, paths: Sequence[str], folder: str, ctl: socket.socket) -> None:
    """Fork a leader, which starts the bot process and tells the referee about it itself."""
    if os.fork() != 0:
        return
    try:  # the leader: trusted code only, gone once the bot has ended
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)  # so that it may wait for the bot
        bot = os.fork()
        if bot == 0:
            run_bot(script, paths, folder)
        ctl.send(f"spawned {bot}".encode())
        _, status = os.waitpid(bot, 0)
        ctl.send(f"exit {bot} {status}".encode())
    finally:
        os._exit(0)


def serve(args: argparse.Namespace) -> int:
    """Answer the referee until it hangs up: one ``spawn`` (a container serves one bot process)."""
    paths = [args.site, *args.path]
    listener = listen(args.socket_dir, args.wait)
    ctl = accept_referee(listener, os.path.join(args.socket_dir, CTL_NAME))
    ctl.send(b"ready")
    spawned = False
    while True:
        message = ctl.recv(256)
        if not message:
            return 0
        command = message.decode(errors="replace").strip()
        if command == "spawn" and not spawned:
            spawned = True
            spawn(args.script, paths, args.socket_dir, ctl)
        elif command == "spawn":
            ctl.send(b"error one bot process per container")
        else:
            ctl.send(f"error unknown command {command[:40]!r}".encode())


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="forkserver")
    parser.add_argument("--site", required=True, help="the base image's packages (gRPC, the SDK)")
    parser.add_argument("--path", action="append", default=[], help="more of the bot's sys.path")
    parser.add_argument("--script", default="/bot/bot.py")
    parser.add_argument("--socket-dir", default="/run/take5")
    parser.add_argument(
        "--wait", type=float, default=None, help="seconds to wait for the tmpfs (default: no end)"
    )
    args = parser.parse_args(argv)
    set_dumpable(0)
    for sig in range(1, signal.NSIG):
        try:
            signal.signal(sig, signal.SIG_DFL)
        except (OSError, ValueError):
            pass
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # the kernel reaps every child: see above
    signal.signal(signal.SIGPIPE, signal.SIG_IGN)
    sys.path.append(args.site)
    for name in PRELOAD:
        __import__(name)
    if len(os.listdir("/proc/self/task")) != 1:
        print(
            "forkserver: the preloaded modules started a thread; refusing to fork", file=sys.stderr
        )
        return 3
    gc.collect()
    gc.freeze()  # the children share these pages instead of copying them at their first collection
    return serve(args)


if __name__ == "__main__":
    sys.exit(main())
