"""Every default and limit of the arena service (``referee serve``), once: the server, the
uploads, the authors' limits, the ladder and its publisher. The command line
(take5_arena/cli/service.py) shows these; the sandbox and the games' own defaults are the
referee's (take5_arena/referee/defaults.py), shared with ``referee tournament run``.
"""

from __future__ import annotations

# -- the server -----------------------------------------------------------------------------------
LISTEN = "127.0.0.1:50600"
SERVER_THREADS = 16
"""Calls served at once."""
MAX_SEND_BYTES = 64 * 1024 * 1024
"""Largest answer (a game record, the standings)."""
STOP_GRACE = 3.0
"""Seconds the calls in progress get to finish when the server stops."""
LADDER_STOP_SECONDS = 10.0
"""Seconds the ladder gets to stop (its tables in flight are abandoned, and replayed next time)."""

# -- uploads --------------------------------------------------------------------------------------
CHUNK_BYTES = 256 * 1024
"""Largest archive chunk of a SubmitBot message."""
MAX_UPLOADS_AT_ONCE = 8
"""Uploads received at once, in all."""
MAX_UPLOADS_PER_AUTHOR = 2
"""Uploads received at once from one author."""
UPLOAD_SLOT_WAIT = 5.0
"""Seconds an upload waits for a free slot before it is refused (RESOURCE_EXHAUSTED)."""
UPLOAD_SECONDS = 300.0
"""An upload still running after this is cut off (a client that stalls)."""
VALIDATORS = 1
"""Submissions validated at once."""

# -- what the service keeps and shows -------------------------------------------------------------
OUTPUT_TAIL = 4096
"""Characters of a bot's own output kept with a submission and sent back to its author."""
DETAIL_CHARS = 2000
"""Characters of a refusal's or a fault's detail kept and sent."""
LOG_TAIL = 2000
"""Characters of a bot's output up to a fault, in MyBotFaults."""
FAULTS_SHOWN = 50
"""Faults MyBotFaults returns when the request names no limit."""
MAX_FAULTS_SHOWN = 500

# -- authors --------------------------------------------------------------------------------------
MAX_ACTIVE_BOTS = 3
MAX_SUBMISSIONS_PER_HOUR = 20
MAX_ARCHIVE_BYTES = 8 * 1024 * 1024

# -- the ladder and the publisher -----------------------------------------------------------------
GAUNTLET_TABLES = 1
"""Tables a new bot version plays with each other active bot before the ladder goes on."""
PUBLISH_EVERY_GAMES = 20
PUBLISH_EVERY_SECONDS = 30.0
PUBLISH_BOOTSTRAP = 100
"""Bootstrap resamples of the published intervals (fewer than a tournament's: they are redone
after every few games)."""
LADDER_IDLE_SECONDS = 0.5
"""How often the ladder looks for bots when there are too few to play."""
LADDER_RETRY_DELAY = 2.0
"""Seconds before a ladder table whose games failed for infrastructure reasons is retried (then
twice as long each time, as in a tournament)."""
