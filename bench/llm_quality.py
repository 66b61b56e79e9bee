#!/usr/bin/env python3
"""Statistics for bench/llm-quality.sh, standard library only.

  llm_quality.py judge  CHECK.json JUDGE.json [--label L]     judge vs oracle and vs the labels
  llm_quality.py run    RUN.json                              pass^k / pass@k of `agent-seer run`
  llm_quality.py generate REPORT.json                         a `generate` report, summarised
  llm_quality.py write  RESULTS_DIR REPORT.md                 the figures as REPORT.md's section
                                                              (bench/llm-quality.md)
  llm_quality.py compact REPORT.md                            re-apply `compact` to the written section

CHECK.json is `agent-seer check --format json` over the same transcripts (labels: each
transcript's `expect`, and the suite's pass threshold); JUDGE.json is `agent-seer judge
--format json`. "Positive" is a broken transcript (expect: fail): TPR = broken transcripts the
judge fails (judge TC below the suite's pass threshold), TNR = correct ones it passes.
Bootstrap: 2,000 resamples of the transcripts, percentile 95 % interval, fixed seed.
"""

import json
import math
import random
import re
import sys
from pathlib import Path

SEED = 20261201
RESAMPLES = 2000
BEGIN = "<!-- llm-quality:begin (bench/llm-quality.sh writes this section) -->"
END = "<!-- llm-quality:end -->"


def mean(xs):
    return sum(xs) / len(xs)


def pearson(xs, ys):
    if len(xs) < 2:
        return None
    mx, my = mean(xs), mean(ys)
    sxy = sum((x - mx) * (y - my) for x, y in zip(xs, ys))
    sxx = sum((x - mx) ** 2 for x in xs)
    syy = sum((y - my) ** 2 for y in ys)
    if sxx == 0 or syy == 0:
        return None  # undefined: one side is constant
    return sxy / math.sqrt(sxx * syy)


def ranks(xs):
    order = sorted(range(len(xs)), key=lambda i: xs[i])
    r = [0.0] * len(xs)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and xs[order[j + 1]] == xs[order[i]]:
            j += 1
        for k in range(i, j + 1):
            r[order[k]] = (i + j) / 2 + 1  # ties share their mean rank
        i = j + 1
    return r


def spearman(xs, ys):
    return pearson(ranks(xs), ranks(ys))


def mae(xs, ys):
    return mean([abs(x - y) for x, y in zip(xs, ys)]) if xs else None


def bootstrap(f, xs, ys):
    """f on the data, and a percentile 95 % interval over resamples where f is defined."""
    value = f(xs, ys)
    rng = random.Random(SEED)
    n = len(xs)
    got = []
    for _ in range(RESAMPLES):
        idx = [rng.randrange(n) for _ in range(n)]
        v = f([xs[i] for i in idx], [ys[i] for i in idx])
        if v is not None:
            got.append(v)
    if value is None or len(got) < RESAMPLES // 2:
        return {"value": value, "low": None, "high": None, "defined_resamples": len(got)}
    got.sort()
    return {
        "value": value,
        "low": got[int(0.025 * len(got))],
        "high": got[min(len(got) - 1, int(0.975 * len(got)))],
        "defined_resamples": len(got),
    }


def wilson_low(k, n, z=1.959964):
    if n == 0:
        return None
    p = k / n
    d = 1 + z * z / n
    c = p + z * z / (2 * n)
    m = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return (c - m) / d


def labels(check):
    out = {}
    for t in check["trials"]:
        tr = t.get("transcript")
        if t.get("kind") != "transcript" or not tr:
            continue
        out[t["name"]] = {
            "expect": tr.get("expect"),
            "threshold": tr.get("pass_threshold"),
            "oracle_verdict": tr.get("verdict"),
            "oracle_tc": (tr.get("score") or {}).get("tc"),
        }
    return out


def judge_stats(check, judge):
    lab = labels(check)
    rows, errors = [], []
    for r in judge["results"]:
        if "error" in r:
            errors.append({"trial": r["trial"], "error": r["error"][:300]})
            continue
        l = lab.get(r["trial"], {})
        rows.append(
            {
                "trial": r["trial"],
                "judge_tc": r["judge_tc"],
                "oracle_tc": r["oracle_tc"],
                "expect": l.get("expect"),
                "threshold": l.get("threshold"),
                "judge_pass": l.get("threshold") is not None and r["judge_tc"] >= l["threshold"],
            }
        )
    scored = [r for r in rows if r["oracle_tc"] is not None]
    xs = [r["judge_tc"] for r in scored]
    ys = [r["oracle_tc"] for r in scored]
    broken = [r for r in rows if r["expect"] == "fail"]
    correct = [r for r in rows if r["expect"] == "pass"]
    tp = sum(1 for r in broken if not r["judge_pass"])
    tn = sum(1 for r in correct if r["judge_pass"])
    ledger = judge.get("ledger", {})
    return {
        "n": len(rows),
        "errors": errors,
        "pearson": bootstrap(pearson, xs, ys) if len(xs) >= 2 else None,
        "spearman": bootstrap(spearman, xs, ys) if len(xs) >= 2 else None,
        "mae": bootstrap(mae, xs, ys) if xs else None,
        "tpr": {"k": tp, "n": len(broken), "value": tp / len(broken) if broken else None,
                "wilson_low": wilson_low(tp, len(broken))},
        "tnr": {"k": tn, "n": len(correct), "value": tn / len(correct) if correct else None,
                "wilson_low": wilson_low(tn, len(correct))},
        "rows": rows,
        "ledger": ledger,
    }


def load_or_none(path):
    try:
        return json.loads(Path(path).read_text())
    except (OSError, ValueError):
        return None


def err_tail(path):
    p = Path(str(path)[: -len(".json")] + ".err")
    try:
        lines = [l for l in p.read_text().splitlines() if l.strip()]
    except OSError:
        return ""
    return lines[-1][:300] if lines else ""


def run_figure(path):
    """pass^k (every run of a scenario passed) and pass@k (some run did), over the scenarios."""
    r = load_or_none(path)
    if not r or "scenarios" not in r:
        return f"no report ({err_tail(path) or 'empty output'})"
    sc = r["scenarios"]
    n = len(sc)
    runs = lambda s: len(s["runs"]) if isinstance(s["runs"], list) else s["runs"]
    k = max((runs(s) for s in sc), default=0)
    all_ = sum(1 for s in sc if s["pass_all"])
    any_ = sum(1 for s in sc if s["pass_any"])
    tcs = ", ".join(f"{s['scenario']} {s['passes']}/{runs(s)} passed, mean TC {fmt(s.get('mean_tc'))}" for s in sc)
    led = "; ".join(f"{k2}: {v.get('calls')} calls, {v.get('input_tokens')} in + {v.get('output_tokens')} out tokens"
                    for k2, v in (r.get("ledger") or {}).items())
    # What the agent did: parsed tool calls recorded, and replies that hold a call as text.
    tdir = Path(str(path)[: -len(".json")])
    calls = texts = turns = 0
    for t in sorted(tdir.glob("*.yaml")) if tdir.is_dir() else []:
        body = t.read_text()
        turns += body.count("- prompt:")
        calls += len(re.findall(r"^\s*- (?:function_name|name|tool):", body, re.M))
        texts += len(re.findall(r'"name":\s*"', body)) if "calls: []" in body else 0
    seen = f" Transcripts: {turns} turns, {calls} parsed tool calls, {texts} calls written as JSON text in the reply." if turns else ""
    return (f"pass^{k} {all_}/{n}, pass@{k} {any_}/{n}, flaky {sum(1 for s in sc if s['flaky'])}. {tcs}. {led}.{seen}")


def gini(counts):
    xs = sorted(counts)
    n, total = len(xs), sum(xs)
    if n == 0 or total == 0:
        return None
    return sum((2 * (i + 1) - n - 1) * x for i, x in enumerate(xs)) / (n * total)


def generate_figure(path):
    r = load_or_none(path)
    if not r:
        return f"no report ({err_tail(path) or 'empty output'})"
    parts = []
    for name, st in (r.get("stages") or {}).items():
        if isinstance(st, dict):
            dropped = st.get("dropped")
            nd = len(dropped) if isinstance(dropped, list) else dropped
            parts.append(f"{name}: produced {st.get('produced')}, dropped {nd}")
    v = r.get("verify") or {}
    kept = v.get("kept")
    vd = v.get("dropped")
    out = [
        f"scenarios {r.get('scenarios')} (tiers {json.dumps(r.get('tiers'))})",
        "; ".join(parts),
        f"--verify kept {len(kept) if isinstance(kept, list) else kept}, dropped {len(vd) if isinstance(vd, list) else vd}",
        f"coverage {json.dumps(r.get('coverage'))}",
        f"grounding {json.dumps(r.get('grounding'))}",
        f"multi-turn {r.get('multi_turn')}/{r.get('scenarios')}",
    ]
    harness = r.get("harness")
    if harness:
        try:
            text = Path(harness).read_text()
            tools = re.findall(r"(?:function_name|tool):\s*([A-Za-z0-9_.-]+)", text)
            counts = {}
            for t in tools:
                counts[t] = counts.get(t, 0) + 1
            out.append(f"Gini of tool use over oracle steps {fmt(gini(list(counts.values())))} ({counts})")
        except OSError:
            pass
    led = "; ".join(f"{v2.get('calls')} calls, {v2.get('input_tokens')} in + {v2.get('output_tokens')} out tokens"
                    for v2 in (r.get("ledger") or {}).values())
    return ". ".join(x for x in out if x) + (f". {led}" if led else "")


def fmt(v, d=3):
    return "–" if v is None else f"{v:.{d}f}"


SMALL = 5  # below this many transcripts no interval is printed: resamples of 2-4 points say nothing


def est(e, n=None):
    if not e or e.get("value") is None:
        return "undefined"
    if n is not None and n < SMALL:
        return f"{fmt(e['value'])} (n={n}: no interval)"
    if e.get("low") is None:
        return fmt(e["value"])
    return f"{fmt(e['value'])} [{fmt(e['low'])}, {fmt(e['high'])}]"


def rate(r):
    if r["n"] == 0:
        return "no such transcripts"
    return f"{r['k']}/{r['n']} = {fmt(r['value'], 2)} (Wilson 95 % lower bound {fmt(r['wilson_low'], 2)})"


# Two or more file arguments in a row (a subset of up to 40 transcripts, repeated in every row's
# command): named once, above the table, as $SUBSET (issue 34).
FILES = re.compile(r"(?:(?:transcripts|harnesses)/[^\s`|]+\.(?:ya?ml|jsonl?)(?: |(?=`)))(?:(?:transcripts|harnesses)/[^\s`|]+\.(?:ya?ml|jsonl?)(?: |(?=`)))+")
SUBSET = re.compile(r"(Subset: )(.+?\.)$")


def compact(line):
    """A section line with its file lists folded: a table row's `command` cell says $SUBSET
    for the subset's files; the paragraph's subset goes into a <details> list."""
    if line.startswith("|"):
        return FILES.sub(lambda m: "$SUBSET" + (" " if m.group(0).endswith(" ") else ""), line)
    m = SUBSET.search(line)
    if m and "<details>" not in line:
        return (line[: m.start()] + "`$SUBSET` in the commands below is this subset: "
                + "<details><summary>the subset</summary>\n\n" + m.group(2) + "\n\n</details>")
    return line


def compact_file(bench):
    text = Path(bench).read_text()
    if BEGIN not in text or END not in text:
        return
    a, b = text.index(BEGIN), text.index(END)
    body = "\n".join(compact(l) for l in text[a:b].split("\n"))
    Path(bench).write_text(text[:a] + body + text[b:])


def write(dirs, bench):
    lines = [BEGIN, "", "## A real 1.5B model: judge, generator and agent (issue 21)", ""]
    for results in map(Path, dirs):
        steps = [json.loads(l) for l in (results / "steps.jsonl").read_text().splitlines() if l.strip()]
        meta = json.loads((results / "meta.json").read_text())
        lines += [
            f"Measured {meta['date']} by `bash bench/llm-quality.sh` (wall time "
            + (f"{meta['wall_s']:.0f} s" if "wall_s" in meta else "not reached: stopped after the steps below")
            + f"), Qwen2.5-Coder-1.5B-Instruct Q4_K_M (`.ci/llm-server.sh qwen`) in llama-server "
            f"`{meta['server_args']}`, loopback-only namespace, on the 2-core machine "
            f"(load average {meta['load']} at the start). Subset: {meta['subset']}.",
            "",
            "| what | figure | command | wall |",
            "|---|---|---|---|",
        ]
        for s in steps:
            lines.append(f"| {s['what']} | {s['figure']} | `{s['command']}` | {s['wall_s']:.0f} s |")
        lines.append("")
    lines = [compact(l) for l in lines] + [END]
    text = Path(bench).read_text()
    block = "\n".join(lines) + "\n"
    if BEGIN in text and END in text:
        pre = text[: text.index(BEGIN)]
        post = text[text.index(END) + len(END):].lstrip("\n")
        text = pre + block + ("\n" + post if post else "")
    else:
        text = text.rstrip("\n") + "\n\n" + block
    Path(bench).write_text(text)


def judge_figure(s, label):
    parts = [
        f"{label}: n={s['n']}" + (f" ({len(s['errors'])} judgements failed)" if s["errors"] else ""),
        f"TC Pearson {est(s['pearson'], s['n'])}",
        f"Spearman {est(s['spearman'], s['n'])}",
        f"MAE {est(s['mae'], s['n'])}",
        f"TPR (broken failed) {rate(s['tpr'])}",
        f"TNR (correct passed) {rate(s['tnr'])}",
    ]
    per = [f"{r['trial']} judge {fmt(r['judge_tc'])} / oracle {fmt(r['oracle_tc'])}" for r in s["rows"]]
    if per:
        parts.append("per transcript: " + ", ".join(per))
    for k, e in (s.get("ledger") or {}).items():
        parts.append(f"ledger {k}: {e.get('calls')} calls ({e.get('cached')} cached), "
                     f"{e.get('input_tokens')} input + {e.get('output_tokens')} output tokens")
    return "; ".join(parts)


def main(argv):
    cmd = argv[1]
    if cmd == "judge":
        check = json.loads(Path(argv[2]).read_text())
        judge = json.loads(Path(argv[3]).read_text())
        label = argv[5] if len(argv) > 5 and argv[4] == "--label" else "judge"
        s = judge_stats(check, judge)
        s["figure"] = judge_figure(s, label)
        json.dump(s, sys.stdout, indent=2)
        print()
    elif cmd == "run":
        print(run_figure(argv[2]))
    elif cmd == "generate":
        print(generate_figure(argv[2]))
    elif cmd == "write":
        write(argv[2:-1], argv[-1])
    elif cmd == "compact":
        compact_file(argv[2])
    elif cmd == "selftest":
        selftest()
    else:
        sys.exit(__doc__)


def selftest():
    xs = [1, 2, 3, 4, 5]
    assert abs(pearson(xs, [2, 4, 6, 8, 10]) - 1) < 1e-12
    assert abs(spearman(xs, [1, 4, 9, 16, 100]) - 1) < 1e-12
    assert abs(spearman([1, 2, 2, 3], [1, 2, 2, 3]) - 1) < 1e-12
    assert pearson([1, 1, 1], [1, 2, 3]) is None
    assert abs(wilson_low(8, 10) - 0.4902) < 1e-3  # textbook value
    assert wilson_low(0, 0) is None
    assert abs(mae([0, 1], [1, 1]) - 0.5) < 1e-12
    assert gini([1, 1, 1]) == 0 and abs(gini([0, 0, 3]) - 2 / 3) < 1e-12
    row = "| judge | n=2 | `agent-seer judge --format json transcripts/a/x.yaml transcripts/a/y.yaml` | 3 s |"
    assert compact(row) == "| judge | n=2 | `agent-seer judge --format json $SUBSET` | 3 s |", compact(row)
    assert compact("| one | `check transcripts/a/x.yaml` | 1 s |") == "| one | `check transcripts/a/x.yaml` | 1 s |"
    print("ok")


if __name__ == "__main__":
    main(sys.argv)
