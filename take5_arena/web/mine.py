"""An author's own pages (docs/web.md, "Authors"), signed in at ``/signin`` with their token:
their bots, each version's validation, their submissions with the verdict and the bot's output,
upload (``/me/upload``, into any competition of the arena: that competition's queue, as
``referee submit --server --competition``), withdraw (from one competition), their bots'
faults with the bot's own output per turn (``/me/bots/NAME/faults``), and their own seats' output
and analysis beside a replay (``/me/games/ID/output.json``, ``analysis.json``). Nobody else can
read any of it: each reads the author from the session and the seats from the store.

Another competition's faults, output and analysis are the same pages under its path
(``/c/COMPETITION/me/...``, as its replays are under ``/c/COMPETITION/replay.html``): they read
that competition's store only, so a game id is looked up in the competition the path names and
nowhere else, and the name passes the one rule of every competition route
(:meth:`~take5_arena.web.base.Pages.competition_name`) before any store is opened.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import hmac
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

from starlette.datastructures import UploadFile
from starlette.formparsers import MultiPartException, MultiPartParser
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response

from take5.analysis import analyse, costliest
from take5_arena.referee.archive import RECIPE
from take5_arena.referee.store import Store, StoreError
from take5_arena.referee.store.health import StoreFaultError
from take5_arena.service import defaults as service_defaults
from take5_arena.service import messages
from take5_arena.service.authors import Author, check_name
from take5_arena.service.competitions import DEFAULT
from take5_arena.service.errors import (
    LimitExceededError,
    RequestError,
    ServiceError,
    host_fault,
)
from take5_arena.service.servicer import Competition
from take5_arena.web import defaults
from take5_arena.web.base import ORGANISER, Refused, capped, client_of, size_text
from take5_arena.web.entries import EntryPages, competition_label
from take5_arena.web.public import competition_prefix
from take5_arena.web.security import csrf_ok


class AuthorPages(EntryPages):
    """Signing in and out, and an author's own pages."""

    async def signin_page(self, request: Request) -> Response:
        why = request.query_params.get("session", "")
        note = {
            "ended": "Your session has ended; sign in again.",
            "needed": "Sign in to see this page.",
        }.get(why, "")
        return self.page(
            request, "signin.html", session=await self.session(request), note=note, private=True
        )

    async def signin(self, request: Request) -> Response:
        """Sign in with a token. The token is checked before any sign-in limit is looked at (one
        HMAC: cheap, and the request itself is within the address's request rate), and only a
        wrong one spends the address's sign-in attempts, so a correct token is never refused for
        wrong ones that others sent, from its address or any other; what bounds guessing from any
        number of addresses is the secret's 256 bits (docs/security.md, "Guessing tokens")."""
        form = await self.small_form(request)
        token = form.get("token", "").strip()
        organiser_token = self.parts.organiser_token
        if organiser_token and hmac.compare_digest(token.encode(), organiser_token.encode()):
            session = await self.run(
                functools.partial(self.sessions.open, ORGANISER, organiser=True)
            )
            where = "/organiser"
        else:
            try:
                author = await self.run(self.parts.service.accounts.authenticate, token)
            except ServiceError:
                wait = self.signins.take(client_of(request))
                if wait:
                    raise Refused(429, "too many sign-in attempts; wait a minute", wait) from None
                return self.page(
                    request,
                    "signin.html",
                    403,
                    session=None,
                    private=True,
                    note="That token is not valid (or was revoked).",
                )
            session = await self.run(self.sessions.open, author.name)
            where = "/me"
            self.parts.log(f"web: {author.name} signed in from {client_of(request)}")
        response = RedirectResponse(where, 303)
        response.set_cookie(
            self.cookie,
            session.id,
            max_age=int(self.config.session_seconds),
            path="/",
            secure=self.config.tls,
            httponly=True,
            samesite="strict",
        )
        return response

    async def signout(self, request: Request) -> Response:
        session = await self.session(request)
        form = await self.small_form(request)
        await self.guard(request, session, form)
        if session is not None:
            await self.run(self.sessions.close, session.id)
        response = RedirectResponse("/", 303)
        response.delete_cookie(
            self.cookie, path="/", secure=self.config.tls, httponly=True, samesite="strict"
        )
        return response

    def _own_output(
        self, author_name: str, game_id: str, competition: str = DEFAULT
    ) -> dict[str, Any]:
        """The author's own bots' output in a published game of ``competition``, turn by turn:
        only the seats whose version its store says is a version of a bot this author holds."""
        accounts = self.parts.service.accounts
        mine = {c.bot_name for c in accounts.claims_of(accounts.author(author_name).name)}
        with self.store(competition) as store:
            try:
                record = store.records.get(game_id, published_only=True)
                seats = store.schedules.game(game_id).seats
                names = {v: store.versions.get(v).name for v in set(seats)}
            except StoreError as error:
                raise Refused(404, str(error).splitlines()[0][:200]) from None
        own = [seat for seat, version in enumerate(seats) if names[version] in mine]
        return {"id": game_id, "seats": own, "logs": messages.own_logs(record, own)}

    def _own_analysis(
        self, author_name: str, game_id: str, competition: str = DEFAULT
    ) -> dict[str, Any]:
        """Each card the author's own seats played in a published game beside the SDK search's
        card (take5.analysis), with the costliest decision of each: their seats only, as with
        their output. Kept per competition and game (two competitions may each have a game of
        one id), so a second look costs nothing."""
        own = self._own_output(author_name, game_id, competition)["seats"]
        key = (competition, game_id, tuple(own))
        if key not in self.analyses:
            with self.store(competition) as store:
                record = store.records.get(game_id, published_only=True)
            decisions = analyse(record, own, defaults.ANALYSIS_DEALS)
            worst = {s: costliest([d for d in decisions if d.seat == s]) for s in own}
            self.analyses[key] = {
                "id": game_id,
                "seats": own,
                "decisions": [
                    [d.seat, d.round, d.turn, d.played, d.best, round(d.cost, 2)] for d in decisions
                ],
                "costliest": {
                    str(s): [w.round, w.turn, w.played, w.best, round(w.cost, 2)]
                    for s, w in worst.items()
                    if w is not None
                },
            }
            while len(self.analyses) > defaults.ANALYSES_KEPT:
                self.analyses.pop(next(iter(self.analyses)))
        return self.analyses[key]

    async def _own_game(self, request: Request) -> tuple[str, str, str]:
        """The signed-in author, the competition and the game id of a ``/me/games/ID/...`` or
        ``/c/NAME/me/games/ID/...`` request (403 without an author's session, 404 for a
        competition the arena has not or an id no game has)."""
        session = await self.session(request)
        if session is None or session.organiser:
            raise Refused(403, "sign in first")
        competition = self.path_competition(request)
        game_id = request.path_params["game_id"]
        if not game_id or len(game_id) > 100:
            raise Refused(404, "no such game")
        return session.author, competition, game_id

    async def own_analysis_json(self, request: Request) -> Response:
        """A GET that changes nothing but costs CPU: counted against the author's rate, and one
        analysis at a time for the whole server."""
        author, competition, game_id = await self._own_game(request)
        wait = self.authors.take(author)
        if wait:
            raise Refused(429, "too many requests; slow down", wait)
        async with self.analysing:
            data = await self.run(self._own_analysis, author, game_id, competition)
        return JSONResponse(data, headers={"cache-control": "no-store"})

    async def own_output_json(self, request: Request) -> Response:
        author, competition, game_id = await self._own_game(request)
        data = await self.run(self._own_output, author, game_id, competition)
        return JSONResponse(data, headers={"cache-control": "no-store"})

    # -- an author's pages -------------------------------------------------------------------------

    def _mine(self, name: str) -> dict[str, Any]:
        accounts = self.parts.service.accounts
        author = accounts.author(name)
        places = self.entries(accounts.claims_of(name))
        asked, forms = self.challenges_of(name, places)
        return {
            "author": author,
            "places": places,
            "competitions": self.competition_choices(),
            "challenges": asked,
            "challenge_forms": forms,
            "submissions": accounts.submissions_of(name, defaults.SUBMISSIONS_SHOWN),
            "max_size": size_text(self._max_bytes(author)),
            "recipe": RECIPE,
        }

    def _max_bytes(self, author: Author) -> int:
        return min(
            author.limits.max_archive_bytes, self.parts.service.queue.limits.max_archive_bytes
        )

    async def me(self, request: Request, error: str = "", status: int = 200) -> Response:
        session = await self.signed_in(request)
        mine = await self.run(self._mine, session.author)
        return self.page(request, "me.html", status, session=session, error=error, **mine)

    async def upload(self, request: Request) -> Response:
        """A new version from the browser: a .tar.gz in a multipart form, received with its size
        capped as it arrives, then handed to the arena's submission queue exactly like an upload
        of ``referee submit --server`` (the same checks, the same spool, the same validation)."""
        session = await self.signed_in(request)
        await self.guard(request, session, {"csrf": session.csrf})  # the form's token: below
        author = await self.run(self.parts.service.accounts.author, session.author)
        max_bytes = self._max_bytes(author)
        length = request.headers.get("content-length")
        if length is not None and (not length.isdigit() or int(length) > max_bytes + 65536):
            raise Refused(413, f"the upload is larger than your limit of {size_text(max_bytes)}")
        if self.uploads.get(author.name, 0) >= self.parts.service.limits.uploads_per_author:
            raise Refused(429, "you have uploads in progress; wait for them")
        self.uploads[author.name] = self.uploads.get(author.name, 0) + 1
        try:
            with tempfile.TemporaryDirectory(prefix="web-upload-") as tmp:
                try:
                    form = await asyncio.wait_for(
                        self._receive(request, max_bytes + 65536),
                        self.parts.service.limits.upload_seconds,
                    )
                except asyncio.TimeoutError:
                    raise Refused(408, "the upload took too long: it is cut off") from None
                if not csrf_ok(session, form.get("csrf")):
                    raise Refused(403, "refused: the form's security token is missing or stale")
                archive = form.get("archive")
                name = form.get("bot_name")
                competition = form.get("competition", DEFAULT)
                if (
                    not isinstance(archive, UploadFile)
                    or not isinstance(name, str)
                    or not isinstance(competition, str)
                ):
                    raise Refused(400, "give the bot's name and a .tar.gz archive")
                # the gRPC upload's rule and parts (ServiceParts.competition): a name that is
                # none, or one this arena has not, is refused before a byte is kept
                arm = self.parts.service.competition(competition)
                path = Path(tmp) / "archive"
                size, sha256 = await self.run(_save, archive, path, max_bytes)
                if size == 0:
                    raise Refused(400, "the archive is empty")
                row = await self.run(self._submit, author, arm, name.strip(), path, size, sha256)
        except RequestError as error:
            return await self.me(
                request, str(error), 429 if isinstance(error, LimitExceededError) else 400
            )
        except ServiceError as error:
            return await self.me(request, str(error), 400)
        except (StoreFaultError, OSError) as error:
            reason = host_fault(error)
            if reason is None:
                raise
            self.parts.log(f"web: {author.name}'s upload refused: {error}")
            raise Refused(503, reason, 60) from None
        finally:
            self.uploads[author.name] -= 1
        self.parts.log(f"web: {author.name} uploaded {row.bot_name} ({row.archive_bytes} bytes)")
        return RedirectResponse(f"/me/submissions/{quote(row.id, safe='')}", 303)

    async def _receive(self, request: Request, limit: int) -> dict[str, Any]:
        kind = request.headers.get("content-type", "")
        if not kind.lower().startswith("multipart/form-data"):
            raise Refused(415, "refused: an upload must be posted as multipart/form-data")
        parser = MultiPartParser(request.headers, capped(request, limit), max_files=1, max_fields=4)
        try:
            form = await parser.parse()
        except MultiPartException as error:
            raise Refused(400, f"refused: {error.message}") from None
        return dict(form.items())

    def _submit(
        self, author: Author, arm: Competition, name: str, path: Path, size: int, sha256: str
    ) -> Any:
        """The upload into competition ``arm``, through its queue and spool as the gRPC upload's."""
        queue = arm.queue
        declared = queue.check(author, name, size, sha256)

        def chunks() -> Iterator[bytes]:
            with path.open("rb") as f:
                while block := f.read(service_defaults.CHUNK_BYTES):
                    yield block

        spooled = arm.spool.receive(
            chunks(), size=declared.size, sha256=declared.sha256, max_bytes=declared.max_bytes
        )
        return queue.record(author, declared, spooled)

    def _submission(self, author: str, sid: str) -> dict[str, Any]:
        try:
            row = self.parts.service.accounts.submission(sid)
        except ServiceError:
            row = None
        if row is None or row.author != author:
            raise Refused(404, "you have no such submission")
        version = None
        if row.version_id is not None:
            try:
                with self.store(row.competition) as store:
                    version = store.versions.get(row.version_id).version
            except RequestError:  # a competition this arena no longer serves
                version = None
        return {
            "id": row.id,
            "bot_name": row.bot_name,
            "status": str(row.status),
            "finished": row.status.finished,
            "detail": row.detail,
            "bot_output": row.bot_output[-service_defaults.OUTPUT_TAIL :],
            "received_at": row.received_at,
            "finished_at": row.finished_at,
            "version": version,
            "competition": row.competition,
            "prefix": competition_prefix(row.competition),
        }

    async def submission_json(self, request: Request) -> Response:
        session = await self.session(request)
        if session is None or session.organiser:
            raise Refused(403, "sign in first")
        data = await self.run(self._submission, session.author, request.path_params["sid"][:100])
        return JSONResponse(data, headers={"cache-control": "no-store"})

    async def submission_page(self, request: Request) -> Response:
        session = await self.signed_in(request)
        data = await self.run(self._submission, session.author, request.path_params["sid"][:100])
        return self.page(request, "submission.html", session=session, sub=data)

    def _faults(self, author_name: str, name: str, competition: str = DEFAULT) -> dict[str, Any]:
        """The faults of the author's bot ``name`` in ``competition``'s games (a bot name is the
        arena's: theirs in every competition), with its last refused submission."""
        accounts = self.parts.service.accounts
        author = accounts.author(author_name)
        check_name("bot", name)
        claim = accounts.claim_of(name)
        if claim is None or claim.author != author.name:
            raise Refused(404, f"you have no bot named {name!r}")
        refusal = accounts.last_refusal(name, author.name)
        with self.store(competition) as store:
            versions = {v.id: v.version for v in store.versions.all() if v.name == name}
            games = store.records.faulted_games(list(versions), service_defaults.FAULTS_SHOWN)
        reply = messages.bot_faults(name, refusal, versions, games, service_defaults.FAULTS_SHOWN)
        return {
            "name": name,
            "competition": competition,
            "label": competition_label(competition),
            "prefix": competition_prefix(competition),
            "last_refusal": reply.last_refusal_output,
            "faults": [
                {
                    "game_id": f.game_id,
                    "version": f.version,
                    "round": f.round,
                    "turn": f.turn,
                    "kind": f.kind,
                    "detail": f.detail,
                    "log_tail": f.log_tail,
                    "finished_at": f.finished_at,
                }
                for f in reply.faults
            ],
        }

    async def faults(self, request: Request) -> Response:
        """``/me/bots/BOT/faults`` and ``/c/NAME/me/bots/BOT/faults``: in that competition."""
        session = await self.signed_in(request)
        competition = self.path_competition(request)
        bot = request.path_params["bot"]
        try:
            data = await self.run(self._faults, session.author, bot, competition)
        except ServiceError as error:
            raise Refused(404, str(error)) from None
        return self.page(request, "faults.html", session=session, **data)

    async def withdraw(self, request: Request) -> Response:
        """Withdraw a bot from a competition (the form's ``competition``: the default without
        one), as ``referee withdraw --competition`` does: out of that competition's ladder only."""
        session = await self.signed_in(request)
        form = await self.small_form(request)
        await self.guard(request, session, form)
        name = request.path_params["name"]

        def work() -> Competition:
            arm = self.parts.service.competition(form.get("competition", DEFAULT))
            accounts = self.parts.service.accounts
            author = accounts.author(session.author)
            accounts.check_owner(author, check_name("bot", name))
            with Store(arm.directory) as store:
                store.versions.withdraw(name)
            return arm

        try:
            arm = await self.run(work)
        except ServiceError as error:
            return await self.me(request, str(error), 400)
        if arm.ladder is not None:
            arm.ladder.wake()
        where = f" from {arm.name}" if arm.name else ""
        self.parts.log(f"web: withdrawn: {session.author}/{name}{where}")
        return RedirectResponse("/me", 303)


def _save(upload: UploadFile, path: Path, max_bytes: int) -> tuple[int, str]:
    """Copy an uploaded file to ``path``; its size and sha256 (Refused past ``max_bytes``)."""
    digest = hashlib.sha256()
    size = 0
    upload.file.seek(0)
    with path.open("wb") as out:
        while block := upload.file.read(1 << 16):
            size += len(block)
            if size > max_bytes:
                raise Refused(
                    413, f"the archive is larger than your limit of {size_text(max_bytes)}"
                )
            digest.update(block)
            out.write(block)
    return size, digest.hexdigest()


__all__ = ["AuthorPages"]
