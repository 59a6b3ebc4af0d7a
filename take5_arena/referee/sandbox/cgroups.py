"""A bot container's cgroup, read from the host: its CPU time, its processes, its OOM kills.

The engine puts every container in a cgroup of its own, which the kernel keeps accounts for: the
CPU time of every process that ever ran in it (those that have ended included), the processes in
it now, and how many were killed for memory. The referee reads these files directly (no engine
request): the CPU clock of a bot (`cpu_seconds`), whether a container holds nothing but the
processes it should (`procs`), and whether a bot that died was killed for memory (`oom_kills`).

Both layouts are handled: cgroup v1 (one hierarchy per controller, ``/sys/fs/cgroup/cpuacct/...``)
and v2 (one unified hierarchy), with the engine's cgroupfs driver (``docker/<id>``) or systemd's
(``system.slice/docker-<id>.scope``). A container's cgroup is found by its id, or more reliably by
a process in it (`CgroupPaths.of_process`), since the path a process is in is what the kernel says
in ``/proc/PID/cgroup``.

Everything here returns None (or an empty result) rather than raising when a file cannot be read:
the container may be gone, or this may not be Linux.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

ROOT = Path("/sys/fs/cgroup")


@dataclasses.dataclass(frozen=True)
class CgroupPaths:
    """Where one container's cgroup files are: per controller on v1, one folder on v2."""

    cpu: Path | None
    """Holds the CPU account: ``cpuacct.usage`` (v1) or ``cpu.stat`` (v2)."""
    pids: Path | None
    """Holds ``cgroup.procs`` and ``tasks`` (v1 pids controller) or ``cgroup.procs`` and
    ``cgroup.threads`` (v2)."""
    memory: Path | None
    """Holds ``memory.oom_control`` (v1) or ``memory.events`` (v2)."""
    unified: bool

    @staticmethod
    def of_container(container_id: str, root: Path = ROOT) -> CgroupPaths | None:
        """The cgroup of a container by its full id, for the layouts the engine uses; None if not
        found."""
        v1 = {
            controller: [
                root / controller / "docker" / container_id,
                root / controller / "system.slice" / f"docker-{container_id}.scope",
            ]
            for controller in ("cpuacct", "pids", "memory")
        }
        v1["cpuacct"] += [root / "cpu,cpuacct" / "docker" / container_id]
        found = {c: next((p for p in paths if p.is_dir()), None) for c, paths in v1.items()}
        if any(found.values()):
            return CgroupPaths(found["cpuacct"], found["pids"], found["memory"], unified=False)
        for path in (
            root / "system.slice" / f"docker-{container_id}.scope",
            root / "docker" / container_id,
        ):
            if (path / "cgroup.procs").is_file():
                return CgroupPaths(path, path, path, unified=True)
        return None

    @staticmethod
    def of_process(pid: int, root: Path = ROOT) -> CgroupPaths | None:
        """The cgroup process `pid` is in, from ``/proc/PID/cgroup``; None if it is gone."""
        try:
            lines = Path(f"/proc/{pid}/cgroup").read_text().splitlines()
        except OSError:
            return None
        by_controller: dict[str, str] = {}
        for line in lines:
            _, controllers, rel_path = line.split(":", 2)
            for controller in controllers.split(",") if controllers else [""]:
                by_controller[controller] = rel_path
        if "pids" in by_controller or "cpuacct" in by_controller:

            def v1(controller: str, *dirs: str) -> Path | None:
                rel = by_controller.get(controller)
                if rel is None:
                    return None
                for name in dirs:
                    if (root / name).is_dir():
                        return root / name / rel.lstrip("/")
                return None

            return CgroupPaths(
                v1("cpuacct", "cpuacct", "cpu,cpuacct"),
                v1("pids", "pids"),
                v1("memory", "memory"),
                unified=False,
            )
        rel = by_controller.get("")
        if rel is None:
            return None
        path = root / rel.lstrip("/")
        return CgroupPaths(path, path, path, unified=True)


def _read(path: Path | None, name: str) -> str | None:
    if path is None:
        return None
    try:
        return (path / name).read_text()
    except OSError:
        return None


def cpu_seconds(target: str | CgroupPaths) -> float | None:
    """CPU seconds used so far by every process that has run in a container's cgroup.

    `target` is a container's full id or its `CgroupPaths`. The kernel counts processes that have
    ended too, so this is the container's whole CPU time since it started, and the difference of
    two readings is what it used in between. None when the cgroup cannot be read (the container
    is gone: read it before removing the container)."""
    paths = CgroupPaths.of_container(target) if isinstance(target, str) else target
    if paths is None:
        return None
    if not paths.unified:
        text = _read(paths.cpu, "cpuacct.usage")
        try:
            return int(text) / 1e9 if text is not None else None
        except ValueError:
            return None
    for line in (_read(paths.cpu, "cpu.stat") or "").splitlines():
        key, _, value = line.partition(" ")
        if key == "usage_usec" and value.strip().isdigit():
            return int(value) / 1e6
    return None


def procs(paths: CgroupPaths, *, threads: bool = False) -> list[int] | None:
    """The processes (or, with `threads`, every thread) in the cgroup now, by host pid."""
    name = ("tasks" if not paths.unified else "cgroup.threads") if threads else "cgroup.procs"
    text = _read(paths.pids, name)
    if text is None:
        return None
    return sorted(int(x) for x in text.split() if x.isdigit())


def memory_bytes(paths: CgroupPaths) -> int | None:
    """Memory charged to the cgroup now, page cache included (what the kernel holds for it)."""
    text = _read(paths.memory, "memory.current" if paths.unified else "memory.usage_in_bytes")
    try:
        return int(text) if text is not None else None
    except ValueError:
        return None


def oom_kills(paths: CgroupPaths) -> int | None:
    """How many processes of the cgroup the kernel has killed for memory so far."""
    text = (
        _read(paths.memory, "memory.oom_control")
        if not paths.unified
        else _read(paths.memory, "memory.events")
    )
    for line in (text or "").splitlines():
        key, _, value = line.partition(" ")
        if key == "oom_kill" and value.strip().isdigit():
            return int(value)
    return None


__all__ = ["ROOT", "CgroupPaths", "cpu_seconds", "memory_bytes", "oom_kills", "procs"]
