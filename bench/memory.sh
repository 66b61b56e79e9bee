#!/usr/bin/env bash
# `agent-seer check` at scale, in bounded memory (issue 31): N transcripts (default 30,000),
# copies of the shipped ones spread over the shipped suites in a throwaway project (as
# bench/scale.sh lays them out). Prints the peak RSS and the time per transcript of
# `check -q`, with and without saving the run, beside the time to read and parse the same
# transcripts alone (examples/parse_only.rs, the loader `check` uses). The goal: peak RSS
# under 64 MB at 30,000, and check within 3× of parsing.
set -euo pipefail
cd "$(dirname "$0")/.."
N=${N:-30000}
ROUNDS=${ROUNDS:-1}
PROJECT=$(mktemp -d)
trap 'rm -rf "$PROJECT"' EXIT
cp -r harnesses capabilities "$PROJECT/"
python3 bench/copies.py "$PROJECT" "$N"
bash bench/bin.sh --release
bin=${CARGO_TARGET_DIR:-target}/release
# The run is saved under the project's target/, not this repository's.
export CARGO_TARGET_DIR="$PROJECT/target"
per() { python3 -c "print(f'{$1 * 1e6 / $N:.0f}')"; }
# Wall time and peak RSS of one command (its exit status is not ours: a shipped suite has
# failing transcripts on purpose).
measure() {
  python3 - "$@" <<'PY'
import resource, subprocess, sys, time
t = time.monotonic()
subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL)
kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
print(f"{time.monotonic() - t:.3f} {kib}")
PY
}
for round in $(seq "$ROUNDS"); do
  parse=$("$bin/examples/parse_only" "$PROJECT" | sed -E 's/.* in ([0-9.]+) s.*/\1/')
  echo "round $round: parse only: $parse s, $(per "$parse") µs per transcript"
  for save in --no-save ""; do
    rm -rf "$PROJECT/target"
    # shellcheck disable=SC2086
    read -r secs kib <<<"$(measure "$bin/agent-seer" check --root "$PROJECT" -q $save)"
    echo "round $round: check -q ${save:-(saving the run)}: $secs s, $(per "$secs") µs per transcript ($(python3 -c "print(f'{$secs / $parse:.2f}')")× parse only), peak RSS $((kib / 1024)) MB"
  done
done
