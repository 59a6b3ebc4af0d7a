"""Divisions (take5_arena/referee/tournament/plan/divisions.py): promotion and relegation at a
season's end, checked by hypothesis on any divisions and rules: everyone placed once, exactly the
top of each lower division up and the bottom of each upper one down, nobody moved two divisions,
sizes kept when as many go up as come down; the edge cases are one clear error."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from take5_arena.referee.tournament.plan.divisions import Boundary, Move, season_end, split
from take5_arena.referee.tournament.plan.schedule import ScheduleError


@st.composite
def leagues(draw: st.DrawFn) -> tuple[list[list[str]], list[Boundary], list[str], list[str]]:
    """Divisions big enough for their rules, a rule per boundary, some withdrawn, some new."""
    n = draw(st.integers(1, 5))
    rules = [Boundary(draw(st.integers(0, 3)), draw(st.integers(0, 3))) for _ in range(n - 1)]
    divisions, k = [], 0
    for d in range(n):
        promotes = rules[d - 1].promoted if d else 0
        relegates = rules[d].relegated if d < n - 1 else 0
        size = draw(st.integers(0, 4)) + promotes + relegates + 1
        divisions.append([f"b{k + i}" for i in range(size)])
        k += size
    # withdrawn: only from the middle of a division, so that the rules still fit
    withdrawn = [d[len(d) // 2] for d in divisions if len(d) > 6 and draw(st.booleans())]
    newcomers = [f"new{i}" for i in range(draw(st.integers(0, 3)))]
    return divisions, rules, withdrawn, newcomers


@settings(max_examples=300, deadline=None)
@given(leagues())
def test_promotion_and_relegation_follow_the_rules(
    f: tuple[list[list[str]], list[Boundary], list[str], list[str]],
) -> None:
    divisions, rules, withdrawn, newcomers = f
    try:
        end = season_end(divisions, rules, withdrawn=withdrawn, newcomers=newcomers)
    except ScheduleError as error:  # a withdrawal left a division too small: said, not done
        assert "too few" in str(error) or "fewer than" in str(error)
        return
    rows = [[e for e in d if e not in withdrawn] for d in divisions]
    # everyone who stays in the league is placed once; the withdrawn are gone; newcomers at the end
    placed = Counter(e for d in end.divisions for e in d)
    assert set(placed.values()) <= {1}
    assert set(placed) == {e for r in rows for e in r} | set(newcomers)
    assert list(end.divisions[-1][len(end.divisions[-1]) - len(newcomers) :]) == newcomers
    where = {e: d + 1 for d, r in enumerate(rows) for e in r}
    now = {e: d + 1 for d, r in enumerate(end.divisions) for e in r}
    for d, b in enumerate(rules):
        # exactly the top of the lower division up, the bottom of the upper down
        went_up = [e for e in rows[d + 1] if now[e] == d + 1]
        went_down = [e for e in rows[d] if now[e] == d + 2]
        assert went_up == rows[d + 1][: b.promoted]
        assert went_down == (rows[d][-b.relegated :] if b.relegated else [])
    assert all(abs(now[e] - where[e]) <= 1 for e in where)  # nobody moves two divisions
    assert {(m.entrant, m.start, m.end) for m in end.moves} == {
        (e, where[e], now[e]) for e in where if now[e] != where[e]
    }
    # within a division who moved up finished above everyone who stayed, who finished above
    # everyone who went down
    for row in rows:
        order = [now[e] for e in row]
        assert order == sorted(order)
    # the next season's seeding: relegated from above, stayers, promoted from below, in order
    for new in end.divisions:
        came = [where.get(e, len(rows) + 1) for e in new]
        assert came == sorted(came)
    if all(b.promoted == b.relegated for b in rules) and not withdrawn:
        sizes = [len(d) for d in end.divisions]
        assert sizes[:-1] == [len(d) for d in divisions][:-1]
        assert sizes[-1] == len(divisions[-1]) + len(newcomers)


@settings(max_examples=100, deadline=None)
@given(leagues())
def test_no_rule_moves_nobody(
    f: tuple[list[list[str]], list[Boundary], list[str], list[str]],
) -> None:
    divisions = f[0]
    end = season_end(divisions, Boundary(0, 0))
    assert end.moves == () and [list(d) for d in end.divisions] == divisions


def test_a_small_example_reads_as_the_organiser_wrote_it() -> None:
    d1, d2, d3 = ["a", "b", "c", "d"], ["e", "f", "g", "h"], ["i", "j", "k", "l"]
    end = season_end([d1, d2, d3], [Boundary(promoted=2, relegated=1), Boundary(1, 2)])
    # d2 sends e, f up and g, h down: only d (from above) and i (from below) play in it next
    assert end.divisions == (("a", "b", "c", "e", "f"), ("d", "i"), ("g", "h", "j", "k", "l"))
    assert Move("d", 1, 2) in end.moves and Move("i", 3, 2) in end.moves


def test_divisions_too_small_and_bad_input_are_one_line() -> None:
    with pytest.raises(ScheduleError, match="division 2 has 2 bots, fewer than the 2 it promotes"):
        season_end([["a", "b"], ["c", "d"], ["e", "f"]], Boundary(2, 1))
    with pytest.raises(ScheduleError, match="division 1 has 1 bots: too few to relegate 2"):
        season_end([["a"], ["b", "c", "d"]], Boundary(1, 2))
    with pytest.raises(ScheduleError, match="in two divisions"):
        season_end([["a", "b"], ["b", "c"]], Boundary())
    with pytest.raises(ScheduleError, match="2 divisions have 1 boundaries, not 2 rules"):
        season_end([["a", "b"], ["c", "d"]], [Boundary(), Boundary()])
    with pytest.raises(ScheduleError, match="a newcomer is already in a division: a"):
        season_end([["a", "b"]], [], newcomers=["a"])
    with pytest.raises(ScheduleError, match="0 or more"):
        Boundary(-1, 0)


def test_the_first_season_splits_a_ranking() -> None:
    assert split(list("abcdefg"), [3, 4]) == (("a", "b", "c"), ("d", "e", "f", "g"))
    with pytest.raises(ScheduleError, match="do not hold 7 bots"):
        split(list("abcdefg"), [3, 3])


def test_referee_season_divisions_writes_the_next_seasons_divisions(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from take5_arena.cli.main import main as cli

    files = []
    for d, names in enumerate((["a", "b", "c"], ["d", "e", "f"]), 1):
        files.append(tmp_path / f"div{d}.txt")
        files[-1].write_text("\n".join(names) + "\n")
    (tmp_path / "new.txt").write_text("g\n")
    out = CliRunner().invoke(
        cli,
        ["season", "divisions", *map(str, files), "--newcomers", str(tmp_path / "new.txt"),
         "--out", str(tmp_path / "next")],
    )  # fmt: skip
    assert out.exit_code == 0, out.output
    assert "c: division 1 -> 2 (down)" in out.output and "d: division 2 -> 1 (up)" in out.output
    assert (tmp_path / "next" / "division-1.txt").read_text() == "a\nb\nd\n"
    assert (tmp_path / "next" / "division-2.txt").read_text() == "c\ne\nf\ng\n"
    out = CliRunner().invoke(cli, ["season", "divisions", *map(str, files), "--promoted", "4"])
    assert out.exit_code == 2 and "division 2 has 3 bots: too few to promote 4" in out.output
    assert "Traceback" not in out.output
