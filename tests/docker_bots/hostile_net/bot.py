"""Hostile SDK bot: on its first PickCard, tries to reach the network: DNS, TCP to loopback ports
(among them the test's listener port on the host's 127.0.0.1), UDP and, once it has checked that
its network namespace holds nothing but `lo` (so no packet can leave), a TEST-NET documentation
address. Prints `REPORT {json}` and plays on. Expected: no fault, nothing connects anywhere."""

import errno
import json
import os
import socket

from take5 import Bot, run

HOST_PORT = 47815  # tests/test_docker_match.py listens there on the host's 127.0.0.1
OUTSIDE = ("198.51.100.1", 443)  # TEST-NET-2: documentation only, never a real host


def err(exc):
    return errno.errorcode.get(getattr(exc, "errno", None) or 0, type(exc).__name__)


def tcp(host, port, family=socket.AF_INET):
    s = socket.socket(family, socket.SOCK_STREAM)
    s.settimeout(2)
    try:
        s.connect((host, port))
        return "connected"
    except OSError as exc:
        return err(exc)
    finally:
        s.close()


def probe():
    report = {"interfaces": sorted(os.listdir("/sys/class/net"))}
    with open("/proc/net/route") as fh:
        routes = fh.read().splitlines()[1:]
    report["routes"] = routes
    try:
        socket.getaddrinfo("pypi.org", 443)
        report["dns"] = "resolved"
    except OSError as exc:
        report["dns"] = f"failed: {exc}"
    connect = {}
    for port in (HOST_PORT, 22, 80, 443, 2375, 2376, 50051):
        connect[f"127.0.0.1:{port}"] = tcp("127.0.0.1", port)
    connect[f"[::1]:{HOST_PORT}"] = tcp("::1", HOST_PORT, socket.AF_INET6)
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.connect("\0/containerd-shim")  # abstract sockets are per network namespace
        connect["@/containerd-shim"] = "connected"
    except OSError as exc:
        connect["@/containerd-shim"] = err(exc)
    finally:
        s.close()
    connect["/var/run/docker.sock"] = (
        "present" if os.path.exists("/var/run/docker.sock") else "absent"
    )
    report["connect"] = connect
    report["isolated"] = report["interfaces"] == ["lo"] and not routes
    if report["isolated"]:
        report["outside"] = tcp(*OUTSIDE)
        u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        try:
            u.sendto(b"x", OUTSIDE)
            report["udp"] = "sent"
        except OSError as exc:
            report["udp"] = err(exc)
        finally:
            u.close()
    return report


class Net(Bot):
    name = "hostile_net"
    version = "1"
    done = False

    def pick_card(self, view):
        if not self.done:
            self.done = True
            print("REPORT " + json.dumps(probe()), flush=True)
        return min(view.hand)


if __name__ == "__main__":
    run(Net())
