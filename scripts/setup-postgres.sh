#!/usr/bin/env bash
# Set up a PostgreSQL server of the project's own for the store's tests and CI (as setup-docker.sh
# does for Docker): Debian's postgresql package, a cluster in a directory of its own, reachable only
# through a unix socket in that directory (no TCP unless asked), and a database `take5` in it.
#
#   bash scripts/setup-postgres.sh          # install (if missing), initdb (once), start; print the URL
#   bash scripts/setup-postgres.sh --stop   # stop the cluster (its files stay)
#   bash scripts/setup-postgres.sh --url    # print the URL only (exit 1 when not running)
#
# Settings (environment):
#   TAKE5_PG_DIR   the cluster's directory (default: .postgres in the checkout, ignored by git); its
#                  socket is DIR/.s.PGSQL.PORT, so checkouts side by side never clash
#   TAKE5_PG_PORT  the port number (default 54329; never 5432, a machine's own server): the
#                  socket's name, and the TCP port when TAKE5_PG_TCP=1
#   TAKE5_PG_TCP   1: listen on 127.0.0.1:PORT too (loopback only; trust auth: anyone on this host
#                  can connect, so only on a machine of one's own)
# Auth is `trust` for the socket, whose directory only the cluster's owner (and root) may enter:
# isolation by the file system, not by a password. Under root the cluster belongs to the `postgres`
# user the package creates (initdb refuses root). Steps already done are skipped (~0.1 s when up).
# The URL printed is what `--store` and the tests' TAKE5_TEST_POSTGRES take.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
DIR="${TAKE5_PG_DIR:-$ROOT/.postgres}"
PORT="${TAKE5_PG_PORT:-54329}"
TCP="${TAKE5_PG_TCP:-0}"
DB=take5

log() { echo "setup-postgres: $*" >&2; }
die() { echo "setup-postgres: ERROR: $*" >&2; exit 1; }
[ "$PORT" != 5432 ] || die "TAKE5_PG_PORT=5432 is a machine's own server's port: pick another"

MODE=start
for arg in "$@"; do
    case "$arg" in
        --stop) MODE=stop ;;
        --url) MODE=url ;;
        -h|--help) sed -n '2,/^set -euo/{/^#/p}' "$0" | cut -c3-; exit 0 ;;
        *) echo "setup-postgres: unknown argument: $arg (try --help)" >&2; exit 2 ;;
    esac
done

bindir() {  # the newest installed server's bin directory (Debian: /usr/lib/postgresql/N/bin)
    local d
    d=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
    [ -n "$d" ] && [ -x "$d/initdb" ] && echo "$d"
}
BIN=$(bindir || true)
if [ -z "$BIN" ]; then
    [ "$MODE" = start ] || die "PostgreSQL is not installed"
    [ "$(id -u)" = 0 ] || die "PostgreSQL is not installed, and installing it needs root (apt-get install postgresql)"
    log "installing postgresql (apt-get)"
    export DEBIAN_FRONTEND=noninteractive NEEDRESTART_MODE=l NEEDRESTART_SUSPEND=1
    apt-get update -q </dev/null
    apt-get install -y -q --no-install-recommends postgresql </dev/null
    BIN=$(bindir) || die "no initdb under /usr/lib/postgresql after installing postgresql"
fi

# as_owner CMD...: run as the cluster's owner (root hands it to `postgres`; initdb refuses root)
OWNER=$(id -un)
[ "$(id -u)" != 0 ] || OWNER=postgres
as_owner() {
    if [ "$(id -u)" = 0 ]; then runuser -u "$OWNER" -- "$@"; else "$@"; fi
}
URL="postgresql:///$DB?host=$DIR&port=$PORT&user=$OWNER"
running() { as_owner "$BIN/pg_ctl" status -D "$DIR" >/dev/null 2>&1; }

case "$MODE" in
    url) running || die "not running (bash scripts/setup-postgres.sh starts it)"; echo "$URL"; exit 0 ;;
    stop)
        if running; then as_owner "$BIN/pg_ctl" stop -D "$DIR" -m fast -s; log "stopped $DIR"
        else log "not running"; fi
        exit 0 ;;
esac

if [ ! -s "$DIR/PG_VERSION" ]; then
    log "initdb $DIR (owner $OWNER, locale C, UTF-8)"
    mkdir -p "$DIR"
    [ "$(id -u)" != 0 ] || chown "$OWNER:" "$DIR"
    chmod 700 "$DIR"
    as_owner "$BIN/initdb" -D "$DIR" -U "$OWNER" --auth=trust --locale=C --encoding=UTF8 \
        >"$DIR.initdb.log" 2>&1 || { cat "$DIR.initdb.log" >&2; die "initdb failed"; }
    rm -f "$DIR.initdb.log"
fi
if ! running; then
    listen="''"
    [ "$TCP" != 1 ] || listen=127.0.0.1
    log "starting the cluster in $DIR (socket $DIR/.s.PGSQL.$PORT$([ "$TCP" != 1 ] || echo ", tcp 127.0.0.1:$PORT"))"
    as_owner "$BIN/pg_ctl" start -D "$DIR" -w -t 60 -s -l "$DIR/server.log" \
        -o "-c listen_addresses=$listen -p $PORT -k $DIR -c unix_socket_permissions=0700 -c max_connections=200 -c fsync=${TAKE5_PG_FSYNC:-on}" \
        || { tail -n 20 "$DIR/server.log" >&2 || true; die "pg_ctl start failed (log: $DIR/server.log)"; }
fi
if ! as_owner "$BIN/psql" -h "$DIR" -p "$PORT" -d postgres -Atqc "SELECT 1 FROM pg_database WHERE datname = '$DB'" | grep 1 >/dev/null; then
    as_owner "$BIN/createdb" -h "$DIR" -p "$PORT" -T template0 -E UTF8 --locale=C "$DB"
fi
echo "$URL"
