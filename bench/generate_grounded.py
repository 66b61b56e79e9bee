"""One line of bench/generate-grounded.sh: a generate report summed up.

    python3 bench/generate_grounded.py SUITE BUILD REPORT.json WALL_SECONDS
"""
import json
import sys

suite, build, path, wall = sys.argv[1:5]
try:
    r = json.load(open(path))
except Exception as e:  # a run that wrote no report says why on its stderr.txt
    print(f"{suite}\t{build}\tno report ({e})\t{wall} s")
    sys.exit()
verify = r.get("verify") or {}
stages = {k: (s["produced"], len(s["dropped"])) for k, s in r["stages"].items()}
calls = sum(m.get("calls", 0) for m in (r.get("ledger") or {}).values())
print(
    f"{suite}\t{build}\tscenarios {r['scenarios']}, kept {len(verify.get('kept', []))}, "
    f"coverage {r['coverage']['covered']}/{r['coverage']['tools']}, grounding {r['grounding']}, "
    f"stages (produced, dropped) {stages}, {calls} model calls\t{wall} s"
)
