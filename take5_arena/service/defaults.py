"""Every default and limit of the arena service (``referee serve``), once: the server, the
uploads, the authors' limits, the ladder and its publisher. The command line
(take5_arena/cli/service.py) shows these; the sandbox and the games' own defaults are the
referee's (take5_arena/referee/defaults.py), shared with ``referee tournament run``.
"""

from __future__ import annotations

from dataclasses import dataclass

# -- the server -----------------------------------------------------------------------------------
LISTEN = "127.0.0.1:50600"
SYNCHRONOUS = "full"
"""An arena's commits survive a power cut (take5_arena/referee/store/health.py, SYNCHRONOUS)."""
BLOCKING_THREADS = 8
"""Threads for the calls' blocking work (SQLite, the disk, token hashes); the calls themselves are
coroutines on one event loop (take5_arena/service/servicer.py)."""
MAX_SEND_BYTES = 64 * 1024 * 1024
"""Largest answer (a game record, the standings)."""
MAX_STREAMS_PER_CONNECTION = 16
"""Calls one connection carries at once (HTTP/2 concurrent streams)."""
MAX_CALLS_PER_AUTHOR = 8
"""Calls of one author in progress at once (uploads are counted apart)."""
MAX_WAIT_SECONDS = 30.0
"""Longest wait of one GetSubmission call (a long poll)."""
STOP_GRACE = 3.0
"""Seconds the calls in progress get to finish when the server stops."""
LADDER_STOP_SECONDS = 10.0
"""Seconds the ladder gets to stop (its tables in flight are abandoned, and replayed next time)."""
COMPETITIONS_SCAN_SECONDS = 2.0
"""Seconds between two looks of a running server for competitions added to ``DIR/competitions``
(take5_arena/service/serve.py): a new one is served within them."""
COMPETITION_RETRY_SECONDS = 10.0
"""Seconds before a competition that could not be opened (its run lock held by another referee,
a damaged store) is tried again."""

# -- metrics (--metrics) ---------------------------------------------------------------------------
METRICS_THREADS = 8
"""Scrapes answered at once by ``--metrics``; a connection past them is closed at once (a flood
of idle connections made one thread each: 43 -> 1,045 threads)."""
METRICS_IDLE_SECONDS = 10.0
"""Seconds a ``--metrics`` connection may stay silent (headers not sent, nothing read)."""
STALL_SECONDS = 600.0
"""A ladder that could play (a season open, enough bots) and recorded no game for this long is
stalled (``--stall-seconds``; take5_arena/service/health.py): a game takes seconds to minutes."""

# -- uploads --------------------------------------------------------------------------------------
CHUNK_BYTES = 256 * 1024
"""Largest archive chunk of a SubmitBot message."""
MAX_UPLOADS_PER_AUTHOR = 2
"""Uploads received at once from one author."""
MAX_UPLOADS_AT_ONCE = 16
"""Uploads received at once in all, past which an author who has one open gets no second."""
MAX_UPLOADERS = 64
"""Uploads received at once in all, past which nobody gets one: until then every author gets at
least one, whatever the others hold."""
FIRST_MESSAGE_SECONDS = 10.0
"""Seconds a SubmitBot stream has for its first message (the metadata) before it is cut off."""
CHUNK_SECONDS = 20.0
"""Seconds within which each next chunk of an upload must come."""
UPLOAD_SECONDS = 120.0
"""An upload still running after this is cut off (a client that trickles)."""
VALIDATORS = 1
"""Submissions validated at once."""
RETRY_FIRST_SECONDS = 5.0
"""Seconds before a validation that failed for the arena's own reasons is tried again (then twice
as long each time, up to RETRY_MAX_SECONDS)."""
RETRY_MAX_SECONDS = 300.0
BOUNDED_ATTEMPTS = 3
"""Attempts of a validation whose failure may be the bot's own or the host's (its container did not
start in time, its build ran out of time) before it is refused."""

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
AUTH_RETRY_SECONDS = 1.0
"""After a wrong secret for a token id, seconds before that id's secret is hashed again."""
MAX_STORED_BYTES = 128 * 1024 * 1024
"""Archive bytes kept for one author: the accepted versions and the uploads waiting."""
MAX_WAITING_PER_AUTHOR = 3
"""Submissions of one author received and not yet judged, at once."""
CHALLENGES_PER_HOUR = 10
"""Challenges (unrated tables against chosen bots: take5_arena/service/challenges.py) one author
may ask for in an hour."""
CHALLENGES_WAITING = 2
"""Challenges of one author asked for and not yet played, at once."""
CHALLENGES_SHOWN = 20
"""An author's newest challenges listed on their page."""
MAX_CHALLENGE_OPPONENTS = 9
"""Opponents a challenge may name at most (a table has at most 10 seats): a longer list is refused
before a name of it is looked at."""
CHALLENGE_STORED_SECONDS = 30.0
"""Seconds a request for a challenge (the web form, AskChallenge) waits for its competition's
ladder to store it before it answers that the arena is busy."""

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
SEASON_GRACE_SECONDS = 300.0
"""Seconds the ladder's tables in flight at a season's end get to finish before the arena closes
it (the games not recorded by then are given up: take5_arena/service/season_switch.py)."""
LADDER_RETRY_DELAY = 2.0
"""Seconds before a ladder table whose games failed for infrastructure reasons is retried (then
twice as long each time, as in a tournament)."""
LADDER_GIVEN_UP_SECONDS = 300.0
"""Seconds a ladder game that failed all its retries waits before it is played again (with its
retries again), by this referee or another: a lasting failure (an engine gone) is not retried in a
loop, and a passing one does not leave the game pending until a restart."""


# -- what ``referee serve`` lets the organiser change --------------------------------------------


@dataclass(frozen=True)
class ServerLimits:
    """The server-wide limits, each an option of ``referee serve`` (docs/arena.md, "Limits"), with
    the defaults above. The two ceilings bound every author's own limit (``referee authors add``)
    for this run of the server; None: the author's own limit applies."""

    calls_per_author: int = MAX_CALLS_PER_AUTHOR
    uploads_per_author: int = MAX_UPLOADS_PER_AUTHOR
    uploads_at_once: int = MAX_UPLOADS_AT_ONCE
    uploaders: int = MAX_UPLOADERS
    streams_per_connection: int = MAX_STREAMS_PER_CONNECTION
    first_message_seconds: float = FIRST_MESSAGE_SECONDS
    chunk_seconds: float = CHUNK_SECONDS
    upload_seconds: float = UPLOAD_SECONDS
    max_submissions_per_hour: int | None = None
    """Ceiling of every author's submissions per hour."""
    max_archive_bytes: int | None = None
    """Ceiling of every upload's size (besides the archive limit of take5_arena/referee/archive.py
    and the author's own)."""
