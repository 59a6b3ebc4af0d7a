"""Every default of the referee, once: the command line (take5_arena/cli/options.py), the match
layer, the tournament settings and the Docker sandbox (referee/sandbox/limits.py) all read them
from here.

Game rules come from the SDK (take5.rules: the threshold, the variant and the end rule are part of
the rules, so the rules engine owns them), and so do the clocks' (take5.clock: a record's replay
applies the same arithmetic); this module only names them under one roof.
"""

from __future__ import annotations

import os
from pathlib import Path

from take5 import __version__ as take5_version
from take5.clock import DEFAULT_CLOCK, DEFAULT_TIMEOUT
from take5.clock import START_TIMEOUT as DEFAULT_START_TIMEOUT
from take5.clock import START_WALL as DEFAULT_START_WALL
from take5.clock import WALL_FACTOR as DEFAULT_WALL_FACTOR
from take5.rules import DEFAULT_THRESHOLD, EndRule, Variant

from .kinds import BotMemory, Ponder, SandboxKind

# -- the game -------------------------------------------------------------------------------------
PLAYERS = 4
THRESHOLD = DEFAULT_THRESHOLD  # 66: the game ends when a score reaches it
VARIANT = Variant.STANDARD.value
END_RULE = EndRule.AT_OR_ABOVE.value
SEED = 0

# -- the match ------------------------------------------------------------------------------------
GAMES = 1  # `referee match`: games played (each deal once per rotation)
TIMEOUT = DEFAULT_TIMEOUT  # 1 s per PickCard / ChooseRow call, when no time control is given
#: Which clock measures a bot's time (take5.clock): its own CPU time where the referee can measure
#: it (a local process's tree, a container's cgroup), so that a busy host does not make a correct
#: bot late; the wall clock where it cannot (a bot given by address).
CLOCK = DEFAULT_CLOCK
#: Under the CPU clock, a decision's wall-clock cap is this many times its limit (take5.clock:
#: and at least WALL_FLOOR more): the safety net for a bot that sleeps or blocks.
WALL_FACTOR = DEFAULT_WALL_FACTOR
START_TIMEOUT = DEFAULT_START_TIMEOUT
"""Seconds a bot has to start serving, on the clock in force: under the CPU clock the CPU time its
start-up uses (a process's imports, its own set-up), under the wall clock the time from its launch.
A correct bot uses well under 1 CPU-second; 30 s because on the wall clock a loaded host made
correct bots (and the arena's own house opponent) late at 10 s."""
START_WALL = DEFAULT_START_WALL
"""Under the CPU clock, the wall-clock seconds a bot has to start serving at most (the safety net
for a bot that sleeps or hangs at start): generous, since a loaded host slows a start that uses
little CPU. It costs only for a bot that never starts, once per table (it is then out of the
match)."""
HANDSHAKE_TIMEOUT = 2.0
MAX_FAULTS = 3  # faults in one game after which a bot forfeits it
STOP_GRACE = 1.0  # seconds between SIGTERM and SIGKILL when a bot is stopped
EXIT_WAIT = 5.0
"""Seconds the referee waits, after losing a bot's connection, for the bot's process or container
to be reported as ended, which makes the fault a crash rather than a lost connection. Generous
because on a loaded host a container's exit reaches the engine's API late (0.5 s recorded a crashed
bot as "connection"); it costs only when a connection is lost while the bot runs on."""

# -- the sandbox ----------------------------------------------------------------------------------
SANDBOXES = tuple(kind.value for kind in SandboxKind)
#: Where a bot runs when nothing says otherwise. `referee match` runs the bots a developer names on
#: their own machine (``local``); tournaments and `referee submit` run strangers' code (``docker``).
MATCH_SANDBOX = SandboxKind.LOCAL.value
TOURNAMENT_SANDBOX = SandboxKind.DOCKER.value
MEMORY = "256m"  # per bot, also its swap limit (no swap)
CPUS = 1.0
PIDS = 64
TMPFS = "16m"  # size of a bot container's /tmp, /dev/shm and each tmpfs replacing a VOLUME
#: The Python runtime's image, which bot images are built on (scripts/setup-docker.sh makes it);
#: the other runtimes' images are in referee/sandbox/manifest.py.
BASE_IMAGE = "take5/python:3.11"
#: The OCI runtime of bot containers: None is the engine's own (runc); ``runsc`` is gVisor, which
#: scripts/setup-docker.sh registers. ``TAKE5_RUNTIME`` sets it for every command that does not
#: say (the test suite runs its Docker tests under gVisor that way).
RUNTIME: str | None = os.environ.get("TAKE5_RUNTIME", "").strip() or None
#: Whether a bot process may keep its memory from one deal to another (kinds.BotMemory). The
#: default, a fresh process for every game, keeps a game's result a function of the bots and the
#: deal alone: not of which games a worker happened to play before, nor of a restart in between.
BOT_MEMORY = BotMemory.GAME.value
BOT_MEMORIES = tuple(kind.value for kind in BotMemory)
#: Under the CPU clock, whether a bot's CPU between its answer and its next request is taken from
#: its bank (kinds.Ponder). Charged by default: the CPU clock promises that a bot pays for the CPU
#: its processes use, and thinking while the others decide is CPU taken from the same host.
PONDER = Ponder.CHARGE
PONDERS = tuple(kind.value for kind in Ponder)
ENGINE_TIMEOUT = 60.0  # seconds one Engine API request may take before the engine counts as gone
#: Seconds between two sweeps of the engine by a process that plays Docker games (sandbox/sweep.py):
#: bot containers of a process that died are gone within this, plus the time one sweep takes.
SWEEP_PERIOD = 20.0

# -- tournaments ----------------------------------------------------------------------------------
DUPLICATE = True
#: Never seat two entrants of one author at a table when the pool allows it (the arena's authors
#: come from its accounts, a local tournament's from `referee submit --author`).
SEPARATE_AUTHORS = True
EXECUTOR = "auto"
#: Seconds the referee waits for a Dask scheduler it lost to answer again (a restart, a link down)
#: before it gives up; meanwhile it starts no table, and the tables cut off are played again.
SCHEDULER_GRACE = 300.0
#: The lease a referee holds on the tables it sent to a Dask cluster (tournament/run/lease.py): it
#: renews it this often, and a worker stops a table whose lease went unrenewed for LEASE_SECONDS
#: (its referee died, or lost the cluster): the table's containers are gone within seconds instead
#: of playing on for nobody until the table ends.
LEASE_RENEW_SECONDS = 2.0
LEASE_SECONDS = 15.0
RETRIES = 3  # retries of a game after an infrastructure failure
#: `tournament run --until-settled`: the LOS at which a neighbour pair counts as settled, the tables
#: per entrant of the first batch (before any rating exists), and the game budget per entrant. 400
#: games a bot settle fields of 8 and 32 bots whose neighbours are 50-150 Elo apart (tables of 4,
#: duplicate deals) in 30 of 30 runs, adaptive or fixed (python bench/ranking.py); a fixed schedule
#: needed about 260 a bot for the 32, beyond the former 100. Closer fields may need more (--budget).
SETTLE_CONFIDENCE = 0.95
SETTLE_INITIAL_TABLES = 2
SETTLE_BUDGET_PER_ENTRANT = 400
#: Bytes of its own output (stderr, kept per turn in the records) each bot version may keep across
#: a tournament's records; past it the oldest games' output of that bot is dropped.
OUTPUT_BUDGET = 50_000_000  # 50 MB
#: Bytes of its own output each bot may keep in the records of one `referee match --records`, all
#: its games together (a flooding bot otherwise keeps 2,000 characters every turn of every game);
#: past it the rest of the match's output of that bot is not kept.
MATCH_OUTPUT_BUDGET = 1_000_000  # 1 MB

# -- ratings --------------------------------------------------------------------------------------
#: Bootstrap resamples of the 95% rating intervals, in every command that shows them.
BOOTSTRAP = 200
BOOTSTRAP_SEED = 0

# -- the package ----------------------------------------------------------------------------------
#: The project's checkout: bot images get the SDK from its sources (sdk/take5), and smoke games
#: take their house opponents from example_bots/.
REPO_ROOT = Path(__file__).resolve().parents[2]
SDK_DIR = REPO_ROOT / "sdk"
EXAMPLE_BOTS = REPO_ROOT / "example_bots"
DISTRIBUTION = "take5-arena"
#: One version for the whole project and its SDK: both pyproject.toml files read take5.__version__.
VERSION = take5_version
