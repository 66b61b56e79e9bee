//! agent-seer's side of `bench/adk.sh`'s comparison with Google ADK's `TrajectoryEvaluator`:
//! the same ADK eval sets and recorded runs, imported as `agent-seer import adk` imports them
//! (each eval case a scenario, each recorded case a transcript, the set's `test_config.json`
//! criterion the trajectory gate), then evaluated in process.
//!
//! `AGENT_SEER_ADK_MANIFEST` is the manifest `bench/adk_bench.py cases` writes: groups (`small`:
//! the sample in tests/fixtures/adk; `long`: 200-call runs) of eval sets, each with its
//! recording, criteria, tool spec and the eval ids both sides grade. Every group's suites are
//! loaded and its transcripts parsed up front (as ADK's evaluator gets parsed invocations),
//! then evaluated on one thread, pass after pass for at least `AGENT_SEER_ADK_SECONDS`
//! (default 1) after a warm-up pass, two ways:
//!
//! - `evaluate`: [`evaluate`], the full evaluation (lint, flow, oracle score, trajectory
//!   metrics, worded findings) — the figure compared with ADK's;
//! - `verdict`: [`verdict`], the verdict alone (the fast path, [`quick_verdict`], and the
//!   engines where it cannot decide: `decided_by_calls_alone` counts where it can — nowhere
//!   under a trajectory gate, which every set with a `test_config.json` has).
//!
//! Each case's two verdicts must agree (the bench panics otherwise). Prints one JSON line: per
//! group the cases, both rates, and each case's verdict, TC, error codes and literal
//! trajectory score at the set's configured match type (ADK's `tool_trajectory_avg_score`);
//! in the groups the manifest's `each` names, also each case's `evaluate` rate alone.
//! For a profiler, `AGENT_SEER_ADK_ONLY=small|long` times that group's `evaluate` alone.

#[cfg(feature = "mimalloc")]
#[global_allocator]
static ALLOC: agent_seer::Allocator = agent_seer::Allocator;

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::Instant;

use agent_seer::check::{
    Suite, Verdict, evaluate, evaluate_with_engines, load_transcript, quick_verdict, verdict,
};
use agent_seer::finding::Severity;
use agent_seer::harness::Transcript;
use agent_seer::ingest::adk::{self, MatchType};
use agent_seer::source::SourceFile;
use serde_json::{Map, Value, json};

/// One case: its `set/eval_id`, its suite (an index), its transcript, the set's match type.
struct Case {
    id: String,
    suite: usize,
    transcript: Transcript,
    match_type: Option<MatchType>,
}

/// Imports each eval set of a group under `dir` and loads the manifest's cases of it.
fn load(group: &[Value], dir: &Path) -> (Vec<Suite>, Vec<Case>) {
    let (mut suites, mut cases) = (Vec::new(), Vec::new());
    for s in group {
        let field = |k: &str| s[k].as_str().unwrap_or_else(|| panic!("manifest: `{k}`"));
        let set = field("set");
        // The criterion as the CLI reads it (`--config`, default the test_config.json beside).
        let criterion =
            adk::read_criterion(&SourceFile::read(Path::new(field("config"))).expect("config"))
                .expect("criterion");
        let out = dir.join(set);
        let done = adk::import(
            Path::new(field("evalset")),
            Some(Path::new(field("recorded"))),
            Path::new(field("tools")),
            criterion,
            set,
            &out,
            false,
        )
        .unwrap_or_else(|e| panic!("import {set}: {e}"));
        let suite = Suite::load(&done.harness).unwrap_or_else(|e| panic!("{e}"));
        for id in s["cases"].as_array().expect("manifest: `cases`") {
            let id = id.as_str().expect("an eval id");
            let path = out.join("transcripts").join(set).join(format!("{id}.yaml"));
            cases.push(Case {
                id: format!("{set}/{id}"),
                suite: suites.len(),
                transcript: load_transcript(&suite, &path).unwrap_or_else(|e| panic!("{e}")),
                match_type: criterion.map(|c| c.match_type),
            });
        }
        suites.push(suite);
    }
    (suites, cases)
}

/// Checks per second of `f` over every case, passes until `least` seconds have gone by.
fn rate(cases: &[Case], least: f64, f: &dyn Fn(&Case) -> bool) -> f64 {
    let pass = || cases.iter().map(|c| usize::from(f(c))).sum::<usize>();
    black_box(pass());
    let start = Instant::now();
    let mut checks = 0;
    loop {
        black_box(pass());
        checks += cases.len();
        let secs = start.elapsed().as_secs_f64();
        if secs >= least {
            return checks as f64 / secs;
        }
    }
}

fn main() {
    // Without a manifest (a bare `cargo bench`) there is nothing to compare: bench/adk.sh
    // writes it with ADK's own models.
    let Some(manifest) = std::env::var_os("AGENT_SEER_ADK_MANIFEST").map(PathBuf::from) else {
        eprintln!("adk: no AGENT_SEER_ADK_MANIFEST; run bench/adk.sh");
        return;
    };
    let least: f64 = std::env::var("AGENT_SEER_ADK_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1.0);
    let only = std::env::var("AGENT_SEER_ADK_ONLY").ok();
    let manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(&manifest).expect("manifest"))
            .expect("manifest JSON");
    let each: Vec<String> =
        serde_json::from_value(manifest["each"].clone()).expect("manifest: `each`");
    let dir = tempfile::tempdir().expect("temp dir");
    let mut out = Map::new();
    for (name, group) in manifest["groups"].as_object().expect("manifest: `groups`") {
        if only.as_deref().is_some_and(|o| o != name) {
            continue;
        }
        let (suites, cases) = load(group.as_array().expect("a group"), &dir.path().join(name));
        let full = |c: &Case| {
            evaluate(&suites[c.suite], &c.transcript)
                .expect("evaluate")
                .verdict
                == Verdict::Pass
        };
        if only.is_some() {
            println!("{name}: {:.0} evaluations/s", rate(&cases, least, &full));
            continue;
        }
        let mut verdicts = Map::new();
        let mut quick = 0;
        for c in &cases {
            quick += usize::from(
                quick_verdict(&suites[c.suite], &c.transcript)
                    .expect("quick verdict")
                    .is_some(),
            );
            let ev = evaluate(&suites[c.suite], &c.transcript).expect("evaluate");
            let engines = evaluate_with_engines(&suites[c.suite], &c.transcript).expect("engines");
            assert_eq!(
                serde_json::to_value(&ev).expect("JSON"),
                serde_json::to_value(&engines).expect("JSON"),
                "{}: evaluate is every engine's evaluation",
                c.id
            );
            let fast = verdict(&suites[c.suite], &c.transcript).expect("verdict");
            assert_eq!(
                fast, ev.verdict,
                "{}: the fast verdict is the engines'",
                c.id
            );
            let literal = ev.trajectory.as_ref().map(|t| t.literal);
            let score = literal.zip(c.match_type).map(|(m, kind)| match kind {
                MatchType::Exact => m.exact_match,
                MatchType::InOrder => m.in_order_match,
                MatchType::AnyOrder => m.any_order_match,
            });
            let errors: Vec<String> = ev
                .findings
                .iter()
                .filter(|f| f.severity == Severity::Error)
                .map(|f| f.code.to_string())
                .collect();
            verdicts.insert(
                c.id.clone(),
                json!({
                    "pass": ev.verdict == Verdict::Pass,
                    "score": score,
                    "tc": ev.score.as_ref().map(|s| s.tc),
                    "errors": errors,
                }),
            );
        }
        let fast =
            |c: &Case| verdict(&suites[c.suite], &c.transcript).expect("verdict") == Verdict::Pass;
        let mut group = json!({
            "cases": cases.len(),
            "calls": cases.iter().map(|c| c.transcript.calls().count()).sum::<usize>(),
            "per_second": rate(&cases, least, &full),
            "verdict_per_second": rate(&cases, least, &fast),
            "decided_by_calls_alone": quick,
            "verdicts": verdicts,
        });
        if each.iter().any(|e| e == name) {
            group["each"] = cases
                .chunks(1)
                .map(|one| (one[0].id.clone(), json!(rate(one, least, &full))))
                .collect::<Map<_, _>>()
                .into();
        }
        out.insert(name.clone(), group);
    }
    if only.is_none() {
        println!("{}", Value::Object(out));
    }
}
