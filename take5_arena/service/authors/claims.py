"""Who holds each bot name: claims made when a version is accepted, the house's names (the store's
entrants no author claimed), look-alike names refused, the organiser's notes and bans."""

from __future__ import annotations

from take5_arena.referee.names import look_alike, name_key
from take5_arena.referee.store import Store, now
from take5_arena.service import defaults
from take5_arena.service.authors.base import AccountRow, AccountsBase
from take5_arena.service.authors.model import Author, BotClaim
from take5_arena.service.competitions import every_directory
from take5_arena.service.errors import NotFoundError, PermissionDeniedError


class BotClaims(AccountsBase):
    """Bot names and their owners (the module text)."""

    @staticmethod
    def _claim(row: AccountRow) -> BotClaim:
        return BotClaim(
            row["bot_name"], row["author"], row["created_at"], row["note"], row["banned_at"]
        )

    def claim_of(self, bot_name: str) -> BotClaim | None:
        """Who holds ``bot_name`` or a name that differs from it only in case; a name the store
        has as an entrant and no author claimed is the house's."""
        rows = self._read("SELECT * FROM arena_bots WHERE name_key = ?", (name_key(bot_name),))
        if rows:
            return self._claim(rows[0])
        house = self._house_name(bot_name)
        return BotClaim(house, None, "") if house is not None else None

    def _check_unlike(self, bot_name: str) -> None:
        """PermissionDeniedError if a new name looks like a name held already, by anyone
        (take5_arena/referee/names.py, :func:`look_alike`): ``alicebot.`` beside ``alicebot``."""
        form = look_alike(bot_name)
        held = self._entrants()
        held += [r[0] for r in self._read("SELECT bot_name FROM arena_bots")]
        for name in held:
            if name_key(name) != name_key(bot_name) and look_alike(name) == form:
                raise PermissionDeniedError(
                    f"the bot name {bot_name!r} looks like {name!r}, which is taken: choose another"
                )

    def _entrants(self) -> list[str]:
        """The entrants of every competition of the arena (take5_arena/service/competitions.py):
        a bot the organiser entered into any of them is the house's in all of them."""
        names: list[str] = []
        for directory in every_directory(self.directory):
            with Store(directory, readonly=True) as store:
                names += [n for n in store.versions.entrant_states() if n not in names]
        return names

    def _house_name(self, bot_name: str) -> str | None:
        """The entrant (of any competition) whose name has ``bot_name``'s key, if any."""
        key = name_key(bot_name)
        return next((n for n in self._entrants() if name_key(n) == key), None)

    def owner(self, bot_name: str) -> str | None:
        """The author who holds ``bot_name`` (:data:`HOUSE` for the organiser's), or None."""
        claim = self.claim_of(bot_name)
        return claim.owner if claim is not None else None

    def check_owner(self, author: Author, bot_name: str, *, must_exist: bool = True) -> BotClaim:
        """The author's claim on ``bot_name``; PermissionDeniedError if someone else holds it."""
        claim = self.claim_of(bot_name)
        if claim is None:
            if must_exist:
                raise NotFoundError(f"you have no bot named {bot_name!r}")
            return BotClaim(bot_name, author.name, "")
        if claim.author != author.name:
            whose = "the organiser" if claim.author is None else "another author"
            raise PermissionDeniedError(f"the bot name {claim.bot_name!r} belongs to {whose}")
        if claim.bot_name != bot_name and must_exist:
            raise NotFoundError(f"you have no bot named {bot_name!r} (you have {claim.bot_name!r})")
        return claim

    def claims(self) -> list[BotClaim]:
        """Every claimed bot name, by name (the house's noted ones included)."""
        return [self._claim(r) for r in self._read("SELECT * FROM arena_bots ORDER BY bot_name")]

    def bots_of(self, author: str) -> list[str]:
        return [
            r[0]
            for r in self._read(
                "SELECT bot_name FROM arena_bots WHERE author = ? ORDER BY bot_name", (author,)
            )
        ]

    def claims_of(self, author: str) -> list[BotClaim]:
        return [
            self._claim(r)
            for r in self._read(
                "SELECT * FROM arena_bots WHERE author = ? ORDER BY bot_name", (author,)
            )
        ]

    def claim(self, author: str, bot_name: str) -> None:
        """Claim ``bot_name`` for ``author`` (a version of it was accepted). PermissionDeniedError
        if another author, or the house, holds it or a name equal to it but for case."""
        with self.tx() as db:
            row = db.execute(
                "SELECT author, bot_name FROM arena_bots WHERE name_key = ?", (name_key(bot_name),)
            ).fetchone()
            if row is not None:
                if row[0] != author or row[1] != bot_name:
                    raise PermissionDeniedError(f"the bot name {row[1]!r} is taken")
                return
            house = self._house_name(bot_name)
            if house is not None and house != bot_name:
                raise PermissionDeniedError(f"the bot name {house!r} is taken")
            self._check_unlike(bot_name)
            db.execute(
                "INSERT INTO arena_bots(bot_name, name_key, author, created_at)"
                " VALUES (?, ?, ?, ?)",
                (bot_name, name_key(bot_name), author, now()),
            )

    def adopt(self, author: str, bot_name: str) -> bool:
        """Claim ``bot_name`` for ``author`` when a competition's store has it as an entrant that
        ``author`` entered (every version of it, in every competition, theirs) and nobody claims
        it: a version of theirs accepted whose claim was cut off (the arena failing between the
        store's commit and the claim, take5_arena/service/submissions.py); whether it claimed it
        now."""
        if self._read("SELECT 1 FROM arena_bots WHERE name_key = ?", (name_key(bot_name),)):
            return False
        versions = []
        for directory in every_directory(self.directory):  # a name is one in every competition
            with Store(directory, readonly=True) as store:
                versions += [v for v in store.versions.all() if v.name == bot_name]
        if not versions or any(v.author != author for v in versions):
            return False
        self.claim(author, bot_name)
        return True

    def set_note(self, bot_name: str, note: str, *, ban: bool | None = None) -> None:
        """The organiser's note on a bot (why it was withdrawn), and whether it is banned (None:
        unchanged). A house bot gets a row of its own (author NULL) to hold it."""
        claim = self.claim_of(bot_name)
        if claim is None:
            raise NotFoundError(f"no bot named {bot_name!r}")
        with self.tx() as db:
            db.execute(
                "INSERT INTO arena_bots(bot_name, name_key, author, created_at)"
                " VALUES (?, ?, NULL, ?) ON CONFLICT DO NOTHING",
                (claim.bot_name, name_key(claim.bot_name), now()),
            )
            db.execute(
                "UPDATE arena_bots SET note = ? WHERE bot_name = ?",
                (note[: defaults.DETAIL_CHARS], claim.bot_name),
            )
            if ban is not None:
                db.execute(
                    "UPDATE arena_bots SET banned_at = ? WHERE bot_name = ?",
                    (now() if ban else None, claim.bot_name),
                )

    def active_bots_of(self, author: str) -> list[str]:
        """The author's bots that play (their entrant is active) or wait for validation."""
        waiting = {
            r[0]
            for r in self._read(
                "SELECT DISTINCT bot_name FROM arena_submissions WHERE author = ?"
                " AND status IN ('received', 'validating')",
                (author,),
            )
        }
        playing = self._playing()
        return sorted({n for n in self.bots_of(author) if n in playing} | waiting)


__all__ = ["BotClaims"]
