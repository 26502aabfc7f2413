#!/usr/bin/env bash
# Webhook ingest throughput, benchgate against pgbench, measured side by side.
#
# Starts the real `benchgate serve` on a free local port against a fresh Postgres database,
# sends signed 27 KB `pull_request` deliveries with wrk (8 connections; every request has its
# own X-GitHub-Delivery and an X-Hub-Signature-256 over the exact bytes sent), and runs pgbench
# on the same database with a script doing the two inserts a delivery needs at the least (the
# delivery row and its outbox row) at 8 clients. The two alternate, ROUNDS times each (ABAB),
# so drift and the other load on the machine land on both. Prints each run's rate, the medians,
# the spread and the ratio benchgate / pgbench.
#
#   bench/webhook_ingest.sh                   # 5 rounds of 10 s each
#   ROUNDS=3 DURATION=5 bench/webhook_ingest.sh
#   BENCHGATE_BIN=/path/to/benchgate bench/webhook_ingest.sh   # e.g. a build of an older commit
#   STATEMENTS=1 bench/webhook_ingest.sh      # also count the SQL statements of one delivery
#
# Needs: wrk, pgbench, psql, openssl, a release build (`cargo build --release --bin benchgate`),
# and a Postgres where INGEST_PG's user may create databases.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
bin=${BENCHGATE_BIN:-${CARGO_TARGET_DIR:-$repo/target}/release/benchgate}
pg=${INGEST_PG:-postgres://postgres@127.0.0.1:5432}
rounds=${ROUNDS:-5}
duration=${DURATION:-10}
connections=${CONNECTIONS:-8}
threads=${THREADS:-2}
# Distinct PRs the deliveries are spread over: one repository and installation, many PRs.
body_count=${BODY_COUNT:-256}
fixture=$repo/crates/github/tests/fixtures/webhooks/pull_request.opened.json
secret=ingest-bench-secret

for tool in wrk pgbench psql openssl; do
    command -v "$tool" >/dev/null || { echo "webhook_ingest: $tool is not installed" >&2; exit 2; }
done
[ -x "$bin" ] || { echo "webhook_ingest: no benchgate binary at $bin; cargo build --release --bin benchgate" >&2; exit 2; }

work=$(mktemp -d /tmp/webhook_ingest.XXXXXX)
db=benchgate_ingest_$$
db_url=$pg/$db
server_pid=
cleanup() {
    if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
    psql -q "$pg/postgres" -c "DROP DATABASE IF EXISTS $db" >/dev/null 2>&1 || true
    rm -rf "$work"
}
trap cleanup EXIT

# The bodies: the real payload (octokit/webhooks' pull_request.opened, 28,011 bytes) with its
# PR number and head sha changed in place, so every body has the fixture's size and shape.
mkdir "$work/bodies"
for i in $(seq 1 "$body_count"); do
    sha=$(printf '%040x' "$i")
    sed -e "s/^  \"number\": 2,\$/  \"number\": $i,/" \
        -e "s/^    \"number\": 2,\$/    \"number\": $i,/" \
        -e "s/ec26c3e57ca3a959ca5aad62de7213c562f8c821/$sha/" \
        "$fixture" >"$work/bodies/$i.json"
    printf 'sha256=%s\n' "$(openssl dgst -sha256 -hmac "$secret" -r "$work/bodies/$i.json" | cut -d' ' -f1)" \
        >"$work/bodies/$i.sig"
done
body_bytes=$(wc -c <"$work/bodies/1.json")

psql -q "$pg/postgres" -c "CREATE DATABASE $db" >/dev/null
"$bin" migrate --database-url "$db_url" >"$work/migrate.log" 2>&1

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
BENCHGATE_LOG_FORMAT=json RUST_LOG=${RUST_LOG:-info} BENCHGATE_WEBHOOK_SECRET="$secret" \
    "$bin" serve --listen "127.0.0.1:$port" --database-url "$db_url" >"$work/server.log" 2>&1 &
server_pid=$!
for _ in $(seq 1 100); do
    curl -fsS "http://127.0.0.1:$port/readyz" >/dev/null 2>&1 && break
    sleep 0.1
done
curl -fsS "http://127.0.0.1:$port/readyz" >/dev/null || { echo "server did not start:" >&2; cat "$work/server.log" >&2; exit 1; }

run_wrk() { # run-label seconds -> prints requests/s
    INGEST_BODIES=$work/bodies INGEST_BODY_COUNT=$body_count INGEST_RUN=$1 \
        wrk -t "$threads" -c "$connections" -d "${2}s" -s "$here/webhook_ingest.lua" \
        "http://127.0.0.1:$port" >"$work/wrk-$1.out" 2>&1
    local line
    line=$(grep '^INGEST ' "$work/wrk-$1.out") || { cat "$work/wrk-$1.out" >&2; exit 1; }
    local requests us bad
    requests=$(sed 's/.* requests=\([0-9]*\).*/\1/' <<<"$line")
    us=$(sed 's/.* duration_us=\([0-9]*\).*/\1/' <<<"$line")
    bad=$(sed 's/.* non2xx=\([0-9]*\) connect=\([0-9]*\) read=\([0-9]*\) write=\([0-9]*\) timeout=\([0-9]*\).*/\1+\2+\3+\4+\5/' <<<"$line")
    if [ "$((bad))" -ne 0 ]; then
        echo "wrk run $1 had failures: $line" >&2; tail -5 "$work/server.log" >&2; exit 1
    fi
    awk -v n="$requests" -v us="$us" 'BEGIN { printf "%.0f\n", n / (us / 1e6) }'
}

# One delivery to learn the exact outbox row benchgate writes, so pgbench writes the same.
run_wrk warmup 3 >/dev/null
payload=$(psql -At "$db_url" -c "SELECT payload::text FROM outbox ORDER BY id LIMIT 1")
kind=$(psql -At "$db_url" -c "SELECT kind FROM outbox ORDER BY id LIMIT 1")
cat >"$work/pgbench.sql" <<SQL
\\set pr random(1, $body_count)
\\set r random(1, 9000000000000000000)
BEGIN;
INSERT INTO webhook_deliveries (delivery_id, event, action, received_at, outcome) VALUES ('pgbench-' || :client_id || '-' || :r, 'pull_request', 'opened', now(), 'scheduled') ON CONFLICT (delivery_id) DO NOTHING;
INSERT INTO outbox (kind, dedupe_key, payload, next_attempt_at, created_at) VALUES ('$kind', 'pgbench:' || :pr, '$payload', now(), now()) ON CONFLICT (dedupe_key) WHERE done_at IS NULL DO UPDATE SET kind = excluded.kind, payload = excluded.payload, revision = outbox.revision + 1 RETURNING id;
END;
SQL
run_pgbench() { # seconds -> prints transactions/s
    pgbench -n -M prepared -c "$connections" -j "$threads" -T "$1" -f "$work/pgbench.sql" "$db_url" \
        >"$work/pgbench.out" 2>&1 || { cat "$work/pgbench.out" >&2; exit 1; }
    grep -E '^tps = ' "$work/pgbench.out" | sed 's/tps = \([0-9.]*\).*/\1/' | awk '{ printf "%.0f\n", $1 }'
}
run_pgbench 3 >/dev/null

if [ "${STATEMENTS:-0}" = 1 ]; then
    # Statements of one delivery as Postgres logs them (this database only).
    log=$(ls -t /var/log/postgresql/*.log 2>/dev/null | head -1)
    if [ -r "$log" ]; then
        psql -q "$db_url" -c "ALTER DATABASE $db SET log_statement = 'all'"
        kill "$server_pid"; wait "$server_pid" 2>/dev/null || true
        BENCHGATE_LOG_FORMAT=json BENCHGATE_WEBHOOK_SECRET="$secret" "$bin" serve \
            --listen "127.0.0.1:$port" --database-url "$db_url" >>"$work/server.log" 2>&1 &
        server_pid=$!
        until curl -fsS "http://127.0.0.1:$port/readyz" >/dev/null 2>&1; do sleep 0.1; done
        for one in one-a one-b; do # the second sees the rows the first wrote
            before=$(wc -l <"$log")
            curl -fsS -o /dev/null -H 'Content-Type: application/json' -H 'X-GitHub-Event: pull_request' \
                -H "X-GitHub-Delivery: statements-$one" -H "X-Hub-Signature-256: $(cat "$work/bodies/1.sig")" \
                --data-binary @"$work/bodies/1.json" "http://127.0.0.1:$port/webhooks/github"
            sleep 0.5
            echo "statements of delivery $one:"
            tail -n +"$((before + 1))" "$log" | grep -E "\[[0-9]+\].*(LOG|DETAIL): +(statement|execute|duration)" \
                | sed -E 's/.*(statement|execute [^:]*): /  /' | cut -c1-150
        done
        psql -q "$db_url" -c "ALTER DATABASE $db RESET log_statement"
    else
        echo "STATEMENTS=1: cannot read the Postgres log; skipped" >&2
    fi
fi

echo "benchgate: $bin ($("$bin" --version))"
echo "machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores; $(psql -At "$db_url" -c 'SHOW server_version') on the same machine"
echo "load: $connections connections, wrk -t$threads, $body_bytes-byte bodies over $body_count PRs; pgbench -M prepared -c $connections -j $threads; $rounds rounds of ${duration}s, alternating"
printf '%-6s %12s %12s %7s\n' round benchgate/s pgbench/s ratio
: >"$work/rates"
for r in $(seq 1 "$rounds"); do
    b=$(run_wrk "round$r" "$duration")
    p=$(run_pgbench "$duration")
    echo "$b $p" >>"$work/rates"
    awk -v r="$r" -v b="$b" -v p="$p" 'BEGIN { printf "%-6s %12d %12d %7.3f\n", r, b, p, b / p }'
done

summary() { # column -> "median min max spread%"
    cut -d' ' -f"$1" "$work/rates" | sort -n | awk '{ v[NR] = $1 } END {
        m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
        printf "%.0f %d %d %.1f\n", m, v[1], v[NR], 100 * (v[NR] - v[1]) / m }'
}
read -r bm bmin bmax bs <<<"$(summary 1)"
read -r pm pmin pmax ps <<<"$(summary 2)"
echo "benchgate median $bm/s (min $bmin, max $bmax, spread $bs% of the median)"
echo "pgbench   median $pm/s (min $pmin, max $pmax, spread $ps% of the median)"
awk -v b="$bm" -v p="$pm" 'BEGIN { printf "ratio of medians benchgate/pgbench: %.3f\n", b / p }'

# Nothing lost: every delivery wrk saw answered is a row, each once.
answered=$(cat "$work"/wrk-*.out | sed -n 's/^INGEST requests=\([0-9]*\).*/\1/p' | awk '{ n += $1 } END { print n }')
stored=$(psql -At "$db_url" -c "SELECT count(*) FROM webhook_deliveries WHERE delivery_id NOT LIKE 'pgbench-%' AND delivery_id NOT LIKE 'statements-%'")
errors=$(grep -c '"level":"ERROR"' "$work/server.log" || true)
echo "deliveries answered $answered, stored $stored (in flight at a run's end are stored but not counted); server errors logged: $errors"
[ "$stored" -ge "$answered" ] && [ "$errors" -eq 0 ]
