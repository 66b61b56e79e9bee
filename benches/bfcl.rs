//! agent-seer's check on BFCL model outputs: the side of `bench/bfcl.sh`'s comparison with
//! BFCL's own `ast_checker`, and lint/oracle throughput on imported BFCL categories.
//!
//! `AGENT_SEER_BFCL_DATA` (default: the sample in tests/data/bfcl) is imported with the
//! default switches; `AGENT_SEER_BFCL_OUTPUTS` (default: the sample's outputs.jsonl) are turned
//! into transcripts, parsed up front (as BFCL's checker gets parsed JSON), then checked on one
//! thread, pass after pass for at least `AGENT_SEER_BFCL_SECONDS` (default 1) after a warm-up
//! pass, two ways:
//!
//! - `verdict`: [`verdict`], the verdict alone (the fast path, the engines where it cannot
//!   decide) — the like of BFCL's checker, which answers valid or not;
//! - `evaluate`: [`evaluate`], the full evaluation (score, worded findings): the engines, or
//!   for an output that is its entry's workflow exactly, the scenario's reference run's
//!   evaluation (made by the engines once per suite load);
//! - `engines`: [`evaluate_with_engines`], every engine on every transcript.
//!
//! Every output's two verdicts must agree, and its evaluation be every engine's field for field
//! (the bench panics otherwise). Prints one JSON line.
//! For a profiler, `AGENT_SEER_BFCL_ONLY` skips that check and times one thing, printing its
//! checks per second: `verdict`, the verdict alone; `evaluate`, the full evaluation alone; `walk`, only reading every string a check
//! compares (tool, argument names, string values) — what the transcripts' memory costs, apart
//! from any checking. `AGENT_SEER_BFCL_PASSES=N` times exactly N passes after the warm-up
//! instead of passes for a number of seconds, and says on stderr how many checks it timed:
//! what `bench/counts.sh` runs under callgrind, where two runs' difference is the passes'
//! own cost.

#[cfg(feature = "mimalloc")]
#[global_allocator]
static ALLOC: agent_seer::Allocator = agent_seer::Allocator;

use std::path::PathBuf;
use std::time::Instant;

use agent_seer::bfcl::{self, Options};
use agent_seer::check::{Suite, Verdict, evaluate, evaluate_with_engines, quick_verdict, verdict};
use agent_seer::harness::Transcript;

fn main() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let data = std::env::var_os("AGENT_SEER_BFCL_DATA")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("tests/data/bfcl"));
    let outputs = std::env::var_os("AGENT_SEER_BFCL_OUTPUTS")
        .map(PathBuf::from)
        .unwrap_or_else(|| data.join("outputs.jsonl"));
    let least: f64 = std::env::var("AGENT_SEER_BFCL_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1.0);
    let passes: Option<usize> = std::env::var("AGENT_SEER_BFCL_PASSES").ok().map(|s| {
        s.parse().ok().filter(|&n| n > 0).unwrap_or_else(|| {
            panic!("AGENT_SEER_BFCL_PASSES={s}: not a number of passes (1 or more)")
        })
    });
    let dir = tempfile::tempdir().expect("temp dir");
    let report =
        bfcl::import(&data, dir.path(), &bfcl::CATEGORIES, Options::default()).expect("import");

    let imported = report.suites(|_| {}).expect("suites");
    let suites = &imported.suites;
    let mut work: Vec<(usize, Transcript)> = Vec::new();
    let mut skipped = 0;
    for o in bfcl::read_outputs(&outputs).expect("outputs") {
        match imported.suite_of(&o.entry) {
            Some(s) => work.push((s, o.transcript)),
            None => skipped += 1,
        }
    }
    let only = std::env::var("AGENT_SEER_BFCL_ONLY").ok();
    let only_verdict = only.as_deref() == Some("verdict");
    let mut passed = 0usize;
    let mut quick = 0usize;
    // (A profiler's run skips the agreement check, to see what it times alone.)
    for (s, t) in work.iter().filter(|_| only.is_none()) {
        let ev = evaluate(&suites[*s], t).expect("evaluate");
        let engines = evaluate_with_engines(&suites[*s], t).expect("evaluate");
        assert_eq!(
            serde_json::to_value(&ev).expect("JSON"),
            serde_json::to_value(&engines).expect("JSON"),
            "{}: evaluate is every engine's evaluation",
            t.id
        );
        let full = ev.verdict;
        assert_eq!(verdict(&suites[*s], t).expect("verdict"), full, "{}", t.id);
        passed += usize::from(full == Verdict::Pass);
        quick += usize::from(quick_verdict(&suites[*s], t).expect("quick").is_some());
    }
    // Checks per second, over passes until `least` seconds have gone by (or `passes` passes).
    let rate = |f: &dyn Fn(&Suite, &Transcript) -> bool| {
        let pass = || {
            work.iter()
                .map(|(s, t)| usize::from(f(&suites[*s], t)))
                .sum::<usize>()
        };
        std::hint::black_box(pass());
        let start = Instant::now();
        let mut checks = 0;
        loop {
            std::hint::black_box(pass());
            checks += work.len();
            let secs = start.elapsed().as_secs_f64();
            let done = match passes {
                Some(n) => checks >= n * work.len(),
                None => secs >= least,
            };
            if done {
                if passes.is_some() {
                    eprintln!("{checks} checks timed");
                }
                return checks as f64 / secs;
            }
        }
    };
    if only.as_deref() == Some("walk") {
        let last = |s: &str| usize::from(s.as_bytes().last().copied().unwrap_or(0));
        let walk = rate(&|_, t| {
            let mut x = t.scenario.as_deref().map_or(0, last);
            for (_, c) in t.calls() {
                x += last(&c.tool) + usize::from(c.output.is_some());
                for (k, v) in c.args() {
                    x += last(k) + v.as_str().map_or(0, last);
                }
            }
            x % 7 == 0
        });
        println!("{walk}");
        return;
    }
    if only.as_deref() == Some("evaluate") {
        println!(
            "{}",
            rate(&|s, t| evaluate(s, t).expect("evaluate").verdict == Verdict::Pass)
        );
        return;
    }
    let verdicts = rate(&|s, t| verdict(s, t).expect("verdict") == Verdict::Pass);
    if only_verdict {
        println!("{verdicts}");
        return;
    }
    let evaluations = rate(&|s, t| evaluate(s, t).expect("evaluate").verdict == Verdict::Pass);
    let engines =
        rate(&|s, t| evaluate_with_engines(s, t).expect("evaluate").verdict == Verdict::Pass);
    // Lint alone, on the same calls.
    let calls: usize = work.iter().map(|(_, t)| t.calls().count()).sum();
    let findings: usize = work
        .iter()
        .flat_map(|(s, t)| t.calls().map(move |(_, c)| (s, c)))
        .map(|(s, c)| suites[*s].linter.lint(&c.tool, c.arguments()).len())
        .sum();
    let lint_calls = calls as f64 / work.len() as f64
        * rate(&|s, t| {
            t.calls()
                .map(|(_, c)| s.linter.lint(&c.tool, c.arguments()).len())
                .sum::<usize>()
                == 0
        });
    println!(
        "{}",
        serde_json::json!({
            "per_second": verdicts,
            "evaluate_per_second": evaluations,
            "engines_per_second": engines,
            "passed": passed,
            "decided_by_calls_alone": quick,
            "outputs": work.len(),
            "outputs_of_skipped_entries": skipped,
            "lint_calls_per_second": lint_calls,
            "lint_findings": findings,
        })
    );
}
