//! agent-seer's check on BFCL model outputs: the side of `bench/bfcl.sh`'s comparison with
//! BFCL's own `ast_checker`, and lint/oracle throughput on imported BFCL categories.
//!
//! `AGENT_SEER_BFCL_DATA` (default: the sample in tests/data/bfcl) is imported with the
//! default switches; `AGENT_SEER_BFCL_OUTPUTS` (default: the sample's outputs.jsonl) are turned
//! into transcripts, parsed up front (as BFCL's checker gets parsed JSON), then evaluated —
//! lint, flow and the oracle score — `AGENT_SEER_BFCL_REPS` times (default 20) on one thread.
//! Prints one JSON line.

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Instant;

use agent_seer::bfcl::{self, Options};
use agent_seer::harness::{Harness, Transcript};
use agent_seer::runner::{Suite, Verdict, evaluate};
use agent_seer::source::SourceFile;

fn main() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let data = std::env::var_os("AGENT_SEER_BFCL_DATA")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("tests/data/bfcl"));
    let outputs = std::env::var_os("AGENT_SEER_BFCL_OUTPUTS")
        .map(PathBuf::from)
        .unwrap_or_else(|| data.join("outputs.jsonl"));
    let reps: usize = std::env::var("AGENT_SEER_BFCL_REPS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20);
    let dir = tempfile::tempdir().expect("temp dir");
    let report =
        bfcl::import(&data, dir.path(), &bfcl::CATEGORIES, Options::default()).expect("import");

    // Scenario id → its suite, loaded once.
    let mut suites: Vec<Suite> = Vec::new();
    let mut suite_of: HashMap<String, usize> = HashMap::new();
    for p in report
        .files
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
    {
        let h = Harness::load(p).expect("harness");
        for sc in &h.scenarios {
            suite_of.insert(sc.id.clone(), suites.len());
        }
        suites.push(Suite::from_harness(h).expect("suite"));
    }
    let mut work: Vec<(usize, Transcript)> = Vec::new();
    let mut skipped = 0;
    for (i, line) in std::fs::read_to_string(&outputs)
        .expect("outputs")
        .lines()
        .enumerate()
    {
        let o: serde_json::Value = serde_json::from_str(line).expect("output line");
        let entry = o["entry"].as_str().expect("entry");
        let Some(&s) = suite_of.get(entry) else {
            skipped += 1;
            continue;
        };
        let calls: Vec<serde_json::Value> = o["output"]
            .as_array()
            .expect("output")
            .iter()
            .map(|c| {
                let (name, args) = c.as_object().expect("call").iter().next().expect("one");
                serde_json::json!({"tool": name, "arguments": args})
            })
            .collect();
        let text = serde_json::json!({"scenario": entry, "calls": calls}).to_string();
        let file = SourceFile::from_text(dir.path().join(format!("o{i}.yaml")), text);
        work.push((
            s,
            Transcript::from_source(file, format!("o{i}")).expect("transcript"),
        ));
    }
    let start = Instant::now();
    let mut passed = 0usize;
    for _ in 0..reps {
        for (s, t) in &work {
            let ev = evaluate(&suites[*s], t).expect("evaluate");
            passed += usize::from(ev.verdict == Verdict::Pass);
        }
    }
    let secs = start.elapsed().as_secs_f64();
    let checks = reps * work.len();
    // Lint alone, on the same calls.
    let start = Instant::now();
    let mut findings = 0usize;
    let mut calls = 0usize;
    for _ in 0..reps {
        for (s, t) in &work {
            for (_, c) in t.calls() {
                findings += suites[*s].linter.lint(&c.tool, &c.arguments).len();
                calls += 1;
            }
        }
    }
    let lint_secs = start.elapsed().as_secs_f64();
    println!(
        "{}",
        serde_json::json!({
            "checks": checks,
            "seconds": secs,
            "per_second": checks as f64 / secs,
            "passed": passed / reps.max(1),
            "outputs": work.len(),
            "outputs_of_skipped_entries": skipped,
            "lint_calls_per_second": calls as f64 / lint_secs,
            "lint_findings": findings / reps.max(1),
        })
    );
}
