"""Stand-in bot for the sandbox tests: newline-delimited JSON on the unix socket at $TAKE5_LISTEN.

Requests are JSON objects with a "cmd"; each gets one JSON line back. Connections are served one at
a time on the main thread, so the bot still answers after a fork bomb used up its pids.
Only the standard library: the tests do not depend on the SDK's gRPC runtime.
"""

import errno
import json
import os
import signal
import socket
import sys
import time

__version__ = "1.0-test"

MODE = os.environ.get("TAKE5_STANDIN_MODE", "serve")


def err_name(exc):
    return errno.errorcode.get(getattr(exc, "errno", None) or 0, type(exc).__name__)


def read(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return None


def proc_status():
    out = {}
    for line in (read("/proc/self/status") or "").splitlines():
        k, _, v = line.partition(":")
        if k in ("CapEff", "CapPrm", "CapBnd", "NoNewPrivs", "Seccomp"):
            out[k] = v.strip()
    return out


def whoami(_req):
    return {
        "uid": os.getuid(),
        "euid": os.geteuid(),
        "gid": os.getgid(),
        "groups": os.getgroups(),
        "cwd": os.getcwd(),
        "hostname": socket.gethostname(),
        "listen": os.environ.get("TAKE5_LISTEN"),
        "python": sys.version.split()[0],
        "status": proc_status(),
        "pythonpath": os.environ.get("PYTHONPATH"),
    }


def try_write(path, size=1):
    try:
        with open(path, "wb") as f:
            f.write(b"x" * size)
        os.unlink(path)
        return "ok"
    except OSError as exc:
        return err_name(exc)


def fill(dirname, cap):
    """Write into dirname until an error or `cap` bytes; return (bytes written, error)."""
    path = os.path.join(dirname, "fill.bin")
    written, error = 0, None
    chunk = b"\0" * (256 * 1024)
    try:
        with open(path, "wb") as f:
            while written < cap:
                f.write(chunk)
                f.flush()
                written += len(chunk)
    except OSError as exc:
        error = err_name(exc)
    finally:
        try:
            os.unlink(path)
        except OSError:
            pass
    return written, error


def fs(req):
    out = {"write": {}}
    for d in (
        "/",
        "/bot",
        "/etc",
        "/opt/take5/site",
        "/usr/bin",
        "/var/tmp",
        "/root",
        "/home",
        "/tmp",
        "/dev/shm",
        "/run/take5",
    ):
        out["write"][d] = try_write(os.path.join(d, "probe.txt"))
    # noexec /tmp: copy an executable there and try to run it.
    try:
        with open("/bin/true", "rb") as src, open("/tmp/t", "wb") as dst:
            dst.write(src.read())
        os.chmod("/tmp/t", 0o755)
        pid = os.fork()
        if pid == 0:
            try:
                os.execv("/tmp/t", ["/tmp/t"])
            except OSError as exc:
                os._exit(100 + (exc.errno or 0) % 100)
        _, status = os.waitpid(pid, 0)
        code = os.waitstatus_to_exitcode(status)
        out["exec_tmp"] = "ran" if code == 0 else errno.errorcode.get(code - 100, str(code))
        os.unlink("/tmp/t")
    except OSError as exc:
        out["exec_tmp"] = err_name(exc)
    out["fill_tmp"] = fill("/tmp", req.get("tmp_cap", 64 << 20))
    out["fill_run"] = fill("/run/take5", req.get("run_cap", 8 << 20))
    out["run_take5"] = sorted(os.listdir("/run/take5"))
    return out


def routes():
    rs = []
    for line in (read("/proc/net/route") or "").splitlines()[1:]:
        parts = line.split()
        if parts and parts[0] != "lo":
            rs.append(parts[0] + " " + parts[1])
    for line in (read("/proc/net/ipv6_route") or "").splitlines():
        parts = line.split()
        if parts and parts[-1] != "lo":
            rs.append(parts[-1] + " " + parts[0])
    return rs


def connect(host, port, timeout=1.0):
    fam = socket.AF_INET6 if ":" in host else socket.AF_INET
    s = socket.socket(fam, socket.SOCK_STREAM)
    s.settimeout(timeout)
    try:
        s.connect((host, port))
        return "connected"
    except TimeoutError:
        return "timeout"
    except OSError as exc:
        return err_name(exc)
    finally:
        s.close()


def net(req):
    ifaces = sorted(os.listdir("/sys/class/net")) if os.path.isdir("/sys/class/net") else []
    rs = routes()
    isolated = ifaces in ([], ["lo"]) and not rs
    out = {"interfaces": ifaces, "routes": rs, "isolated": isolated, "connect": {}, "outside": {}}
    for host, port in req.get("targets", []):
        out["connect"][f"{host}:{port}"] = connect(host, port)
    # Only once nothing but loopback exists (so no packet can leave this namespace) try an
    # outside documentation address and a DNS lookup.
    for host, port in req.get("outside", []):
        out["outside"][f"{host}:{port}"] = (
            connect(host, port) if isolated else "skipped: not isolated"
        )
    if req.get("dns"):
        if isolated:
            try:
                out["dns"] = "resolved " + str(socket.getaddrinfo(req["dns"], 443)[0][4])
            except OSError as exc:
                out["dns"] = "failed: " + type(exc).__name__
        else:
            out["dns"] = "skipped: not isolated"
    return out


def forkbomb(req):
    limit, seconds = req.get("max", 5000), req.get("seconds", 3)
    children, error = [], None
    deadline = time.monotonic() + seconds
    while len(children) < limit and time.monotonic() < deadline:
        try:
            pid = os.fork()
        except OSError as exc:
            error = err_name(exc)
            break
        if pid == 0:
            time.sleep(seconds)
            os._exit(0)
        children.append(pid)
    for pid in children:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    for pid in children:
        try:
            os.waitpid(pid, 0)
        except OSError:
            pass
    return {"forked": len(children), "error": error}


def spin(req):
    seconds = req.get("seconds", 1.5)
    t0, c0 = time.monotonic(), time.process_time()
    x = 0
    while time.monotonic() - t0 < seconds:
        x += 1
    wall, cpu = time.monotonic() - t0, time.process_time() - c0
    return {"wall": wall, "cpu": cpu, "ratio": cpu / wall}


def limits(_req):
    v1 = {
        "memory": read("/sys/fs/cgroup/memory/memory.limit_in_bytes"),
        "memsw": read("/sys/fs/cgroup/memory/memory.memsw.limit_in_bytes"),
        "pids": read("/sys/fs/cgroup/pids/pids.max"),
        "cpu_quota": read("/sys/fs/cgroup/cpu/cpu.cfs_quota_us"),
    }
    v2 = {
        "memory": read("/sys/fs/cgroup/memory.max"),
        "swap": read("/sys/fs/cgroup/memory.swap.max"),
        "pids": read("/sys/fs/cgroup/pids.max"),
        "cpu_max": read("/sys/fs/cgroup/cpu.max"),
    }

    def clean(d):
        return {k: v.strip() for k, v in d.items() if v is not None}

    return {"v1": clean(v1), "v2": clean(v2)}


def memhog(_req=None):
    hog = []
    while True:
        hog.append(bytearray(8 << 20))  # bytearray zero-fills: the pages are really touched


def flood(n_bytes):
    line = b"flood " * 20 + b"\n"
    out, err = sys.stdout.buffer, sys.stderr.buffer
    sent = 0
    while sent < n_bytes:
        out.write(line * 64)
        err.write(line * 8)
        sent += len(line) * 72
    out.flush()
    err.flush()


def fill_dir(req):
    return fill(req["dir"], req.get("cap", 64 << 20))


COMMANDS = {
    "whoami": whoami,
    "fs": fs,
    "net": net,
    "forkbomb": forkbomb,
    "spin": spin,
    "limits": limits,
    "memhog": memhog,
    "fill": fill_dir,
}


def serve():
    path = os.environ["TAKE5_LISTEN"].removeprefix("unix:")
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(path)
    srv.listen(16)
    print(f"standin bot listening on {path}", flush=True)
    while True:
        conn, _ = srv.accept()
        with conn, conn.makefile("rwb") as f:
            for line in f:
                try:
                    req = json.loads(line)
                    cmd = req.get("cmd", "ping")
                    if cmd == "ping":
                        resp = {"pong": True}
                    elif cmd == "exit":
                        os._exit(int(req.get("code", 0)))
                    else:
                        resp = COMMANDS[cmd](req)
                except Exception as exc:
                    resp = {"error": f"{type(exc).__name__}: {exc}"}
                f.write(json.dumps(resp).encode() + b"\n")
                f.flush()


if __name__ == "__main__":
    if MODE == "crash":
        print("standin: crashing on purpose before serving", file=sys.stderr, flush=True)
        sys.exit(3)
    elif MODE == "memhog":
        print("standin: eating memory before serving", flush=True)
        memhog()
    elif MODE == "flood":
        flood(int(os.environ.get("TAKE5_STANDIN_FLOOD", str(20 << 20))))
    elif MODE == "nosocket":
        time.sleep(3600)
    serve()
