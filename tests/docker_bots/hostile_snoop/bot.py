"""Hostile SDK bot: on its first PickCard, reads what it can of the machine looking for the referee
and other bots' hands: every process it can see (/proc/*/cmdline, environ), its socket folder, its
environment, files with "take5" or "referee" in the places a host might leak into. It prints what
it found as one line `REPORT {json}` and plays on. Expected: no fault, and nothing found beyond its
own container."""

import glob
import json
import os

from take5 import Bot, run

NEEDLES = [os.environ.get("TAKE5_SNOOP_NEEDLE", ""), "referee", "TAKE5_TEST_MARKER", "TAKE5_SECRET"]


def read(path, limit=1 << 20):
    try:
        with open(path, "rb") as fh:
            return fh.read(limit)
    except OSError:
        return None


def snoop():
    report = {"processes": {}, "unreadable": [], "found": []}
    for d in sorted(glob.glob("/proc/[0-9]*")):
        pid = d.rsplit("/", 1)[1]
        cmd = read(f"{d}/cmdline")
        report["processes"][pid] = (
            (cmd or b"").replace(b"\0", b" ").decode(errors="replace").strip()
        )
        env = read(f"{d}/environ")
        if env is None:
            report["unreadable"].append(f"{d}/environ")
        for blob, where in ((cmd, "cmdline"), (env, "environ")):
            for needle in filter(None, NEEDLES[1:]):
                if blob and needle.encode() in blob:
                    report["found"].append(f"{d}/{where}: {needle}")
    report["env"] = sorted(os.environ)
    report["socket_dir"] = sorted(os.listdir("/run/take5"))
    places = [
        "/run",
        "/tmp",
        "/var/run",
        "/var/tmp",
        "/home",
        "/root",
        "/mnt",
        "/srv",
        "/opt",
        "/etc",
    ]
    seen = 0
    for top in places:
        for dirpath, dirnames, filenames in os.walk(top):
            dirnames[:] = [d for d in dirnames if not d.startswith("site")]  # skip the SDK's wheels
            for f in filenames:
                path = os.path.join(dirpath, f)
                seen += 1
                if any(s in path for s in ("docker.sock", "containerd", "t5-")):
                    report["found"].append(f"path {path}")
                data = read(path, 1 << 16)
                for needle in filter(None, [NEEDLES[0], "TAKE5_TEST_MARKER", "TAKE5_SECRET"]):
                    if data and needle.encode() in data:
                        report["found"].append(f"{path}: {needle}")
    report["files_read"] = seen
    report["mounts"] = [
        line.split()[4] for line in (read("/proc/self/mountinfo") or b"").decode().splitlines()
    ]
    report["hostname"] = (read("/etc/hostname") or b"").decode().strip()
    return report


class Snoop(Bot):
    name = "hostile_snoop"
    version = "1"
    done = False

    def pick_card(self, view):
        if not self.done:
            self.done = True
            print("REPORT " + json.dumps(snoop()), flush=True)
        return min(view.hand)


if __name__ == "__main__":
    run(Snoop())
