#!/usr/bin/env bash
# A long fuzzing campaign: runs each target in turn for $SECS seconds (default
# 900) on one CPU, then minimizes its corpus, and logs everything.
#
#   fuzz/campaign.sh [TARGET...]        (default: every target of `cargo fuzz list`)
#
# Environment: SECS (seconds per target, 900), CPU (the CPU to pin to, 1),
# LOGS (where logs and binaries go, /tmp/fuzzlogs), SNAP (a scratch copy of
# the repository, /tmp/rw-snap).
#
# What is fuzzed is the last commit, not the working tree (which may be in
# the middle of an edit): before each target, SNAP is brought to `git HEAD`
# (`git archive`), this fuzz/ directory's crate (Cargo.toml, Cargo.lock, src,
# fuzz_targets) is copied over it, and the target is built there
# (`cargo +nightly fuzz build TARGET`, with debug assertions, -j1 on CPU).
# The corpus and artifacts are this directory's. summary.tsv names the
# commit each target ran on.
#
# The targets left to run are kept in $LOGS/queue (one a line): append a
# target to run it too. Per target, $LOGS/<target>.log holds libFuzzer's
# output; a run that finds a crash is restarted for the rest of its time (at
# most 5 times), the crashing inputs land in fuzz/artifacts/<target>/.
# $LOGS/summary.tsv gets one line per target: target, seconds, executions,
# cov, ft, corpus files before and after cmin, crash files, start date,
# commit.
set -uo pipefail
cd "$(dirname "$0")"
SECS=${SECS:-900}
CPU=${CPU:-1}
LOGS=${LOGS:-/tmp/fuzzlogs}
SNAP=${SNAP:-/tmp/rw-snap}
triple=x86_64-unknown-linux-gnu
mkdir -p "$LOGS/bin" "$SNAP"
pin() { taskset -c "$CPU" nice -n 10 "$@"; }

# snapshot: SNAP at HEAD with this fuzz crate; prints the commit.
snapshot() {
    local commit
    commit=$(git -C .. rev-parse --short HEAD)
    if [ "$(cat "$SNAP/.commit" 2>/dev/null)" != "$commit" ]; then
        (cd "$SNAP" && find . -mindepth 1 -maxdepth 1 ! -name target ! -name fuzz \
            -exec rm -rf {} + && rm -rf fuzz/src fuzz/fuzz_targets)
        # --touch: fresh mtimes, so cargo sees every changed file as changed.
        git -C .. archive "$commit" | tar -x --touch -C "$SNAP"
        echo "$commit" >"$SNAP/.commit"
    fi
    for p in Cargo.toml Cargo.lock src fuzz_targets; do
        rm -rf "${SNAP:?}/fuzz/$p" && cp -r "$p" "$SNAP/fuzz/$p"
    done
    echo "$commit"
}

if [ $# -gt 0 ]; then
    printf '%s\n' "$@" >"$LOGS/queue"
elif [ ! -s "$LOGS/queue" ]; then
    cargo +nightly fuzz list >"$LOGS/queue"
fi
[ -f "$LOGS/summary.tsv" ] ||
    printf 'target\tseconds\texecs\tcov\tft\tcorpus\tcmin\tcrashes\tstarted\tcommit\n' >"$LOGS/summary.tsv"

while [ -s "$LOGS/queue" ]; do
    t=$(head -n 1 "$LOGS/queue")
    sed -i 1d "$LOGS/queue"
    commit=$(snapshot)
    if ! (cd "$SNAP/fuzz" && CARGO_BUILD_JOBS=1 pin cargo +nightly fuzz build "$t") \
        >"$LOGS/$t.build.log" 2>&1; then
        echo "$(date -u +%FT%TZ) $t: build failed at $commit, skipped" >>"$LOGS/campaign.log"
        continue
    fi
    bin=$LOGS/bin/$t.$commit
    cp "$SNAP/fuzz/target/$triple/release/$t" "$bin"
    log=$LOGS/$t.log
    mkdir -p "corpus/$t" "artifacts/$t"
    started=$(date -u +%FT%TZ)
    echo "$started $t: start at $commit ($(find "corpus/$t" -type f | wc -l) inputs)" >>"$LOGS/campaign.log"
    : >"$log"
    begin=$SECONDS execs=0 runs=0
    while :; do
        left=$((SECS - (SECONDS - begin)))
        [ "$left" -gt 5 ] && [ "$runs" -lt 6 ] || break
        runs=$((runs + 1))
        echo "=== run $runs: $left s left" >>"$log"
        run=$LOGS/$t.run$runs.log
        pin "$bin" -rss_limit_mb=2048 -timeout=10 -max_total_time="$left" \
            -print_final_stats=1 -artifact_prefix="artifacts/$t/" "corpus/$t" >"$run" 2>&1
        rc=$?
        cat "$run" >>"$log"
        # The final stats, or (if a crash cut them off) the last status line.
        n=$(grep -E '^stat::number_of_executed_units' "$run" | awk '{print $2}')
        [ -n "$n" ] || n=$(grep -oE '^#[0-9]+' "$run" | tail -n 1 | tr -d '#')
        execs=$((execs + ${n:-0}))
        rm -f "$run"
        echo "=== run $runs: exit $rc, ${n:-0} executions" >>"$log"
        [ "$rc" -eq 0 ] && break
    done
    seconds=$((SECONDS - begin))
    cov=$(grep -oE 'cov: [0-9]+' "$log" | tail -n 1 | awk '{print $2}')
    ft=$(grep -oE 'ft: [0-9]+' "$log" | tail -n 1 | awk '{print $2}')
    before=$(find "corpus/$t" -type f | wc -l)
    # Corpus minimization (what `cargo fuzz cmin` does, with the same binary).
    rm -rf "corpus/$t.cmin" && mkdir -p "corpus/$t.cmin"
    if pin "$bin" -merge=1 -rss_limit_mb=2048 -timeout=10 "corpus/$t.cmin" "corpus/$t" \
        >"$LOGS/$t.cmin.log" 2>&1; then
        rm -rf "corpus/$t" && mv "corpus/$t.cmin" "corpus/$t"
    fi
    after=$(find "corpus/$t" -type f | wc -l)
    crashes=$(find "artifacts/$t" -type f | wc -l)
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$t" "$seconds" "$execs" "${cov:-?}" "${ft:-?}" \
        "$before" "$after" "$crashes" "$started" "$commit" >>"$LOGS/summary.tsv"
    echo "$(date -u +%FT%TZ) $t: done, $execs executions in $seconds s, cov $cov ft $ft, corpus $before -> $after, $crashes artifacts" >>"$LOGS/campaign.log"
done
echo "$(date -u +%FT%TZ) queue empty" >>"$LOGS/campaign.log"
