"""The organiser's pages (docs/web.md, "The organiser"), signed in with the arena's organiser token
(``DIR/secret/web-organiser-token``): authors (add, revoke), and every competition of the arena,
served or found and waiting: its health, its settings, its bots (withdraw from it; ban, unban).
take5_arena/service/organiser.py does the work, as for ``referee authors``.
"""

from __future__ import annotations

import json
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from take5_arena.referee.store import Store, StoreError
from take5_arena.service import organiser
from take5_arena.service.authors import Limits
from take5_arena.service.competitions import DEFAULT
from take5_arena.service.errors import ServiceError
from take5_arena.service.health import ArenaHealth
from take5_arena.service.servicer import Competition
from take5_arena.web.base import Pages, Refused
from take5_arena.web.security import Session

ACTIONS = ("ban", "unban", "withdraw")
"""What the organiser's page does to a bot: a withdrawal reaches the competition named, a ban and
its lifting the whole arena (a bot name is the arena's: take5_arena/service/organiser.py)."""


class OrganiserPages(Pages):
    """The organiser's page and its forms."""

    def _organiser(self) -> dict[str, Any]:
        service = self.parts.service
        return {
            "authors": service.accounts.authors(),
            "health": {
                "live viewers": self.hub.viewers,
                "turns seen live": self.hub.turns,
                "signed-in sessions": len(self.sessions),
                **{k.replace("_", " "): v for k, v in service.accounts.info().items()},
            },
            "competitions": self._competitions(),
        }

    def _competitions(self) -> list[dict[str, Any]]:
        """Every competition served (the default first), then those found and not served, each
        with its health as /healthz judges it (take5_arena/service/health.py: one rule)."""
        service = self.parts.service
        arena = ArenaHealth.of(service)
        found = arena.competitions()
        served = {arm.name: arm for arm in arena.served()}
        shown: list[dict[str, Any]] = []
        for each in found:
            arm = served.get(each.name) if each.served else None
            row: dict[str, Any] = {
                "name": each.name,
                "title": "The default competition" if each.name == DEFAULT else each.name,
                "served": arm is not None,
                "problem": each.problem or "none",
                "shown": False,  # its settings, bots and running parts
            }
            if arm is not None:
                try:
                    row.update(self._competition(arm), shown=True)
                except (StoreError, OSError) as error:  # its health says so too, when it looks
                    row["problem"] = _one_line(f"the store cannot be read now ({error})")
            shown.append(row)
        return shown

    def _competition(self, arm: Competition) -> dict[str, Any]:
        """A competition's settings, bots and running parts (its ladder, its publisher)."""
        service = self.parts.service
        with Store(arm.directory, readonly=True) as store:
            settings = store.settings.get()
            games = store.results.recorded_count()
        ladder, publisher = arm.ladder, arm.publisher
        published = publisher.published_games
        return {
            "holdings": organiser.holdings(arm.directory, service.accounts),
            "settings": json.dumps(settings, indent=2, sort_keys=True, ensure_ascii=False),
            "facts": {
                "ladder": "off" if ladder is None else "running" if ladder.alive else "stopped",
                "ladder games played in this run": ladder.played if ladder else 0,
                "games in flight": ladder.games_in_flight if ladder else 0,
                "ladder error": (ladder.error if ladder else None) or "none",
                "games recorded": games,
                "standings publications": publisher.publications,
                "games in the published standings": published if published >= 0 else "none yet",
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
        for arm in ArenaHealth.of(self.parts.service).served():  # out of every competition's ladder
            if arm.ladder is not None:
                arm.ladder.wake()
        self.parts.log(f"web: organiser revoked {name}")
        return await self.organiser_page(
            request, f"Revoked {name}; withdrawn: {', '.join(withdrawn) or 'nothing'}."
        )

    async def bot_action(self, request: Request) -> Response:
        """Withdraw, ban or unban a bot; the form's ``competition`` (the default without one) is
        looked up among those served before anything changes: any other name is a refusal."""
        _, form = await self._organiser_post(request)
        name, action = request.path_params["name"], request.path_params["action"]
        if action not in ACTIONS:
            raise Refused(404, "no such action")
        service = self.parts.service
        reason = form.get("reason", "") or f"{action} by the organiser"

        def work() -> list[Competition]:
            arm = service.competition(form.get("competition", DEFAULT))
            if action == "unban":
                organiser.unban_bot(service.accounts, name)
                return []
            organiser.withdraw_bot(
                service.directory,
                service.accounts,
                name,
                reason,
                ban=action == "ban",
                only=arm.directory if action == "withdraw" else None,
            )
            return [arm] if action == "withdraw" else ArenaHealth.of(service).served()

        try:
            woken = await self.run(work)
        except ServiceError as error:
            return await self.organiser_page(request, _one_line(str(error)), status=400)
        except StoreError as error:  # a competition's store damaged: said, not a traceback
            note = _one_line(f"{action} {name} failed, a store cannot be read: {error}")
            return await self.organiser_page(request, note, status=503)
        for arm in woken:
            if arm.ladder is not None:
                arm.ladder.wake()
        where = f" in {woken[0].name}" if action == "withdraw" and woken[0].name else ""
        self.parts.log(f"web: organiser: {action} {name}{where}")
        return await self.organiser_page(request, f"{name}: {action} done{where}.")


def _one_line(text: str) -> str:
    """A refusal on one line (a name given may hold a line break)."""
    return " ".join(text.split())


__all__ = ["ACTIONS", "OrganiserPages"]
