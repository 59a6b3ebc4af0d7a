"""The competitions on the web (docs/web.md, "Everyone"): ``/competitions`` lists the arena's
Swisses and knockouts (and its season: dates, phase, the deal key's commitment),
``/competitions/PREFIX`` one of them stage by stage: its tables, who sat where, each published
game's places with a link to its replay, and once it is finished its final order. What the pages
read is what ``referee verify`` pairs again (pairings.py), from the same store: a visitor sees the
pairings that the published site lets anyone check.

Only published games show a result (a deal with rotations still to play stays unpublished,
docs/security.md, "Deals"); a stage's tables are shown from the moment the stage is stored, which
gives nothing away: they follow from the results before it."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from take5_arena.referee.tournament.errors import TournamentError
from take5_arena.referee.tournament.pairings import (
    STAGE_ID,
    Competition,
    competitions,
    final_order,
    recorded_games,
)
from take5_arena.referee.tournament.plan.adaptive import PlayedGame
from take5_arena.referee.tournament.season import season_of, utc_now
from take5_arena.web.base import Pages, Refused


class CompetitionPages(Pages):
    """``/competitions`` and ``/competitions/PREFIX``."""

    def _read_competitions(self) -> tuple[list[Competition], dict[str, PlayedGame]]:
        with self.store() as store:
            keys = {v.id: v.key for v in store.versions.all()}
            return competitions(store), recorded_games(store, keys, published_only=True)

    def competition_rows(self) -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
        """The competitions, oldest first, and the season (its dates, where it stands, its key's
        commitment; None: the arena keeps none)."""
        found, recorded = self._read_competitions()
        with self.store() as store:
            try:
                season = season_of(store)
            except TournamentError:  # unreadable: `referee season status` says why
                season = None
        shown = None
        if season is not None:
            shown = {**season.to_json(), "phase": season.phase(utc_now())}
        rows = [_summary(c, recorded) for c in sorted(found, key=lambda c: c.created_at)]
        return rows, shown

    def competition_detail(self, prefix: str) -> dict[str, Any]:
        found, recorded = self._read_competitions()
        comp = next((c for c in found if c.prefix == prefix), None)
        if comp is None:
            raise Refused(404, "no such competition")
        out = _summary(comp, recorded)
        out["stages"] = [
            {"schedule": sid, "number": n, "tables": _tables(games, recorded)}
            for n, (sid, games) in enumerate(comp.stages, 1)
        ]
        return out

    async def competitions_page(self, request: Request) -> Response:
        rows, season = await self.run(self.competition_rows)
        return self.page(
            request,
            "competitions.html",
            session=await self.session(request),
            rows=rows,
            season=season,
        )

    async def competition_page(self, request: Request) -> Response:
        prefix = str(request.path_params["prefix"])
        if not STAGE_ID.match(f"{prefix}-0001"):
            raise Refused(404, "no such competition")
        detail = await self.run(self.competition_detail, prefix)
        return self.page(request, "competition.html", session=await self.session(request), c=detail)


def _summary(comp: Competition, recorded: dict[str, PlayedGame]) -> dict[str, Any]:
    games = [g for _, stage in comp.stages for g in stage]
    return {
        "prefix": comp.prefix,
        "format": "Swiss" if comp.prefix.startswith("swiss-") else "Knockout",
        "created_at": comp.created_at,
        "entrants": list(comp.entrants),
        "stages": len(comp.stages),
        "games": len(games),
        "published": sum(1 for g in games if g.game_id in recorded),
        "final": list(final_order(comp, recorded) or []),
    }


def _tables(games: Any, recorded: dict[str, PlayedGame]) -> list[dict[str, Any]]:
    """A stage's tables in order, each with its seats and its games (places once published)."""
    tables: dict[int, dict[str, Any]] = {}
    for g in games:
        t = tables.setdefault(g.table_no, {"table": g.table_no + 1, "seats": g.seats, "games": []})
        played = recorded.get(g.game_id)
        t["games"].append(
            {
                "id": g.game_id,
                "places": list(zip(played.entrants, played.places)) if played else None,
            }
        )
    return [tables[k] for k in sorted(tables)]


__all__ = ["CompetitionPages"]
