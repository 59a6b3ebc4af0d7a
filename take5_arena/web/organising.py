"""The organiser's pages (docs/web.md, "The organiser"), signed in with the arena's organiser token
(``DIR/secret/web-organiser-token``): authors (add, revoke), bots (withdraw, ban, unban), the
settings and the health of the arena. take5_arena/service/organiser.py does the work, as for
``referee authors``.
"""

from __future__ import annotations

import functools
import json
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from take5_arena.service import organiser
from take5_arena.service.authors import Limits
from take5_arena.service.errors import ServiceError
from take5_arena.web.base import Pages, Refused
from take5_arena.web.security import Session


class OrganiserPages(Pages):
    """The organiser's page and its forms."""

    def _organiser(self) -> dict[str, Any]:
        parts = self.parts
        with self.store() as store:
            settings = store.settings.get()
            games = store.results.recorded_count()
        ladder = parts.service.ladder
        return {
            "authors": parts.service.accounts.authors(),
            "holdings": organiser.holdings(parts.service.directory, parts.service.accounts),
            "settings": json.dumps(settings, indent=2, sort_keys=True, ensure_ascii=False),
            "health": {
                "ladder": "off" if ladder is None else "running" if ladder.alive else "stopped",
                "ladder games played in this run": ladder.played if ladder else 0,
                "games in flight": ladder.games_in_flight if ladder else 0,
                "ladder error": (ladder.error if ladder else None) or "none",
                "games recorded": games,
                "standings publications": parts.service.publisher.publications,
                "games in the published standings": (
                    published
                    if (published := parts.service.publisher.published_games) >= 0
                    else "none yet"
                ),
                "live viewers": self.hub.viewers,
                "turns seen live": self.hub.turns,
                "signed-in sessions": len(self.sessions),
                **{k.replace("_", " "): v for k, v in parts.service.accounts.info().items()},
            },
        }

    async def organiser_page(
        self, request: Request, note: str = "", token: str = "", status: int = 200
    ) -> Response:
        session = await self.signed_in(request, organiser=True)
        data = await self.run(self._organiser)
        return self.page(
            request, "organiser.html", status, session=session, note=note, token=token, **data
        )

    async def _organiser_post(self, request: Request) -> tuple[Session, dict[str, str]]:
        session = await self.signed_in(request, organiser=True)
        form = await self.small_form(request)
        await self.guard(request, session, form)
        return session, form

    async def add_author(self, request: Request) -> Response:
        _, form = await self._organiser_post(request)
        name = form.get("name", "").strip()
        try:
            token = await self.run(self.parts.service.accounts.add_author, name, Limits())
        except ServiceError as error:
            return await self.organiser_page(request, str(error), status=400)
        self.parts.log(f"web: organiser added author {name}")
        return await self.organiser_page(
            request, f"Author {name} added. Their token (shown once):", token
        )

    async def revoke(self, request: Request) -> Response:
        _, form = await self._organiser_post(request)
        name = request.path_params["name"]
        try:
            withdrawn = await self.run(
                organiser.revoke_author,
                self.parts.service.directory,
                self.parts.service.accounts,
                name,
                form.get("reason", ""),
            )
        except ServiceError as error:
            return await self.organiser_page(request, str(error), status=400)
        await self.run(self.sessions.close_author, name)  # (revoke_author ended them too)
        if self.parts.service.ladder is not None:
            self.parts.service.ladder.wake()
        self.parts.log(f"web: organiser revoked {name}")
        return await self.organiser_page(
            request, f"Revoked {name}; withdrawn: {', '.join(withdrawn) or 'nothing'}."
        )

    async def bot_action(self, request: Request) -> Response:
        _, form = await self._organiser_post(request)
        name, action = request.path_params["name"], request.path_params["action"]
        parts = self.parts
        try:
            if action in ("withdraw", "ban"):
                await self.run(
                    functools.partial(
                        organiser.withdraw_bot,
                        parts.service.directory,
                        parts.service.accounts,
                        name,
                        form.get("reason", "") or f"{action} by the organiser",
                        ban=action == "ban",
                    )
                )
            elif action == "unban":
                await self.run(organiser.unban_bot, parts.service.accounts, name)
            else:
                raise Refused(404, "no such action")
        except ServiceError as error:
            return await self.organiser_page(request, str(error), status=400)
        if parts.service.ladder is not None:
            parts.service.ladder.wake()
        parts.log(f"web: organiser: {action} {name}")
        return await self.organiser_page(request, f"{name}: {action} done.")


__all__ = ["OrganiserPages"]
