#!/usr/bin/env python3
"""Model outputs for the BFCL speed comparison: per entry of the four AST categories, the
first possible answer (correct) and one mutated copy (its first parameter changed).

  outputs.py DATA_DIR > outputs.jsonl
  outputs.py DATA_DIR last > last.jsonl

With `last`: per entry only a correct answer made of each parameter's last possible value:
right, but not the first answer (which a scenario's workflow holds) wherever an entry allows
more than one.
"""
import json
import sys
from pathlib import Path

CATEGORIES = {"simple": "BFCL_v4_simple_python.json", "multiple": "BFCL_v4_multiple.json",
              "parallel": "BFCL_v4_parallel.json", "parallel_multiple": "BFCL_v4_parallel_multiple.json"}


def first(allowed):
    for v in allowed:
        if v != "":
            return True, v
    return False, None


def last(allowed):
    for v in reversed(allowed):
        if v != "":
            return True, v
    return False, None


def mutate(v):
    if isinstance(v, bool):
        return not v
    if isinstance(v, (int, float)):
        return v + 1
    if isinstance(v, str):
        return v + "x"
    return None


def main():
    data = Path(sys.argv[1])
    modes = {"first": first, "last": last}
    mode = sys.argv[2] if len(sys.argv) > 2 else "first"
    if mode not in modes or len(sys.argv) > 3:
        sys.exit(f"outputs.py: usage: outputs.py DATA_DIR [first|last] (got {' '.join(sys.argv[2:])!r})")
    pick = modes[mode]
    for cat, name in CATEGORIES.items():
        for line in open(data / "possible_answer" / name):
            if not line.strip():
                continue
            a = json.loads(line)
            calls = []
            for call in a["ground_truth"]:
                (fn, params), = call.items()
                args = {}
                for p, allowed in params.items():
                    ok, v = pick(allowed)
                    if ok:
                        args[p] = v
                calls.append({fn: args})
            print(json.dumps({"id": a["id"] + "-correct", "entry": a["id"], "category": cat, "output": calls}))
            if pick is last:
                continue
            broken = json.loads(json.dumps(calls))
            (fn, args), = broken[0].items()
            if args:
                p = next(iter(args))
                m = mutate(args[p])
                if m is None:
                    del args[p]
                else:
                    args[p] = m
            print(json.dumps({"id": a["id"] + "-mutated", "entry": a["id"], "category": cat, "output": broken}))


if __name__ == "__main__":
    main()
