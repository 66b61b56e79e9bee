"""Google ADK's own TrajectoryEvaluator over ADK eval sets, for bench/adk.sh's side by side
with agent-seer's `check::evaluate` (benches/adk.rs). Runs in ADK's venv (google-adk from
tests/fixtures/adk/requirements.txt), telemetry off, in a loopback-only network namespace.

  adk_bench.py cases OUT CALLS   write the long runs as ADK eval sets under OUT and
                                 OUT/manifest.json: the cases both sides evaluate
  adk_bench.py time MANIFEST S   evaluate every case of each group, pass after pass, for at
                                 least S seconds after a warm-up pass (and each case alone
                                 alike, in the groups the manifest's `each` names); print one
                                 JSON line

The manifest's groups:
  small  the ADK sample tests/fixtures/adk (evalsets/ expected, recorded/ the agent's runs),
         every case both ADK and agent-seer grade: not one without invocations (ADK: score
         None, NOT_EVALUATED; agent-seer's import skips it), not one whose recording has fewer
         turns than expected (ADK: ValueError). The legacy files are left out: their
         trajectories are memory_graph's.
  long   one time_agent invocation of CALLS `convert_time` calls with distinct times, as ADK
         writes it (gen.py's session events → convert_session_to_eval_invocations →
         LocalEvalSetsManager): the run as expected, and the run with one wrong argument
         (the middle call's target zone).
Each entry names its eval set, its recording, its test_config.json and the tool spec
agent-seer imports it with, so both sides read the same files.
"""

import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests/fixtures/adk"
METRIC = "tool_trajectory_avg_score"
# The tool spec each app's servers list (what `agent-seer import adk --tools` is given).
TOOLS = {"time_agent": ROOT / "harnesses/time.tools.json",
         "memory_agent": ROOT / "harnesses/memory.tools.json"}
SMALL = [("time_agent", "time_single"), ("time_agent", "time_multi"),
         ("memory_agent", "memory_graph")]


def entry(app, set_id, evalsets, recorded):
    """A manifest entry (eval set `set_id`'s files and the eval ids both sides grade), and the
    eval ids left out with why."""
    e = {"set": set_id, "app": app,
         "evalset": str(evalsets / app / f"{set_id}.evalset.json"),
         "recorded": str(recorded / app / f"{set_id}.evalset.json"),
         "config": str(evalsets / app / "test_config.json"),
         "tools": str(TOOLS[app])}
    e["cases"], out = gradable(e["evalset"], e["recorded"])
    return e, [f"{set_id}/{c}: {why}" for c, why in out]


def gradable(evalset, recorded):
    """The eval ids of `evalset` whose recorded run ADK scores (and why each other is out)."""
    from google.adk.evaluation.local_eval_sets_manager import load_eval_set_from_file

    expected = load_eval_set_from_file(evalset, Path(evalset).stem)
    actual = {c.eval_id: c for c in load_eval_set_from_file(recorded, Path(recorded).stem).eval_cases}
    keep, out = [], []
    for c in expected.eval_cases:
        a = actual.get(c.eval_id)
        if a is None:
            out.append((c.eval_id, "not recorded"))
        elif not c.conversation:
            out.append((c.eval_id, "no invocations (ADK: NOT_EVALUATED)"))
        elif len(a.conversation) != len(c.conversation):
            out.append((c.eval_id, "recorded turns not the expected turns' number (ADK: ValueError)"))
        else:
            keep.append(c.eval_id)
    return keep, out


def cases(out, calls):
    """Writes the long runs and the manifest."""
    # gen.py's builders: ADK's own models, session events turned into invocations by ADK's
    # converter, saved by ADK's LocalEvalSetsManager (its clock pinned) — as the fixtures are.
    sys.path.insert(0, str(FIXTURES))
    import gen
    from google.adk.evaluation.local_eval_sets_manager import LocalEvalSetsManager

    assert calls >= 2, "CALLS: at least 2 (one of them is the wrong one)"
    out = Path(out)
    evalsets, recorded = out / "evalsets", out / "recorded"
    app, set_id = "time_agent", f"long_{calls}"
    (evalsets / app).mkdir(parents=True, exist_ok=True)
    (recorded / app).mkdir(parents=True, exist_ok=True)
    # The time app's criterion (IN_ORDER, threshold 1.0), as in the sample.
    (evalsets / app / "test_config.json").write_text(json.dumps(gen.CONFIGS[app], indent=2) + "\n")
    # Distinct times 7 minutes apart (200 × 7 < 24 h), all named in the prompt: every argument
    # the agent writes is in what the user asked.
    times = [f"{(7 * i) // 60 % 24:02d}:{7 * i % 60:02d}" for i in range(calls)]
    expected = [gen.conv(gen.NY, t, gen.LON) for t in times]
    wrong = list(expected)
    wrong[calls // 2] = gen.conv(gen.NY, times[calls // 2], "Europe/Paris")
    prompt = ("Convert each of these New York times to London time: " + ", ".join(times) + ".")
    reply = f"Here are the {calls} times in London."
    # A turn: (prompt, expected calls, the model's calls one per event, final response).
    long_cases = [("all_match", "every call as expected", [(prompt, expected, expected, reply)]),
                  ("one_wrong_argument", "the middle call converts to Europe/Paris",
                   [(prompt, expected, wrong, reply)])]
    exp, act = gen.build(app, long_cases)
    gen.save(LocalEvalSetsManager(agents_dir=str(evalsets)), app, set_id, exp)
    gen.save(LocalEvalSetsManager(agents_dir=str(recorded)), app, set_id, act)

    # `each`: the groups whose cases are also timed one by one.
    manifest = {"groups": {"small": [], "long": []}, "each": ["long"], "excluded": []}
    for group, sets, e, r in (("small", SMALL, FIXTURES / "evalsets", FIXTURES / "recorded"),
                              ("long", [(app, set_id)], evalsets, recorded)):
        for a, s in sets:
            m, excluded = entry(a, s, e, r)
            manifest["groups"][group].append(m)
            manifest["excluded"] += excluded
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    for g, sets in manifest["groups"].items():
        print(f"{g}: {sum(len(s['cases']) for s in sets)} cases", file=sys.stderr)


def load(group):
    """Each case of a group as (id, evaluator, actual invocations, expected invocations), read
    with ADK's loaders; each set's evaluator built from its test_config.json the way ADK's CLI
    builds it (get_evaluation_criteria_or_default → get_eval_metrics_from_config →
    MetricEvaluatorRegistry's factory, `TrajectoryEvaluator(eval_metric=…)`)."""
    from google.adk.evaluation.eval_config import get_eval_metrics_from_config
    from google.adk.evaluation.eval_config import get_evaluation_criteria_or_default
    from google.adk.evaluation.local_eval_sets_manager import load_eval_set_from_file
    from google.adk.evaluation.trajectory_evaluator import TrajectoryEvaluator

    work = []
    for s in group:
        cfg = get_evaluation_criteria_or_default(s["config"])
        metric = next(m for m in get_eval_metrics_from_config(cfg) if m.metric_name == METRIC)
        evaluator = TrajectoryEvaluator(eval_metric=metric)
        expected = {c.eval_id: c for c in load_eval_set_from_file(s["evalset"], s["set"]).eval_cases}
        actual = {c.eval_id: c for c in load_eval_set_from_file(s["recorded"], s["set"]).eval_cases}
        for cid in s["cases"]:
            work.append((f"{s['set']}/{cid}", evaluator, actual[cid].conversation,
                         expected[cid].conversation))
    return work


def rate(work, least):
    """Evaluations per second: every case once per pass, passes until `least` seconds."""
    def one_pass():
        for _, ev, actual, expected in work:
            ev.evaluate_invocations(actual_invocations=actual, expected_invocations=expected)
    one_pass()
    done, start = 0, time.perf_counter()
    while True:
        one_pass()
        done += len(work)
        secs = time.perf_counter() - start
        if secs >= least:
            return done / secs


def timing(manifest, least):
    import google.adk

    manifest = json.loads(Path(manifest).read_text())
    groups, each = manifest["groups"], manifest["each"]
    out = {"adk_version": google.adk.__version__}
    for name, group in groups.items():
        work = load(group)
        # Each case's verdict and score at its set's configured match type and threshold.
        verdicts = {}
        for cid, ev, actual, expected in work:
            r = ev.evaluate_invocations(actual_invocations=actual, expected_invocations=expected)
            verdicts[cid] = {"score": r.overall_score, "pass": r.overall_eval_status.name == "PASSED"}
        out[name] = {"cases": len(work), "per_second": rate(work, least), "verdicts": verdicts}
        if name in each:
            out[name]["each"] = {w[0]: rate([w], least) for w in work}
    print(json.dumps(out))


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "cases":
        cases(sys.argv[2], int(sys.argv[3]))
    elif len(sys.argv) == 4 and sys.argv[1] == "time":
        timing(sys.argv[2], float(sys.argv[3]))
    else:
        sys.exit(__doc__)
