//! Issue 32: the surfaces added since the first hardening pass (importers' writers, loaders,
//! `audit`, `check`'s exit code), each defect with its test.

use std::path::Path;

use super::*;

/// A project with the shipped time suite and one recorded run, `runs/anthropic.json`.
fn time_project() -> tempfile::TempDir {
    let files = [
        "harnesses/time.yaml",
        "harnesses/time.tools.json",
        "capabilities/mcp-server-time.yaml",
    ]
    .map(|p| (p, std::fs::read_to_string(repo().join(p)).unwrap()));
    let run =
        std::fs::read_to_string(repo().join("tests/fixtures/ingest/anthropic/mcp-correct.json"))
            .unwrap();
    let mut all: Vec<(&str, &str)> = files.iter().map(|(p, t)| (*p, t.as_str())).collect();
    all.push(("runs/anthropic.json", &run));
    project(&all)
}

#[cfg(unix)]
fn link(to: &Path, at: &Path) {
    std::fs::create_dir_all(at.parent().unwrap()).unwrap();
    std::os::unix::fs::symlink(to, at).unwrap();
}

/// Runs `args` (in `dir`) twice against a link out of the output folder: once dangling
/// without `--force`, once to an existing file with `--force`. Neither may touch `outside`.
#[cfg(unix)]
fn refuses_the_link(dir: &Path, args: &[&str], at: &Path) {
    let outside = dir.join("outside.yaml");
    link(&outside, at);
    let o = run_in(dir, args, None);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
    assert!(!outside.exists(), "{args:?} wrote through a dangling link");
    assert!(
        stderr(&o).contains("outside the output folder"),
        "{args:?}: {}",
        stderr(&o)
    );
    std::fs::write(&outside, "mine").unwrap();
    let mut forced = args.to_vec();
    forced.push("--force");
    let o = run_in(dir, &forced, None);
    assert_eq!(o.status.code(), Some(2), "{forced:?}: {}", stderr(&o));
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), "mine");
    std::fs::remove_file(at).unwrap();
    std::fs::remove_file(&outside).unwrap();
}

#[cfg(unix)]
#[test]
fn import_trace_never_writes_through_a_link_out_of_the_output_folder() {
    let dir = time_project();
    let args = [
        "import",
        "trace",
        "runs/anthropic.json",
        "--suite",
        "time",
        "-o",
        "o2",
    ];
    refuses_the_link(dir.path(), &args, &dir.path().join("o2/anthropic.yaml"));
    // `-o` itself is the user's choice of folder: a link there is followed.
    let elsewhere = dir.path().join("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    link(&elsewhere, &dir.path().join("o3"));
    let o = run_in(
        dir.path(),
        &[
            "import",
            "trace",
            "runs/anthropic.json",
            "--suite",
            "time",
            "-o",
            "o3/x",
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(elsewhere.join("x/anthropic.yaml").is_file());
    // With every link removed, it writes.
    let o = run_in(dir.path(), &args, None);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

#[cfg(unix)]
#[test]
fn import_adk_never_writes_through_a_link_out_of_the_output_folder() {
    let dir = tempfile::tempdir().unwrap();
    let fixture = repo().join("tests/fixtures/adk");
    let evalset = fixture.join("evalsets/time_agent/time_single.evalset.json");
    let recorded = fixture.join("recorded/time_agent/time_single.evalset.json");
    let tools = repo().join("harnesses/time.tools.json");
    let args = [
        "import",
        "adk",
        evalset.to_str().unwrap(),
        "--recorded",
        recorded.to_str().unwrap(),
        "--tools",
        tools.to_str().unwrap(),
        "--suite",
        "t",
        "-o",
        "o",
    ];
    refuses_the_link(dir.path(), &args, &dir.path().join("o/harnesses/t.yaml"));
    assert_eq!(run_in(dir.path(), &args, None).status.code(), Some(0));
}

#[cfg(unix)]
#[test]
fn import_bfcl_never_replaces_a_file_without_force_nor_writes_through_a_link() {
    let dir = tempfile::tempdir().unwrap();
    let data = repo().join("tests/data/bfcl");
    let args = [
        "import",
        "bfcl",
        data.to_str().unwrap(),
        "-o",
        "o",
        "--category",
        "simple",
    ];
    refuses_the_link(
        dir.path(),
        &args,
        &dir.path().join("o/harnesses/bfcl_simple.yaml"),
    );
    let o = run_in(dir.path(), &args, None);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let harness = dir.path().join("o/harnesses/bfcl_simple.yaml");
    std::fs::write(&harness, "# mine\n").unwrap();
    let o = run_in(dir.path(), &args, None);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("exists; nothing was written (--force replaces it)"),
        "{}",
        stderr(&o)
    );
    assert_eq!(std::fs::read_to_string(&harness).unwrap(), "# mine\n");
    let mut forced = args.to_vec();
    forced.push("--force");
    assert_eq!(run_in(dir.path(), &forced, None).status.code(), Some(0));
    assert_ne!(std::fs::read_to_string(&harness).unwrap(), "# mine\n");
}

/// The shipped OTLP trace (one line, one trace) with its trace id replaced by `id`.
fn otlp_line(id: &str) -> String {
    let line = std::fs::read_to_string(
        repo().join("tests/fixtures/ingest/otel/latest/correct.traces.otlp.jsonl"),
    )
    .unwrap();
    // The fixture's own id (re-made fixtures get new ones).
    let key = "\"traceId\":\"";
    let at = line.find(key).expect("a traceId") + key.len();
    let own = &line[at..at + 32];
    line.trim_end().replace(own, id)
}

fn read_otlp(bytes: &[u8]) -> String {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.jsonl");
    std::fs::write(&path, bytes).unwrap();
    match agent_seer::ingest::read_path(&path, true) {
        Ok(_) => panic!("read"),
        Err(e) => e.render().replace(dir.path().to_str().unwrap(), "[dir]"),
    }
}

/// Issue 32, items 10 and 15: a streamed OTLP file refuses a repeated key and places a line
/// that is not UTF-8, as every other input does.
#[test]
fn a_streamed_otlp_file_is_as_strict_and_placed_as_any_json_input() {
    let line = otlp_line("b845dd6588f972ef6229f10a8133bc07");
    let repeated = line.replacen(
        "{\"resourceSpans\":",
        "{\"resourceSpans\": [], \"resourceSpans\":",
        1,
    );
    let e = read_otlp(format!("{line}\n{repeated}\n").as_bytes());
    assert!(e.contains("duplicate key `resourceSpans`"), "{e}");
    assert!(e.contains("t.jsonl:2:"), "{e}");
    let mut bytes = format!("{line}\n").into_bytes();
    bytes.extend_from_slice(b"{\"a\": \"\xff\"}\n");
    let e = read_otlp(&bytes);
    assert!(e.contains("t.jsonl:2:8"), "{e}");
    assert!(e.contains("not valid UTF-8"), "{e}");
}

/// Issue 32, item 15: "N traces in one file" names a few, not all of them (3,000 were listed).
#[test]
fn many_traces_in_one_file_are_counted_not_listed() {
    let text: String = (0..300)
        .map(|i| otlp_line(&format!("{i:032x}")) + "\n")
        .collect();
    let e = read_otlp(text.as_bytes());
    assert!(e.contains("300 traces in one file"), "{e}");
    assert!(e.contains("and 295 more"), "{e}");
    assert!(e.len() < 2000, "{}", e.len());
}

/// Issue 32, item 12: `check` on a transcript that does not load exits 2 (bad input), after
/// its report; a transcript that loads and fails stays 1.
#[test]
fn check_exits_2_for_a_file_that_does_not_load() {
    let dir = time_project();
    std::fs::create_dir_all(dir.path().join("transcripts/time")).unwrap();
    std::fs::write(
        dir.path().join("transcripts/time/broken.yaml"),
        "scenario: [\n",
    )
    .unwrap();
    let o = run_in(dir.path(), &["check", "--no-save"], None);
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    assert!(stdout(&o).contains("FAIL  time::broken"), "{}", stdout(&o));
}

/// An ADK eval set as JSON, with its cases' ids replaced by `ids` in order.
fn evalset_with_ids(ids: &[&str]) -> String {
    let text = std::fs::read_to_string(
        repo().join("tests/fixtures/adk/evalsets/time_agent/time_single.evalset.json"),
    )
    .unwrap();
    let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
    for (case, id) in v["eval_cases"].as_array_mut().unwrap().iter_mut().zip(ids) {
        case["eval_id"] = (*id).into();
    }
    v.to_string()
}

/// Issue 32, item 11: `import adk` refuses what would not load (a reserved transcript name,
/// two cases with one id, a reserved suite name) before it writes anything.
#[test]
fn import_adk_refuses_ids_that_would_not_load() {
    let tools = repo().join("harnesses/time.tools.json");
    for (ids, suite, said) in [
        (&["harness"][..], "t", "`harness` is reserved"),
        (&["discrimination"][..], "t", "`discrimination` is reserved"),
        (&["a:b"][..], "t", "a `:` in a name"),
        (
            &["same", "same"][..],
            "t",
            "two cases with the eval id `same`",
        ),
        (&["fine"][..], "judge", "`judge` is reserved"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("set.json"), evalset_with_ids(ids)).unwrap();
        let o = run_in(
            dir.path(),
            &[
                "import",
                "adk",
                "set.json",
                "--tools",
                tools.to_str().unwrap(),
                "--suite",
                suite,
                "-o",
                "o",
            ],
            None,
        );
        assert_eq!(o.status.code(), Some(2), "{ids:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(said), "{ids:?}: {}", stderr(&o));
        assert!(!dir.path().join("o").exists(), "{ids:?}");
    }
}

/// Issue 32, item 13: `null` where the JSON Schemas want a string is refused, at its place.
#[test]
fn null_is_refused_where_the_schemas_want_a_value() {
    let harness = std::fs::read_to_string(repo().join("harnesses/time.yaml")).unwrap();
    let transcript =
        std::fs::read_to_string(repo().join("transcripts/time/t01-tokyo-correct.yaml")).unwrap();
    let cases = [
        (
            "harness",
            harness.replacen("suite: time\n", "suite: null\n", 1),
        ),
        (
            "harness",
            harness.replacen(
                "    title: The time in a city the user names\n",
                "    title: null\n",
                1,
            ),
        ),
        (
            "harness",
            harness.replacen(
                "      - prompt: What time is it in Tokyo right now?\n",
                "      - prompt: What time is it in Tokyo right now?\n        followup: null\n",
                1,
            ),
        ),
        (
            "harness",
            harness.replacen("grounding: high", "grounding: null", 1),
        ),
        (
            "transcript",
            transcript.replacen("reply: \"It is 02:24 in Tokyo.\"", "reply: null", 1),
        ),
    ];
    for (which, text) in cases {
        let dir = time_project();
        let path = if which == "harness" {
            dir.path().join("harnesses/time.yaml")
        } else {
            dir.path().join("transcripts/time/t01.yaml")
        };
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &text).unwrap();
        let o = run_in(dir.path(), &["check", "--no-save"], None);
        let out = stdout(&o);
        assert_eq!(o.status.code(), Some(2), "{out}");
        assert!(out.contains("null"), "{out}");
    }
}

/// Issue 32, item 14: a spec nested deeper than the JSON reader's limit names the limit.
#[test]
fn a_spec_nested_too_deep_names_the_limit() {
    let dir = tempfile::tempdir().unwrap();
    let deep = format!(
        "{}{}",
        "{\"items\": ".repeat(200),
        "{}".to_owned() + &"}".repeat(200)
    );
    std::fs::write(
        dir.path().join("deep.tools.json"),
        format!(r#"[{{"name": "t", "inputSchema": {{"type": "object", "properties": {{"x": {deep}}}}}}}]"#),
    )
    .unwrap();
    let o = run_in(dir.path(), &["inspect-spec", "deep.tools.json"], None);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("nested deeper than 128 levels"),
        "{}",
        stderr(&o)
    );
}

/// Issue 32, item 15: `audit` refuses a `$ref` cycle, as `lint` and `check` do.
#[test]
fn audit_refuses_a_ref_cycle_as_lint_does() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("cycle.tools.json"),
        r##"[{"name": "t", "description": "A tool.", "inputSchema": {"type": "object", "$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}, "properties": {"x": {"$ref": "#/$defs/a", "description": "An x."}}}}]"##,
    )
    .unwrap();
    let audit = run_in(dir.path(), &["audit", "cycle.tools.json"], None);
    assert_eq!(audit.status.code(), Some(2), "{}", stdout(&audit));
    assert!(stderr(&audit).contains("cycle"), "{}", stderr(&audit));
    let lint = run_in(
        dir.path(),
        &["lint", "--spec", "cycle.tools.json", "-"],
        Some("{\"tool\": \"t\", \"arguments\": {}}\n"),
    );
    assert_eq!(lint.status.code(), Some(2), "{}", stderr(&lint));
}
