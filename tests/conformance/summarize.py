"""Summarize one `.ci/mcp-conformance.sh` run and compare it with tests/conformance/expected.json.

    python summarize.py OUT_DIR EXPECTED_JSON [--write-expected]

OUT_DIR holds `conformance/<run>/server-<scenario>-<timestamp>/checks.json` (the suite's own
output, one <run> per transport and revision, e.g. `http-2025-11-25`) and `clients.jsonl` (one
`{"run", "check", "status", "message"}` line per client assertion). Every check becomes
`<scenario>:<check-id>` under its run; ids repeated within a scenario collapse most severe first.

Writes OUT_DIR/summary.json and OUT_DIR/summary.md. expected.json maps each run to the checks
known to fail there, each with the reason (the README explains them):
    {"http-2025-11-25": {"tools-call-image:tools-call-image": "why", ...}, ...}
Exit 1 on a regression: a FAILURE not listed for its run, or a run that produced no checks.
Runs named reference-* (the suite against the reference servers, AGENT_SEER_CONFORMANCE_REFERENCE=1)
are informational and never regress.
A listed check that no longer fails is reported ("now passes: remove it"), not an error.
--write-expected rewrites EXPECTED_JSON with the current failures, keeping known reasons and
marking new ones "TODO: <the suite's message>".
"""

import json
import pathlib
import re
import sys

RANK = {"FAILURE": 4, "WARNING": 3, "SUCCESS": 2, "INFO": 1, "SKIPPED": 0}
STAMP = re.compile(r"-\d{4}-\d{2}-\d{2}T[\d-]+Z$")


def scenario_checks(run_dir: pathlib.Path) -> dict:
    checks: dict = {}
    for d in sorted(p for p in run_dir.iterdir() if p.is_dir()):
        scenario = STAMP.sub("", d.name.removeprefix("server-"))
        f = d / "checks.json"
        items = json.loads(f.read_text()) if f.exists() else []
        if not items:
            checks[f"{scenario}:(no checks)"] = {"status": "FAILURE", "message": "the scenario wrote no checks"}
        for c in items:
            key = f"{scenario}:{c.get('id')}"
            status = c.get("status", "FAILURE")
            msg = c.get("errorMessage") or ""
            old = checks.get(key)
            if old is None or RANK.get(status, 4) > RANK.get(old["status"], 4):
                checks[key] = {"status": status, "message": msg}
    return checks


def main() -> int:
    out = pathlib.Path(sys.argv[1])
    expected_path = pathlib.Path(sys.argv[2])
    write = "--write-expected" in sys.argv[3:]
    runs: dict = {}
    conf = out / "conformance"
    if conf.is_dir():
        for run_dir in sorted(p for p in conf.iterdir() if p.is_dir()):
            runs[run_dir.name] = scenario_checks(run_dir)
    clients = out / "clients.jsonl"
    if clients.exists():
        for line in clients.read_text().splitlines():
            if line.strip():
                r = json.loads(line)
                runs.setdefault(r["run"], {})[r["check"]] = {"status": r["status"], "message": r.get("message", "")}
    expected = json.loads(expected_path.read_text()) if expected_path.exists() else {}

    regressions, fixed, lines = [], [], ["# agent-seer serve: conformance and client results", ""]
    for run, checks in runs.items():
        known = expected.get(run, {})
        counts: dict = {}
        for c in checks.values():
            counts[c["status"]] = counts.get(c["status"], 0) + 1
        lines += [f"## {run}: " + ", ".join(f"{n} {s}" for s, n in sorted(counts.items())), ""]
        lines += ["| check | status | expected failure / message |", "| --- | --- | --- |"]
        for key, c in sorted(checks.items()):
            note = ""
            if c["status"] == "FAILURE":
                if key in known:
                    note = "expected: " + known[key]
                elif run.startswith("reference-"):
                    note = "(reference server, informational) " + c["message"]
                else:
                    note = "REGRESSION: " + c["message"]
                    regressions.append(f"{run} {key}: {c['message'].splitlines()[0][:300] if c['message'] else ''}")
            elif key in known:
                note = "now passes: remove it from expected.json"
                fixed.append(f"{run} {key}")
            else:
                note = c["message"]
            lines.append(f"| `{key}` | {c['status']} | {note.replace('|', '/').replace(chr(10), ' ')} |")
        lines.append("")
        if not checks:
            regressions.append(f"{run}: no checks at all")
    for run in expected:
        if run not in runs:
            lines.append(f"(run {run} listed in expected.json did not run)")
    (out / "summary.json").write_text(json.dumps(runs, indent=2, sort_keys=True) + "\n")
    (out / "summary.md").write_text("\n".join(lines) + "\n")

    if write:
        new = {}
        for run, checks in runs.items():
            if run.startswith("reference-"):
                continue
            known = expected.get(run, {})
            new[run] = {
                k: known.get(k, "TODO: " + c["message"]) for k, c in sorted(checks.items()) if c["status"] == "FAILURE"
            }
        expected_path.write_text(json.dumps(new, indent=2, sort_keys=True, ensure_ascii=False) + "\n")
        print(f"wrote {expected_path}")

    total = {s: 0 for s in RANK}
    for run, checks in runs.items():
        if run.startswith("reference-"):
            continue
        for c in checks.values():
            total[c["status"]] = total.get(c["status"], 0) + 1
    for f in fixed:
        print(f"now passes (remove it from {expected_path}): {f}")
    for r in regressions:
        print(f"REGRESSION: {r}", file=sys.stderr)
    print(f"summary: {out / 'summary.md'} ({out / 'summary.json'})")
    print(
        f"mcp-conformance checks: {total['SUCCESS']} succeeded / {total['FAILURE']} failures "
        f"({total['FAILURE'] - len(regressions)} expected) / {total['WARNING']} warnings; "
        f"{len(regressions)} regressions"
    )
    return 1 if regressions and not write else 0


if __name__ == "__main__":
    sys.exit(main())
