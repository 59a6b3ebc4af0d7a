"""The standings as text: a Markdown table (standings.md) and a fixed-width table for the
terminal."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from take5.text import inert

from .board import Row, Standings, describe_interval, describe_los


def fmt_wins(wins: float) -> str:
    """Wins with shared first places as fractions of a win: 12, 12.5, 12.33."""
    text = f"{wins:.2f}".rstrip("0").rstrip(".")
    return text or "0"


def fmt_faults(row: Row) -> str:
    return ", ".join(f"{kind} {count}" for kind, count in row.faults) if row.faults else "-"


def fmt_interval(row: Row) -> str:
    return row.interval_text


def fmt_los(standings: Standings, i: int) -> str:
    """Likelihood that row i is stronger than row i + 1 (the next one down)."""
    value = standings.rows[i].los_next
    return "-" if value is None else f"{100 * value:.0f}%"


HEADERS = (
    "#",
    "Bot",
    "Rating",
    "95% interval",
    "Rank range",
    "LOS next",
    "Games",
    "Wins",
    "Win %",
    "Mean penalty",
    "Mean place",
    "Faults",
    "Online Elo",
)
RIGHT = {0, 2, 5, 6, 7, 8, 9, 10, 12}


def table_cells(standings: Standings) -> list[list[str]]:
    """One list of cell texts per row, in the order of HEADERS."""
    cells = []
    many_components = len({r.component for r in standings.rows}) > 1
    for i, r in enumerate(standings.rows):
        name = r.entrant + (f" (pool {r.component + 1})" if many_components else "")
        cells.append(
            [
                str(r.rank),
                name,
                f"{r.rating:.0f}",
                fmt_interval(r),
                r.rank_range_text,
                fmt_los(standings, i),
                str(r.games),
                fmt_wins(r.wins),
                f"{100 * r.wins / r.games:.1f}" if r.games else "-",
                f"{r.mean_penalty:.1f}",
                f"{r.mean_place:.2f}",
                fmt_faults(r),
                f"{r.online_elo:.0f}",
            ]
        )
    return cells


def columns(
    standings: Standings, owners: Mapping[str, str] | None = None
) -> tuple[list[str], list[list[str]], set[int]]:
    """The table's headers, cells and right-aligned columns: :data:`HEADERS` and
    :func:`table_cells`, with an "Author" column after the bot when any bot has one (``owners``:
    bot -> its author as the organiser knows it, shown inert; a bot without one shows "-")."""
    headers, cells, right = list(HEADERS), table_cells(standings), set(RIGHT)
    if owners and any(r.entrant in owners for r in standings.rows):
        headers.insert(2, "Author")
        for row, r in zip(cells, standings.rows):
            row.insert(2, inert(owners.get(r.entrant, "-"), keep_lines=False))
        right = {i + (i >= 2) for i in RIGHT}
    return headers, cells, right


_PLAIN = re.compile(r"[0-9 .%-]*")
_PUNCTUATION = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")


def md_escape(text: str) -> str:
    """Bot-controlled text as literal Markdown inline text, one line.

    Control and format characters (newlines, bidi overrides, zero-width characters) first become
    visible escapes (take5/text.py), so a name can never start a new line or block nor reorder what
    follows it; then every ASCII punctuation character gets a backslash (CommonMark lets any of them
    be escaped, so none can open a link, an image, code, emphasis, raw HTML, an entity or a table
    cell), the backslashes of those escapes included.
    """
    return "".join("\\" + ch if ch in _PUNCTUATION else ch for ch in inert(text, keep_lines=False))


def standings_markdown(
    standings: Standings,
    *,
    title: str = "Standings",
    generated_at: str | None = None,
    unrated: Sequence[tuple[str, str]] = (),
    owners: Mapping[str, str] | None = None,
) -> str:
    """standings.md: heading, one-line summary, the table (with each bot's author when ``owners``
    names any: :func:`columns`), how to read it, and the games that are not rated (``unrated``:
    game id and reason) so none is left out silently."""
    lines = [f"# {md_escape(title)}", ""]
    summary = f"{standings.games} games, {len(standings.rows)} bots"
    if generated_at:
        summary += f", published {md_escape(generated_at)}"
    lines += [summary + ".", ""]
    if standings.rows:
        headers, table, right = columns(standings, owners)
        lines.append("| " + " | ".join(headers) + " |")
        lines.append(
            "|" + "|".join("---:" if i in right else "---" for i in range(len(headers))) + "|"
        )
        for cells in table:
            # the bot's name (and anything else not made of digits) is escaped; numbers stay legible
            lines.append(
                "| " + " | ".join(c if _PLAIN.fullmatch(c) else md_escape(c) for c in cells) + " |"
            )
        lines.append("")
    notes = [
        (
            "Rating: Bradley-Terry maximum likelihood over every pairwise result of every game "
            "(lower place wins, equal places draw), on the Elo scale with the pool mean at 1500."
        ),
    ]
    if standings.bootstrap:
        notes.append(
            "Interval: "
            + describe_interval(standings.interval_method, standings.bootstrap, standings.seed)
            + "."
        )
    if standings.bootstrap:
        notes.append(
            "Rank range: the places within its pool that the LOS at 95% leave open to the bot "
            '(1 + the bots surely stronger, to the pool size less the bots surely weaker); "-" '
            "without an interval."
        )
    if standings.los:
        notes.append(
            "LOS next: likelihood of superiority over the bot on the next line ("
            + describe_los(standings.interval_method)
            + ")."
        )
    notes += [
        (
            "Wins: a first place shared by k bots counts 1/k. Mean penalty: bull heads per game "
            "(lower is better). Mean place: 1 is best."
        ),
        (
            f"Online Elo: classic sequential Elo (K={standings.k:g}), depends on the order of the "
            "games; shown for familiarity only."
        ),
    ]
    if len({r.component for r in standings.rows}) > 1:
        notes.append(
            "Pools: groups of bots that never met, directly or through others; ratings of "
            "different pools are not comparable."
        )
    lines += [f"- {n}" for n in notes]
    if unrated:
        lines += ["", f"{len(unrated)} game(s) with a record are not rated:", ""]
        lines += [f"- {md_escape(gid)}: {md_escape(why)}" for gid, why in unrated[:1000]]
        if len(unrated) > 1000:
            lines.append(f"- and {len(unrated) - 1000} more")
    return "\n".join(lines) + "\n"


def standings_text(standings: Standings, owners: Mapping[str, str] | None = None) -> str:
    """A fixed-width table for the terminal (``referee standings``), with each bot's author when
    ``owners`` names any (:func:`columns`)."""
    if not standings.rows:
        return "no rated games\n"
    headers, cells, right = columns(standings, owners)
    rows = [headers, *cells]
    widths = [max(len(r[i]) for r in rows) for i in range(len(headers))]

    def line(cells: list[str]) -> str:
        return "  ".join(
            c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(cells, widths))
        ).rstrip()

    out = [line(rows[0]), line(["-" * w for w in widths])] + [line(r) for r in rows[1:]]
    out.append("")
    out.append(
        f"{standings.games} games. Rating: Bradley-Terry fit on the Elo scale, pool mean 1500"
        + (
            f"; 95% interval: {standings.interval_method} (docs/organisers/standings.md, Ratings)"
            if standings.bootstrap
            else ""
        )
        + ". LOS next: chance of being stronger than the next bot down."
    )
    return "\n".join(out) + "\n"
