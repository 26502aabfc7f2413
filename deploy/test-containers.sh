#!/usr/bin/env bash
# The container test: builds benchgate's images locally (no image registry is needed), runs
# docker-compose.yml with Postgres, the server and an agent, drives one comparison of a local git
# repository end to end, recreates the containers and checks the data survived, and tears it all
# down. Run as root on Debian; .ci/run calls it after the test command. Steps and timings:
# deploy/README.md.
#   BENCHGATE_BIN  binary to put in the image (default: the debug build the test command made;
#                  built with cargo when missing)
set -euo pipefail
cd "$(dirname "$0")/.."

START=$(date +%s)
BASE_IMAGE=benchgate-base:bookworm
APP_IMAGE=benchgate-test/benchgate:local
PG_IMAGE=benchgate-test/postgres:local
PROJECT=benchgate-container-test
# Ten, not six: the interval of a cpu_time series on a loaded machine may not open before
# about eight pairs, however large the change (same reason as tests/agent_sandbox.rs).
ROUNDS=10

step() { echo "container-test: [$(($(date +%s) - START))s] $*"; }
FAIL_REASON=
fail() {
  FAIL_REASON="$*"
  echo "container-test: FAILED: $*" >&2
  exit 1
}

# --- Tools -------------------------------------------------------------------------------------
# command → Debian package; installed together, with one apt-get update, when any is missing.
declare -A PACKAGE_OF=(
  [dockerd]=docker.io [docker-compose]=docker-compose [debootstrap]=debootstrap
  [curl]=curl [jq]=jq [openssl]=openssl [git]=git [strip]=binutils
  [systemd-analyze]=systemd [unshare]=util-linux
)
missing=()
for cmd in "${!PACKAGE_OF[@]}"; do
  command -v "$cmd" >/dev/null || missing+=("${PACKAGE_OF[$cmd]}")
done
if ((${#missing[@]})); then
  step "installing ${missing[*]}"
  apt-get update -qq || fail "apt-get update failed"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null ||
    fail "apt-get install ${missing[*]} failed"
fi
# Debian's client matches Debian's dockerd (another docker client may sit earlier on PATH).
DOCKER=$(command -v /usr/bin/docker || command -v docker) || fail "no docker client after installing docker.io"
docker() { "$DOCKER" "$@"; }
# Runs a command with its output kept aside, shown only when it fails.
quietly() {
  local out
  out=$(mktemp)
  if ! "$@" >"$out" 2>&1; then
    cat "$out" >&2
    rm -f "$out"
    return 1
  fi
  rm -f "$out"
}

# --- systemd units -----------------------------------------------------------------------------
# verify checks that ExecStart exists: a private mount namespace shows a benchgate binary at
# /usr/local/bin without touching the host's.
step "systemd-analyze verify deploy/systemd/*.service"
unshare --mount sh -c 'mount -t tmpfs tmpfs /usr/local/bin && ln -s /bin/true /usr/local/bin/benchgate &&
  systemd-analyze verify deploy/systemd/*.service' || fail "systemd-analyze verify found problems in deploy/systemd"

# --- Docker engine -----------------------------------------------------------------------------
if ! docker info >/dev/null 2>&1; then
  step "starting dockerd (log: /var/log/benchgate-dockerd.log)"
  [ "$(id -u)" = 0 ] || fail "dockerd is not running and only root can start it"
  # The daemon outlives this script: it must not inherit our open files (a caller's lock file
  # held open by dockerd would stay locked for as long as dockerd runs).
  (
    for fd in /proc/self/fd/*; do
      fd=${fd##*/}
      [ "$fd" -gt 2 ] 2>/dev/null && eval "exec $fd>&-" 2>/dev/null
    done
    exec setsid nohup dockerd >/var/log/benchgate-dockerd.log 2>&1 </dev/null
  ) &
  for _ in $(seq 1 60); do
    docker info >/dev/null 2>&1 && break
    sleep 1
  done
  if ! docker info >/dev/null 2>&1; then
    tail -n 30 /var/log/benchgate-dockerd.log >&2 || true
    fail "dockerd did not come up within 60 s (its log is above)"
  fi
fi

# --- Images ------------------------------------------------------------------------------------
if docker image inspect "$BASE_IMAGE" >/dev/null 2>&1; then
  step "base image $BASE_IMAGE exists; reusing it"
else
  step "building $BASE_IMAGE with debootstrap (about half a minute)"
  rootfs=$(mktemp -d)
  debootstrap --variant=minbase bookworm "$rootfs" >/tmp/benchgate-debootstrap.log 2>&1 ||
    { tail -n 20 /tmp/benchgate-debootstrap.log >&2; fail "debootstrap failed (log above)"; }
  tar -C "$rootfs" -c . | docker import - "$BASE_IMAGE" >/dev/null || fail "docker import of the base image failed"
  rm -rf "$rootfs"
fi

BIN=${BENCHGATE_BIN:-${CARGO_TARGET_DIR:-target}/debug/benchgate}
if [ ! -x "$BIN" ]; then
  step "no binary at $BIN; cargo build --locked --bin benchgate"
  cargo build --locked --bin benchgate || fail "cargo build failed"
fi
context=$(mktemp -d)
# Debug info is most of a debug binary's size and of no use in the image.
strip -o "$context/benchgate" "$BIN" || fail "cannot copy $BIN"

step "building $PG_IMAGE and $APP_IMAGE"
quietly docker build -t "$PG_IMAGE" --build-arg BASE_IMAGE="$BASE_IMAGE" \
  -f deploy/container-test/postgres.Dockerfile deploy/container-test ||
  fail "building the Postgres image failed"
DOCKER_BUILDKIT=1 quietly docker build -t "$APP_IMAGE" --build-arg BENCHGATE_BINARY=prebuilt \
  --build-arg BASE_IMAGE="$BASE_IMAGE" -f deploy/Dockerfile "$context" ||
  fail "building benchgate's image (prebuilt binary) failed"
rm -rf "$context"
[ "$(docker image inspect -f '{{.Config.User}}' "$APP_IMAGE")" = benchgate ] ||
  fail "benchgate's image does not run as the benchgate user"
healthcheck=$(docker image inspect -f '{{.Config.Healthcheck.Test}}' "$APP_IMAGE")
grep -q /readyz <<<"$healthcheck" ||
  fail "benchgate's image has no HEALTHCHECK on /readyz"

# --- A repository to benchmark, secrets, compose ------------------------------------------------
WORK=$(mktemp -d /tmp/benchgate-container-test.XXXXXX)
REPO=$WORK/repo
mkdir -p "$REPO" "$WORK/secrets"
# Head spins three times as long as base; `benchgate spin` is the image's own CPU-bound workload.
printf '#!/bin/sh\nexec benchgate spin --iterations "$(cat iterations)"\n' >"$REPO/bench.sh"
printf '[benchmark]\nrun = "sh bench.sh"\nformat = "command"\nrounds = %s\nrunner = "default"\n' \
  "$ROUNDS" >"$REPO/.benchgate.toml"
echo 2000000 >"$REPO/iterations"
g() { git -C "$REPO" -c user.name=ci -c user.email=ci@localhost "$@"; }
g init -q && g add . && g commit -qm base
BASE_SHA=$(g rev-parse HEAD)
echo 6000000 >"$REPO/iterations"
g commit -qam "head: three times the work"
HEAD_SHA=$(g rev-parse HEAD)
# The agent runs as uid 10001; git refuses repositories owned by someone else.
chown -R 10001:10001 "$REPO"

random() { openssl rand -hex 32; }
export COMPOSE_PROJECT_NAME=$PROJECT
export POSTGRES_PASSWORD BENCHGATE_ADMIN_TOKEN BENCHGATE_WEBHOOK_SECRET
POSTGRES_PASSWORD=$(random) BENCHGATE_ADMIN_TOKEN=$(random) BENCHGATE_WEBHOOK_SECRET=$(random)
export BENCHGATE_HTTP_PUBLISH=127.0.0.1:0 BENCHGATE_TEST_SECRETS=$WORK/secrets BENCHGATE_TEST_REPO=$REPO
# The test's own repository is trusted: it runs unsandboxed, said explicitly (none); the
# compose file's default (bwrap) is checked to refuse below.
export BENCHGATE_TEST_SANDBOX=${BENCHGATE_TEST_SANDBOX:-none}
# Until `runner add` has printed the real one; the agent is not started before that.
export BENCHGATE_AGENT_TOKEN=not-registered-yet
compose() { docker-compose -f docker-compose.yml -f deploy/container-test/compose.override.yml "$@"; }

teardown() {
  local rc=$?
  if ((rc != 0)); then
    echo "container-test: --- state and logs at the failure ---" >&2
    compose ps >&2 || true
    compose logs --no-color --tail=60 >&2 || true
  fi
  compose down -v --remove-orphans >/dev/null 2>&1 || true
  rm -rf "$WORK"
  if ((rc == 0)); then
    step "passed; everything torn down"
  else
    # Again after the logs, so the reason is the last thing a truncated CI log shows.
    echo "container-test: FAILED (exit $rc) after $(($(date +%s) - START)) s: ${FAIL_REASON:-see above}" >&2
  fi
}
trap teardown EXIT
compose down -v --remove-orphans >/dev/null 2>&1 || true

# Waits until the server's container reports healthy (the image's HEALTHCHECK on /readyz).
wait_server_healthy() {
  local id health
  id=$(compose ps -q server)
  [ -n "$id" ] || fail "no server container"
  for _ in $(seq 1 90); do
    health=$(docker inspect -f '{{.State.Health.Status}}' "$id")
    [ "$health" = healthy ] && break
    [ "$(docker inspect -f '{{.State.Running}}' "$id")" = true ] || fail "the server container exited"
    sleep 1
  done
  [ "$health" = healthy ] || fail "the server is not healthy after 90 s (health: $health)"
  URL="http://$(compose port server 8080)"
}

api() { curl -fsS -H "Authorization: Bearer $BENCHGATE_ADMIN_TOKEN" "$@"; }

step "docker-compose up postgres server"
quietly compose up -d --no-build postgres server || fail "docker-compose up postgres server failed"
wait_server_healthy
curl -fsS "$URL/readyz" | jq -e '.database == "postgres" and .migrations_current' >/dev/null ||
  fail "/readyz does not report a migrated Postgres"
step "server healthy at $URL"

# --- Runner, agent, comparison -----------------------------------------------------------------
step "registering runner bench-1"
BENCHGATE_AGENT_TOKEN=$(compose exec -T server benchgate runner add bench-1 --labels default |
  sed -n 's/^token: //p') || fail "benchgate runner add failed"
[ -n "$BENCHGATE_AGENT_TOKEN" ] || fail "benchgate runner add printed no token"
# The compose file's own default: no PR code without the sandbox, which Docker's default
# profiles keep from working, so the agent refuses to start and says why.
# Read whole before matching: `grep -q` exits at the first match, and under pipefail the
# writer's SIGPIPE would fail the check at random.
compose_config=$(docker-compose -f docker-compose.yml config 2>&1) ||
  fail "docker-compose config failed: $compose_config"
grep -q 'BENCHGATE_SANDBOX: bwrap' <<<"$compose_config" ||
  fail "docker-compose.yml does not default the agent to BENCHGATE_SANDBOX=bwrap"
refusal=$(compose run --rm --no-deps -T -e BENCHGATE_SANDBOX=bwrap \
  -e BENCHGATE_TOKEN="$BENCHGATE_AGENT_TOKEN" agent 2>&1) &&
  fail "an agent with BENCHGATE_SANDBOX=bwrap ran without a working sandbox"
grep -q -- '--sandbox bwrap' <<<"$refusal" ||
  fail "the agent's refusal does not name --sandbox bwrap: $refusal"
step "the compose default (BENCHGATE_SANDBOX=bwrap) refuses to run PR code unsandboxed"
quietly compose up -d --no-build agent || fail "docker-compose up agent failed"

# A signed webhook is accepted and an unsigned one refused: the secret reached the server.
ping='{"zen":"Keep it logically awesome.","hook_id":1}'
signature="sha256=$(printf '%s' "$ping" | openssl dgst -sha256 -hmac "$BENCHGATE_WEBHOOK_SECRET" -r | cut -d' ' -f1)"
code=$(curl -s -o /dev/null -w '%{http_code}' -H 'X-GitHub-Event: ping' -H 'X-GitHub-Delivery: ci-ping-1' \
  -H "X-Hub-Signature-256: $signature" -H 'Content-Type: application/json' --data "$ping" "$URL/webhooks/github")
[[ "$code" == 20? ]] || fail "a signed ping webhook got HTTP $code"
code=$(curl -s -o /dev/null -w '%{http_code}' -H 'X-GitHub-Event: ping' -H 'X-GitHub-Delivery: ci-ping-2' \
  -H 'Content-Type: application/json' --data "$ping" "$URL/webhooks/github")
[ "$code" = 401 ] || fail "an unsigned webhook got HTTP $code, not 401"

# Requests a comparison of base and head in $1 rounds and waits until it is done; sets ID.
compare() {
  local request state
  request=$(jq -n --arg base "$BASE_SHA" --arg head "$HEAD_SHA" --argjson rounds "$1" '{
    repository: "/srv/bench-repo", base: $base, head: $head, runner_label: "default",
    config: {benchmark: {run: "sh bench.sh", format: "command", rounds: $rounds, warmup: 1}, gate: {}}}')
  ID=$(api -H 'Content-Type: application/json' --data "$request" "$URL/api/v1/comparisons" | jq -e .id) ||
    fail "POST /api/v1/comparisons failed"
  for _ in $(seq 1 300); do
    state=$(api "$URL/api/v1/comparisons/$ID" | jq -r .state) || fail "GET /api/v1/comparisons/$ID failed"
    [[ "$state" == queued || "$state" == running ]] || break
    sleep 1
  done
  [ "$state" = done ] || fail "comparison $ID is $state after 300 s, not done"
}

step "requesting a comparison of $ROUNDS rounds (base ${BASE_SHA:0:8}, head ${HEAD_SHA:0:8})"
compare "$ROUNDS"
status=$(api "$URL/api/v1/comparisons/$ID")
echo "$status" | jq -e --argjson n "$ROUNDS" '.runners[0].runner == "bench-1" and
  ([.runners[0].report.benchmarks[] | select(.metric == "cpu_time")][0] | .n == $n and .verdict == "slower")' \
  >/dev/null || fail "comparison $ID has not the expected result: $status"
psql() { compose exec -T postgres psql -U benchgate -d benchgate -tAc "$1"; }
job=$(psql "SELECT j.state || ' ' || r.name FROM jobs j JOIN runners r ON r.id = j.claimed_by WHERE j.comparison_id = $ID")
[ "$job" = "done bench-1" ] || fail "the job was not claimed and finished by bench-1: '$job'"
samples=$(psql "SELECT count(*) FROM samples s JOIN jobs j ON j.id = s.job_id WHERE j.comparison_id = $ID")
((samples > 0)) || fail "no samples stored for comparison $ID"
step "comparison $ID done: claimed and finished by bench-1, $samples samples stored, head slower"

# --- Logs: no secret, no colour codes ----------------------------------------------------------
logs=$(compose logs --no-color)
for secret in "$BENCHGATE_AGENT_TOKEN" "$BENCHGATE_ADMIN_TOKEN" "$BENCHGATE_WEBHOOK_SECRET" "$POSTGRES_PASSWORD"; do
  if grep -qF "$secret" <<<"$logs"; then fail "a secret appears in docker-compose logs"; fi
done
if grep -q $'\x1b\[' <<<"$logs"; then fail "the logs contain ANSI escape codes"; fi
sandbox=$(grep -m 1 -o -- '--sandbox none: PR builds and runs\|PR builds and runs are sandboxed' <<<"$logs") ||
  fail "the agent did not log its sandbox decision"
step "logs hold no secret and no colour codes; the agent says: $sandbox"

# --- Recreate the containers: the data lives in the volumes ------------------------------------
step "docker-compose down (volumes kept) and up again"
before=$(echo "$status" | jq -S '.runners')
quietly compose down || fail "docker-compose down failed"
quietly compose up -d --no-build || fail "docker-compose up failed after the restart"
wait_server_healthy
after=$(api "$URL/api/v1/comparisons/$ID" | jq -S '.runners') || fail "comparison $ID is gone after the restart"
[ "$before" = "$after" ] || fail "comparison $ID changed across the restart"
api "$URL/api/v1/runners" | jq -e 'any(.[]; .name == "bench-1")' >/dev/null ||
  fail "runner bench-1 is gone after the restart"
FIRST=$ID
# The agent authenticates again with the token kept in Postgres and takes new work.
compare 3
[ "$(psql "SELECT r.name FROM jobs j JOIN runners r ON r.id = j.claimed_by WHERE j.comparison_id = $ID")" = bench-1 ] ||
  fail "comparison $ID after the restart was not run by bench-1"
step "comparison $FIRST and runner bench-1 kept across the restart; comparison $ID run after it"
