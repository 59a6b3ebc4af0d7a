"""`referee serve --metrics` on an arena of several competitions (take5_arena/service/metrics.py,
health.py): every competition's figures carry its name, one added while serving included; one
found but not served (a damaged store) is counted as such; a ladder whose tables hang is stalled,
said per competition without taking the whole server out of a load balancer; hostile health
requests are refused on one line. A real server on loopback (local sandbox), scraped over HTTP and
parsed with prometheus_client's own parser."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from arena_support import Server, bot_folder, cli, duel_arena, wait_until
from prometheus_client.parser import text_string_to_metric_families
from support import ROOT, free_port, http_get

#: A competition's name at the limits of the rule: 32 characters, a digit first, a '-'.
LONGEST = "0-" + "z" * 30

#: A bot that plays at once unless ``{flag}`` exists, and then waits for as long as it does: a
#: table that hangs (its time control is far longer than the test).
HANGING_BOT = """import os
import time

from take5 import Bot, run


class Hang(Bot):
    name = "{name}"

    def pick_card(self, view):
        while os.path.exists({flag!r}):
            time.sleep(0.05)
        return sorted(view.hand)[{pick}]


if __name__ == "__main__":
    run(Hang())
"""


def _by_competition(text: str) -> dict[str, dict[str, float]]:
    """Each metric's samples without labels but ``competition``: name -> competition -> value."""
    found: dict[str, dict[str, float]] = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            if set(s.labels) == {"competition"}:
                found.setdefault(s.name, {})[s.labels["competition"]] = s.value
    return found


def _hanging_competition(t: Path, flag: Path, scratch: Path) -> None:
    """Competition ``hang`` (tables of 2, 600 s a decision) with two bots that hang while
    ``flag`` exists (it does not yet: they pass their validation)."""
    made = cli(
        "competition", "add", "hang", "-t", str(t), "--players", "2", "--sandbox", "local",
        "--timeout", "600", "--clock", "wall",
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    for name, pick in (("hang-low", "0"), ("hang-high", "-1")):
        folder = bot_folder(scratch, name, HANGING_BOT.format(name=name, flag=str(flag), pick=pick))
        done = cli(
            "submit", str(folder), "--name", name, "-t", str(t), "--competition", "hang",
            "--sandbox", "local",
        )  # fmt: skip
        assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.slow
def test_every_competition_has_its_figures_and_its_health(tmp_path: Path) -> None:
    t = tmp_path / "T"
    duel_arena(t, "random", "lowest")
    flag = tmp_path / "hang.flag"
    _hanging_competition(t, flag, tmp_path)
    flag.touch()  # from now on every table of `hang` hangs
    broken = t / "competitions" / "broken"
    broken.mkdir()
    (broken / "tournament.sqlite").write_bytes(b"not a database " * 500)
    odd = t / "competitions" / 'x"y\\z\n'  # no competition's name: ignored, never a label
    odd.mkdir()
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    server = Server(
        t, "--sandbox", "local", "--players", "2", "--bootstrap", "0",
        "--metrics", str(port), "--stall-seconds", "4",
    )  # fmt: skip
    try:
        server.wait_for(r"metrics on http://")
        server.wait_for(r"competition broken not served yet: .*damaged", timeout=30)
        made = cli("competition", "add", LONGEST, "-t", str(t), "--players", "3")
        assert made.returncode == 0, made.stderr
        server.wait_for(rf"competition {LONGEST}: ", timeout=30)

        def figures() -> dict[str, dict[str, float]]:
            status, text = http_get(f"{base}/metrics")
            assert status == 200, text
            return _by_competition(text)

        wait_until(
            lambda: figures().get("take5_arena_ladder_stalled", {}).get("hang") == 1
            and figures()["take5_arena_games_total"].get("duel", 0) >= 1,
            timeout=180, what="duel's games and hang's stall", server=server,
        )  # fmt: skip
        status, text = http_get(f"{base}/metrics")
        got = _by_competition(text)
        assert got["take5_arena_competition_served"] == {
            "": 1, "duel": 1, "hang": 1, LONGEST: 1, "broken": 0,
        }  # fmt: skip
        # the longest name, escaped as the text format asks (nothing to escape), parsed back
        assert f'take5_arena_games_total{{competition="{LONGEST}"}} 0.0' in text
        assert 'x\\"y' not in text and 'x"y' not in text
        assert got["take5_arena_active_bots"] == {"": 0, "duel": 2, "hang": 2, LONGEST: 0}
        assert got["take5_arena_store_up"] == {"": 1, "duel": 1, "hang": 1, LONGEST: 1}
        assert got["take5_arena_ladder_up"] == {"": 1, "duel": 1, "hang": 1, LONGEST: 1}
        assert got["take5_arena_games_in_flight"]["hang"] >= 1
        assert got["take5_arena_ladder_seconds_without_game"]["hang"] >= 4
        # too few bots to play is no stall: nothing could be played
        assert got["take5_arena_ladder_stalled"][""] == 0
        assert got["take5_arena_ladder_seconds_without_game"][LONGEST] == 0
        assert got["take5_arena_games_total"]["hang"] == 0
        # the shipped alerting rules name only figures the server exports
        rules = (ROOT / "deploy" / "take5-arena.rules.yml").read_text(encoding="utf-8")
        named = set(re.findall(r"take5_arena_\w+", rules))
        assert len(named) >= 8 and {n for n in named if f"# TYPE {n} " not in text} == set()

        # the load balancer's check: 200, the trouble of the others said after "ok"
        status, body = http_get(f"{base}/healthz")
        assert status == 200 and body.startswith("ok, degraded: "), body
        assert "competition hang: the ladder stalled: no game recorded for" in body
        assert "competition broken: not served: " in body and "damaged" in body
        assert body.count("\n") == 1
        # one competition each: the operator's probes
        assert http_get(f"{base}/healthz?competition=") == (200, "ok\n")
        assert http_get(f"{base}/healthz?competition={LONGEST}") == (200, "ok\n")
        status, body = http_get(f"{base}/healthz?competition=hang")
        assert status == 503 and body.startswith("unhealthy: the ladder stalled"), body
        status, body = http_get(f"{base}/healthz?competition=broken")
        assert status == 503 and body.startswith("unhealthy: not served: "), body
        status, body = http_get(f"{base}/healthz/competitions")
        assert status == 200, body
        listed = {c["name"]: c for c in json.loads(body)["competitions"]}
        assert list(listed) == ["", LONGEST, "duel", "hang", "broken"]  # served by name, then not
        assert listed["broken"]["served"] is False and listed["broken"]["healthy"] is False
        assert listed[LONGEST] == {
            "name": LONGEST,
            "served": True,
            "healthy": True,
            "problem": None,
        }
        assert "stalled" in listed["hang"]["problem"]

        # hostile names: one line each, nothing opened
        for query, code in (
            ("competition=..%2F..", 400),
            ('competition=x"y', 400),
            ("competition=" + "a" * 33, 400),
            ("competition=Duel", 400),
            ("competition=duel&competition=hang", 400),
            ("&".join(f"f{i}=1" for i in range(20)), 400),
            ("competition=nope", 404),
            ("competition=nostore", 404),
        ):
            status, body = http_get(f"{base}/healthz?{query}")
            assert status == code and body.count("\n") == 1, (query, status, body)
            assert "Traceback" not in body
        (t / "competitions" / "nostore").mkdir()  # a folder without a store is no competition
        assert http_get(f"{base}/healthz?competition=nostore")[0] == 404

        # the tables go on: the stall ends
        flag.unlink()
        wait_until(
            lambda: figures()["take5_arena_games_total"].get("hang", 0) >= 1
            and figures()["take5_arena_ladder_stalled"]["hang"] == 0,
            timeout=120, what="hang's games", server=server,
        )  # fmt: skip
        assert http_get(f"{base}/healthz?competition=hang") == (200, "ok\n")
    finally:
        flag.unlink(missing_ok=True)
        assert server.stop() == 0, server.log
    assert "Traceback" not in server.log, server.log


def _rss(pid: int) -> int:
    """The resident size of process ``pid``, kB."""
    with open(f"/proc/{pid}/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmRSS:"))


def _swap(store: Path, spare: Path) -> None:
    """Put ``spare`` in the place of the store file ``store`` and the store there in ``spare``'s
    (renames: the server's open connections keep the file they have, a new one opens the other),
    and take away the mark that a store read as damaged leaves (the operator's restore)."""
    held = store.with_name("held.sqlite")
    os.rename(store, held)
    os.rename(spare, store)
    os.rename(held, spare)
    store.with_name(store.name + ".damaged").unlink(missing_ok=True)


def test_a_store_that_cannot_be_read_is_said_for_its_competition(tmp_path: Path) -> None:
    """Another competition's unreadable store leaves the server in the load balancer (200, said);
    the default competition's, which is the arena's own, takes it out (503), as before. And health
    requests naming competitions that are none grow nothing in the server."""
    t = tmp_path / "T"
    duel_arena(t)
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    server = Server(t, "--sandbox", "local", "--no-ladder", "--metrics", str(port))
    garbage = tmp_path / "garbage.sqlite"
    garbage.write_bytes(b"not a database " * 500)
    swapped: list[Path] = []
    try:
        server.wait_for(r"metrics on http://")
        server.wait_for(r"competition duel: ", timeout=30)
        assert http_get(f"{base}/healthz") == (200, "ok\n")
        # names asked for grow nothing: 3,000 of them moved the resident size by 4 kB
        for i in range(200):
            http_get(f"{base}/healthz?competition=warm{i}")
            http_get(f"{base}/metrics")
        before = _rss(server.proc.pid)
        for i in range(2000):
            assert http_get(f"{base}/healthz?competition=n{i:05d}")[0] == 404
        assert _rss(server.proc.pid) - before < 4096  # kB
        _swap(t / "competitions" / "duel" / "tournament.sqlite", garbage)
        swapped.append(t / "competitions" / "duel" / "tournament.sqlite")
        status, body = http_get(f"{base}/healthz")
        assert status == 200 and body.startswith("ok, degraded: competition duel: the store "), body
        status, body = http_get(f"{base}/healthz?competition=duel")
        assert status == 503 and "the store cannot be read" in body, body
        got = _by_competition(http_get(f"{base}/metrics")[1])
        # --no-ladder: no ladder to say stopped, so no 0 for an alert to fire on
        assert "take5_arena_ladder_up" not in got, got
        assert got["take5_arena_store_up"] == {"": 1, "duel": 0}
        assert "duel" not in got["take5_arena_games_total"] and "" in got["take5_arena_games_total"]
        _swap(t / "competitions" / "duel" / "tournament.sqlite", garbage)
        swapped.pop()
        _swap(t / "tournament.sqlite", garbage)
        swapped.append(t / "tournament.sqlite")
        status, body = http_get(f"{base}/healthz")
        assert status == 503 and body.startswith("unhealthy: the store cannot be read"), body
        assert body.count("\n") == 1
        assert http_get(f"{base}/healthz?competition=duel") == (200, "ok\n")
        assert _by_competition(http_get(f"{base}/metrics")[1])["take5_arena_store_up"] == {
            "": 0, "duel": 1,
        }  # fmt: skip
    finally:
        for store in swapped:
            _swap(store, garbage)
        assert server.stop() == 0, server.log
    assert "Traceback" not in server.log, server.log
