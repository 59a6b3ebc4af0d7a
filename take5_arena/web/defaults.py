"""Every default of the web pages (``referee serve --web``); the service's own limits (upload time,
archive size, submissions per hour) are take5_arena/service/defaults.py's and apply here as well."""

from __future__ import annotations

from take5_arena.web.security import Rate

SESSION_SECONDS = 8 * 3600.0
"""How long a sign-in lasts (the cookie's Max-Age, and the server's own expiry)."""
CLIENT_RATE = Rate(per_second=20.0, burst=120.0)
"""Requests per client address (every request, pages and streams alike)."""
SIGNIN_RATE = Rate(per_second=0.2, burst=10.0)
"""Wrong sign-in tokens per client address: ten, then one every five seconds (a correct token is
never refused for them: take5_arena/web/app.py, ``signin``)."""
AUTHOR_RATE = Rate(per_second=1.0, burst=30.0)
"""State-changing requests per signed-in author."""
STREAMS_PER_CLIENT = 16
"""Live streams (server-sent events) open at once per client address."""
MAX_STREAMS = 2000
"""Live streams open at once in all."""
MAX_CONNECTIONS = 4000
"""Connections the web server holds at once; past it a newcomer takes the place of an idle
connection of the busiest address, or gets 503 (take5_arena/web/guard.py)."""
CONNECTIONS_PER_CLIENT = 64
"""Connections open at once per client address (an IPv6 /64 counts as one); more get 429. A
browser opens six or so per site, and its live streams count too."""
HEADER_SECONDS = 10.0
"""A request's head must come whole within this of the connection's start or of the previous
answer (slowloris); the body then has the service's upload time (``--upload-seconds``)."""
WRITE_STALL_SECONDS = 30.0
"""A client that reads nothing of its answer for this long is cut off (a slow reader)."""
STREAM_SECONDS = 600.0
"""A live stream ends after this; the browser opens a new one in two seconds (the stream's
``retry``), so an abandoned tab or a hoarder does not hold a place for ever."""
HEARTBEAT_SECONDS = 15.0
"""A comment line on an idle stream this often, so that proxies keep it open."""
STANDINGS_POLL_SECONDS = 0.5
"""How often the standings feed looks for a new publication (an attribute read: no I/O)."""
FORM_BYTES = 16 * 1024
"""The largest form other than an upload."""
GAMES_SHOWN = 200
BOT_GAMES_SHOWN = 100
"""A bot's newest published games on its page."""
ANALYSIS_DEALS = 200
"""Random deals per decision of an author's analysis of their seats (`referee analyse` uses 400:
a page's answer comes in a second or two)."""
ANALYSES_KEPT = 256
"""Analyses kept in memory (per game and seats), the oldest dropped first."""
SUBMISSIONS_SHOWN = 20
ORGANISER_TOKEN = "web-organiser-token"
"""The organiser's sign-in token, in DIR/secret/ (made at the first start with --web)."""
