"""Test bot: tries every way to leave itself a message for its next game, and looks for one.

At its start, before it serves, it looks for what an earlier game of it could have left (`find`);
in its first move of each game it leaves a message in every way it can think of (`leave`). It
reports both, with what it observes about its own start, on one ``REPORT {json}`` line of stderr
per game. It plays the lowest card. tests/test_docker_reuse.py reads the reports.

Ways tried: files in every writable place (/tmp, /dev/shm, /run/take5, $HOME), a fifo; System V
shared memory, semaphores and message queues; POSIX message queues; an abstract unix socket held by
a daemon (double fork, new session) and a child in a process group of its own, both orphaned when
the bot is killed; the kernel keyrings; the fork server's limits and scheduling (prlimit,
setpriority on pid 1); the network namespace's own counters and tables, written without
privileges and without a packet (UDP and TCP to addresses with no route, a broadcast refused:
/proc/net/snmp, snmp6, netstat, sockstat, the route and neighbour tables), read back at the next
start (`net_state`); loopback traffic (mode ``net``) and the fork server's CPU affinity (mode
``affinity``), which no reset could undo; pids and inode numbers burnt, so that the next
process's own pid or first inode would tell how many.

TAKE5_REUSE_MODE: ``leave`` (default), ``net`` or ``affinity`` (also leave), ``quiet`` (only look).
Only the standard library besides the SDK; x86_64 system call numbers.
"""

import ctypes
import json
import os
import platform
import re
import socket
import subprocess
import sys
import time

from take5 import Bot, run

MODE = os.environ.get("TAKE5_REUSE_MODE", "leave")
KEY = 0x7A4E5
NAME = b"take5-msg"
PLACES = ["/tmp", "/dev/shm", "/run/take5", os.environ.get("HOME", "/tmp")]
LIBC = ctypes.CDLL(None, use_errno=True)
NR = {
    "shmget": 29,
    "semget": 64,
    "msgget": 68,
    "mq_open": 240,
    "add_key": 248,
    "request_key": 249,
    "prlimit64": 302,
    "io_uring_setup": 425,
}
X86_64 = platform.machine() == "x86_64"


def syscall(name, *args):
    """(result, errno name) of a raw system call."""
    if not X86_64:
        return -1, "not-x86_64"
    ctypes.set_errno(0)
    res = LIBC.syscall(NR[name], *args)
    err = ctypes.get_errno()
    return res, (os.strerror(err) if res < 0 else "")


def read(path):
    try:
        with open(path) as fh:
            return fh.read()
    except OSError:
        return ""


CONSTANT = {
    "IpForwarding",
    "IpDefaultTTL",
    "TcpRtoAlgorithm",
    "TcpRtoMin",
    "TcpRtoMax",
    "TcpMaxConn",
}
"""Counters a fresh network namespace starts with (its settings, not what happened in it)."""
TABLES = ("route", "ipv6_route", "arp", "ndisc_cache", "igmp", "igmp6", "dev_mcast", "if_inet6")
UNROUTED = ((socket.AF_INET, ("192.0.2.1", 9)), (socket.AF_INET6, ("2001:db8::1", 9, 0, 0)))


def net_state():
    """The network namespace's counters (those not zero) and the size of its tables, as any
    process in it reads them: what a bot can change without privileges and read back."""
    state = {}
    for name in ("snmp", "netstat"):
        lines = read(f"/proc/net/{name}").splitlines()
        for head, values in zip(lines[0::2], lines[1::2]):
            prefix = head.split(":")[0]
            for key, value in zip(head.split()[1:], values.split()[1:]):
                if value != "0" and prefix + key not in CONSTANT:
                    state[prefix + key] = value
    for line in read("/proc/net/snmp6").splitlines():
        key, _, value = line.partition(" ")
        if value.strip() not in ("", "0"):
            state[key] = value.strip()
    for name in ("sockstat", "sockstat6"):  # "mem", "alloc", "orphan": the host's counts
        text = read(f"/proc/net/{name}")
        state[name] = " ".join(
            word
            for line in text.splitlines()
            for word in re.sub(r" (mem|memory|alloc|orphan) \d+", "", line).split()
        )
    for name in TABLES:
        state[name] = len(read(f"/proc/net/{name}").splitlines())
    return state


def write_counters(times):
    """Bump every per-namespace counter reachable without privileges, `times` times: no packet
    leaves (there is no route), so neither the loopback counters nor a socket table change."""
    for family, address in UNROUTED:
        for kind in (socket.SOCK_DGRAM, socket.SOCK_STREAM):
            for _ in range(times):
                try:
                    with socket.socket(family, kind) as sock:
                        sock.settimeout(0.2)
                        if kind == socket.SOCK_DGRAM:
                            sock.sendto(b"m", address)
                        else:
                            sock.connect(address)
                except OSError:
                    pass
    for _ in range(times):
        try:
            with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
                sock.sendto(b"m", ("255.255.255.255", 9))  # refused: no SO_BROADCAST
        except OSError:
            pass


def find():
    """What an earlier game could have left, looked for before serving."""
    found = []
    for place in PLACES:
        try:
            names = sorted(os.listdir(place))
        except OSError:
            continue
        found.extend(f"file {place}/{n}" for n in names if n not in ("bot.sock", "output.log"))
    for name, args in (("shmget", (KEY, 0, 0)), ("semget", (KEY, 0, 0)), ("msgget", (KEY, 0))):
        res, _ = syscall(name, *args)
        if res >= 0:
            found.append(f"System V {name} {KEY:#x}")
    for kind in ("shm", "sem", "msg"):
        lines = read(f"/proc/sysvipc/{kind}").splitlines()[1:]
        if lines:
            found.append(f"/proc/sysvipc/{kind}: {len(lines)}")
    res, _ = syscall("mq_open", ctypes.c_char_p(b"/" + NAME), os.O_RDONLY, 0, None)
    if res >= 0:
        found.append("POSIX message queue")
    res, _ = syscall("request_key", ctypes.c_char_p(b"user"), ctypes.c_char_p(NAME), None, 0)
    if res >= 0:
        found.append("a key in a keyring")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.settimeout(1)
        sock.connect(b"\0" + NAME)
        found.append("abstract socket: " + sock.recv(100).decode(errors="replace"))
    except OSError:
        pass
    finally:
        sock.close()
    me, parent = os.getpid(), os.getppid()
    found.extend(
        "process " + read(f"/proc/{entry}/cmdline").replace("\0", " ")[:80]
        for entry in os.listdir("/proc")
        if entry.isdigit() and int(entry) not in (1, me, parent)
    )
    found.extend(f"environment {key}" for key in os.environ if key.startswith("TAKE5_MSG"))
    found.extend(
        f"counter {key} {value}"
        for key, value in NET.items()
        if not isinstance(value, int) and not key.startswith("sockstat")
    )
    return found


def observe():
    """What a bot sees of its own start: the same in every game when nothing is carried over."""
    probe = "/tmp/.take5-inode-probe"
    with open(probe, "w") as fh:
        inode = os.fstat(fh.fileno()).st_ino
    os.unlink(probe)
    init = read("/proc/1/stat").rsplit(")", 1)[-1].split()
    lo = [
        line.split(":", 1)[1].split()[:2]
        for line in read("/proc/net/dev").splitlines()
        if line.strip().startswith("lo:")
    ]
    return {
        "pid": os.getpid(),
        "ppid": os.getppid(),
        "last_pid": read("/proc/sys/kernel/ns_last_pid").strip(),
        "loadavg_last_pid": read("/proc/loadavg").split()[-1],
        "first_inode": inode,
        "init_children_cpu": init[13:15] if len(init) > 15 else None,  # cutime, cstime of pid 1
        "init_children_faults": [init[7], init[9]] if len(init) > 9 else None,  # cminflt, cmajflt
        "loopback": lo,
        "cgroup_files": sorted(os.listdir("/sys/fs/cgroup"))
        if os.path.isdir("/sys/fs/cgroup")
        else None,
        "nofile": read("/proc/self/limits").count("\n"),
        "limits": read("/proc/self/limits"),
        "nice": os.getpriority(os.PRIO_PROCESS, 0),
        "affinity": sorted(os.sched_getaffinity(0)),
        "net": NET,
    }


DAEMON = r"""
import os, socket, sys, time
if os.fork():
    os._exit(0)
os.setsid()
if os.fork():
    os._exit(0)
with open(sys.argv[1], "w") as fh:
    fh.write(sys.argv[2])
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(b"\0take5-msg")
s.listen(4)
while True:
    c, _ = s.accept()
    c.sendall(sys.argv[2].encode())
    c.close()
"""


def leave(message):
    """Leave `message` for the next game in every way; what each attempt did."""
    did = {}
    for place in PLACES:
        try:
            with open(os.path.join(place, "take5-msg"), "w") as fh:
                fh.write(message)
            os.makedirs(os.path.join(place, ".hidden", "deeper"), exist_ok=True)
            did[f"file {place}"] = "ok"
        except OSError as error:
            did[f"file {place}"] = error.strerror
    try:
        os.mkfifo("/tmp/take5-fifo")
        did["fifo"] = "ok"
    except OSError as error:
        did["fifo"] = error.strerror
    for name, args in (
        ("shmget", (KEY, 4096, 0o1600)),  # IPC_CREAT | 0600
        ("semget", (KEY, 1, 0o1600)),
        ("msgget", (KEY, 0o1600)),
    ):
        did[name] = syscall(name, *args)[1] or "ok"
    did["mq_open"] = (
        syscall("mq_open", ctypes.c_char_p(b"/" + NAME), os.O_CREAT | os.O_RDWR, 0o600, None)[1]
        or "ok"
    )
    payload = message.encode()
    did["add_key"] = (
        syscall(
            "add_key",
            ctypes.c_char_p(b"user"),
            ctypes.c_char_p(NAME),
            ctypes.c_char_p(payload),
            len(payload),
            -4,
        )[1]
        or "ok"
    )  # KEY_SPEC_USER_KEYRING
    limit = (ctypes.c_ulong * 2)(64, 64)
    did["prlimit pid 1"] = (
        syscall("prlimit64", 1, 7, ctypes.byref(limit), None)[1] or "ok"
    )  # RLIMIT_NOFILE
    try:
        os.setpriority(os.PRIO_PROCESS, 1, 5)
        did["setpriority pid 1"] = "ok"
    except OSError as error:
        did["setpriority pid 1"] = error.strerror
    try:
        os.kill(1, 19)  # SIGSTOP: the namespace's init has no handler, so the kernel drops it
        did["SIGSTOP pid 1"] = "sent"
    except OSError as error:
        did["SIGSTOP pid 1"] = error.strerror
    if MODE == "affinity":
        try:
            os.sched_setaffinity(1, {min(os.sched_getaffinity(0))})
            did["affinity pid 1"] = "ok"
        except OSError as error:
            did["affinity pid 1"] = error.strerror
    if MODE == "net":
        try:
            server = socket.socket()
            server.bind(("127.0.0.1", 0))
            server.listen(1)
            client = socket.create_connection(server.getsockname())
            client.sendall(message.encode())
            did["loopback"] = "ok"
        except OSError as error:
            did["loopback"] = error.strerror
    try:
        subprocess.Popen(
            [sys.executable, "-c", DAEMON, "/dev/shm/take5-daemon", message],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        subprocess.Popen(
            [sys.executable, "-c", "import time; time.sleep(3600)"],
            process_group=0,
            env={**os.environ, "TAKE5_MSG": message},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        did["daemons"] = "ok"
    except OSError as error:
        did["daemons"] = error.strerror
    before = net_state()
    write_counters(1 + sum(message.encode()) % 7)
    did["net counters"] = sorted(k for k, v in net_state().items() if before.get(k) != v)
    burnt = 0
    for _ in range(50):  # pids: the next process's pid would count them
        try:
            subprocess.run(["/bin/true"], check=False)
            burnt += 1
        except OSError:
            break
    for index in range(100):  # inode numbers of the tmpfs
        path = f"/tmp/take5-ino-{index}"
        with open(path, "w"):
            pass
        os.unlink(path)
    did["pids burnt"] = burnt
    time.sleep(0.3)  # the daemon is up
    return did


NET = net_state()
FOUND = find()
SEEN = observe()
STARTED = time.process_time()


class Reuse(Bot):
    name = "hostile_reuse"
    version = "1"
    games = 0
    deals: "list[list[int]]" = []  # noqa: RUF012 - one bot per process
    current = None

    def pick_card(self, view):
        game = self.context.game_id if self.context else "?"
        if game != self.current:
            self.current = game
            self.games += 1
            deal = (
                sorted(row[0] for row in view.rows) if view.round == 1 and view.turn == 1 else None
            )
            report = {
                "game": game,
                "games_in_process": self.games,
                "deal": deal,
                "deal_seen_before": deal is not None and deal in self.deals,
                "found": FOUND if self.games == 1 else [],
                "observed": SEEN if self.games == 1 else None,
                "startup_cpu": round(STARTED, 3),
                "mode": MODE,
            }
            if deal is not None:
                self.deals.append(deal)
            if MODE != "quiet":
                report["left"] = leave(f"{game}")
            print("REPORT " + json.dumps(report), file=sys.stderr, flush=True)
        return min(view.hand)


if __name__ == "__main__":
    run(Reuse())
