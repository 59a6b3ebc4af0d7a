"""What a bot did with its time in recorded games (not a timed test): games, faults, and the time
of its decisions as the referee measured them (`clock` in docs/record-format.md).

    python bench/decision_times.py RECORDS_DIR... [--bot planner]

For every record under the folders (recursively; a bot's logs are skipped): how many games, how
many complete, the faults of each kind by bot, and of the named bot's decisions with a choice
(a round's last card left out) the count and the mean and largest milliseconds used, and under a
time control with a bank the least bank left after a decision (a bank never overdrawn never goes
below 0). That is how docs/benchmarks.md's Docker runs of the planner (games at the default
limits, a `30+0.5` bank series) are read.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "sdk"))

from take5.rules import HAND_SIZE


def decisions(record: dict[str, Any]) -> list[tuple[int, int, int]]:
    """The [seat, ms used, bank after] of every decision of a record with a choice: drafts and row
    choices included, the plays of a round's last card (one card in hand) left out."""
    players = int(record["settings"]["players"])
    out: list[tuple[int, int, int]] = []
    for round_ in record.get("rounds", []):
        draft = round_.get("draft") or {}
        out.extend((c[0], c[1], c[2]) for c in draft.get("clock", []))
        for turn in round_.get("turns", []):
            clock = turn.get("clock", [])
            if turn["turn"] == HAND_SIZE:  # the plays come first, then the row choices
                clock = clock[players:]
            out.extend((c[0], c[1], c[2]) for c in clock)
    return out


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("folders", nargs="+", type=Path)
    parser.add_argument("--bot", default="planner", help="the seat name whose times are read")
    args = parser.parse_args(argv)
    games = complete = 0
    faults: Counter[tuple[str, str]] = Counter()
    used: list[int] = []
    banks: list[int] = []
    bank_ms = 0
    for folder in args.folders:
        for path in sorted(folder.rglob("*.json")):
            if "logs" in path.parts:
                continue
            record = json.loads(path.read_text())
            if record.get("format") != "take5-record":
                continue
            games += 1
            complete += bool(record.get("complete"))
            names = [seat["name"] for seat in record["seats"]]
            for seat, seat_faults in enumerate(record.get("faults", [])):
                for fault in seat_faults:
                    kind = fault.get("kind", "?") if isinstance(fault, dict) else str(fault)
                    faults[(names[seat], kind)] += 1
            control = record.get("time_control") or {}
            bank_ms = max(bank_ms, int(control.get("bank_ms") or 0))
            mine = {seat for seat, name in enumerate(names) if name == args.bot}
            for seat, ms, bank in decisions(record):
                if seat in mine:
                    used.append(ms)
                    banks.append(bank)
    print(f"{games} games, {complete} complete; faults: {dict(faults) or 'none'}")
    if used:
        mean = sum(used) / len(used)
        print(f"{args.bot}: {len(used)} decisions, {mean:.1f} ms mean, {max(used)} ms at most")
    if used and bank_ms:
        print(f"bank of {bank_ms} ms: at least {min(banks)} ms left after a decision")


if __name__ == "__main__":
    main()
