#!/usr/bin/env bash
# The layout spread of a real crate's criterion suite: the same commit built K times with a
# different `-Cmetadata` salt each (what `layout_salt = "RUSTFLAGS=-Cmetadata={salt}"` does),
# each build's bench binary run R times, the builds taking turns (round r runs build 1..K
# rotated by r, so drift lands on all). One process is one run: its value per benchmark is
# criterion's point estimate. Per benchmark it prints each build's geometric mean, the range
# across builds, the within-build spread of one run, and
#   tau_layout = √max(0, var(build mean logs) − mean(within-build var of log runs)/R),
# the between-build spread the layout floor uses (docs/statistics.md §3).
#
#   bench/layout_spread.sh CRATE_DIR BENCH          # K=4 builds, R=3 runs each
#   K=6 R=4 bench/layout_spread.sh ~/semver parse
#
# CRATE_DIR is a crate with a criterion bench target BENCH; builds go to CRATE_DIR/target-salt*.
set -euo pipefail

crate=${1:?usage: layout_spread.sh CRATE_DIR BENCH}
bench=${2:?usage: layout_spread.sh CRATE_DIR BENCH}
k=${K:-4}
r=${R:-3}
args=${CRITERION_ARGS:---warm-up-time 1 --measurement-time 2}
out=$(mktemp -d /tmp/layout_spread.XXXXXX)

echo "layout_spread: $crate ($bench), K=$k builds × R=$r runs; $(nproc) CPUs, $(uname -r)" >&2
bins=()
for i in $(seq "$k"); do
    salt="s$i"
    start=$(date +%s)
    RUSTFLAGS="-Cmetadata=$salt" CARGO_TARGET_DIR="$crate/target-salt$i" \
        cargo bench --offline --manifest-path "$crate/Cargo.toml" --bench "$bench" --no-run \
        > "$out/build-$i.log" 2>&1 || { cat "$out/build-$i.log" >&2; exit 1; }
    # cargo names the bench executable it built: "Executable benches/x.rs (PATH)".
    bin=$(sed -n "s|.*Executable .*(\(.*/deps/$bench-[0-9a-f]*\))\$|\1|p" "$out/build-$i.log" | tail -1)
    case "$bin" in /*) ;; "") echo "layout_spread: no $bench executable in $out/build-$i.log" >&2; exit 1 ;; *) bin="$crate/$bin" ;; esac
    bins+=("$bin")
    echo "  build $i (salt $salt): $(( $(date +%s) - start )) s, $(sha256sum "$bin" | cut -c1-12)" >&2
done

for round in $(seq 0 $((r - 1))); do
    for j in $(seq 0 $((k - 1))); do
        i=$(( (j + round) % k ))
        # Each run in its own scratch dir, so no run reads another's saved baseline.
        scratch="$out/run-$round-$i"
        mkdir -p "$scratch"
        (cd "$scratch" && CRITERION_HOME="$scratch" CARGO_TARGET_DIR="$scratch" "${bins[$i]}" --bench $args --noplot) \
            > "$out/run-$round-$i.txt" 2>&1
        echo "  round $round build $((i + 1)) done" >&2
    done
done

python3 - "$out" "$k" "$r" <<'EOF'
import math, re, statistics, sys, pathlib
out, k, r = pathlib.Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
unit = {"ps": 1e-3, "ns": 1.0, "µs": 1e3, "us": 1e3, "ms": 1e6, "s": 1e9}
runs = {}  # bench -> build -> [log value]
for f in sorted(out.glob("run-*-*.txt")):
    build = int(f.stem.split("-")[2])
    last_name = None
    for line in f.read_text().splitlines():
        if "time:" in line and "[" in line:
            before = line.split("time:")[0].strip()
            name = before or last_name
            toks = line.split("[", 1)[1].split("]")[0].split()
            value = float(toks[2]) * unit[toks[3]]
            runs.setdefault(name, {}).setdefault(build, []).append(math.log(value))
        elif line and not line[0].isspace() and ":" not in line:
            last_name = line.strip()
print(f"{'benchmark':<22} {'builds (ns, geometric mean of runs)':<44} {'range':>7} {'run sd':>7} {'tau_layout':>10}")
for name, builds in sorted(runs.items()):
    means = [statistics.fmean(builds[b]) for b in sorted(builds)]
    within = statistics.fmean(statistics.variance(v) for v in builds.values() if len(v) > 1)
    between = statistics.variance(means)
    tau = math.sqrt(max(0.0, between - within / r))
    shown = " ".join(f"{math.exp(m):.2f}" for m in means)
    rng = 100 * (math.exp(max(means) - min(means)) - 1)
    print(f"{name:<22} {shown:<44} {rng:>6.1f}% {100*math.sqrt(within):>6.2f}% {100*tau:>9.2f}%")
EOF
echo "layout_spread: raw output in $out" >&2
