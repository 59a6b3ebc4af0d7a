"""The health of a running arena and of each of its competitions (``referee serve --metrics``).

One rule, read by ``/healthz`` and by ``/metrics`` (take5_arena/service/metrics.py) alike: a
competition served is unhealthy when its ladder's thread stopped, when its ladder could play (a
season open, enough bots) and recorded no game for ``--stall-seconds`` (tables that hang, every
table failing for the host's reasons), or when its store cannot be read; a competition found in
``DIR/competitions`` but not served (its run lock held by another referee, a damaged store:
take5_arena/service/serve.py tries it again) is unhealthy, with why.

What ``GET /healthz`` answers is for a load balancer: one process serves every competition, so
taking it out for one of them would take out all the others. It answers 503 only for what makes
the process unfit as a whole, as it did before there were competitions: the server not serving,
the default competition's ladder thread stopped, or its store (the arena's directory) unreadable.
Another competition's trouble, and a stalled default ladder, leave it at 200 and are said on its
line after ``ok`` (``ok, degraded: ...``: a check that expects ``ok`` still passes). The
operator's views are per competition: ``/healthz?competition=NAME`` (200 ``ok`` or 503 and why;
an empty NAME: the default) for a probe of one competition, ``/healthz/competitions`` (JSON) for
all of them.

Nothing here opens a competition or makes a path of a name it is given: a name is checked by the
competition name rule, then looked up among those the server serves or waits for (read as they
are now: the server replaces both whole), so a probe costs a read of each store served, and no
request grows what the process holds.
"""

from __future__ import annotations

import json
import urllib.parse
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from take5_arena.referee.store import Store, StoreError
from take5_arena.service import defaults
from take5_arena.service.competitions import DEFAULT, competition_problem
from take5_arena.service.servicer import Competition, ServiceParts

TEXT = "text/plain; charset=utf-8"


@dataclass(frozen=True)
class CompetitionHealth:
    """One competition's health: whether it is served, and what is wrong (None: nothing)."""

    name: str
    served: bool
    problem: str | None
    unfit: bool = False
    """Whether the problem is one that no bot causes (a ladder's thread stopped, a store that
    cannot be read): for the default competition, the whole server's 503."""

    def describe(self) -> str:
        """How an answer names it: 'the default competition' or 'competition NAME'."""
        return "the default competition" if self.name == DEFAULT else f"competition {self.name}"


def store_problem(directory: Path) -> str | None:
    """Why the store of a competition cannot be read now, or None."""
    try:
        with Store(directory, readonly=True) as store:
            store.results.recorded_count()
    except (StoreError, OSError) as error:
        return f"the store cannot be read ({error})"
    except Exception as error:  # noqa: BLE001 - sqlite3's errors: said on one line
        return f"the store cannot be read ({type(error).__name__}: {error})"
    return None


def stalled(arm: Competition, stall_seconds: float) -> bool:
    """Whether a competition's ladder could play and recorded no game for ``stall_seconds``."""
    ladder = arm.ladder
    return ladder is not None and ladder.seconds_without_game > stall_seconds


class ArenaHealth:
    """The competitions of a running arena, as they are now, and their health (the module text).

    ``waiting`` gives the competitions found but not served, each with why (the server's, replaced
    whole at each look: take5_arena/service/serve.py)."""

    def __init__(
        self,
        parts: ServiceParts,
        waiting: Callable[[], Mapping[str, str]] = dict,
        *,
        stall_seconds: float = defaults.STALL_SECONDS,
    ) -> None:
        self.parts = parts
        self.waiting = waiting
        self.stall_seconds = stall_seconds
        self.serving = False
        """Set by the server while it serves (take5_arena/service/metrics.py)."""

    @classmethod
    def of(cls, parts: ServiceParts) -> ArenaHealth:
        """The health of the arena ``parts`` are of, with the server's competitions waiting and
        its ``--stall-seconds`` (kept on the parts by take5_arena/service/serve.py): what
        /healthz, /metrics and the organiser's page read."""
        return cls(parts, parts.waiting, stall_seconds=parts.stall_seconds)

    def served(self) -> list[Competition]:
        """The competitions served, the default first, then the others by name."""
        others = self.parts.others  # one read: the server replaces it whole
        return [self.parts.competition(DEFAULT), *(others[n] for n in sorted(others))]

    def health(self, arm: Competition) -> CompetitionHealth:
        """A competition served: what is wrong with it, if anything."""
        failed = self._failed(arm)
        if failed is not None:
            return CompetitionHealth(arm.name, True, failed, unfit=True)
        return CompetitionHealth(arm.name, True, self._stall(arm))

    def _failed(self, arm: Competition) -> str | None:
        """What makes a competition unfit whatever its bots do: its ladder's thread stopped,
        its store unreadable."""
        ladder = arm.ladder
        if ladder is not None and not ladder.alive:
            return f"the ladder stopped ({ladder.error or 'no error recorded'})"
        return store_problem(arm.directory)

    def _stall(self, arm: Competition) -> str | None:
        if arm.ladder is None or not stalled(arm, self.stall_seconds):
            return None
        return (
            f"the ladder stalled: no game recorded for {arm.ladder.seconds_without_game:.0f} s "
            f"while it could play (--stall-seconds {self.stall_seconds:g})"
        )

    def competitions(self) -> list[CompetitionHealth]:
        """Every competition served (the default first) and then every one waiting, by name."""
        served = [self.health(arm) for arm in self.served()]
        known = {h.name for h in served}
        waiting = self.waiting()
        return served + [
            CompetitionHealth(name, False, f"not served: {waiting[name]}")
            for name in sorted(waiting)
            if name not in known
        ]

    # -- the answers of GET /healthz -----------------------------------------------------------

    def answer(self, path: str, query: str) -> tuple[int, str, str]:
        """(HTTP status, content type, body) of ``GET path?query`` for a /healthz path."""
        if not self.serving:
            return 503, TEXT, "unhealthy: not serving\n"
        if path == "/healthz/competitions":
            return 200, "application/json", self._json()
        try:
            asked = urllib.parse.parse_qs(query, keep_blank_values=True, max_num_fields=4)
        except ValueError:
            asked = {"competition": ["", ""]}  # too many fields: one answer for both
        names = asked.get("competition")
        if names is None:
            return self._arena()
        if len(names) != 1 or (names[0] != DEFAULT and competition_problem(names[0])):
            problem = competition_problem(names[0]) if len(names) == 1 else None
            return 400, TEXT, f"bad request: {problem or 'name one competition'}\n"
        return self._one(names[0])

    def _arena(self) -> tuple[int, str, str]:
        """The whole arena: 503 only for what makes the process unfit (the module text)."""
        found = self.competitions()
        default = found[0]
        if default.unfit:
            return 503, TEXT, _line(f"unhealthy: {default.problem}")
        degraded = [f"{h.describe()}: {h.problem}" for h in found if h.problem is not None]
        if degraded:
            return 200, TEXT, _line("ok, degraded: " + "; ".join(degraded))
        return 200, TEXT, "ok\n"

    def _one(self, name: str) -> tuple[int, str, str]:
        """One competition (looked up among those served or waiting, never opened)."""
        served = {arm.name: arm for arm in self.served()}
        waiting = self.waiting()
        if name in served:
            problem = self.health(served[name]).problem
        elif name in waiting:
            problem = f"not served: {waiting[name]}"
        else:
            return 404, TEXT, f"no competition {name!r} on this arena\n"
        if problem is None:
            return 200, TEXT, "ok\n"
        return 503, TEXT, _line(f"unhealthy: {problem}")

    def _json(self) -> str:
        doc: dict[str, Any] = {
            "competitions": [
                {
                    "name": h.name,
                    "served": h.served,
                    "healthy": h.problem is None,
                    "problem": h.problem,
                }
                for h in self.competitions()
            ]
        }
        return json.dumps(doc, indent=1) + "\n"


def _line(text: str) -> str:
    """An answer on one line (a store's error may hold several)."""
    return " ".join(text.split()) + "\n"


__all__ = ["TEXT", "ArenaHealth", "CompetitionHealth", "stalled", "store_problem"]
