//! The fast path against the engines: on every shipped transcript, on the BFCL sample's model
//! outputs under each import switch, and on thousands of mutations of both, `verdict` and
//! `quick_verdict` give the verdict `evaluate` (every engine) gives, and a transcript the fast
//! path calls perfect is one the engines find nothing in and score 1 on every sub-dimension —
//! with each suite's own pass threshold, with a threshold of 1, where imperfect transcripts
//! are failed without the engines, and under a trajectory gate, where a run below it is failed
//! from its calls' literal metrics.
//!
//! `AGENT_SEER_BFCL_DATA` (BFCL's data directory, from bfcl-eval) adds BFCL's real four
//! categories; `.ci/run` sets it (in a release build: ~850,000 transcripts).

use std::path::{Path, PathBuf};

use agent_seer::bfcl::{self, IntegerMode, Options, StringMode};
use agent_seer::check::{
    Suite, Verdict, evaluate, evaluate_every_call, evaluate_with_engines, quick_verdict, verdict,
};
use agent_seer::finding::Code;
use agent_seer::harness::{
    Harness, Layout, MatchPolicy, TrajectoryGate, TrajectoryMatch, Transcript, discover,
};
use serde_json::{Value, json};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// What the comparisons saw.
#[derive(Debug, Default)]
struct Seen {
    transcripts: usize,
    quick_pass: usize,
    quick_fail: usize,
    /// Evaluations without a finding, compared with every engine's field for field.
    clean: usize,
    /// Evaluations compared with every engine's working out every call.
    own: usize,
}

/// Both paths on one transcript: identical evaluations (or identical errors), identical
/// verdicts, and a quick verdict only where it is the engines' verdict.
fn compare(suite: &Suite, t: &Transcript, seen: &mut Seen) {
    let what = format!("{} / {}", suite.harness.suite, t.id);
    // The engines taking a step's own call's results from its scenario work out what they
    // work out call by call.
    match (
        evaluate_with_engines(suite, t),
        evaluate_every_call(suite, t),
    ) {
        (Ok(a), Ok(b)) => {
            assert_eq!(
                serde_json::to_value(&a).unwrap(),
                serde_json::to_value(&b).unwrap(),
                "{what}: the own calls' results are not the engines'"
            );
            seen.own += 1;
        }
        (a, b) => assert_eq!(a.unwrap_err(), b.unwrap_err(), "{what}"),
    }
    let engines = match evaluate(suite, t) {
        Err(a) => {
            assert_eq!(evaluate_with_engines(suite, t).unwrap_err(), a, "{what}");
            assert_eq!(verdict(suite, t).unwrap_err(), a, "{what}");
            assert_eq!(quick_verdict(suite, t).unwrap_err(), a, "{what}");
            return;
        }
        // `evaluate`'s shortcut (a scenario's reference run) only ever gives an evaluation
        // without findings but the trajectory gate's: every such one is every engine's, field
        // for field.
        Ok(a) if a.findings.iter().all(|f| f.code == Code::TrajectoryBelow) => {
            let engines = evaluate_with_engines(suite, t).unwrap();
            assert_eq!(
                serde_json::to_value(&a).unwrap(),
                serde_json::to_value(&engines).unwrap(),
                "{what}: evaluate is not every engine's evaluation"
            );
            seen.clean += 1;
            engines
        }
        Ok(a) => a,
    };
    seen.transcripts += 1;
    assert_eq!(verdict(suite, t).unwrap(), engines.verdict, "{what}");
    if let Some(v) = quick_verdict(suite, t).unwrap() {
        assert_eq!(
            v, engines.verdict,
            "{what}: quick verdict {v:?}, engines {:?} (findings {:?}, score {:?})",
            engines.verdict, engines.findings, engines.score
        );
        if v == Verdict::Pass {
            // Only a perfect transcript passes without the engines: they must agree it is.
            assert!(
                engines.findings.is_empty(),
                "{what}: {:?}",
                engines.findings
            );
            let score = engines
                .score
                .as_ref()
                .expect("a perfect transcript has a scenario");
            assert!(
                score.sub.values().all(|v| v == 1.0),
                "{what}: the fast path found it perfect, the oracle scored {:?}",
                score.sub
            );
        }
        match v {
            Verdict::Pass => seen.quick_pass += 1,
            Verdict::Fail => seen.quick_fail += 1,
        }
    }
}

/// The transcript and its mutations: values changed, respelled, replaced by another value the
/// workflow accepts, removed and added; tools renamed; calls dropped, repeated, swapped, failed.
fn variants(suite: &Suite, t: &Transcript) -> Vec<Transcript> {
    variants_at(suite, t, &|_| true)
}

/// [`variants`] with only the calls at positions `at(call index in its turn)` mutated.
fn variants_at(suite: &Suite, t: &Transcript, at: &dyn Fn(usize) -> bool) -> Vec<Transcript> {
    let mut out = vec![t.clone()];
    let positions: Vec<(usize, usize)> = t
        .turns
        .iter()
        .enumerate()
        .flat_map(|(ti, turn)| (0..turn.calls.len()).map(move |ci| (ti, ci)))
        .filter(|&(_, ci)| at(ci))
        .collect();
    let tools: Vec<String> = suite.linter.tools().map(|s| s.name.clone()).collect();
    let scenario = t
        .scenario
        .as_deref()
        .and_then(|id| suite.harness.scenario(id));
    let mut edit = |label: &str, f: &dyn Fn(&mut Transcript)| {
        let mut v = t.clone();
        f(&mut v);
        v.id = format!("{}~{label}", t.id);
        out.push(v);
    };
    for &(ti, ci) in &positions {
        let call = &t.turns[ti].calls[ci];
        let args = call.args().clone();
        let set = move |v: &mut Transcript, k: &str, val: Option<Value>| {
            let c = &mut v.turns[ti].calls[ci];
            c.edit_arguments(|m| match val {
                Some(x) => m.insert(k.to_owned(), x),
                None => m.remove(k),
            });
        };
        for (k, val) in &args {
            let k = k.as_str();
            for (label, new) in changed(val) {
                edit(&format!("{ti}.{ci}.{k}.{label}"), &|v| {
                    set(v, k, Some(new.clone()))
                });
            }
            edit(&format!("{ti}.{ci}.{k}.removed"), &|v| set(v, k, None));
        }
        // Every value the workflow accepts for a parameter, in place of the call's.
        if let Some(sc) = scenario {
            for step in sc.turns.get(ti).into_iter().flat_map(|st| &st.workflow) {
                if step.call.tool != call.tool {
                    continue;
                }
                for (k, policy) in &step.match_policies {
                    if let MatchPolicy::AnyOf(any) = policy {
                        for (i, o) in any.options.iter().enumerate() {
                            edit(&format!("{ti}.{ci}.{k}.option{i}"), &|v| {
                                set(v, k, Some(o.clone()))
                            });
                        }
                    }
                }
            }
        }
        // A declared parameter the call leaves out, and one nobody declared.
        if let Some(props) = suite.linter.tool(&call.tool).and_then(|s| s.properties()) {
            for (k, schema) in props.iter().filter(|(k, _)| !args.contains_key(*k)).take(3) {
                let val = schema
                    .get("default")
                    .cloned()
                    .or_else(|| schema.get("enum").and_then(|e| e.get(0)).cloned())
                    .unwrap_or(json!("x"));
                edit(&format!("{ti}.{ci}.{k}.added"), &|v| {
                    set(v, k, Some(val.clone()))
                });
            }
        }
        edit(&format!("{ti}.{ci}.unknown"), &|v| {
            set(v, "zz_unknown", Some(json!(1)))
        });
        for other in tools.iter().filter(|n| **n != call.tool).take(2) {
            edit(&format!("{ti}.{ci}.tool.{other}"), &|v| {
                v.turns[ti].calls[ci].tool = other.clone()
            });
        }
        edit(&format!("{ti}.{ci}.dropped"), &|v| {
            v.turns[ti].calls.remove(ci);
        });
        edit(&format!("{ti}.{ci}.repeated"), &|v| {
            let c = v.turns[ti].calls[ci].clone();
            v.turns[ti].calls.insert(ci, c);
        });
        edit(&format!("{ti}.{ci}.failed"), &|v| {
            v.turns[ti].calls[ci].output = Some(json!({"isError": true, "content": []}))
        });
        if ci > 0 {
            edit(&format!("{ti}.{ci}.swapped"), &|v| {
                v.turns[ti].calls.swap(ci - 1, ci)
            });
        }
    }
    edit("no-calls", &|v| {
        v.turns.iter_mut().for_each(|tt| tt.calls.clear())
    });
    // A prompt of the transcript's own, in place of the scenario's (which grounds references).
    edit("own-prompt", &|v| {
        v.turns
            .iter_mut()
            .for_each(|tt| tt.prompt = Some("do as you see fit".into()))
    });
    // The scenario's own prompts written out, as an imported recorded run has them: the same
    // text the engines read anyway.
    if let Some(sc) = scenario {
        edit("scenario-prompt", &|v| {
            for (tt, st) in v.turns.iter_mut().zip(&sc.turns) {
                tt.prompt = Some(st.prompt.clone());
            }
        });
    }
    out
}

/// A value changed, and respelled: a number ±1 and as the other JSON number type, a string
/// extended, recased and emptied, a boolean flipped, an array grown and emptied, an object
/// grown, and the wrong type.
fn changed(v: &Value) -> Vec<(&'static str, Value)> {
    let mut out = vec![("null", Value::Null)];
    match v {
        Value::Number(n) => {
            let f = n.as_f64().unwrap();
            out.push(("plus", json!(f + 1.0)));
            out.push(("minus", json!(f - 1.0)));
            match n.as_i64() {
                Some(i) => out.push(("as-float", json!(i as f64))),
                None if f.fract() == 0.0 && f.abs() < 1e15 => out.push(("as-int", json!(f as i64))),
                None => {}
            }
            out.push(("string", json!(n.to_string())));
        }
        Value::String(s) => {
            out.push(("extended", json!(format!("{s}x"))));
            out.push(("upper", json!(s.to_uppercase())));
            out.push(("spaced", json!(format!(" {s} "))));
            out.push(("empty", json!("")));
            out.push(("number", json!(7)));
        }
        Value::Bool(b) => out.push(("flipped", json!(!b))),
        Value::Array(items) => {
            let mut more = items.clone();
            more.push(items.first().cloned().unwrap_or(json!("x")));
            out.push(("grown", Value::Array(more)));
            out.push(("emptied", json!([])));
        }
        Value::Object(m) => {
            let mut more = m.clone();
            more.insert("zz".into(), json!(1));
            out.push(("grown", Value::Object(more)));
        }
        Value::Null => out.push(("zero", json!(0))),
    }
    out
}

/// The suite as loaded, again with a pass threshold of 1, and again under a trajectory gate
/// of `gate`'s kind at a minimum of 1 (what an imported ADK criterion asks; the verdict then
/// fails a run whose literal match is below it from its calls).
fn thresholds(harness: &Path, gate: TrajectoryMatch) -> [Suite; 3] {
    let h = Harness::load(harness).unwrap();
    let mut exact = h.clone();
    exact.thresholds.pass = 1.0;
    let mut gated = h.clone();
    gated.thresholds.trajectory = Some(TrajectoryGate {
        kind: gate,
        min: 1.0,
    });
    [
        Suite::from_harness(h).unwrap(),
        Suite::from_harness(exact).unwrap(),
        Suite::from_harness(gated).unwrap(),
    ]
}

/// The gate kinds in turn, one a suite.
const GATES: [TrajectoryMatch; 3] = [
    TrajectoryMatch::InOrder,
    TrajectoryMatch::Exact,
    TrajectoryMatch::AnyOrder,
];

#[test]
fn shipped_suites_and_their_mutations() {
    let layout = Layout::under(&repo());
    let mut seen = Seen::default();
    for (k, files) in discover(&layout).unwrap().into_iter().enumerate() {
        let Some(harness) = &files.harness else {
            continue;
        };
        let loaded = Suite::load(harness).unwrap();
        let transcripts: Vec<Transcript> = files
            .transcripts
            .iter()
            .map(|(_, p)| agent_seer::check::load_transcript(&loaded, p).unwrap())
            .collect();
        for suite in thresholds(harness, GATES[k % GATES.len()]) {
            for t in &transcripts {
                for v in variants(&suite, t) {
                    compare(&suite, &v, &mut seen);
                }
            }
        }
    }
    eprintln!("{seen:?}");
    assert!(seen.transcripts > 5_000, "{seen:?}");
    assert!(seen.clean > 500, "{seen:?}");
    assert!(seen.own > 5_000, "{seen:?}");
    // The genmedia tools carry capability matrices, so their calls are never "known clean":
    // no quick pass. Under a threshold of 1, calls that cannot pair with the workflow fail
    // quickly.
    assert!(seen.quick_fail > 1_000, "{seen:?}");
}

/// A long turn (more pairs than a turn keeps in one table: 33 steps and calls or more) hashes
/// its calls, counts them by their difference from its steps' own calls, and takes the steps
/// its run does as its workflow up to where it first differs as done: every shipped suite's
/// first scenario with its first turn's steps repeated to a turn of 33 or more (equal steps,
/// which the difference counts more than once), and a chain of 34 distinct steps, each run
/// as its workflow and mutated (in the middle; the chain also at its first and last call),
/// are evaluated alike with and without the own calls' results.
#[test]
fn long_turns_and_their_mutations() {
    let layout = Layout::under(&repo());
    let mut seen = Seen::default();
    let mut runs: Vec<(Suite, Transcript)> = Vec::new();
    for files in discover(&layout).unwrap() {
        let (Some(harness), Some((_, first))) = (&files.harness, files.transcripts.first()) else {
            continue;
        };
        let mut h = Harness::load(harness).unwrap();
        let Some(sc) = h.scenarios.iter_mut().find(|sc| {
            sc.turns
                .first()
                .is_some_and(|t| !t.workflow.is_empty() && t.workflow.iter().all(|o| !o.optional))
        }) else {
            continue;
        };
        sc.turns.truncate(1);
        let steps = sc.turns[0].workflow.clone();
        while sc.turns[0].workflow.len() < 33 {
            sc.turns[0].workflow.extend(steps.iter().cloned());
        }
        let id = sc.id.clone();
        let suite = Suite::from_harness(h).unwrap();
        let mut t = agent_seer::check::load_transcript(&suite, first).unwrap();
        let sc = suite.harness.scenarios.iter().find(|s| s.id == id).unwrap();
        t.scenario = Some(id.clone());
        t.prompt = None;
        t.turns = vec![agent_seer::harness::TranscriptTurn {
            prompt: None,
            calls: sc.turns[0]
                .workflow
                .iter()
                .map(|o| {
                    let mut c = o.call.clone();
                    c.output = o.mock_output.clone();
                    c
                })
                .collect(),
            reply: None,
        }];
        runs.push((suite, t));
    }
    // The chain: a note made (its URI in the output), then tagged by that URI, 17 times.
    const TOOLS: &str = r#"[{"name": "create_note", "inputSchema": {"type": "object",
      "properties": {"title": {"type": "string"}}, "required": ["title"]}},
      {"name": "tag_note", "inputSchema": {"type": "object",
      "properties": {"uri": {"type": "string"}, "tag": {"type": "string"}},
      "required": ["uri", "tag"]}}]"#;
    let (mut workflow, mut calls) = (String::new(), String::new());
    for k in 0..17 {
        let out = format!(
            "{{content: [{{type: text, text: 'https://notes.example/n/{k}'}}], structuredContent: {{uri: 'https://notes.example/n/{k}'}}}}"
        );
        workflow.push_str(&format!(
            "          - tool: create_note\n            arguments: {{title: Note {k}}}\n            mock_output: {out}\n          - tool: tag_note\n            arguments: {{uri: 'https://notes.example/n/{k}', tag: t{k}}}\n"
        ));
        calls.push_str(&format!(
            "  - tool: create_note\n    arguments: {{title: Note {k}}}\n    output: {out}\n  - tool: tag_note\n    arguments: {{uri: 'https://notes.example/n/{k}', tag: t{k}}}\n"
        ));
    }
    let dir = suite_dir(
        "notes",
        TOOLS,
        &format!(
            "tools: [notes.tools.json]\nscenarios:\n  - id: chain\n    turns:\n      - prompt: Make and tag seventeen notes.\n        workflow:\n{workflow}"
        ),
    );
    let suite = Suite::load(&dir.path().join("notes.yaml")).unwrap();
    let chain = written(&dir, "chain", &format!("scenario: chain\ncalls:\n{calls}"));
    assert_eq!(evaluate(&suite, &chain).unwrap().verdict, Verdict::Pass);
    runs.push((suite, chain));
    assert!(runs.len() >= 5, "{} runs", runs.len());
    let chain = runs.len() - 1;
    for (k, (suite, t)) in runs.iter().enumerate() {
        let n = t.turns[0].calls.len();
        assert!(n >= 33, "{}", t.id);
        // The chain at its first call, one in the middle and its last (a run that differs
        // from its start, after a stretch of its own calls, and at its end); the others in
        // the middle (their repeated steps make every mutation a long Hungarian pairing).
        let at = |ci: usize| ci == n / 2 || (k == chain && (ci == 0 || ci == n - 1));
        // And under a trajectory gate (its kind in turn), which the verdict decides literally.
        let mut h = suite.harness.clone();
        h.thresholds.trajectory = Some(TrajectoryGate {
            kind: GATES[k % GATES.len()],
            min: 1.0,
        });
        let gated = Suite::from_harness(h).unwrap();
        for v in variants_at(suite, t, &at) {
            compare(suite, &v, &mut seen);
            compare(&gated, &v, &mut seen);
        }
    }
    eprintln!("{seen:?}");
    assert!(seen.own > 500, "{seen:?}");
}

/// A folder with suite `name`: its tools (`<name>.tools.json`) and harness (`<name>.yaml`).
fn suite_dir(name: &str, tools: &str, harness: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join(format!("{name}.tools.json")), tools).unwrap();
    std::fs::write(dir.path().join(format!("{name}.yaml")), harness).unwrap();
    dir
}

/// Transcript `name`, written into `dir` and loaded.
fn written(dir: &tempfile::TempDir, name: &str, text: &str) -> Transcript {
    let p = dir.path().join(format!("{name}.yaml"));
    std::fs::write(&p, text).unwrap();
    Transcript::load(&p).unwrap()
}

/// Parameters named like inputs (no capability matrix): the flow engine checks their strings
/// as references. A value the scenario's prompt or artifacts ground is decided by the calls
/// alone; an ungrounded one, or a transcript with a prompt of its own, goes to the engines. A
/// call the workflow asks for twice, made twice, is no redundancy.
#[test]
fn references_grounded_by_the_prompt_and_asked_repeats() {
    const TOOLS: &str = r#"[{"name": "resize", "inputSchema": {"type": "object",
      "properties": {"image_path": {"type": "string"}, "width": {"type": "integer"},
        "images": {"type": "array", "items": {"type": "string"}}},
      "required": ["image_path", "width"], "additionalProperties": false}}]"#;
    const HARNESS: &str = "tools: [ground.tools.json]\nthresholds: {pass: 1.0, min_gap: 0.3}\nscenarios:\n  - id: named\n    turns:\n      - prompt: Make photos/cat.png 200 pixels wide\n        workflow:\n          - tool: resize\n            arguments: {image_path: photos/cat.png, width: 200}\n  - id: unnamed\n    turns:\n      - prompt: Make my picture 100 pixels wide\n        workflow:\n          - tool: resize\n            arguments: {image_path: photos/dog.png, width: 100}\n  - id: listed\n    artifacts: [gs://bucket/a.png]\n    turns:\n      - prompt: Shrink the stored image and the one at gs://bucket/b.png.\n        workflow:\n          - tool: resize\n            arguments: {image_path: gs://bucket/a.png, width: 10, images: [gs://bucket/b.png, gs://bucket/a.png]}\n  - id: twice\n    turns:\n      - prompt: Two copies of photos/cat.png, 50 wide\n        workflow:\n          - tool: resize\n            arguments: {image_path: photos/cat.png, width: 50}\n          - tool: resize\n            arguments: {image_path: photos/cat.png, width: 50}\n";
    let dir = suite_dir("ground", TOOLS, HARNESS);
    let transcript = |name: &str, text: &str| written(&dir, name, text);
    let named = transcript(
        "named",
        "scenario: named\ncalls:\n  - tool: resize\n    arguments: {image_path: photos/cat.png, width: 200}\n",
    );
    let unnamed = transcript(
        "unnamed",
        "scenario: unnamed\ncalls:\n  - tool: resize\n    arguments: {image_path: photos/dog.png, width: 100}\n",
    );
    let listed = transcript(
        "listed",
        "scenario: listed\ncalls:\n  - tool: resize\n    arguments: {image_path: gs://bucket/a.png, width: 10, images: [gs://bucket/b.png, gs://bucket/a.png]}\n",
    );
    let twice = transcript(
        "twice",
        "scenario: twice\ncalls:\n  - tool: resize\n    arguments: {image_path: photos/cat.png, width: 50}\n  - tool: resize\n    arguments: {image_path: photos/cat.png, width: 50}\n",
    );
    let mut own_prompt = named.clone();
    own_prompt.turns[0].prompt = Some("Make it 200 pixels wide".into());
    // The scenario's prompt, written out: the same text, so still decided by the calls.
    let mut same_prompt = named.clone();
    same_prompt.turns[0].prompt = Some("Make photos/cat.png 200 pixels wide".into());
    let [loaded, exact, _] = thresholds(&dir.path().join("ground.yaml"), TrajectoryMatch::InOrder);
    for (suite, lenient) in [(loaded, false), (exact, false)]
        .into_iter()
        .chain(std::iter::once({
            let mut h = Harness::load(&dir.path().join("ground.yaml")).unwrap();
            h.thresholds.pass = 0.5;
            (Suite::from_harness(h).unwrap(), true)
        }))
    {
        let quick = |t: &Transcript| quick_verdict(&suite, t).unwrap();
        let full = |t: &Transcript| evaluate(&suite, t).unwrap().verdict;
        for t in [&named, &listed, &twice, &same_prompt] {
            assert_eq!(full(t), Verdict::Pass, "{}", t.id);
            assert_eq!(quick(t), Some(Verdict::Pass), "{}", t.id);
        }
        // The prompt names no dog picture: a reference nobody produced.
        assert_eq!(full(&unnamed), Verdict::Fail);
        assert_eq!(quick(&unnamed), None);
        // The transcript's own prompt no longer names the path.
        assert_eq!(full(&own_prompt), Verdict::Fail);
        assert_eq!(quick(&own_prompt), None);
        // A third identical call is more than the workflow asks for.
        let mut thrice = twice.clone();
        let again = thrice.turns[0].calls[0].clone();
        thrice.turns[0].calls.push(again);
        assert_eq!(full(&thrice), Verdict::Fail);
        if !lenient {
            assert_eq!(quick(&thrice), Some(Verdict::Fail));
        }
        let mut seen = Seen::default();
        for t in [&named, &unnamed, &listed, &twice, &own_prompt] {
            for v in variants(&suite, t) {
                compare(&suite, &v, &mut seen);
            }
        }
        assert!(seen.transcripts > 100, "{seen:?}");
    }
}

/// A perfect call whose SQL names a table the workflow's own SQL does not: a reference for
/// the flow engine to ground, so the calls alone do not decide it; a turn whose steps take no
/// SQL parameter is decided by its calls.
#[test]
fn sql_in_a_perfect_call_is_the_flow_engines() {
    const TOOLS: &str = r#"[{"name": "read_query", "inputSchema": {"type": "object",
      "properties": {"query": {"type": "string"}}, "required": ["query"],
      "additionalProperties": false}},
     {"name": "list_tables", "inputSchema": {"type": "object",
      "properties": {"schema": {"type": "string"}}, "additionalProperties": false}}]"#;
    const HARNESS: &str = "tools: [sql.tools.json]\nthresholds: {pass: 1.0, min_gap: 0.3}\nscenarios:\n  - id: names\n    turns:\n      - prompt: Who are the users?\n        workflow:\n          - tool: read_query\n            arguments: {query: SELECT name FROM users}\n            match: {query: {any_of: [SELECT name FROM users, SELECT name FROM people]}}\n  - id: tables\n    turns:\n      - prompt: List the tables of main\n        workflow:\n          - tool: list_tables\n            arguments: {schema: main}\n";
    let dir = suite_dir("sql", TOOLS, HARNESS);
    let transcript = |name: &str, text: &str| written(&dir, name, text);
    let own = transcript(
        "own",
        "scenario: names\ncalls:\n  - tool: read_query\n    arguments: {query: SELECT name FROM users}\n",
    );
    let other = transcript(
        "other",
        "scenario: names\ncalls:\n  - tool: read_query\n    arguments: {query: SELECT name FROM people}\n",
    );
    let tables = transcript(
        "tables",
        "scenario: tables\ncalls:\n  - tool: list_tables\n    arguments: {schema: main}\n",
    );
    let [suite, ..] = thresholds(&dir.path().join("sql.yaml"), TrajectoryMatch::InOrder);
    let quick = |t: &Transcript| quick_verdict(&suite, t).unwrap();
    let full = |t: &Transcript| evaluate_with_engines(&suite, t).unwrap();
    // The option is one the step accepts, but the table is one nobody showed.
    let ev = full(&other);
    assert_eq!(ev.verdict, Verdict::Fail, "{:?}", ev.findings);
    assert!(
        ev.findings.iter().any(|f| f.message.contains("people")),
        "{:?}",
        ev.findings
    );
    assert_eq!(quick(&other), None);
    // Its own SQL names what the workflow names, but SQL is still the flow engine's to read.
    assert_eq!(full(&own).verdict, Verdict::Pass);
    assert_eq!(quick(&own), None);
    // No step of this turn takes SQL: its calls decide it.
    assert_eq!(full(&tables).verdict, Verdict::Pass);
    assert_eq!(quick(&tables), Some(Verdict::Pass));
}

/// Imports a BFCL data directory with `options` (and a pass threshold other than the import's
/// 1, when given) and pairs each output line with its suite.
fn bfcl_work(
    data: &Path,
    outputs: &Path,
    options: Options,
    pass: Option<f64>,
) -> (Vec<Suite>, Vec<(usize, Transcript)>) {
    let dir = tempfile::tempdir().unwrap();
    let report = bfcl::import(data, dir.path(), &bfcl::CATEGORIES, options).unwrap();
    let imported = report
        .suites(|h| {
            if let Some(pass) = pass {
                h.thresholds.pass = pass;
            }
        })
        .unwrap();
    let work = bfcl::read_outputs(outputs)
        .unwrap()
        .into_iter()
        .filter_map(|o| Some((imported.suite_of(&o.entry)?, o.transcript)))
        .collect();
    (imported.suites, work)
}

fn bfcl_switches() -> [(&'static str, Options); 4] {
    [
        ("default", Options::default()),
        ("bfcl-compatible", Options::bfcl_compatible()),
        (
            "strings normalized",
            Options {
                strings: StringMode::Normalized,
                ..Options::default()
            },
        ),
        (
            "integers strict",
            Options {
                integers: IntegerMode::Strict,
                ..Options::default()
            },
        ),
    ]
}

fn bfcl_agrees(data: &Path, outputs: &Path) -> Seen {
    let mut seen = Seen::default();
    for (name, options) in bfcl_switches() {
        let (suites, work) = bfcl_work(data, outputs, options, None);
        let before = seen.quick_pass;
        for (s, t) in &work {
            for v in variants(&suites[*s], t) {
                compare(&suites[*s], &v, &mut seen);
            }
        }
        assert!(seen.quick_pass > before, "{name}: no quick pass");
        // Under a threshold below 1 only perfect and rejected calls are decided quickly.
        let (lenient, work) = bfcl_work(data, outputs, options, Some(0.5));
        let before = seen.quick_fail;
        for (s, t) in &work {
            for v in variants(&lenient[*s], t) {
                compare(&lenient[*s], &v, &mut seen);
            }
        }
        assert!(
            seen.quick_fail > before,
            "{name}: no rejected call at threshold 0.5"
        );
    }
    seen
}

#[test]
fn bfcl_sample_outputs_and_their_mutations() {
    let data = repo().join("tests/data/bfcl");
    let seen = bfcl_agrees(&data, &data.join("outputs.jsonl"));
    eprintln!("{seen:?}");
    // The sample's 35 outputs under four switches, each with its mutations.
    assert!(seen.transcripts > 3_000, "{seen:?}");
    assert!(seen.quick_pass > 100 && seen.quick_fail > 1_000, "{seen:?}");
}

/// The sample's outputs the calls alone do not decide (snapshotted): values the oracle accepts
/// that are not the known-clean spelling (`4.0` for `4`, `60` for `60.0`, an enum value in
/// another case). Every other correct answer passes without the engines (the two identical
/// calls a workflow asks for among them), and every other wrong one fails without them (an
/// undeclared argument at any threshold).
#[test]
fn bfcl_sample_is_decided_by_calls_alone() {
    let data = repo().join("tests/data/bfcl");
    let (suites, work) = bfcl_work(&data, &data.join("outputs.jsonl"), Options::default(), None);
    let mut undecided = Vec::new();
    for (s, t) in &work {
        let quick = quick_verdict(&suites[*s], t).unwrap();
        let full = evaluate(&suites[*s], t).unwrap().verdict;
        assert!(quick.is_none_or(|q| q == full), "{}", t.id);
        if quick.is_none() {
            undecided.push(t.id.clone());
        }
    }
    insta::assert_yaml_snapshot!(undecided);
}

#[test]
#[ignore = "needs BFCL's real data, which .ci/run fetches (AGENT_SEER_BFCL_DATA)"]
fn bfcl_real_data() {
    let data = PathBuf::from(std::env::var_os("AGENT_SEER_BFCL_DATA").expect(
        "AGENT_SEER_BFCL_DATA names bfcl_eval/data of an unpacked bfcl-eval (bash .ci/bfcl.sh prints where)",
    ));
    let outputs = tempfile::NamedTempFile::new().unwrap();
    let o = std::process::Command::new("python3")
        .arg(repo().join("bench/bfcl/outputs.py"))
        .arg(&data)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    std::fs::write(outputs.path(), &o.stdout).unwrap();
    let seen = bfcl_agrees(&data, outputs.path());
    eprintln!("{seen:?}");
    assert!(seen.transcripts > 50_000, "{seen:?}");
}

/// Every scenario id finds its own scenario through the fast path's table, and near misses
/// (a character more, less or changed) find none.
#[test]
fn scenario_ids_find_their_scenarios() {
    let data = repo().join("tests/data/bfcl");
    let (mut suites, _) = bfcl_work(&data, &data.join("outputs.jsonl"), Options::default(), None);
    for files in discover(&Layout::under(&repo())).unwrap() {
        if let Some(h) = &files.harness {
            suites.push(Suite::load(h).unwrap());
        }
    }
    let mut ids = 0;
    for suite in &suites {
        for (i, sc) in suite.harness.scenarios.iter().enumerate() {
            let (j, found) = suite.scenario(&sc.id).unwrap();
            assert_eq!((j, found.id.as_str()), (i, sc.id.as_str()));
            let mut changed = sc.id.clone();
            let last = changed.pop().unwrap();
            assert!(suite.scenario(&changed).is_none(), "{changed}");
            assert!(suite.scenario(&format!("{}{last}x", changed)).is_none());
            changed.push(if last == 'a' { 'b' } else { 'a' });
            assert!(
                suite
                    .scenario(&changed)
                    .is_none_or(|(_, found)| found.id == changed)
            );
            ids += 1;
        }
    }
    assert!(ids >= 20, "{ids}");
}
