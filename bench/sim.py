"""Simulator speed: take5.batch (many games in numpy arrays) beside today's take5.sim, the engine
and the public TypeScript engine, in one run, all in CPU time of what is measured.

1. Rest-of-round rollouts per CPU-second, at 2, 4 and 10 players, batches of 1, 64 and 1,024: from
   the first turn of a round (every hand full), each seat plays its greedy card or, half of the
   time, a random one (the rollout policy of take5.sim.play_out and take5.bots.SearchBot). Both
   sides start from the same kind of prepared deal and copy it first: `play_out(table.copy(),
   hands copied, rng, 0.5)` for each rollout against `batch.copy().play_round(EpsilonGreedy(0.5))`
   on a batch of that many deals (`keep_cards=False`, as a search uses it). Target: >= 10x at
   batch 1,024 and 4 players.
2. Full random games per CPU-second (random cards, the cheapest row for a low card, threshold 66):
   take5.batch on 1,024 games at a time dealing as the engine does; take5.play_game with
   RandomPlayers (no record); a take5.sim loop (SplitMix64 deals, play_out with randomness 1); and,
   with --ts-engine DIR, the TypeScript engine of github.com/ThingsAI-io/6-nimmt-agent (its own
   `runGame` with its `random` strategy: a random card, the fewest-heads row) run by node in the
   same run. Target: >= 1.5x the TypeScript engine's games per second at 4 players.
3. Agent steps per CPU-second for learning: take5.vector.VectorEnv (1,024 games) against the
   PettingZoo AEC environment take5.env.Take5Env, each with random legal actions picked by the
   same cheap numpy code. Target: >= 100,000 for the vector environment.

0. The compiled core against the plainest C of the same rules (bench/proto.c, compiled by the
   bench with cc, in the same run): rest-of-round rollouts per CPU-second at batches of 16, 64, 256
   and 1,024 prepared deals (`take5.core.rollouts` on a (deals, seats, 10) array, greedy with
   randomness 0.5; take5.batch beside them), and whole random games (`take5.core.random_game`).
   Targets: rollouts >= 0.5x C at every batch size, single games >= 0.3x C.

Each figure is the best of --repeats short windows, the two sides interleaved, so that other load
on a shared machine hits both alike. The TypeScript engine is not part of this repository: clone it
beside, `npm install` there (it brings tsx), and pass its folder; its code is run, never copied.

Run: python bench/sim.py [--seconds S] [--repeats R] [--ts-engine DIR] [--quick]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "sdk"))

import cproto
import numpy as np

from take5 import Game, RandomPlayer, Settings, core, play_game
from take5.batch import Batch, EpsilonGreedy
from take5.shuffle import SplitMix64
from take5.sim import Table, play_out, sample_hands
from take5.vector import VectorEnv

PLAYERS = (2, 4, 10)
BATCHES = (1, 64, 1024)
GAME_BATCH = 1024
TS_ENGINE_REPO = "github.com/ThingsAI-io/6-nimmt-agent"


def rate(work: Callable[[], int], seconds: float) -> float:
    """Units per CPU-second of work() (which returns the units it did), over about `seconds`."""
    done = 0
    start = time.process_time()
    while True:
        done += work()
        used = time.process_time() - start
        if used >= seconds:
            return done / used


def best_of(sides: dict[str, Callable[[], int]], seconds: float, repeats: int) -> dict[str, float]:
    best = dict.fromkeys(sides, 0.0)
    for _ in range(repeats):
        for name, work in sides.items():
            best[name] = max(best[name], rate(work, seconds / repeats))
    return best


# -- 0. the compiled core against the C prototype -------------------------------------------------

CORE_BATCHES = (16, 64, 256, 1024)


def core_rollouts(players: int, size: int, seconds: float, repeats: int) -> dict[str, float]:
    view = Game(Settings(players=players), players).view(0)
    prng = random.Random(1)
    hands = np.array([sample_hands(view, prng) for _ in range(size)], dtype=np.int8)
    table = Table.from_rows(view.rows)
    rng = np.random.default_rng(1)
    batch = Batch.determinize(view, size, rng, keep_cards=False)
    policy = EpsilonGreedy(0.5, rng)
    seeds = iter(range(10**12))

    def compiled() -> int:
        core.rollouts(table, hands, 0.5, next(seeds))
        return size

    def batched() -> int:
        batch.copy().play_round(policy)
        return size

    best = best_of({"take5.core": compiled, "take5.batch": batched}, seconds, repeats)
    best["C"] = max(
        cproto.rate("rollouts", players, seconds / repeats, size) for _ in range(repeats)
    )
    return best


def core_games(players: int, seconds: float, repeats: int) -> dict[str, float]:
    settings = Settings(players=players)
    counter = iter(range(10**12))

    def compiled() -> int:
        seed = next(counter)
        core.random_game(settings, seed, [seed * 16 + i for i in range(players)])
        return 1

    best = best_of({"take5.core": compiled}, seconds, repeats)
    best["C"] = max(cproto.rate("games", players, seconds / repeats) for _ in range(repeats))
    return best


def core_section(seconds: float, repeats: int) -> dict[str, object]:
    state = "compiled" if core.COMPILED else f"pure Python: {core.REASON}"
    print(f"\n0. take5.core ({state}) against the C prototype (bench/proto.c), per CPU-second")
    print(
        f"  {'players':>7} {'batch':>6} {'C':>10} {'take5.core':>11} {'core/C':>7} "
        f"{'take5.batch':>12} {'batch/C':>8}"
    )
    table = []
    for players in PLAYERS:
        for size in CORE_BATCHES:
            r = core_rollouts(players, size, seconds, repeats)
            ratio = r["take5.core"] / r["C"]
            table.append({"players": players, "batch": size, **r, "ratio": ratio})
            print(
                f"  {players:>7} {size:>6} {r['C']:>10.0f} {r['take5.core']:>11.0f} {ratio:>6.2f}x"
                f" {r['take5.batch']:>12.0f} {r['take5.batch'] / r['C']:>7.2f}x",
                flush=True,
            )
    low = min(float(t["ratio"]) for t in table)
    print(f"  target rollouts >= 0.5x C at every batch: lowest {low:.2f}x, {verdict(low >= 0.5)}")
    print(f"  {'players':>7} {'games':>6} {'C':>10} {'take5.core':>11} {'core/C':>7}")
    games = []
    for players in PLAYERS:
        r = core_games(players, seconds, repeats)
        ratio = r["take5.core"] / r["C"]
        games.append({"players": players, **r, "ratio": ratio})
        print(f"  {players:>7} {'':>6} {r['C']:>10.0f} {r['take5.core']:>11.0f} {ratio:>6.2f}x")
    low = min(float(g["ratio"]) for g in games)
    print(f"  target single games >= 0.3x C: lowest {low:.2f}x, {verdict(low >= 0.3)}")
    return {"rollouts": table, "games": games}


# -- 1. rollouts ----------------------------------------------------------------------------------


def rollouts(players: int, size: int, seconds: float, repeats: int) -> dict[str, float]:
    view = Game(Settings(players=players), players).view(0)
    prng = random.Random(1)
    deals = [sample_hands(view, prng) for _ in range(size)]
    table = Table.from_rows(view.rows)
    rng = np.random.default_rng(1)
    batch = Batch.determinize(view, size, rng, keep_cards=False)
    policy = EpsilonGreedy(0.5, rng)

    def today() -> int:
        for hands in deals:
            play_out(table.copy(), [h[:] for h in hands], prng, 0.5)
        return size

    def batched() -> int:
        batch.copy().play_round(policy)
        return size

    return best_of({"take5.sim": today, "take5.batch": batched}, seconds, repeats)


# -- 2. full games --------------------------------------------------------------------------------


def sim_game(players: int, seed: int) -> list[int]:
    """One standard game with take5.sim: engine deals, play_out with random cards, cheapest rows."""
    deal = SplitMix64(seed)
    choices = random.Random(seed)
    scores = [0] * players
    while max(scores) < 66:
        cards = deal.shuffled(range(1, 105))
        hands = [sorted(cards[p * 10 : (p + 1) * 10]) for p in range(players)]
        start = players * 10
        table = Table.from_rows([[c] for c in cards[start : start + 4]])
        points = play_out(table, hands, choices, 1.0)
        scores = [s + p for s, p in zip(scores, points)]
    return scores


def full_games(players: int, seconds: float, repeats: int) -> dict[str, float]:
    settings = Settings(players=players)
    rng = np.random.default_rng(2)
    policy = EpsilonGreedy(1.0, rng)
    counter = iter(range(10**12))

    def batched() -> int:
        first = next(counter) * GAME_BATCH
        Batch.deal(settings, range(first, first + GAME_BATCH), keep_cards=False).play_game(policy)
        return GAME_BATCH

    def engine() -> int:
        seed = next(counter)
        players_ = [RandomPlayer(seed * 16 + i) for i in range(players)]
        play_game(players_, settings, seed, keep_record=False)
        return 1

    def today() -> int:
        sim_game(players, next(counter))
        return 1

    return best_of(
        {"take5.batch": batched, "take5.play_game": engine, "take5.sim": today}, seconds, repeats
    )


TS_DRIVER = r"""
import { runGame } from %(runner)s;
const players = Number(process.argv[2]);
const seconds = Number(process.argv[3]);
const seats = Array.from({ length: players }, (_, i) => ({ id: `p${i}`, strategy: 'random' }));
const cfg = (seed) => ({ players: seats, seed: `s${seed}` });
for (let i = 0; i < 300; i++) runGame(cfg(i));  // the JIT warms up first
const start = process.cpuUsage();
let games = 0, used = 0;
while (used < seconds) {
  for (let k = 0; k < 50; k++) runGame(cfg(1000 + games++));
  const d = process.cpuUsage(start);
  used = (d.user + d.system) / 1e6;
}
console.log(JSON.stringify({ players, games, cpu: used, rate: games / used }));
"""


def ts_games(folder: Path, players: int, seconds: float) -> float | str:
    """Games per CPU-second of the TypeScript engine's own runner (node's CPU time, all threads)."""
    tsx = folder / "node_modules" / ".bin" / "tsx"
    runner = folder / "src" / "sim" / "runner.ts"
    if not runner.is_file():
        return f"no {runner}"
    if not tsx.is_file():
        return f"no {tsx} (npm install in {folder})"
    if shutil.which("node") is None:
        return "node is not installed"
    with tempfile.TemporaryDirectory() as tmp:
        driver = Path(tmp) / "driver.ts"
        driver.write_text(TS_DRIVER % {"runner": json.dumps(str(runner))})
        proc = subprocess.run(
            [str(tsx), str(driver), str(players), str(seconds)],
            capture_output=True,
            text=True,
            timeout=600,
            cwd=folder,
        )
    if proc.returncode != 0:
        return f"node failed: {proc.stderr.strip().splitlines()[-1:]}"
    return float(json.loads(proc.stdout.strip().splitlines()[-1])["rate"])


# -- 3. agent steps --------------------------------------------------------------------------------


def agent_steps(players: int, seconds: float, repeats: int) -> dict[str, float]:
    sides: dict[str, Callable[[], int]] = {}
    env = VectorEnv(games=GAME_BATCH, players=players, seed=3)
    state = {"mask": env.reset()[1]}
    rng = np.random.default_rng(3)

    def vector() -> int:
        actions = (rng.random(state["mask"].shape) * state["mask"]).argmax(2)
        state["mask"] = env.step(actions).masks
        return GAME_BATCH * players

    sides["VectorEnv"] = vector
    try:
        from take5.env import Take5Env
    except ImportError:
        pass
    else:
        aec = Take5Env(players=players)
        aec.reset(seed=3)

        def pettingzoo() -> int:
            steps = 0
            for _ in range(200):
                obs, _, done, _, _ = aec.last()
                if done:
                    aec.reset(seed=int(rng.integers(1 << 30)))
                    continue
                aec.step(int((rng.random(obs["action_mask"].shape) * obs["action_mask"]).argmax()))
                steps += 1
            return steps

        sides["Take5Env (AEC)"] = pettingzoo
    return best_of(sides, seconds, repeats)


# -- the report ------------------------------------------------------------------------------------


def verdict(ok: bool) -> str:
    return "met" if ok else "NOT MET"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="CPU seconds per measurement")
    parser.add_argument(
        "--repeats", type=int, default=3, help="interleaved windows per measurement"
    )
    parser.add_argument(
        "--ts-engine",
        type=Path,
        default=os.environ.get("TAKE5_TS_ENGINE"),
        help=f"a checkout of {TS_ENGINE_REPO} with node_modules (or $TAKE5_TS_ENGINE)",
    )
    parser.add_argument("--quick", action="store_true", help="short windows (wide error)")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument(
        "--core-only", action="store_true", help="only section 0 (take5.core against C)"
    )
    args = parser.parse_args()
    if args.quick:
        args.seconds, args.repeats = 0.6, 2
    print(
        f"bench/sim.py: load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs, "
        f"{args.seconds:g} CPU-s per figure, best of {args.repeats}"
    )
    out: dict[str, object] = {"core": core_section(args.seconds, args.repeats)}
    if args.core_only:
        if args.json:
            args.json.write_text(json.dumps(out, indent=2))
        return

    print("\n1. rest-of-round rollouts per CPU-second (turn 1, greedy with randomness 0.5)")
    print(f"  {'players':>7} {'batch':>6} {'take5.sim':>11} {'take5.batch':>12} {'ratio':>7}")
    table = []
    for players in PLAYERS:
        for size in BATCHES:
            r = rollouts(players, size, args.seconds, args.repeats)
            ratio = r["take5.batch"] / r["take5.sim"]
            table.append({"players": players, "batch": size, **r, "ratio": ratio})
            print(
                f"  {players:>7} {size:>6} {r['take5.sim']:>11.0f} {r['take5.batch']:>12.0f}"
                f" {ratio:>6.1f}x",
                flush=True,
            )
    target = next(t for t in table if t["players"] == 4 and t["batch"] == 1024)["ratio"]
    print(f"  target >= 10x at batch 1,024 and 4 players: {target:.1f}x, {verdict(target >= 10)}")
    out["rollouts"] = table

    print(f"\n2. full random games per CPU-second (batch of {GAME_BATCH} for take5.batch)")
    print(
        f"  {'players':>7} {'take5.batch':>12} {'play_game':>10} {'take5.sim':>10} "
        f"{'TypeScript':>11} {'batch/TS':>9} {'batch/play_game':>16}"
    )
    games = []
    measured: dict[int, tuple[dict[str, float], float | str]] = {}  # players: (rates, TypeScript)
    for players in PLAYERS:
        r = full_games(players, args.seconds, args.repeats)
        ts: float | str = (
            "not run" if args.ts_engine is None else ts_games(args.ts_engine, players, args.seconds)
        )
        row = {"players": players, **r, "typescript": ts}
        ts_text = f"{ts:>11.0f}" if isinstance(ts, float) else f"{'-':>11}"
        vs_ts = f"{r['take5.batch'] / ts:>8.1f}x" if isinstance(ts, float) else f"{'-':>9}"
        print(
            f"  {players:>7} {r['take5.batch']:>12.0f} {r['take5.play_game']:>10.0f} "
            f"{r['take5.sim']:>10.0f} {ts_text} {vs_ts} "
            f"{r['take5.batch'] / r['take5.play_game']:>15.1f}x",
            flush=True,
        )
        if isinstance(ts, str) and args.ts_engine is not None:
            print(f"      TypeScript engine: {ts}")
        games.append(row)
        measured[players] = r, ts
    four, four_ts = measured[4]
    if isinstance(four_ts, float):
        ratio = four["take5.batch"] / four_ts
        print(
            "  target >= 1.5x the TypeScript engine at 4 players: "
            f"{ratio:.1f}x, {verdict(ratio >= 1.5)}"
        )
    else:
        print(f"  TypeScript engine not measured (--ts-engine DIR: a checkout of {TS_ENGINE_REPO})")
    out["games"] = games

    print(
        f"\n3. agent steps per CPU-second (random legal actions; {GAME_BATCH} games for VectorEnv)"
    )
    print(f"  {'players':>7} {'VectorEnv':>10} {'Take5Env (AEC)':>15} {'ratio':>7}")
    steps = []
    for players in PLAYERS:
        r = agent_steps(players, args.seconds, args.repeats)
        aec = r.get("Take5Env (AEC)")
        ratio_text = f"{r['VectorEnv'] / aec:>6.0f}x" if aec else f"{'-':>7}"
        aec_text = f"{aec:>15.0f}" if aec else f"{'(no pettingzoo)':>15}"
        print(f"  {players:>7} {r['VectorEnv']:>10.0f} {aec_text} {ratio_text}", flush=True)
        steps.append({"players": players, **r})
    low = min(s["VectorEnv"] for s in steps)
    print(
        "  target >= 100,000 agent steps per CPU-second: "
        f"lowest {low:,.0f}, {verdict(low >= 100_000)}"
    )
    out["agent_steps"] = steps
    if args.json:
        args.json.write_text(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
