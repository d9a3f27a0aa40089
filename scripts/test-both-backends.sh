#!/usr/bin/env bash
# The whole suite on both backends at once: the embedded default (SQLite and the
# SQLite broker) in the foreground, PostgreSQL + Redis beside it (its output
# kept and shown when it ends). The two runs share nothing but the machine:
# each has its own databases, broker, servers and scratch folders, so on two
# cores they take about as long as the slower one alone, not the two in turn.
#
# HITFORGE_TEST_HALF names each run's half (tests/conftest.py says which tests
# run where): a test that reaches the backend runs in both, except the browser
# tests (embedded only); one that does not would run the same twice, so it runs
# in one of the two, chosen to keep the halves about as long.
#
# Needs the services' variables in the environment (scripts/test-services.sh env).
set -u
BIN=${BIN:-.venv/bin}
logs=$(mktemp -d)
trap 'kill 0 2>/dev/null' INT TERM

HITFORGE_TEST_BACKEND=postgres HITFORGE_TEST_HALF=postgres "$BIN/pytest" -q -p no:cacheprovider "$@" >"$logs/postgres.log" 2>&1 &
postgres=$!

echo "==> the suite on the embedded default (SQLite); PostgreSQL + Redis runs beside it"
HITFORGE_TEST_HALF=embedded "$BIN/pytest" -q -p no:cacheprovider "$@"
embedded_rc=$?

echo "==> waiting for the PostgreSQL + Redis run"
wait "$postgres"
postgres_rc=$?
echo "==> the suite on PostgreSQL + Redis"
cat "$logs/postgres.log"
rm -rf "$logs"

echo "==> embedded default: $([ $embedded_rc -eq 0 ] && echo passed || echo "FAILED ($embedded_rc)");" \
     "PostgreSQL + Redis: $([ $postgres_rc -eq 0 ] && echo passed || echo "FAILED ($postgres_rc)")"
[ $embedded_rc -eq 0 ] && [ $postgres_rc -eq 0 ]
