"""Hostile SDK bot: on its first PickCard, tries to write everywhere outside its tmpfs (the root
file system, its own code, the SDK, /proc and /sys), and fills /tmp and its socket folder. Prints
`REPORT {json}` and plays on. Expected: no fault; every write outside /tmp and /dev/shm fails, and
the writable places are small."""

import errno
import json
import os

from take5 import Bot, run


def err(exc):
    return errno.errorcode.get(getattr(exc, "errno", None) or 0, type(exc).__name__)


def write(path):
    try:
        with open(path, "wb") as fh:
            fh.write(b"x")
        os.unlink(path)
        return "ok"
    except OSError as exc:
        return err(exc)


def fill(folder, cap=64 << 20):
    path = os.path.join(folder, "fill.bin")
    written, error = 0, None
    chunk = b"\0" * (256 << 10)
    try:
        with open(path, "wb") as fh:
            while written < cap:
                fh.write(chunk)
                fh.flush()
                written += len(chunk)
    except OSError as exc:
        error = err(exc)
    finally:
        try:
            os.unlink(path)
        except OSError:
            pass
    return [written, error]


def probe():
    places = [
        "/",
        "/bot",
        "/bot/bot.py",
        "/etc",
        "/etc/passwd",
        "/opt/take5/site",
        "/usr/bin",
        "/var/tmp",
        "/home",
        "/root",
        "/run",
        "/proc/sys/kernel/hostname",
        "/sys/fs/cgroup",
        "/tmp",
        "/dev/shm",
    ]
    report = {"write": {}}
    for place in places:
        target = os.path.join(place, "t5-probe") if os.path.isdir(place) else place
        report["write"][place] = write(target)
    report["fill_tmp"] = fill("/tmp")
    report["fill_run"] = fill("/run/take5")
    return report


class Writer(Bot):
    name = "hostile_write"
    version = "1"
    done = False

    def pick_card(self, view):
        if not self.done:
            self.done = True
            print("REPORT " + json.dumps(probe()), flush=True)
        return min(view.hand)


if __name__ == "__main__":
    run(Writer())
