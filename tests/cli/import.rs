//! `agent-seer import bfcl`: a sample in BFCL's format (tests/data/bfcl, ours) imports into
//! suites whose correct answers pass, and our verdicts on 35 model outputs agree with those
//! BFCL's own `ast_checker` gave (recorded in outputs.jsonl; `.ci/bfcl.sh` re-runs the real
//! checker to keep the record true) except where a documented difference says otherwise —
//! and each difference's switch removes exactly its own disagreements.

use std::collections::BTreeMap;
use std::path::Path;

use agent_seer::check::{Verdict, evaluate};

use super::*;

struct Output {
    id: String,
    entry: String,
    transcript: agent_seer::harness::Transcript,
    differs: Option<String>,
    bfcl_valid: bool,
}

fn outputs() -> Vec<Output> {
    agent_seer::bfcl::read_outputs(&repo().join("tests/data/bfcl/outputs.jsonl"))
        .unwrap()
        .into_iter()
        .map(|o| Output {
            differs: o.line["differs"].as_str().map(str::to_owned),
            bfcl_valid: o.line["bfcl_valid"].as_bool().unwrap(),
            id: o.id,
            entry: o.entry,
            transcript: o.transcript,
        })
        .collect()
}

fn import(flags: &[&str]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let data = repo().join("tests/data/bfcl");
    let mut args = vec![
        "import",
        "bfcl",
        data.to_str().unwrap(),
        "-o",
        dir.path().to_str().unwrap(),
        "--answers",
    ];
    args.extend_from_slice(flags);
    let o = run(&args, None);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    dir
}

/// Our verdict on every output, by id.
fn our_verdicts(dir: &Path) -> BTreeMap<String, bool> {
    let imported = agent_seer::bfcl::Imported::read(dir).unwrap();
    outputs()
        .into_iter()
        .map(|o| {
            let suite = &imported.suites[imported.suite_of(&o.entry).unwrap()];
            let ev = evaluate(suite, &o.transcript).unwrap();
            (o.id, ev.verdict == Verdict::Pass)
        })
        .collect()
}

/// The outputs on which our verdict and BFCL's differ.
fn disagreements(flags: &[&str]) -> Vec<(String, Option<String>)> {
    let dir = import(flags);
    let ours = our_verdicts(dir.path());
    outputs()
        .into_iter()
        .filter(|o| ours[&o.id] != o.bfcl_valid)
        .map(|o| (o.id, o.differs))
        .collect()
}

#[test]
fn verdicts_agree_with_bfcl_outside_the_documented_differences() {
    let all = outputs();
    assert_eq!(all.len(), 35);
    let documented: Vec<(String, Option<String>)> = all
        .iter()
        .filter(|o| o.differs.is_some())
        .map(|o| (o.id.clone(), o.differs.clone()))
        .collect();
    // By default every documented difference shows, and nothing else differs.
    assert_eq!(disagreements(&[]), documented);
    // With BFCL's behaviour switched on, nothing differs.
    assert_eq!(disagreements(&["--bfcl-compatible"]), vec![]);
    // Each switch removes its own differences only.
    for (flags, kind) in [
        (["--enum", "ignore"], "enum"),
        (["--strings", "normalized"], "strings"),
        (["--integers", "strict"], "integers"),
    ] {
        let left: Vec<_> = documented
            .iter()
            .filter(|(_, d)| d.as_deref() != Some(kind))
            .cloned()
            .collect();
        assert_eq!(disagreements(&flags), left, "{flags:?}");
    }
}

#[test]
fn imported_answers_pass_and_the_import_says_what_it_wrote() {
    let dir = import(&[]);
    let o = run_in(dir.path(), &["check", "--quiet", "--no-save"], None);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    assert!(stdout(&o).contains("result: ok. "), "{}", stdout(&o));
    let again = run(
        &[
            "import",
            "bfcl",
            repo().join("tests/data/bfcl").to_str().unwrap(),
            "-o",
            dir.path().join("again").to_str().unwrap(),
        ],
        None,
    );
    insta::assert_snapshot!(
        "import_bfcl",
        stdout(&again).replace(dir.path().to_str().unwrap(), "[out]")
    );
}

#[test]
fn a_malformed_data_line_names_its_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    std::fs::create_dir_all(data.join("possible_answer")).unwrap();
    std::fs::write(data.join("BFCL_v4_multiple.json"), "{\"id\": \"multiple_0\", \"question\": [[{\"role\": \"user\", \"content\": \"hi\"}]], \"function\": []}\n{not json\n").unwrap();
    std::fs::write(
        data.join("possible_answer/BFCL_v4_multiple.json"),
        "{\"id\": \"multiple_0\", \"ground_truth\": []}\n",
    )
    .unwrap();
    let o = run(
        &[
            "import",
            "bfcl",
            data.to_str().unwrap(),
            "-o",
            data.join("out").to_str().unwrap(),
            "--category",
            "multiple",
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("BFCL_v4_multiple.json:2:2"),
        "{}",
        stderr(&o)
    );
}

/// Reading back an import that is not there names the directory it looked in.
#[test]
fn reading_a_missing_import_names_its_directory() {
    let dir = tempfile::tempdir().unwrap();
    let err = agent_seer::bfcl::Imported::read(&dir.path().join("nowhere"))
        .err()
        .expect("no import there");
    let text = err.to_string();
    assert!(text.contains("nowhere/harnesses"), "{text}");
}

/// A data line of the wrong shape is an error at its line and at the value that is wrong.
#[test]
fn malformed_data_lines_point_at_the_wrong_value() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    std::fs::create_dir_all(data.join("possible_answer")).unwrap();
    let question = r#"{"id": "multiple_0", "question": [[{"role": "user", "content": "hi"}]], "function": []}"#;
    let answer = r#"{"id": "multiple_0", "ground_truth": [{"f": {"x": [1]}}]}"#;
    // (question line, answer line): each breaks one thing.
    let cases = [
        (
            question,
            r#"{"id": "multiple_0", "ground_truth": {"f": {}}}"#,
        ),
        (
            question,
            r#"{"id": "multiple_0", "ground_truth": [{"f": {}}, 7]}"#,
        ),
        (
            question,
            r#"{"id": "multiple_0", "ground_truth": [{"f": {}, "g": {}}]}"#,
        ),
        (
            question,
            r#"{"id": "multiple_0", "ground_truth": [{"f": [1]}]}"#,
        ),
        (question, r#"{"id": 0, "ground_truth": []}"#),
        (
            r#"{"id": "multiple_9", "question": [], "function": []}"#,
            answer,
        ),
        (
            r#"{"id": "multiple_0", "question": [[{"role": "system", "content": "x"}]], "function": []}"#,
            answer,
        ),
        (
            r#"{"id": "multiple_0", "question": [[{"role": "user", "content": "hi"}]], "function": {}}"#,
            answer,
        ),
    ];
    let mut rendered = Vec::new();
    for (q, a) in cases {
        std::fs::write(
            data.join("BFCL_v4_multiple.json"),
            format!("{question}\n{q}\n"),
        )
        .unwrap();
        std::fs::write(
            data.join("possible_answer/BFCL_v4_multiple.json"),
            format!("\n{a}\n"),
        )
        .unwrap();
        let err = agent_seer::bfcl::read(data, "multiple").unwrap_err();
        assert_eq!(err.line.map(|(l, _)| l), Some(2), "{err}");
        rendered.push(
            err.to_string()
                .replace(&data.display().to_string(), "[dir]"),
        );
    }
    insta::assert_snapshot!(rendered.join("\n---\n"));
}

/// A malformed model-output line is an error at its line, whatever is wrong with it.
#[test]
fn malformed_output_lines_are_errors_at_their_line() {
    let dir = tempfile::tempdir().unwrap();
    let good = r#"{"id": "fine", "entry": "simple_0", "output": [{"f": {"x": 1}}]}"#;
    let bad = [
        r#"{"entry": "simple_0", "output": [}"#,
        r#"{"output": []}"#,
        r#"{"entry": "simple_0"}"#,
        r#"{"id": 3, "entry": "simple_0", "output": []}"#,
        r#"{"entry": "simple_0", "output": {"f": {}}}"#,
        r#"{"entry": "simple_0", "output": [{"f": {}, "g": {}}]}"#,
        r#"{"entry": "simple_0", "output": [{"f": 7}]}"#,
    ];
    let path = dir.path().join("outputs.jsonl");
    let mut rendered = Vec::new();
    for line in bad {
        std::fs::write(&path, format!("{good}\n\n{line}\n")).unwrap();
        let err = agent_seer::bfcl::read_outputs(&path).unwrap_err();
        assert_eq!(err.line.map(|(l, _)| l), Some(3), "{err}");
        rendered.push(
            err.to_string()
                .replace(&dir.path().display().to_string(), "[dir]"),
        );
    }
    insta::assert_snapshot!(rendered.join("\n---\n"));
    // The good line alone reads, with its id; a line without one is named by its number.
    std::fs::write(
        &path,
        format!(
            "{good}\n{}\n",
            bad[4].replace(r#"{"f": {}}"#, r#"[{"f": {}}]"#)
        ),
    )
    .unwrap();
    let ok = agent_seer::bfcl::read_outputs(&path).unwrap();
    let ids: Vec<&str> = ok.iter().map(|o| o.id.as_str()).collect();
    assert_eq!(ids, ["fine", "o2"]);
    assert_eq!(ok[0].transcript.turns[0].calls[0].tool, "f");
}

/// An entry id becomes a scenario id and a transcript file name: one that is no plain file name
/// (`/abs/x`, `../../../x`) is refused at its line, naming it, and nothing is written outside
/// `-o` (issue 18, item 2).
#[test]
fn an_entry_id_that_is_no_file_name_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    std::fs::create_dir_all(data.join("possible_answer")).unwrap();
    let outside = dir.path().join("outside");
    let mut rendered = Vec::new();
    for id in [format!("{}/x", outside.display()), "../../../x".to_owned()] {
        let question = json_line(&id, true);
        let answer = json_line(&id, false);
        std::fs::write(data.join("BFCL_v4_multiple.json"), question).unwrap();
        std::fs::write(data.join("possible_answer/BFCL_v4_multiple.json"), answer).unwrap();
        let out = dir.path().join("a/b/c/out");
        let o = run(
            &[
                "import",
                "bfcl",
                data.to_str().unwrap(),
                "-o",
                out.to_str().unwrap(),
                "--category",
                "multiple",
                "--answers",
            ],
            None,
        );
        assert_eq!(o.status.code(), Some(2), "{}{}", stdout(&o), stderr(&o));
        rendered.push(stderr(&o).replace(dir.path().to_str().unwrap(), "[dir]"));
        assert!(!outside.exists(), "{id}: wrote {}", outside.display());
        assert!(!dir.path().join("a/b/c/x.yaml").exists(), "{id}");
    }
    insta::assert_snapshot!(rendered.join("---\n"));
}

/// One BFCL line: a question (`question`) or its possible answer.
fn json_line(id: &str, question: bool) -> String {
    let v = if question {
        serde_json::json!({"id": id, "question": [[{"role": "user", "content": "Find Dune."}]],
            "function": [{"name": "find", "description": "Find.", "parameters": {"type": "dict",
            "properties": {"title": {"type": "string"}}, "required": ["title"]}}]})
    } else {
        serde_json::json!({"id": id, "ground_truth": [{"find": {"title": ["Dune"]}}]})
    };
    format!("{v}\n")
}
