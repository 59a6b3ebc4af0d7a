"""An author's challenges on the web (docs/web.md, "Authors"; take5_arena/service/challenges.py):
the form on ``/me`` (one of their bots, the opponents it is to meet), ``POST /me/challenges``
(the origin, the session's CSRF token and the author's request rate first, like every form; then
the challenge's own checks and the author's challenge limits), and each challenge's page
(``/me/challenges/ID``: its table, its games as they are played, each a link to its replay, all
marked unrated). A challenge is its author's alone: another author's id is "no such challenge".

Each competition of the arena has its own challenges: the form names its competition (a hidden
``competition`` field, as the upload and withdraw forms do), the challenge is checked against that
competition's bots and table size, played by its ladder and stored in its store, and its page is
under the competition's path (``/c/NAME/me/challenges/ID``: ids are each competition's). The
limits are the account's across all of them (take5_arena/service/challenges.py, :class:`Quota`).
"""

from __future__ import annotations

import asyncio
from typing import Any
from urllib.parse import quote

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from take5_arena.service import challenges
from take5_arena.service.competitions import DEFAULT
from take5_arena.service.defaults import CHALLENGE_STORED_SECONDS
from take5_arena.service.errors import LimitExceededError, RequestError, ServiceError
from take5_arena.web.base import Refused
from take5_arena.web.mine import AuthorPages
from take5_arena.web.public import competition_prefix


class ChallengePages(AuthorPages):
    """Asking for a challenge, and a challenge's page (a refusal is shown on ``/me``, with the
    form)."""

    async def ask_challenge(self, request: Request) -> Response:
        session = await self.signed_in(request)
        form = await self.small_form(request)
        await self.guard(request, session, form)
        bot = form.get("bot", "").strip()
        opponents = [
            form[key].strip()
            for key in sorted(form)
            if key.startswith("opponent") and form[key].strip()
        ]
        try:
            # the upload's rule (ServiceParts.competition): a name that is none, or one this
            # arena has not, is refused in one line before any store is opened
            arm = self.parts.service.competition(form.get("competition", DEFAULT))
            ladder = arm.ladder
            if ladder is None:
                where = f"competition {arm.name}" if arm.name else "this arena"
                raise Refused(409, f"{where} plays no games now: no challenges")
            seats = await self.run(
                challenges.seats_in,
                arm.directory,
                self.parts.service.accounts,
                session.author,
                bot,
                opponents,
                ladder.settings.players,
            )
            asked = ladder.challenge(session.author, seats)
            try:
                cid = await asyncio.wait_for(asyncio.wrap_future(asked), CHALLENGE_STORED_SECONDS)
            except asyncio.TimeoutError:
                asked.cancel()
                raise Refused(503, "the arena is busy; ask again in a minute") from None
        except RequestError as error:
            status = 429 if isinstance(error, LimitExceededError) else 400
            return await self.me(request, str(error), status)
        except ServiceError as error:
            return await self.me(request, str(error), 400)
        where = f" in {arm.name}" if arm.name else ""
        self.parts.log(f"web: {session.author} asked for {cid}{where}: {', '.join(seats)}")
        prefix = competition_prefix(arm.name)
        return RedirectResponse(f"{prefix}/me/challenges/{quote(cid, safe='')}", 303)

    def _challenge(self, author: str, cid: str, competition: str = DEFAULT) -> dict[str, Any]:
        with self.store(competition) as store:
            try:
                found = challenges.get(store, author, cid)
            except ServiceError:
                raise Refused(404, "you have no such challenge") from None
            finished = store.records.finished_at([g.game_id for g in found.games])
        return {
            "id": found.id,
            "competition": competition,
            "prefix": competition_prefix(competition),
            "created_at": found.created_at,
            "state": found.state,
            "seats": found.seats,
            "games": [
                {"id": g.game_id, "status": g.status, "finished_at": finished.get(g.game_id, "")}
                for g in found.games
            ],
        }

    async def challenge_page(self, request: Request) -> Response:
        """``/me/challenges/ID`` and ``/c/NAME/me/challenges/ID``: in that competition."""
        session = await self.signed_in(request)
        competition = self.path_competition(request)
        cid = request.path_params["cid"][:100]
        data = await self.run(self._challenge, session.author, cid, competition)
        return self.page(
            request, "challenge.html", session=session, challenge=data, prefix=data["prefix"]
        )


__all__ = ["ChallengePages"]
