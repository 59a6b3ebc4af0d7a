"""An author's bots in each competition of the arena (docs/web.md, "Authors"): what ``/me`` lists
per competition, and the competitions its upload form offers.

A bot's name is the arena's (its author's in every competition:
take5_arena/service/competitions.py), but its versions, games, state and standing are each
competition's own, in that competition's store: so ``/me`` shows the default competition with
every bot the author holds (withdrawn and banned ones too), then each other competition where the
author has a version, each bot linking to its page there (``/c/NAME/bot.html``) and to its faults
there (``/c/NAME/me/bots/BOT/faults``).

The author's challenges too are each competition's (take5_arena/service/challenges.py): asked
in one, played by its ladder at its table's size, stored in its store; ``/me`` lists them all,
each with its competition, and offers a form for each competition whose ladder plays.
"""

from __future__ import annotations

from typing import Any

from take5_arena.service import challenges
from take5_arena.service.authors import BotClaim
from take5_arena.service.competitions import DEFAULT
from take5_arena.service.defaults import CHALLENGES_SHOWN
from take5_arena.web.base import Pages
from take5_arena.web.public import competition_prefix

DEFAULT_LABEL = "the default competition"
"""How the pages name the default competition (the arena's directory; its name is empty)."""


def competition_label(competition: str) -> str:
    """A competition as the pages name it: its name, or :data:`DEFAULT_LABEL`."""
    return competition or DEFAULT_LABEL


class EntryPages(Pages):
    """An author's bots per competition."""

    def competition_choices(self) -> list[dict[str, str]]:
        """The competitions an upload may go into, the default first (by its displayed name),
        then the others by name."""
        names = self.parts.service.competition_names()
        return [{"name": n, "label": competition_label(n)} for n in names]

    def entries(self, claims: list[BotClaim]) -> list[dict[str, Any]]:
        """The author's bots (``claims``) in each competition: the default with every bot, each
        other competition with the bots that have a version there (none: left out)."""
        out = []
        for competition in self.parts.service.competition_names():
            bots = self._bots_in(claims, competition)
            if competition == DEFAULT or any(b["versions"] for b in bots):
                out.append(
                    {
                        "name": competition,
                        "label": competition_label(competition),
                        "prefix": competition_prefix(competition),
                        "bots": bots
                        if competition == DEFAULT
                        else [b for b in bots if b["versions"]],
                    }
                )
        return out

    def challenges_of(
        self, author: str, places: list[dict[str, Any]]
    ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """The author's newest challenges in every competition, newest first, each with its
        competition; and a challenge form for each competition whose ladder plays (``places``:
        :meth:`entries`): the author's bots that play there, the bots they may meet, and how
        many (its table's size less one)."""
        bots_of = {str(p["name"]): p["bots"] for p in places}
        asked: list[dict[str, Any]] = []
        forms = []
        for competition in self.parts.service.competition_names():
            ladder = self.parts.service.competition(competition).ladder
            with self.store(competition) as store:
                found = challenges.of_author(store, author, CHALLENGES_SHOWN)
                playing = sorted(v.name for v in store.versions.current())
            where = {
                "competition": competition,
                "label": competition_label(competition),
                "prefix": competition_prefix(competition),
            }
            asked += [{**where, "challenge": c} for c in found]
            if ladder is not None:
                bots = bots_of.get(competition, [])
                mine = [b["name"] for b in bots if b["active"] and not b["banned"]]
                opponents = ladder.settings.players - 1
                forms.append({**where, "mine": mine, "playing": playing, "opponents": opponents})
        asked.sort(key=lambda a: str(a["challenge"].created_at), reverse=True)
        return asked[:CHALLENGES_SHOWN], forms

    def _bots_in(self, claims: list[BotClaim], competition: str) -> list[dict[str, Any]]:
        """Each bot of ``claims`` as it stands in ``competition``: state, standing, versions."""
        names = {c.bot_name for c in claims}
        with self.store(competition) as store:
            states = store.versions.entrant_states()
            versions = [v for v in store.versions.all() if v.name in names]
            stats = store.results.version_stats()
        rows, _meta = self.standings_rows(competition)
        standing = {str(r["entrant"]): r for r in rows}  # a bot's latest version: its bare name
        bots = []
        for claim in claims:
            mine = [v for v in versions if v.name == claim.bot_name]
            bots.append(
                {
                    "name": claim.bot_name,
                    "active": bool(states.get(claim.bot_name)),
                    "banned": claim.banned_at is not None,
                    "note": claim.note,
                    "standing": standing.get(claim.bot_name),
                    "versions": [
                        {
                            "version": v.version,
                            "submitted_at": v.submitted_at,
                            "validation": validation_text(v.validation),
                            "games": stats[v.id].games if v.id in stats else 0,
                            "faults": stats[v.id].faults if v.id in stats else 0,
                        }
                        for v in reversed(mine)
                    ],
                }
            )
        return bots


def validation_text(validation: dict[str, Any]) -> str:
    """A version's validation as an author reads it: the smoke games' verdict, the sandbox, and the
    table it was tried at (players, variant, threshold, time per decision), not a JSON blob."""
    shape = validation.get("shape")
    parts = [str(validation.get("smoke") or "validated")]
    if validation.get("sandbox"):
        parts.append(f"in the {validation['sandbox']} sandbox")
    if isinstance(shape, dict):
        parts.append(
            f"at a table of {shape.get('players')} ({shape.get('variant')}, to "
            f"{shape.get('threshold')}, {shape.get('timeout')} s a decision)"
        )
    return ", ".join(parts)[:2000]


__all__ = [
    "DEFAULT_LABEL",
    "EntryPages",
    "competition_label",
    "validation_text",
]
