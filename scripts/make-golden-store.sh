#!/usr/bin/env bash
# Make the golden store of this release: a small tournament directory (three example bots, a few
# recorded games, an author's account) that tests/test_upgrade.py opens with every later version of
# the code. Run it once per schema version, when a release changes the store's or the accounts'
# schema, and commit the result under tests/data/ next to the earlier ones (never regenerate an
# old one: it stands for what that release wrote).
#
#   scripts/make-golden-store.sh [OUT]     OUT defaults to tests/data/tournament-vN (N: the store's
#                                          schema version); it must not exist yet
set -euo pipefail
cd "$(dirname "$0")/.."
export PYTHONPATH="$PWD:$PWD/sdk${PYTHONPATH:+:$PYTHONPATH}"
version=$(python3 -c 'from take5_arena.referee.store import SCHEMA_VERSION; print(SCHEMA_VERSION)')
out=${1:-tests/data/tournament-v$version}
if [[ -e $out ]]; then
    echo "make-golden-store: $out exists (a golden store is made once)" >&2
    exit 2
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
T=$work/T
declare -A authors=([random]=alice [lowest]=bob [heuristic]=carol)  # each version has its author (schema 4)
for bot in random lowest heuristic; do
    cp -r "example_bots/$bot" "$work/$bot"
    python3 -m take5_arena submit "$work/$bot" --name "$bot" -t "$T" --sandbox local --author "${authors[$bot]}" >/dev/null 2>&1
done
python3 -m take5_arena authors add alice -t "$T" >/dev/null 2>&1
python3 -m take5_arena tournament run -t "$T" --games 6 --players 3 --sandbox local --no-progress >/dev/null
python3 -m take5_arena verify --tournament "$T" >/dev/null
# one self-contained file per database (no -wal, -shm), and none of what a running arena remakes
python3 - "$T" <<'PY'
import sqlite3, sys
from pathlib import Path
for name in ("tournament.sqlite", "accounts.sqlite"):
    db = sqlite3.connect(Path(sys.argv[1]) / name, isolation_level=None)
    db.execute("PRAGMA journal_mode = DELETE")
    db.execute("VACUUM")
    db.close()
PY
rm -rf "$T/site" "$T"/*.lock "$T"/*-wal "$T"/*-shm
mkdir -p "$(dirname "$out")"
cp -r "$T" "$out"
echo "$out: schema version $version"
find "$out" -type f | sort
