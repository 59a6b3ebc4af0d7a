"""What the organiser can do to the arena's bots and authors (``referee authors ...``), as plain
functions over the accounts (take5_arena/service/authors/) and the store: they work on the
tournament directory whether or not ``referee serve`` runs on it (the ladder drops a withdrawn
bot's planned tables at its next look at the pool).

* :func:`withdraw_bot` takes any bot out of the ladder, the organiser's own or an author's, with a
  note the author reads in ``referee my-bots``; ``ban=True`` also stops its author from submitting
  it again (:func:`unban_bot` lifts that).
* :func:`revoke_author` makes the author's token useless and withdraws every bot they hold.
* :func:`holdings` lists what each author holds, and the organiser's own (house) bots.

Authors cannot touch the organiser's bots: a name the store has and no author claimed is the
house's (:meth:`~take5_arena.service.authors.Accounts.claim_of`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from take5_arena.referee.store import Store
from take5_arena.service.authors import HOUSE, Accounts, BotClaim, check_name
from take5_arena.service.competitions import every_directory
from take5_arena.service.errors import NotFoundError


@dataclass(frozen=True)
class Holding:
    """One bot and who holds it."""

    owner: str
    """An author's name, or :data:`~take5_arena.service.authors.HOUSE`."""
    bot_name: str
    state: str
    """"active", "withdrawn" or "banned"."""
    versions: int
    note: str = ""


def withdraw_bot(
    directory: str | Path,
    accounts: Accounts,
    bot_name: str,
    reason: str,
    *,
    ban: bool = False,
    only: Path | None = None,
) -> BotClaim:
    """Withdraw ``bot_name`` (any owner's) with ``reason``; ``ban``: its author may not submit
    it again. Returns the claim as it was. A bot name is the arena's, so a ban, and a withdrawal
    without ``only``, reach every competition; ``only`` (a competition's directory, one the caller
    looked up) withdraws it from that competition alone, as an author's own withdrawal does."""
    check_name("bot", bot_name)
    claim = accounts.claim_of(bot_name)
    if claim is None:
        raise NotFoundError(f"no bot named {bot_name!r}")
    accounts.set_note(claim.bot_name, reason, ban=True if ban else None)
    reached = [only] if only is not None and not ban else every_directory(Path(directory))
    for each in reached:
        with Store(each) as store:
            store.versions.withdraw(claim.bot_name)
    return claim


def unban_bot(accounts: Accounts, bot_name: str) -> None:
    """Let the bot's author submit it again (it stays withdrawn until they do)."""
    claim = accounts.claim_of(check_name("bot", bot_name))
    if claim is None:
        raise NotFoundError(f"no bot named {bot_name!r}")
    accounts.set_note(claim.bot_name, "", ban=False)


def revoke_author(directory: str | Path, accounts: Accounts, name: str, reason: str) -> list[str]:
    """Revoke ``name``'s token and withdraw every bot they hold; the bots withdrawn now."""
    if not accounts.revoke(name):
        raise NotFoundError(f"no author {name!r}")
    withdrawn: list[str] = []
    claims = accounts.claims_of(name)
    for claim in claims:
        accounts.set_note(claim.bot_name, reason or "the author's account was revoked")
    for each in every_directory(Path(directory)):  # out of every competition's ladder
        with Store(each) as store:
            for claim in claims:
                if store.versions.withdraw(claim.bot_name) and claim.bot_name not in withdrawn:
                    withdrawn.append(claim.bot_name)
    return withdrawn


def holdings(directory: str | Path, accounts: Accounts) -> list[Holding]:
    """Every bot of the arena with its owner, state and number of versions, by owner then name."""
    claims = {c.bot_name: c for c in accounts.claims()}
    with Store(directory, readonly=True) as store:
        states = store.versions.entrant_states()
        counts: dict[str, int] = {}
        for v in store.versions.all():
            counts[v.name] = counts.get(v.name, 0) + 1
    rows = []
    for name in sorted(set(states) | set(claims)):
        claim = claims.get(name)
        banned = claim is not None and claim.banned_at is not None
        state = "banned" if banned else "active" if states.get(name) else "withdrawn"
        rows.append(
            Holding(
                claim.owner if claim is not None else HOUSE,
                name,
                state,
                counts.get(name, 0),
                claim.note if claim is not None else "",
            )
        )
    return sorted(rows, key=lambda h: (h.owner == HOUSE, h.owner, h.bot_name))


__all__ = ["Holding", "holdings", "revoke_author", "unban_bot", "withdraw_bot"]
