"""The arena on the web: ``referee serve --web HOST:PORT`` (docs/web.md).

A Starlette application on uvicorn, in the arena's own process, beside the gRPC server: it reads
the same store and accounts, hands uploads to the same submission queue and watches the same
ladder's games turn by turn. The modules:

* ``app``: the application: the routes of every page area, the headers and limits on each request;
* ``base``: what the page areas share (sessions, the CSRF and rate guard, forms, refusals);
* ``public``, ``mine``, ``organising``: the pages of everyone, of a signed-in author, of the
  organiser, and what each reads;
* ``live``: the live feeds (standings, games in progress) fanned out to server-sent-event viewers;
* ``security``: sessions, CSRF, rate limits and the response headers (the Content-Security-Policy);
* ``guard``: each connection's deadlines (head, body, a stalled write) and the per-address caps;
* ``server``: uvicorn on a thread of its own, with the arena's TLS certificate.

Templates (Jinja2, autoescaped) are in ``templates/``, the pages' scripts and styles in ``static/``
(no inline script: the replay is the static site's own renderer, take5_arena/leaderboard/site/).
"""
