#!/usr/bin/env bash
# A throwaway PostgreSQL server for the history store's tests (tests/storage/history, tests/history), never a mock.
#
#   eval "$(.ci/postgres.sh start)"   # prints: export KERNELWATCH_TEST_POSTGRES=postgresql+psycopg://...
#   .ci/postgres.sh stop
#
# start installs Debian's postgresql package when no server binaries are found (needs root),
# initdb's a scratch cluster in $KERNELWATCH_PG_ROOT (default /tmp/kernel-suite-postgres),
# starts it on 127.0.0.1 only, on a free port, with password authentication, and creates a
# role that may create databases (each test makes its own) and a database of that name.
# The server refuses to run as root: as root, it runs as the postgres user.
# Everything but the export line goes to stderr.
set -euo pipefail

root=${KERNELWATCH_PG_ROOT:-/tmp/kernel-suite-postgres}
user=kernel_suite

as_postgres() {
    if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

bindir() {
    local dir
    dir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
    if [ -z "$dir" ] && command -v pg_config >/dev/null; then dir=$(pg_config --bindir); fi
    [ -n "$dir" ] && [ -x "$dir/initdb" ] && echo "$dir"
}

start() {
    local bin
    if ! bin=$(bindir); then
        echo "postgres.sh: installing Debian's postgresql package" >&2
        apt-get update -qq >&2
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >&2
        bin=$(bindir) || { echo "postgres.sh: no initdb after installing postgresql" >&2; exit 1; }
    fi
    if [ -e "$root" ]; then stop; fi
    mkdir -p "$root"
    [ "$(id -u)" = 0 ] && chown postgres: "$root"
    local port password
    port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    password=$(python3 -c 'import secrets; print(secrets.token_hex(16))')
    as_postgres sh -c "umask 077; echo '$password' > '$root/password'"
    as_postgres "$bin/initdb" -D "$root/data" -U postgres --auth-local=trust --auth-host=scram-sha-256 \
        --pwfile="$root/password" -E UTF8 --locale=C.UTF-8 >&2
    as_postgres "$bin/pg_ctl" -D "$root/data" -l "$root/server.log" -w \
        -o "-c listen_addresses=127.0.0.1 -p $port -k $root -c fsync=off" start >&2
    as_postgres "$bin/psql" -h "$root" -p "$port" -U postgres -v ON_ERROR_STOP=1 -q -d postgres >&2 <<SQL
CREATE ROLE $user LOGIN CREATEDB PASSWORD '$password';
CREATE DATABASE $user OWNER $user;
SQL
    echo "export KERNELWATCH_TEST_POSTGRES=postgresql+psycopg://$user:$password@127.0.0.1:$port/$user"
}

stop() {
    local bin
    if [ -d "$root/data" ] && bin=$(bindir); then
        as_postgres "$bin/pg_ctl" -D "$root/data" -m fast -w stop >&2 || true
    fi
    rm -rf "$root"
}

case "${1:-}" in
    start) start ;;
    stop) stop ;;
    *) echo "usage: $0 start|stop" >&2; exit 2 ;;
esac
