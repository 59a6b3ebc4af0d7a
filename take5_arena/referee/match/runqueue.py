"""How long a bot's threads waited for a CPU: the host's share of a decision's wall-clock time.

Under the CPU clock a decision has a wall-clock cap (a multiple of its limit) for a bot that sleeps
or blocks. A bot starved by the host's own load (other games, other containers, a busy machine)
also passes that cap while it computes; that must not be its fault (docs/faults.md, "A host that
fails is never a bot's fault"). The kernel tells the two apart: each thread's
``/proc/TID/schedstat`` holds, as its second field, the nanoseconds the thread has waited
runnable on a run queue (ready to run, no CPU given). A thread that sleeps does not wait there.

The referee reads the waits of every thread of the bot (a local bot's process tree, found by the
same walk as its CPU clock, local.read_tree; a container's cgroup: under gVisor the sentry's host
threads, which run the bot's code) when a decision is asked and again when it gives up at the
wall-clock cap; a decision's *host wait* is the longest any one
thread waited in between. The longest, not the sum: one thread's wait can never exceed the wall
time, so "wall minus wait" stays a time the bot itself spent, and a bot cannot add waits up by
starting threads. Where the files cannot be read (no /proc, another kernel) there is no reading
(None) and a wall-cap stop stays the bot's timeout, as before.
"""

from __future__ import annotations

from collections.abc import Iterable

Waits = dict[int, int]
"""Run-queue wait so far of each thread (by host thread id), in nanoseconds."""


def thread_waits(tids: Iterable[int]) -> Waits:
    """The run-queue wait of each of these threads that can be read (a thread gone is left out)."""
    out: Waits = {}
    for tid in tids:
        try:
            with open(f"/proc/{tid}/schedstat", "rb") as file:
                fields = file.read().split()
            out[tid] = int(fields[1])
        except (OSError, IndexError, ValueError):
            continue
    return out


def longest_wait(before: Waits, after: Waits) -> float:
    """Seconds: the longest run-queue wait of one thread between two readings. A thread that
    started in between counts from nothing (all its wait is within); one whose id was reused reads
    lower than before and counts nothing."""
    longest = 0
    for tid, waited in after.items():
        longest = max(longest, waited - before.get(tid, 0))
    return longest / 1e9


def cpu_pressure() -> float | None:
    """The host's share of time in the last 10 s in which some runnable task waited for a CPU
    (``/proc/pressure/cpu``, "some avg10", a percentage): for the detail of a host failure only,
    never the rule (it is the whole machine's, not the bot's). None where it cannot be read."""
    try:
        with open("/proc/pressure/cpu", encoding="ascii") as file:
            first = file.readline().split()
    except OSError:
        return None
    for item in first[1:]:
        key, _, value = item.partition("=")
        if key == "avg10":
            try:
                return float(value)
            except ValueError:
                return None
    return None


__all__ = ["Waits", "cpu_pressure", "longest_wait", "thread_waits"]
