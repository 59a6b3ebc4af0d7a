"""Durations a long-running process keeps for its metrics: a bounded number of them.

A launcher times every container start and an arena's queue every validation, and the metrics read
them at each scrape. Kept in a list they grew for the life of the process (an arena of a season
starts hundreds of thousands of containers), and a reader found the new ones by the list's length.
:class:`Timings` keeps the running count and sum (what a Prometheus summary or histogram counts,
which must never go down) and the newest :data:`KEEP` durations; a reader that remembers the count
it saw takes only the new ones with :meth:`Timings.since`.
"""

from __future__ import annotations

import threading
from collections import deque

KEEP = 4096
"""Durations kept for readers that fall behind (a scrape every few seconds reads far fewer)."""


class Timings:
    """Durations in the order they ended: the newest :data:`KEEP`, their count and their sum."""

    def __init__(self, keep: int = KEEP) -> None:
        self._recent: deque[float] = deque(maxlen=keep)
        self._lock = threading.Lock()
        self.count = 0
        """Durations added since the start."""
        self.total = 0.0
        """Their sum, in seconds."""

    def add(self, seconds: float) -> None:
        with self._lock:
            self._recent.append(seconds)
            self.count += 1
            self.total += seconds

    def since(self, seen: int) -> tuple[list[float], int]:
        """The durations added after the first ``seen`` (those still kept), and the count to
        remember for the next call."""
        with self._lock:
            new = min(max(self.count - seen, 0), len(self._recent))
            return list(self._recent)[len(self._recent) - new :], self.count

    def __len__(self) -> int:
        return self.count


__all__ = ["KEEP", "Timings"]
