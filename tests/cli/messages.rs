//! Places and words of input errors (issue 18, item 13), each as a person reads it: a missing
//! field at its mapping, an unknown parameter's caret under its name, a reference shown
//! tidied, a path outside the project named as such, `serve --record DIR`, a byte-order mark,
//! a repeated JSON key, and `lint`'s `file:line:column` for a line that is no JSON.

use super::*;

fn tiny(harness: &str) -> tempfile::TempDir {
    project(&[
        ("harnesses/tiny.tools.json", TINY_TOOLS),
        ("capabilities/tiny.yaml", TINY_CAPS),
        ("harnesses/tiny.yaml", harness),
    ])
}

/// What `check` says about a harness that fails: the failure's first lines. One that does not
/// load exits 2 (bad input), one that loads with a workflow that misgrades exits 1.
fn harness_failure(harness: &str) -> String {
    let dir = tiny(harness);
    let o = run_in(dir.path(), &["check", "harnesses/tiny.yaml"], None);
    let loads = stdout(&o).contains("misgrade");
    assert_eq!(
        o.status.code(),
        Some(if loads { 1 } else { 2 }),
        "{}",
        stderr(&o)
    );
    let out = stdout(&o);
    let start = out
        .find("---- tiny::harness ----")
        .expect("the harness trial fails");
    out[start..]
        .lines()
        .skip(1)
        .take_while(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn a_missing_field_points_at_its_mapping() {
    insta::assert_snapshot!(harness_failure(
        "tools: [tiny.tools.json]\nscenarios:\n  - id: a\n    title: T\n    turns:\n      - workflow: []\n        expected_response: x\n"
    ), @r"
    error: missing field `prompt`
      --> harnesses/tiny.yaml:6:9
      |
    6 |       - workflow: []
      |         ^
    ");
}

#[test]
fn an_unknown_parameter_is_pointed_at_by_name() {
    insta::assert_snapshot!(harness_failure(
        "tools: [tiny.tools.json]\nscenarios:\n  - id: a\n    turns:\n      - prompt: paint\n        workflow:\n          - tool: paint\n            arguments: {prompt: a cat, colour: red}\n"
    ), @r"
        the workflow would misgrade correct agents:
        scenario `a`: error[lint.unknown_param] at /colour: unknown parameter `colour`: `paint` takes `model`, `prompt`, `ratio`; the server drops it unseen
          --> harnesses/tiny.yaml:8:40
        ");
}

#[test]
fn a_reference_is_shown_tidied() {
    insta::assert_snapshot!(harness_failure(
        "tools: [../capabilities/../harnesses/missing.json]\nscenarios: []\n"
    ), @r"
        error: harnesses/missing.json: no such file
          --> harnesses/tiny.yaml:1:9
          |
        1 | tools: [../capabilities/../harnesses/missing.json]
          |         ^
        ");
}

#[test]
fn a_path_outside_the_project_is_named_as_such() {
    let dir = tiny(TINY_HARNESS);
    let elsewhere = tempfile::tempdir().unwrap();
    let file = elsewhere.path().join("x.yaml");
    std::fs::write(&file, "calls: []\n").unwrap();
    for verb in ["check", "bless"] {
        let o = run_in(dir.path(), &[verb, file.to_str().unwrap()], None);
        assert_eq!(o.status.code(), Some(2), "{verb}");
        let said = stderr(&o).replace(elsewhere.path().to_str().unwrap(), "[elsewhere]");
        assert_eq!(
            said,
            "error: [elsewhere]/x.yaml: outside the project's harness and transcript directories (harnesses and transcripts); run from the project, or name it with --root or AGENT_SEER_ROOT\n",
            "{verb}"
        );
    }
}

#[test]
fn serve_record_into_a_directory_is_refused_at_once() {
    let dir = tiny(TINY_HARNESS);
    std::fs::create_dir(dir.path().join("rec")).unwrap();
    let o = run_in(
        dir.path(),
        &["serve", "harnesses/tiny.yaml", "--record", "rec"],
        Some(""),
    );
    assert_eq!(o.status.code(), Some(2));
    insta::assert_snapshot!(stderr(&o), @"error: --record rec: is a directory; give the transcript file to write (e.g. rec/session.yaml)");
}

#[test]
fn a_byte_order_mark_and_a_repeated_key_are_named() {
    let bom = format!("\u{feff}{TINY_TOOLS}");
    let repeated = TINY_TOOLS.replacen(
        "\"name\": \"paint\"",
        "\"name\": \"paint\", \"name\": \"draw\"",
        1,
    );
    let mut said = Vec::new();
    for spec in [bom, repeated] {
        let dir = project(&[("tools.json", &spec)]);
        let o = run_in(
            dir.path(),
            &["lint", "--spec", "tools.json", "-"],
            Some("{\"tool\": \"paint\", \"arguments\": {\"prompt\": \"x\"}}\n"),
        );
        assert_eq!(o.status.code(), Some(2));
        said.push(stderr(&o));
    }
    insta::assert_snapshot!(said.join("---\n"), @r#"
        error: the file starts with a byte-order mark (U+FEFF), which JSON does not allow; save it as UTF-8 without one
          --> tools.json:1:1
          |
        1 | ﻿{"tools": [{"name": "paint", "inputSchema": {"type": "object",
          | ^
        ---
        error: duplicate key `name` (first at 1:13); JSON readers disagree on which one counts, so keep one
          --> tools.json:1:30
          |
        1 | {"tools": [{"name": "paint", "name": "draw", "inputSchema": {"type": "object",
          |                              ^
        "#);
}

#[test]
fn lint_gives_line_and_column_of_a_line_that_is_no_json() {
    let o = run(
        &["lint", "--spec", "harnesses/veo.tools.json", "-"],
        Some("{\"tool\": \"veo_t2v\", \"arguments\": {\"prompt\": \"a\"}\n"),
    );
    assert_eq!(o.status.code(), Some(2));
    insta::assert_snapshot!(format!("{}{}", stdout(&o), stderr(&o)), @r"
        <stdin>:1:48: not JSON: EOF while parsing an object
        error: <stdin>: some lines are not calls (see above)
        ");
}
