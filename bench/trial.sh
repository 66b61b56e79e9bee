#!/usr/bin/env bash
# What one trial costs under nextest, beside nextest's own floor: the agents harness's trials
# and an empty libtest-mimic test binary listing the same names (ignored where the harness's
# are), each run under `cargo nextest run` ROUNDS times (default 5), alternating. Prints each
# round's per-trial wall time (the run's wall time over the trials run) side by side, then the
# medians and their difference — issue 31's bar: at most 5 ms above the floor. Then one trial
# process run directly (`--exact NAME`, each trial REPEAT times, default 3, the floor's and the
# harness's alternating): wall and CPU time, median and mean. A failing trial fails the bench.
#
# The trials are the shipped suites' (248), or N copies of their transcripts spread over them as
# in bench/scale.sh. FEATURES (e.g. `--no-default-features`) picks the harness's build.
# Stamps of prepared suites (target/agent-seer/prepared) are left from earlier runs unless
# COLD=1: each round then starts without them, and the first processes of each suite load it
# in full and keep its stamp — what the first run after a build or an edit pays.
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$(pwd)
ROUNDS=${ROUNDS:-5}
REPEAT=${REPEAT:-3}
FEATURES=${FEATURES:-}
command -v cargo-nextest >/dev/null || { echo "bench/trial.sh: cargo-nextest is not installed" >&2; exit 0; }

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
if [ -n "${N:-}" ]; then
  PROJECT="$WORK/project"
  mkdir -p "$PROJECT"
  cp -r harnesses capabilities "$PROJECT/"
  python3 bench/copies.py "$PROJECT" "$N"
else
  PROJECT="$REPO"
fi
export AGENT_SEER_ROOT="$PROJECT" AGENT_SEER_REPORT_DIR="$WORK/run"

# The test executable cargo built for a target, from its JSON messages.
executable() {
  python3 "$REPO/bench/executable.py" "$1"
}
# shellcheck disable=SC2086
HARNESS=$(cargo test --release $FEATURES --test agents --no-run --message-format=json 2>/dev/null | executable agents)
"$HARNESS" --list --ignored 2>/dev/null | sed -n 's/: test$//p' | sort > "$WORK/ignored"
"$HARNESS" --list 2>/dev/null | sed -n 's/: test$//p' > "$WORK/names"

# The floor: a crate of its own, built once into target/bench-floor with the checkout's lock
# file (the same libtest-mimic); its names are compiled in.
FLOOR="$WORK/floor"
mkdir -p "$FLOOR/src" "$FLOOR/tests"
cat > "$FLOOR/Cargo.toml" <<'TOML'
[package]
name = "floor"
version = "0.1.0"
edition = "2024"

[dev-dependencies]
libtest-mimic = "0.8.2"

[[test]]
name = "empty"
harness = false
TOML
: > "$FLOOR/src/lib.rs"
cp Cargo.lock "$FLOOR/Cargo.lock"
awk 'NR==FNR { ig[$0] = 1; next } { print $0 (ig[$0] ? "\tignored" : "") }' \
  "$WORK/ignored" "$WORK/names" > "$FLOOR/tests/names.txt"
cat > "$FLOOR/tests/empty.rs" <<'RS'
// The floor: the harness's trial names (`name`, or `name<TAB>ignored`), each an empty trial.
fn main() -> std::process::ExitCode {
    let args = libtest_mimic::Arguments::from_args();
    let trials = include_str!("names.txt")
        .lines()
        .map(|l| {
            let (name, ignored) = l.split_once('\t').map_or((l, false), |(n, _)| (n, true));
            libtest_mimic::Trial::test(name, || Ok(())).with_ignored_flag(ignored)
        })
        .collect();
    libtest_mimic::run(&args, trials).exit_code()
}
RS
TARGET=${CARGO_TARGET_DIR:-$REPO/target}
FLOOR_TARGET="$TARGET/bench-floor"
FLOOR_BIN=$(CARGO_TARGET_DIR="$FLOOR_TARGET" cargo test --release --manifest-path "$FLOOR/Cargo.toml" \
  --no-run --message-format=json 2>/dev/null | executable empty)

# Per-trial wall time of one nextest run: its summary's seconds over the trials it ran. A run
# that fails (a trial, or nextest itself) fails the benchmark, with its output.
nextest() {
  local out="$WORK/nextest.out"
  if ! "$@" > "$out" 2>&1; then
    cat "$out" >&2
    echo "bench/trial.sh: failed: $*" >&2
    return 1
  fi
  python3 -c 'import re,sys
t = sys.stdin.read()
m = re.search(r"Summary \[\s*([0-9.]+)s\]\s+([0-9]+) tests? run", t)
if not m: sys.exit("no nextest summary:\n" + t)
print(f"{float(m[1]) * 1000 / int(m[2]):.2f} {m[2]}")' < "$out"
}
run_floor() {
  CARGO_TARGET_DIR="$FLOOR_TARGET" nextest cargo nextest run --release \
    --manifest-path "$FLOOR/Cargo.toml" --status-level none --final-status-level none
}
run_harness() {
  if [ "${COLD:-0}" = 1 ]; then rm -rf "$TARGET/agent-seer/prepared"; fi
  # shellcheck disable=SC2086
  nextest cargo nextest run --release $FEATURES --test agents --no-fail-fast \
    --status-level none --final-status-level none
}

echo "trials run: $(wc -l < "$WORK/names") listed, $(wc -l < "$WORK/ignored") ignored; $(nproc) cores"
echo "per trial under nextest (ms)    floor   harness   difference"
: > "$WORK/rounds"
for r in $(seq "$ROUNDS"); do
  floor=$(run_floor)
  harness=$(run_harness)
  read -r f n <<< "$floor"
  read -r h m <<< "$harness"
  [ "$n" = "$m" ] || { echo "the floor ran $n trials, the harness $m" >&2; exit 1; }
  echo "$f $h" >> "$WORK/rounds"
  printf '  round %-2s                      %6.2f    %6.2f    %+6.2f\n' "$r" "$f" "$h" "$(echo "$h - $f" | bc -l)"
done
python3 - "$WORK/rounds" <<'PY'
import statistics, sys
rows = [tuple(map(float, l.split())) for l in open(sys.argv[1])]
f = statistics.median(r[0] for r in rows)
h = statistics.median(r[1] for r in rows)
print(f"  median                        {f:6.2f}    {h:6.2f}    {h - f:+6.2f}   (bar: +5.00)")
PY

# One process per trial, run directly, the floor's and the harness's alternating: wall and CPU
# time per trial, median and mean over every trial run REPEAT times.
python3 - "$HARNESS" "$FLOOR_BIN" "$WORK/names" "$WORK/ignored" "$REPEAT" <<'PY'
import resource, statistics, subprocess, sys, time
harness, floor, names, ignored, repeat = sys.argv[1:]
skip = set(open(ignored).read().split("\n"))
names = [n for n in open(names).read().split("\n") if n and n not in skip]
def once(binary, name):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run([binary, "--exact", name], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"bench/trial.sh: {binary} --exact {name} failed")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall * 1000, cpu * 1000
runs = {floor: [], harness: []}
for _ in range(int(repeat)):
    for n in names:
        for binary in (floor, harness):
            runs[binary].append(once(binary, n))
print("one trial process, `--exact` (ms)  floor   harness   difference")
for label, i in (("wall", 0), ("CPU (user + system)", 1)):
    for stat in (statistics.median, statistics.mean):
        f = stat(r[i] for r in runs[floor])
        h = stat(r[i] for r in runs[harness])
        print(f"  {label + ', ' + stat.__name__:<32}{f:6.2f}    {h:6.2f}    {h - f:+6.2f}")
PY
