//! Regressions the benchmarks found (issue 31), on the shipped suites and on generated runs.

use std::path::Path;

use super::*;
use crate::harness::{Layout, Transcript, discover};
use crate::source::SourceFile;

/// `cargo bench --bench check` panicked on the recorded runs of `transcripts/time/recorded/`:
/// the bench read every transcript with `Transcript::load`, which reads YAML transcripts only
/// and says so with an error; the bench's `expect` was the panic. Every shipped transcript,
/// recorded runs included, loads as `check` reads it ([`load_transcript`]) and evaluates; a
/// recorded run given to `Transcript::load` is an error, not a panic.
#[test]
fn every_shipped_transcript_loads_as_check_reads_it() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut recorded = 0;
    for files in discover(&Layout::under(root)).unwrap() {
        let suite = Suite::load(files.harness.as_deref().unwrap()).unwrap();
        for (id, path) in &files.transcripts {
            let t = load_transcript(&suite, path).unwrap_or_else(|e| panic!("{id}: {e}"));
            evaluate(&suite, &t).unwrap_or_else(|e| panic!("{id}: {e}"));
            if crate::ingest::is_recorded(path) {
                recorded += 1;
                assert!(Transcript::load(path).is_err(), "{}", path.display());
            }
        }
    }
    assert!(
        recorded >= 8,
        "the recorded runs were not found ({recorded})"
    );
}

/// A run of `n` calls of `bench/calls.sh`'s chain: `create_note` gives a URI that `tag_note`
/// takes, n/2 times; `wrong` tags one note wrongly, `extra` adds an unrequested call.
fn chain(n: usize, wrong: bool, extra: bool) -> (Suite, Transcript) {
    let tools = r#"[{"name": "create_note", "inputSchema": {"type": "object", "required": ["title"],
        "properties": {"title": {"type": "string"}}}},
        {"name": "tag_note", "inputSchema": {"type": "object", "required": ["uri", "tag"],
        "properties": {"uri": {"type": "string"}, "tag": {"type": "string"}}}}]"#;
    let spec = crate::spec::ToolSet::from_json(&serde_json::from_str(tools).unwrap()).unwrap();
    let linter = crate::lint::Linter::new(&spec, vec![]).unwrap();
    let (mut steps, mut calls, mut prompt) = (String::new(), String::new(), String::new());
    for k in 0..n / 2 {
        let uri = format!("https://notes.example/n/{k:05}");
        let out = format!("{{structuredContent: {{uri: '{uri}'}}}}");
        steps.push_str(&format!(
            "          - {{tool: create_note, arguments: {{title: N{k}}}, mock_output: {out}}}\n          - {{tool: tag_note, arguments: {{uri: '{uri}', tag: t{k}}}}}\n"
        ));
        let tag = if wrong && k == n / 4 { "bad" } else { "t" };
        calls.push_str(&format!(
            "  - {{tool: create_note, arguments: {{title: N{k}}}, output: {out}}}\n  - {{tool: tag_note, arguments: {{uri: '{uri}', tag: {tag}{k}}}}}\n"
        ));
        if extra && k == n / 4 {
            calls.push_str("  - {tool: create_note, arguments: {title: Unasked}}\n");
        }
        prompt.push_str(&format!("N{k} tagged t{k}; "));
    }
    let harness = format!(
        "suite: notes\nscenarios:\n  - id: chain\n    turns:\n      - prompt: '{prompt}'\n        workflow:\n{steps}"
    );
    let harness = crate::harness::Harness::from_source(SourceFile::from_text(
        "harnesses/notes.yaml",
        harness,
    ))
    .unwrap();
    let suite = Suite::with_linter(harness, spec, linter);
    let t = Transcript::from_source(
        SourceFile::from_text("t.yaml", format!("scenario: chain\ncalls:\n{calls}")),
        "t".into(),
    )
    .unwrap();
    (suite, t)
}

/// Long runs are graded as short ones are: a correct chain of 400 calls scores 1 with no
/// finding; one wrong value is one mismatch at its call; an unrequested call is one extra
/// call. (Time per call is `bench/calls.sh`'s to show; no test here times anything.)
#[test]
fn long_runs_are_graded_like_short_ones() {
    for n in [10, 400] {
        let (suite, t) = chain(n, false, false);
        let ev = evaluate(&suite, &t).unwrap();
        assert!(ev.findings.is_empty(), "{n}: {:?}", ev.findings);
        assert_eq!(ev.score.as_ref().unwrap().tc, 1.0, "{n}");
        assert_eq!(ev.trajectory.as_ref().unwrap().policy.exact_match, 1.0);

        let (suite, t) = chain(n, true, false);
        let ev = evaluate(&suite, &t).unwrap();
        let codes: Vec<_> = ev.findings.iter().map(|f| (f.code, f.call)).collect();
        let wrong = 2 * (n / 4) + 1;
        assert_eq!(
            codes,
            [(crate::finding::Code::ValueMismatch, Some(wrong))],
            "{n}"
        );
        let tr = ev.trajectory.as_ref().unwrap();
        assert_eq!(tr.policy.exact_match, 0.0);
        assert_eq!(tr.policy.precision, 1.0 - 1.0 / n as f64);

        let (suite, t) = chain(n, false, true);
        let ev = evaluate(&suite, &t).unwrap();
        let codes: Vec<_> = ev.findings.iter().map(|f| (f.code, f.call)).collect();
        let extra = 2 * (n / 4) + 2;
        assert_eq!(
            codes,
            [(crate::finding::Code::UnrequestedEffect, Some(extra))],
            "{n}"
        );
    }
}

/// A mutation gate graded each mutant by writing its YAML and reading it back, most of the
/// gate's time; it now builds the transcript from the document ([`TranscriptDoc::to_transcript`]).
/// Every mutant of every shipped suite grades alike both ways (`mutate --write` writes the
/// YAML, and `check` reads it): the verdict, the scores, the trajectory and every finding,
/// places aside (a document has no lines).
#[test]
fn every_shipped_mutant_grades_alike_read_from_its_yaml() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    // An evaluation as JSON, places and the transcript's file name aside.
    let graded = |ev: &Evaluation| {
        let mut v = serde_json::to_value(ev).unwrap();
        for f in v["findings"].as_array_mut().unwrap() {
            f.as_object_mut().unwrap().remove("location");
        }
        v
    };
    let mut mutants = 0;
    for files in discover(&Layout::under(root)).unwrap() {
        let Some(harness) = files.harness.as_deref() else {
            continue;
        };
        let suite = Suite::load(harness).unwrap();
        let transcripts: Vec<Transcript> = files
            .transcripts
            .iter()
            .filter_map(|(_, p)| load_transcript(&suite, p).ok())
            .collect();
        for o in mutate_suite(&suite, &transcripts).outcomes {
            let text = o.mutant.doc.to_yaml_text().unwrap();
            let mut read =
                Transcript::from_source(SourceFile::from_text("mutant.yaml", text), "m".into())
                    .unwrap();
            let what = format!("{}: {}", suite.harness.suite, o.mutant.what);
            let ev = o.evaluation.unwrap_or_else(|| panic!("{what}: not graded"));
            read.id = ev.transcript.clone();
            let again = evaluate(&suite, &read).unwrap_or_else(|e| panic!("{what}: {e}"));
            assert_eq!(graded(&ev), graded(&again), "{what}");
            mutants += 1;
        }
    }
    assert!(
        mutants > 800,
        "the shipped mutants were not found ({mutants})"
    );
}
