#!/usr/bin/env bash
# Private PostgreSQL and Redis for the test suite, plus headless Chromium.
#   start  install what is missing (apt), start both on spare ports, wait until ready
#   env    print the variables the tests read
#   stop   stop both (tolerates them not running)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
state="$root/var/test-services"
pg_port=54329
redis_port=63799
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

install_missing() {
  local pkgs=()
  [ -n "$(pg_bin)" ] || pkgs+=(postgresql)
  command -v redis-server >/dev/null || pkgs+=(redis-server)
  [ -x /usr/bin/chromium ] || pkgs+=(chromium)
  command -v chromedriver >/dev/null || pkgs+=(chromium-driver)
  if [ ${#pkgs[@]} -gt 0 ]; then
    echo "test-services: installing ${pkgs[*]}"
    as_root apt-get update -qq
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${pkgs[@]}" >/dev/null
  fi
}

# PostgreSQL refuses to run as root, so a dedicated system user owns the cluster.
run_pg() {
  if [ "$(id -u)" -eq 0 ]; then runuser -u "$pg_user" -- "$@"; else "$@"; fi
}

start_postgres() {
  local bin data="$state/pg" sock="$state/pg-socket"
  bin=$(pg_bin)
  mkdir -p "$state"
  if [ "$(id -u)" -eq 0 ]; then
    id "$pg_user" >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin "$pg_user"
    mkdir -p "$data" "$sock"; chown "$pg_user" "$data" "$sock"; chmod 700 "$data"
    chmod o+x "$root" "$root/var" "$state" 2>/dev/null || true
  else
    mkdir -p "$data" "$sock"
  fi
  if [ ! -f "$data/PG_VERSION" ]; then
    run_pg "$bin/initdb" -D "$data" -U postgres --auth=trust -E UTF8 >/dev/null
  fi
  if ! run_pg "$bin/pg_ctl" -D "$data" status >/dev/null 2>&1; then
    run_pg "$bin/pg_ctl" -D "$data" -l "$sock/pg.log" -w -t 60 \
      -o "-h 127.0.0.1 -p $pg_port -k $sock -c fsync=off -c synchronous_commit=off -c full_page_writes=off" start >/dev/null
  fi
  for _ in $(seq 60); do
    "$bin/pg_isready" -h 127.0.0.1 -p "$pg_port" -q && break
    sleep 1
  done
  "$bin/pg_isready" -h 127.0.0.1 -p "$pg_port" -q || { echo "test-services: PostgreSQL did not start (see $state/pg-socket/pg.log)" >&2; exit 1; }
  psql -h 127.0.0.1 -p "$pg_port" -U postgres -tAc "SELECT 1 FROM pg_roles WHERE rolname='hitforge'" | grep -q 1 \
    || psql -h 127.0.0.1 -p "$pg_port" -U postgres -qc "CREATE ROLE hitforge LOGIN SUPERUSER"
  psql -h 127.0.0.1 -p "$pg_port" -U postgres -tAc "SELECT 1 FROM pg_database WHERE datname='hitforge_test'" | grep -q 1 \
    || psql -h 127.0.0.1 -p "$pg_port" -U postgres -qc "CREATE DATABASE hitforge_test OWNER hitforge"
}

start_redis() {
  mkdir -p "$state"
  if ! redis-cli -h 127.0.0.1 -p "$redis_port" ping >/dev/null 2>&1; then
    redis-server --bind 127.0.0.1 --port "$redis_port" --daemonize yes --save '' --appendonly no \
      --pidfile "$state/redis.pid" --logfile "$state/redis.log" --dir "$state"
  fi
  for _ in $(seq 60); do
    redis-cli -h 127.0.0.1 -p "$redis_port" ping >/dev/null 2>&1 && return 0
    sleep 1
  done
  echo "test-services: Redis did not start (see $state/redis.log)" >&2; exit 1
}

print_env() {
  echo "HITFORGE_TEST_POSTGRES_URL=postgresql+psycopg://hitforge@127.0.0.1:$pg_port/hitforge_test"
  echo "HITFORGE_TEST_REDIS_URL=redis://127.0.0.1:$redis_port/0"
}

case "${1:-}" in
  start)
    install_missing
    start_postgres
    start_redis
    echo "test-services: PostgreSQL on $pg_port, Redis on $redis_port; $(/usr/bin/chromium --version 2>/dev/null || echo 'chromium missing')"
    ;;
  env) print_env ;;
  stop)
    bin=$(pg_bin || true)
    if [ -n "$bin" ] && [ -f "$state/pg/PG_VERSION" ]; then
      run_pg "$bin/pg_ctl" -D "$state/pg" stop -m fast >/dev/null 2>&1 || true
    fi
    redis-cli -h 127.0.0.1 -p "$redis_port" shutdown nosave >/dev/null 2>&1 || true
    ;;
  *) echo "usage: $0 start|env|stop" >&2; exit 2 ;;
esac
