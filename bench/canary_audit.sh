#!/usr/bin/env bash
# A runner's audit measured on this machine: the real `benchgate serve` and one real agent
# (sandboxed as in production) run canaries back to back on a CPU-bound workload until the
# runner has A_A A/A canaries and PLANTED_EACH of each planted size, then print its audit.
#
# The workload is `benchgate spin` (ITERATIONS xorshift steps, a few milliseconds), measured as
# a whole process (wall time, the gated metric). Planted canaries plant real work: the suite
# says `canary_work = true`, so head's runs get BENCHGATE_PLANTED and spin does that much more.
#
#   bench/canary_audit.sh                        # 100 A/A, 50 each of +2% and +5%
#   A_A=20 PLANTED_EACH=10 bench/canary_audit.sh # a quick look
#
# Needs a release build (`cargo build --release --bin benchgate`) and bubblewrap.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
bin=${BENCHGATE_BIN:-${CARGO_TARGET_DIR:-$repo/target}/release/benchgate}
aa=${A_A:-100}
each=${PLANTED_EACH:-50}
planted=${PLANTED:-2,5}
rounds=${ROUNDS:-20}
iterations=${ITERATIONS:-3000000}
admin=canary-audit-admin
[ -x "$bin" ] || { echo "canary_audit: no benchgate binary at $bin; cargo build --release --bin benchgate" >&2; exit 2; }
command -v jq >/dev/null || { echo "canary_audit: jq is not installed" >&2; exit 2; }

work=$(mktemp -d /tmp/canary_audit.XXXXXX)
server_pid= agent_pid=
cleanup() {
    [ -n "$agent_pid" ] && kill "$agent_pid" 2>/dev/null || true
    [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null || true
    wait 2>/dev/null || true
}
trap cleanup EXIT

# The suite: a repository whose benchmark is benchgate's own spin.
mkdir -p "$work/suite"
cat > "$work/suite/bench.sh" <<EOF
#!/bin/sh
exec "\$BENCHGATE_BIN" spin --iterations $iterations
EOF
git -C "$work/suite" init -q
git -C "$work/suite" -c user.name=audit -c user.email=audit@example.invalid add .
git -C "$work/suite" -c user.name=audit -c user.email=audit@example.invalid commit -qm suite
sha=$(git -C "$work/suite" rev-parse HEAD)

db="sqlite://$work/benchgate.db"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
url="http://127.0.0.1:$port"
BENCHGATE_DATABASE_URL=$db BENCHGATE_ADMIN_TOKEN=$admin BENCHGATE_CLAIM_WAIT=2 \
    BENCHGATE_CANARY_EVERY=1s BENCHGATE_CANARY_TICK_MS=200 BENCHGATE_CANARY_PLANTED=$planted \
    BENCHGATE_CANARY_ROUNDS=$rounds RUST_LOG=warn \
    "$bin" serve --listen "127.0.0.1:$port" > "$work/server.log" 2>&1 &
server_pid=$!
for _ in $(seq 100); do curl -sf "$url/healthz" >/dev/null 2>&1 && break; sleep 0.2; done
token=$(BENCHGATE_DATABASE_URL=$db "$bin" runner add audit-1 --labels audit | sed -n 's/^token: //p')
BENCHGATE_TOKEN=$token RUST_LOG=warn "$bin" agent --server "$url" --work-dir "$work/agent" \
    > "$work/agent.log" 2>&1 &
agent_pid=$!

# One comparison of the suite gives the canaries their base and config.
curl -sf -X POST "$url/api/v1/comparisons" -H "Authorization: Bearer $admin" \
    -H 'Content-Type: application/json' -d @- >/dev/null <<EOF
{"repository": "$work/suite", "base": "$sha", "head": "$sha", "runner_label": "audit",
 "config": {"benchmark": {"run": "sh bench.sh", "format": "command", "rounds": 10,
   "env": ["BENCHGATE_BIN=$bin"], "canary_work": true}}}
EOF

started=$(date +%s)
echo "canary_audit: $(nproc) CPUs, $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg); waiting for $aa A/A and $each of each planted size ($planted%)" >&2
while :; do
    audit=$(curl -sf "$url/api/v1/runners/audit-1/audit" || echo '{}')
    have_aa=$(jq -r '.aa.trials // 0' <<<"$audit")
    least=$(jq -r '[.planted[]?.found.trials] | if length == 0 then 0 else min end' <<<"$audit")
    kinds=$(jq -r '.planted | length // 0' <<<"$audit")
    echo "  $(( $(date +%s) - started )) s: $have_aa A/A, fewest planted $least ($kinds sizes)" >&2
    if [ "$have_aa" -ge "$aa" ] && [ "$kinds" -ge "$(tr ',' '\n' <<<"$planted" | wc -l)" ] && [ "$least" -ge "$each" ]; then
        break
    fi
    kill -0 "$agent_pid" 2>/dev/null || { echo "canary_audit: the agent died; $work/agent.log" >&2; exit 1; }
    sleep 10
done
echo "canary_audit: $(( $(date +%s) - started )) s, load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
jq . <<<"$audit"
