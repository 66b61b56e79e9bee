#!/usr/bin/env python3
"""The executable of target NAME from cargo's `--message-format=json` on stdin (a `cargo
bench --no-run` or `cargo test --no-run`): what a bench script runs directly.

  cargo bench --no-run --bench bfcl --message-format=json | python3 bench/executable.py bfcl
"""
import json
import sys

for line in sys.stdin:
    m = json.loads(line)
    if m.get("target", {}).get("name") == sys.argv[1] and m.get("executable"):
        print(m["executable"])
