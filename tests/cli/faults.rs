//! Hostile inputs end in a clear error naming the file (and line and column where there is
//! one) — never a panic, never a silent pass. (The read-only LLM cache, with no partial entry
//! left behind, is tests/llm/cache.rs.)

use std::os::unix::fs::symlink;

use super::*;

/// A tiny project plus `extra` files; runs `check --quiet` there.
fn check_with(extra: &[(&str, Vec<u8>)]) -> (std::process::Output, tempfile::TempDir) {
    let dir = project(&[
        ("harnesses/tiny.tools.json", TINY_TOOLS),
        ("capabilities/tiny.yaml", TINY_CAPS),
        ("harnesses/tiny.yaml", TINY_HARNESS),
    ]);
    for (path, bytes) in extra {
        let p = dir.path().join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, bytes).unwrap();
    }
    let o = run_in(dir.path(), &["check", "--quiet", "--no-save"], None);
    (o, dir)
}

fn no_panic(o: &std::process::Output) {
    assert_ne!(o.status.code(), Some(101), "panicked:\n{}", stderr(o));
    assert!(!stderr(o).contains("panicked"), "{}", stderr(o));
}

/// The trial `tiny::<id>` failed with `message` at `place`: a file that does not load, so
/// `check` exits 2 (issue 32, item 12).
fn fails_with(o: &std::process::Output, id: &str, place: &str, message: &str) {
    no_panic(o);
    assert_eq!(o.status.code(), Some(2), "{}{}", stdout(o), stderr(o));
    let out = stdout(o);
    let section = out
        .split(&format!("---- tiny::{id} ----\n"))
        .nth(1)
        .unwrap_or_else(|| panic!("no failure for {id}:\n{out}"));
    let section = section.split("\n---- ").next().unwrap();
    assert!(section.contains(place), "{place} not in:\n{section}");
    assert!(section.contains(message), "{message} not in:\n{section}");
}

#[test]
fn truncated_transcript() {
    let (o, _d) = check_with(&[(
        "transcripts/tiny/cut.yaml",
        b"scenario: square\ncalls:\n  - tool: paint\n    arguments: {prompt: \"a c".to_vec(),
    )]);
    fails_with(&o, "cut", "transcripts/tiny/cut.yaml:4:", "unclosed");
}

#[test]
fn a_transcript_that_is_a_directory_is_walked_and_a_harness_that_is_one_is_missing() {
    let dir = project(&[
        ("harnesses/tiny.tools.json", TINY_TOOLS),
        ("capabilities/tiny.yaml", TINY_CAPS),
        ("transcripts/tiny/t1.yaml", "scenario: square\ncalls: []\n"),
    ]);
    std::fs::create_dir_all(dir.path().join("harnesses/tiny.yaml")).unwrap();
    let o = run_in(dir.path(), &["check", "--quiet", "--no-save"], None);
    no_panic(&o);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stdout(&o).contains("suite `tiny` has transcripts but no harness"),
        "{}",
        stdout(&o)
    );
    // A spec path that is a directory.
    let o = run_in(
        dir.path(),
        &["lint", "--spec", "harnesses", "-"],
        Some("{}"),
    );
    no_panic(&o);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("is a directory, expected a file\n  --> harnesses"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn symlink_loop_in_transcripts() {
    let dir = project(&[
        ("harnesses/tiny.tools.json", TINY_TOOLS),
        ("capabilities/tiny.yaml", TINY_CAPS),
        ("harnesses/tiny.yaml", TINY_HARNESS),
        ("transcripts/tiny/t1.yaml", "scenario: square\ncalls: []\n"),
    ]);
    symlink(".", dir.path().join("transcripts/tiny/loop")).unwrap();
    let o = run_in(dir.path(), &["check", "--quiet", "--no-save"], None);
    no_panic(&o);
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    assert!(
        stderr(&o).contains("a symlink loop: it leads back to"),
        "{}",
        stderr(&o)
    );
    assert!(
        stderr(&o).contains("--> transcripts/tiny/loop\n"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn fifty_megabyte_transcript() {
    let mut big = b"scenario: square\ncalls:\n  - tool: paint\n    arguments: {prompt: a cat, model: m1, ratio: \"1:1\"}\n    output: {content: [{type: text, text: \"".to_vec();
    big.extend(std::iter::repeat_n(b'x', 50 * 1024 * 1024));
    big.extend_from_slice(b"\"}]}\n");
    let (o, _d) = check_with(&[("transcripts/tiny/big.yaml", big)]);
    no_panic(&o);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
}

#[test]
fn ten_thousand_levels_of_nesting() {
    let d = 10_000;
    let yaml = format!(
        "scenario: square\ncalls:\n  - tool: paint\n    arguments: {{prompt: {}{}}}\n",
        "[".repeat(d),
        "]".repeat(d)
    );
    let (o, _d) = check_with(&[("transcripts/tiny/deep.yaml", yaml.into_bytes())]);
    fails_with(
        &o,
        "deep",
        "transcripts/tiny/deep.yaml:4:",
        "nested too deeply",
    );
    // The quoted line is a window, not 20,000 characters.
    assert!(
        stdout(&o).lines().all(|l| l.chars().count() < 200),
        "a line is too long"
    );
    // A spec nested as deep.
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("deep.tools.json");
    std::fs::write(
        &spec,
        format!(
            "[{{\"name\": \"t\", \"inputSchema\": {}{}}}]",
            "{\"a\": ".repeat(d),
            "}".repeat(d)
        ),
    )
    .unwrap();
    let o = run(&["lint", "--spec", spec.to_str().unwrap(), "-"], Some("{}"));
    no_panic(&o);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("deep.tools.json:1:"), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("nested deeper than 128 levels"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn invalid_utf8() {
    let (o, _d) = check_with(&[(
        "transcripts/tiny/bytes.yaml",
        b"scenario: square\ncalls: []\nnote: \xff\xfe\n".to_vec(),
    )]);
    fails_with(
        &o,
        "bytes",
        "transcripts/tiny/bytes.yaml:3:7",
        "the file is not valid UTF-8",
    );
}

#[test]
fn duplicate_yaml_keys() {
    let (o, _d) = check_with(&[(
        "transcripts/tiny/dup.yaml",
        b"scenario: square\nscenario: square\ncalls: []\n".to_vec(),
    )]);
    fails_with(
        &o,
        "dup",
        "transcripts/tiny/dup.yaml:2:1",
        "duplicate mapping key: scenario",
    );
    assert!(!stdout(&o).contains("DuplicateKeyPolicy"), "{}", stdout(&o));
}

#[test]
fn yaml_alias_bomb() {
    let mut yaml = String::from(
        "scenario: square\ncalls:\n  - tool: paint\n    arguments: {prompt: a cat}\n    output:\n",
    );
    let mut prev: Option<char> = None;
    for n in "abcdefghij".chars() {
        let items: Vec<String> = match prev {
            None => vec!["\"lol\"".into(); 9],
            Some(p) => vec![format!("*{p}"); 9],
        };
        yaml.push_str(&format!("      {n}: &{n} [{}]\n", items.join(",")));
        prev = Some(n);
    }
    let (o, _d) = check_with(&[("transcripts/tiny/bomb.yaml", yaml.into_bytes())]);
    fails_with(
        &o,
        "bomb",
        "transcripts/tiny/bomb.yaml:",
        "too large to load safely",
    );
}

#[test]
fn an_unwritable_run_directory_fails_the_trial_instead_of_losing_its_report() {
    let dir = project(&[
        ("harnesses/tiny.tools.json", TINY_TOOLS),
        ("capabilities/tiny.yaml", TINY_CAPS),
        ("harnesses/tiny.yaml", TINY_HARNESS),
        ("transcripts/tiny/t1.yaml", "scenario: square\ncalls: []\n"),
        ("not-a-dir", "a file"),
    ]);
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_agent-seer"))
        .args(["check", "--quiet"])
        .current_dir(dir.path())
        .env("CARGO_TARGET_DIR", dir.path().join("not-a-dir"))
        .output()
        .unwrap();
    no_panic(&o);
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    assert!(stderr(&o).contains("not-a-dir"), "{}", stderr(&o));
}

// Issue 18, items 7–10 and 14: input that switched a gate off is an error naming where it is.

#[test]
fn a_nan_or_out_of_range_threshold_is_a_harness_error_not_an_open_gate() {
    for (thresholds, line, needle) in [
        (
            "thresholds: {min_gap: .nan}",
            1,
            "`thresholds.min_gap` must be a number within 0–1, got NaN",
        ),
        (
            "thresholds:\n  pass: -5",
            2,
            "`thresholds.pass` must be a number within 0–1, got -5",
        ),
        ("thresholds: {pass: null}", 1, "invalid floating point"),
    ] {
        let harness = format!("{thresholds}\n{TINY_HARNESS}");
        let (o, _d) = check_with(&[
            ("harnesses/tiny.yaml", harness.into_bytes()),
            (
                "transcripts/tiny/ok.yaml",
                b"scenario: square\nexpect: pass\ncalls:\n  - tool: paint\n    arguments: {prompt: a cat, model: m1, ratio: \"1:1\"}\n".to_vec(),
            ),
        ]);
        no_panic(&o);
        assert_ne!(o.status.code(), Some(0), "{thresholds}: {}", stdout(&o));
        let all = format!("{}{}", stdout(&o), stderr(&o));
        assert!(
            all.contains(&format!("harnesses/tiny.yaml:{line}:")),
            "{all}"
        );
        assert!(all.contains(needle), "{all}");
    }
}

#[test]
fn a_malformed_rule_version_is_a_matrix_error_at_its_line() {
    let caps = TINY_CAPS.replace("rule: R1 }", "rule: R1, since: \"3.17-rc1\" }");
    let (o, _d) = check_with(&[("capabilities/tiny.yaml", caps.into_bytes())]);
    no_panic(&o);
    assert_ne!(o.status.code(), Some(0), "{}", stdout(&o));
    let all = format!("{}{}", stdout(&o), stderr(&o));
    assert!(all.contains("capabilities/tiny.yaml:11:"), "{all}");
    assert!(
        all.contains("pre-release and build suffixes (`-rc1`)"),
        "{all}"
    );
}

#[test]
fn a_tool_that_would_accept_anything_is_a_spec_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    for (tool, needle) in [
        (
            r#"{"name": "paint", "inputschema": {"type": "object", "properties": {}}}"#,
            "`inputschema` is not `inputSchema`",
        ),
        (
            r#"{"name": "paint", "description": "no schema at all"}"#,
            "`paint`: no input schema",
        ),
        (
            r##"{"name": "paint", "inputSchema": {"type": "object", "properties": {"n": {"$ref": "#/$defs/a"}}, "$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}}}"##,
            "tool `paint` has an invalid input schema: the `$ref` cycle #/$defs/a → #/$defs/b → #/$defs/a",
        ),
    ] {
        let spec = dir.path().join("t.tools.json");
        std::fs::write(&spec, format!("[{tool}]")).unwrap();
        let o = run(
            &["lint", "--spec", spec.to_str().unwrap(), "-"],
            Some("{\"tool\": \"paint\", \"arguments\": {\"n\": {\"any\": \"thing\"}}}\n"),
        );
        no_panic(&o);
        assert_eq!(
            o.status.code(),
            Some(2),
            "{tool}: {}{}",
            stdout(&o),
            stderr(&o)
        );
        assert!(stderr(&o).contains(needle), "{}", stderr(&o));
    }
}
