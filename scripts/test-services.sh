#!/usr/bin/env bash
# Private PostgreSQL and Redis for the test suite, plus headless Chromium.
#   start  install what is missing (apt), start both on free ports, wait until ready
#   env    print the variables the tests read (the ports `start` chose)
#   stop   stop the two servers this script started (tolerates them not running)
#
# Everything lives in the state folder (var/test-services of this checkout, or
# $HITFORGE_TEST_SERVICES_DIR): the chosen ports, pid files, data and logs.
# `start` never reuses a server it did not start, and `stop` only signals the
# pids this script recorded, so a PostgreSQL or Redis someone else runs on the
# machine (on any port) is left alone.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
state="${HITFORGE_TEST_SERVICES_DIR:-$root/var/test-services}"
ports="$state/ports"
pg_user=hitforge-pg

pg_bin() {
  local dir
  dir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
  [ -n "$dir" ] && echo "$dir"
}

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@";
  elif command -v sudo >/dev/null; then sudo "$@";
  else echo "test-services: need root (or sudo) to run: $*" >&2; exit 1; fi
}

step() { echo "test-services: $*"; }

install_missing() {
  local pkgs=()
  [ -n "$(pg_bin)" ] || pkgs+=(postgresql)
  command -v redis-server >/dev/null || pkgs+=(redis-server)
  [ -x /usr/bin/chromium ] || pkgs+=(chromium)
  command -v chromedriver >/dev/null || pkgs+=(chromium-driver)
  if [ ${#pkgs[@]} -gt 0 ]; then
    step "installing ${pkgs[*]} with apt (a few minutes on a fresh machine)"
    as_root apt-get update -qq
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${pkgs[@]}" >/dev/null
  fi
}

# A port nothing listens on now (the kernel's choice); start retries if another program takes it first.
free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# The pid in file $1 if that process is alive and its command line contains $2.
live_pid() {
  local file=$1 needle=$2 pid
  [ -f "$file" ] || return 1
  pid=$(head -n 1 "$file" | tr -dc '0-9')
  [ -n "$pid" ] && [ -r "/proc/$pid/cmdline" ] || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" | grep -qF -- "$needle" || return 1
  echo "$pid"
}

recorded() { [ -f "$ports" ] && sed -n "s/^$1=//p" "$ports"; }

record_ports() {
  printf 'pg_port=%s\nredis_port=%s\n' "$1" "$2" >"$ports.tmp"
  mv "$ports.tmp" "$ports"
}

# PostgreSQL refuses to run as root, so a dedicated system user owns the cluster.
run_pg() {
  if [ "$(id -u)" -eq 0 ]; then runuser -u "$pg_user" -- "$@"; else "$@"; fi
}

# postmaster.pid is written by the server we started in our own data folder.
pg_pid() { live_pid "$state/pg/postmaster.pid" "$state/pg"; }

start_postgres() {
  local bin data="$state/pg" sock="$state/pg-socket" port pid
  bin=$(pg_bin)
  if [ "$(id -u)" -eq 0 ]; then
    id "$pg_user" >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin "$pg_user"
    mkdir -p "$data" "$sock"; chown "$pg_user" "$data" "$sock"; chmod 700 "$data"
    # The cluster's owner must be able to reach its folder.
    chmod o+x "$root" "$root/var" "$(dirname "$state")" "$state" 2>/dev/null || true
  else
    mkdir -p "$data" "$sock"
  fi
  if [ ! -f "$data/PG_VERSION" ]; then
    step "creating a PostgreSQL cluster in $data"
    run_pg "$bin/initdb" -D "$data" -U postgres --auth=trust -E UTF8 >/dev/null
  fi
  if pid=$(pg_pid); then
    port=$(sed -n 4p "$data/postmaster.pid")  # ours, from an earlier start: keep it
  else
    for _ in 1 2 3 4 5; do
      port=$(free_port)
      if run_pg "$bin/pg_ctl" -D "$data" -l "$sock/pg.log" -w -t 60 \
        -o "-h 127.0.0.1 -p $port -k $sock -c fsync=off -c synchronous_commit=off -c full_page_writes=off" \
        start >/dev/null; then
        break
      fi
      port=""
    done
    [ -n "$port" ] || { echo "test-services: PostgreSQL did not start (see $sock/pg.log)" >&2; exit 1; }
  fi
  "$bin/pg_isready" -h 127.0.0.1 -p "$port" -q || { echo "test-services: PostgreSQL on $port is not ready" >&2; exit 1; }
  psql -h 127.0.0.1 -p "$port" -U postgres -tAc "SELECT 1 FROM pg_roles WHERE rolname='hitforge'" | grep -q 1 \
    || psql -h 127.0.0.1 -p "$port" -U postgres -qc "CREATE ROLE hitforge LOGIN SUPERUSER"
  psql -h 127.0.0.1 -p "$port" -U postgres -tAc "SELECT 1 FROM pg_database WHERE datname='hitforge_test'" | grep -q 1 \
    || psql -h 127.0.0.1 -p "$port" -U postgres -qc "CREATE DATABASE hitforge_test OWNER hitforge"
  pg_port=$port
}

redis_pid() { live_pid "$state/redis.pid" redis-server; }

start_redis() {
  local port pid
  if pid=$(redis_pid); then
    # Ours, from an earlier start: its port is recorded (or, from an older version of
    # this script, in its command line, "redis-server 127.0.0.1:PORT").
    port=$(recorded redis_port || true)
    [ -n "$port" ] || port=$(tr '\0' ' ' <"/proc/$pid/cmdline" | sed -n 's/.*127\.0\.0\.1:\([0-9][0-9]*\).*/\1/p')
    if [ -n "$port" ] && redis-cli -h 127.0.0.1 -p "$port" ping >/dev/null 2>&1; then
      redis_port=$port
      return 0
    fi
  fi
  rm -f "$state/redis.pid"
  for _ in 1 2 3 4 5; do
    port=$(free_port)
    : >"$state/redis.log"
    redis-server --bind 127.0.0.1 --port "$port" --daemonize yes --save '' --appendonly no \
      --pidfile "$state/redis.pid" --logfile "$state/redis.log" --dir "$state"
    for _ in $(seq 100); do
      if live_pid "$state/redis.pid" "127.0.0.1:$port" >/dev/null \
        && redis-cli -h 127.0.0.1 -p "$port" ping >/dev/null 2>&1; then
        redis_port=$port
        return 0
      fi
      # Another program took the port between free_port and the bind: try another.
      grep -q "Address already in use" "$state/redis.log" && break
      sleep 0.1
    done
  done
  echo "test-services: Redis did not start (see $state/redis.log)" >&2; exit 1
}

print_env() {
  local pg redis
  pg=$(recorded pg_port || true); redis=$(recorded redis_port || true)
  if [ -z "$pg" ] || [ -z "$redis" ]; then
    echo "test-services: not started (no $ports); run: $0 start" >&2; exit 1
  fi
  echo "HITFORGE_TEST_POSTGRES_URL=postgresql+psycopg://hitforge@127.0.0.1:$pg/hitforge_test"
  echo "HITFORGE_TEST_REDIS_URL=redis://127.0.0.1:$redis/0"
}

stop_all() {
  local bin pid
  bin=$(pg_bin || true)
  if pg_pid >/dev/null && [ -n "$bin" ]; then
    run_pg "$bin/pg_ctl" -D "$state/pg" stop -m fast >/dev/null 2>&1 || true
  fi
  if pid=$(redis_pid); then
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 50); do [ -d "/proc/$pid" ] || break; sleep 0.1; done
  fi
  rm -f "$ports" "$state/redis.pid"
}

case "${1:-}" in
  start)
    install_missing
    mkdir -p "$state"
    start_postgres
    start_redis
    record_ports "$pg_port" "$redis_port"
    step "PostgreSQL on $pg_port, Redis on $redis_port (state in $state); $(/usr/bin/chromium --version 2>/dev/null || echo 'chromium missing')"
    ;;
  env) print_env ;;
  stop) stop_all ;;
  *) echo "usage: $0 start|env|stop" >&2; exit 2 ;;
esac
