#!/usr/bin/env python3
"""BFCL's own AST checker (from the `bfcl-eval` package) over model outputs, for agent-seer's
agreement test and speed comparison.

The checker module is loaded unchanged from an unpacked bfcl-eval wheel. Only
`bfcl_eval.constants.model_config` is replaced: it imports every model handler (and their
SDKs) just to say whether a model's function names turn `.` into `_`; here no model does.

  bfcl_check.py PKG_ROOT verdicts DATA_DIR OUTPUTS.jsonl   print {"id", "valid", "error_type"} lines
  bfcl_check.py PKG_ROOT verify DATA_DIR OUTPUTS.jsonl     exit 1 unless each line's `bfcl_valid` is the checker's
  bfcl_check.py PKG_ROOT bench DATA_DIR OUTPUTS.jsonl S    check every output, pass after pass, for at
                                                           least S seconds; print checks/s
"""
import json
import sys
import time
import types
from collections import defaultdict
from pathlib import Path


def load_checker(pkg_root):
    sys.path.insert(0, str(pkg_root))
    stub = types.ModuleType("bfcl_eval.constants.model_config")
    stub.MODEL_CONFIG_MAPPING = defaultdict(lambda: types.SimpleNamespace(underscore_to_dot=False))
    sys.modules["bfcl_eval.constants.model_config"] = stub
    from bfcl_eval.constants.enums import Language
    from bfcl_eval.eval_checker.ast_eval.ast_checker import ast_checker

    return ast_checker, Language.PYTHON


def file_for(data_dir, category):
    for name in (f"BFCL_v4_{category}.json", f"BFCL_v3_{category}.json"):
        if (Path(data_dir) / name).is_file():
            return name
    if category == "simple":
        return "BFCL_v4_simple_python.json"
    raise SystemExit(f"no data file for {category} in {data_dir}")


def entries(data_dir, category):
    name = file_for(data_dir, category)
    docs = {}
    for line in open(Path(data_dir) / name):
        if line.strip():
            e = json.loads(line)
            docs[e["id"]] = e["function"]
    answers = {}
    for line in open(Path(data_dir) / "possible_answer" / name):
        if line.strip():
            a = json.loads(line)
            answers[a["id"]] = a["ground_truth"]
    return docs, answers


def jobs(data_dir, outputs):
    cache = {}
    out = []
    for line in open(outputs):
        if not line.strip():
            continue
        o = json.loads(line)
        cat = o["category"]
        if cat not in cache:
            cache[cat] = entries(data_dir, cat)
        docs, answers = cache[cat]
        out.append((o, docs[o["entry"]], answers[o["entry"]], cat))
    return out


def main():
    pkg_root, mode, data_dir, outputs = sys.argv[1:5]
    check, lang = load_checker(pkg_root)
    work = jobs(data_dir, outputs)

    def run(o, docs, answer, cat):
        return check(docs, o["output"], answer, lang, cat, "agent-seer")

    if mode == "verdicts":
        for o, d, a, c in work:
            r = run(o, d, a, c)
            print(json.dumps({"id": o["id"], "valid": r["valid"], "error_type": r.get("error_type")}))
    elif mode == "verify":
        bad = 0
        for o, d, a, c in work:
            r = run(o, d, a, c)
            if o.get("bfcl_valid") != r["valid"]:
                bad += 1
                print(f"{o['id']}: recorded bfcl_valid={o.get('bfcl_valid')}, BFCL's checker says {r['valid']} ({r.get('error_type')})")
        print(f"{len(work) - bad}/{len(work)} recorded verdicts match BFCL's checker")
        sys.exit(1 if bad else 0)
    elif mode == "bench":
        least = float(sys.argv[5])
        for o, d, a, c in work:  # one pass to warm up
            run(o, d, a, c)
        start = time.perf_counter()
        valid = checks = 0
        while True:
            for o, d, a, c in work:
                valid += run(o, d, a, c)["valid"]
            checks += len(work)
            secs = time.perf_counter() - start
            if secs >= least:
                break
        print(json.dumps({"checks": checks, "seconds": secs, "per_second": checks / secs, "valid": valid}))
    else:
        raise SystemExit(f"unknown mode {mode}")


if __name__ == "__main__":
    main()
