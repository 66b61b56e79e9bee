use super::*;

fn transcript(text: &str) -> Result<Transcript, SourceError> {
    Transcript::from_source(
        SourceFile::from_text("transcripts/s/t.yaml", text),
        "t".into(),
    )
}

fn harness(text: &str) -> Result<Harness, SourceError> {
    Harness::from_source(SourceFile::from_text("harnesses/s.yaml", text))
}

#[test]
fn accepts_three_call_shapes_with_locations() {
    let t = transcript(
        "scenario: x\nturns:\n  - calls:\n      - function_name: a\n        parameters: {p: 1}\n      - name: b\n        arguments:\n          q: \"s\"\n      - id: call_1\n        type: function\n        function: {name: c, arguments: '{\"r\": [1, 2]}'}\n    reply: done\n",
    )
    .unwrap();
    let calls: Vec<_> = t.calls().map(|(_, c)| c).collect();
    assert_eq!(calls.len(), 3);
    assert_eq!(
        (calls[0].tool.as_str(), &calls[0].arguments),
        ("a", &serde_json::json!({"p": 1}))
    );
    assert_eq!(calls[1].tool, "b");
    assert_eq!(calls[1].location_of("/q").line, 8);
    assert_eq!(calls[2].arguments, serde_json::json!({"r": [1, 2]}));
    assert_eq!(calls[2].id.as_deref(), Some("call_1"));
    assert_eq!(calls[0].location.line, 4);
    assert_eq!(
        calls[0].location_of("/p").to_string(),
        "transcripts/s/t.yaml:5:25"
    );
    assert_eq!(calls[0].location_of("/missing").line, 4);
    // JSON-string arguments: every key points at the string.
    assert_eq!(
        calls[2].location_of("/r/0").to_string(),
        "transcripts/s/t.yaml:11:40"
    );
}

#[test]
fn argument_locations_follow_their_keys() {
    // Keys out of order in the file, one with `/` (a pointer escapes it as `~1`).
    let t = transcript(
        "scenario: x\ncalls:\n  - tool: t\n    arguments:\n      zeta: 1\n      a/b: 2\n      mid: {deep: 3}\n",
    )
    .unwrap();
    let (_, c) = t.calls().next().unwrap();
    let line = |p: &str| c.location_of(p).line;
    assert_eq!(
        [
            line("/zeta"),
            line("/a~1b"),
            line("/mid/deep"),
            line("/nope")
        ],
        [5, 6, 7, 3]
    );
}

#[test]
fn top_level_calls_shortcut() {
    let t = transcript(
        "prompt: hi\nexpect: fail\nfaults: [argument_name]\ncalls:\n  - tool: a\nreply: ok\n",
    )
    .unwrap();
    assert_eq!(t.turns.len(), 1);
    assert_eq!(t.turns[0].reply.as_deref(), Some("ok"));
    assert_eq!(t.label.expect, Some(Expect::Fail));
}

#[rstest::rstest]
#[case::malformed_yaml("scenario: x\ncalls: [\n", 2, "unclosed bracket")]
#[case::unknown_key("scenario: x\ncals: []\n", 2, "cals")]
#[case::unknown_fault(
    "scenario: x\nfaults: [argument_vaule]\n",
    2,
    "unknown fault `argument_vaule`"
)]
#[case::no_name(
    "scenario: x\ncalls:\n  - parameters: {a: 1}\n",
    3,
    "needs a tool name"
)]
#[case::two_names("scenario: x\ncalls:\n  - name: a\n    tool: b\n", 3, "more than one")]
#[case::bad_openai_json(
    "scenario: x\ncalls:\n  - function: {name: a, arguments: '{oops'}\n",
    3,
    "not valid JSON"
)]
#[case::oracle_field(
    "scenario: x\ncalls:\n  - tool: a\n    mock_output: {}\n",
    3,
    "belong to a harness workflow"
)]
#[case::no_scenario("calls: []\n", 1, "needs `scenario:`")]
#[case::contradiction("scenario: x\nexpect: pass\nfaults: [lint]\n", 3, "contradicts")]
fn transcript_errors_name_the_line(#[case] text: &str, #[case] line: u32, #[case] needle: &str) {
    let err = transcript(text).unwrap_err();
    assert_eq!(err.line.map(|l| l.0), Some(line), "{}", err.render());
    assert!(err.message.contains(needle), "{}", err.render());
    assert!(
        err.to_string().starts_with("transcripts/s/t.yaml:"),
        "{err}"
    );
}

#[test]
fn harness_parses_workflow_policies_and_defaults() {
    let h = harness(
        "tools: [s.tools.json]\ncapabilities: [../capabilities/c.yaml]\nthresholds: {pass: 0.7}\nscenarios:\n  - id: one\n    tier: simple\n    turns:\n      - prompt: p\n        workflow:\n          - function_name: a\n            parameters: {x: 1, y: gs://b/o.png}\n            match: {x: {tolerance: 0.5}, y: from_output, z: {regex: '^a'}}\n            mock_output: {content: []}\n            grounding: high\n",
    )
    .unwrap();
    assert_eq!(h.suite, "s");
    assert_eq!(h.tools, [Path::new("harnesses/s.tools.json")]);
    assert_eq!(h.capabilities, [Path::new("capabilities/c.yaml")]);
    assert_eq!(
        h.thresholds,
        Thresholds {
            pass: 0.7,
            min_gap: 0.3,
            trajectory: None,
            mutation: None,
        }
    );
    let w = &h.scenario("one").unwrap().turns[0].workflow[0];
    assert!(matches!(w.match_policies["x"], MatchPolicy::Tolerance(t) if t == 0.5));
    assert!(matches!(w.match_policies["y"], MatchPolicy::FromOutput));
    assert_eq!(w.grounding, Some(Grounding::High));
}

#[test]
fn harness_reads_the_judge_certification_bar() {
    let h = harness("judge:\n  certify: {tpr: 0.9, tnr: 0.75}\nscenarios: []\n").unwrap();
    assert_eq!(
        h.certify,
        Some(crate::harness::CertifyBar {
            tpr: 0.9,
            tnr: 0.75
        })
    );
    assert_eq!(harness("judge: {}\nscenarios: []\n").unwrap().certify, None);
    assert_eq!(harness("scenarios: []\n").unwrap().certify, None);
}

#[rstest::rstest]
#[case::wrong_suite_name("suite: other\nscenarios: []\n", 1, "must be named like its file")]
#[case::duplicate_id(
    "scenarios:\n  - {id: a, turns: [{prompt: p}]}\n  - {id: a, turns: [{prompt: p}]}\n",
    3,
    "duplicate scenario id"
)]
#[case::bad_policy(
    "scenarios:\n  - id: a\n    turns:\n      - prompt: p\n        workflow:\n          - tool: t\n            match: {x: fuzzy}\n",
    7,
    "unknown match policy `fuzzy`"
)]
#[case::unordered_on_a_string(
    "scenarios:\n  - id: a\n    turns:\n      - prompt: p\n        workflow:\n          - tool: t\n            arguments: {x: a}\n            match:\n              x: unordered\n",
    9,
    "`unordered` compares an array's items in any order, but the step's `x` is a string"
)]
#[case::unordered_on_an_object_by_pointer(
    "scenarios:\n  - id: a\n    turns:\n      - prompt: p\n        workflow:\n          - tool: t\n            arguments: {x: {y: 1}}\n            match: {/x: unordered}\n",
    8,
    "but the step's `/x` is an object"
)]
#[case::path_on_an_array(
    "scenarios:\n  - id: a\n    turns:\n      - prompt: p\n        workflow:\n          - tool: t\n            arguments: {files: [a.py]}\n            match: {files: path}\n",
    8,
    "`path` compares a string as a path, but the step's `files` is an array (its items: `/files/*: path`)"
)]
#[case::unknown_normalisation(
    "scenarios:\n  - id: a\n    turns:\n      - prompt: p\n        workflow:\n          - tool: t\n            arguments: {x: a}\n            match:\n              x: {any_of: [a], normalize: nfc}\n",
    9,
    "unknown `normalize: nfc`: use `bfcl` or `path`"
)]
#[case::bad_not_regex(
    "scenarios:\n  - id: a\n    turns:\n      - prompt: p\n        workflow:\n          - tool: t\n            arguments: {x: a}\n            match:\n              x: {regex: a, not: '(b'}\n",
    9,
    "invalid `not` regex in match policy"
)]
#[case::misspelt_policy_key(
    "scenarios:\n  - id: a\n    turns:\n      - prompt: p\n        workflow:\n          - tool: t\n            arguments: {x: a}\n            match:\n              x: {regex: a, nott: b}\n",
    9,
    "got an object with `nott`, `regex`"
)]
#[case::path_from_a_relative_directory(
    "scenarios:\n  - id: a\n    turns:\n      - prompt: p\n        workflow:\n          - tool: t\n            arguments: {x: a}\n            match:\n              x: {path: srv/data}\n",
    9,
    "`{path: srv/data}` reads relative paths from a directory, so it names one from its root"
)]
#[case::no_turns("scenarios:\n  - {id: a, turns: []}\n", 2, "no turns")]
#[case::bad_tier(
    "scenarios:\n  - {id: a, tier: medium, turns: [{prompt: p}]}\n",
    2,
    "medium"
)]
// Issue 18, item 7: a NaN threshold compared false with everything and switched the gate off.
#[case::nan_min_gap(
    "thresholds:\n  pass: 0.8\n  min_gap: .nan\nscenarios: []\n",
    3,
    "`thresholds.min_gap` must be a number within 0–1, got NaN"
)]
#[case::nan_pass(
    "thresholds: {pass: .nan}\nscenarios: []\n",
    1,
    "`thresholds.pass` must be a number within 0–1, got NaN"
)]
#[case::negative_pass("thresholds: {pass: -5}\nscenarios: []\n", 1, "got -5")]
#[case::infinite_gap("thresholds: {min_gap: .inf}\nscenarios: []\n", 1, "got inf")]
#[case::certify_tpr_above_one(
    "judge:\n  certify: {tpr: 1.2, tnr: 0.8}\nscenarios: []\n",
    2,
    "`judge.certify.tpr` must be a number within 0–1, got 1.2"
)]
#[case::certify_without_tnr("judge:\n  certify: {tpr: 0.8}\nscenarios: []\n", 2, "tnr")]
#[case::certify_null("judge:\n  certify: null\nscenarios: []\n", 2, "")]
#[case::judge_unknown_key("judge:\n  model: x\nscenarios: []\n", 2, "model")]
#[case::gap_above_one("thresholds: {min_gap: 1.5}\nscenarios: []\n", 1, "min_gap")]
#[case::scenario_nan_pass(
    "scenarios:\n  - id: a\n    thresholds: {pass: .nan}\n    turns: [{prompt: p}]\n",
    3,
    "`thresholds.pass` must be a number within 0–1, got NaN"
)]
#[case::scenario_pass_above_one(
    "scenarios:\n  - id: a\n    thresholds:\n      pass: 1.01\n    turns: [{prompt: p}]\n",
    4,
    "got 1.01"
)]
// Issue 18, item 14: `pass: null` read as no `pass` (the default gate) where the schema wants
// a number.
#[case::null_pass("thresholds:\n  pass: null\nscenarios: []\n", 2, "")]
#[case::null_min_gap("thresholds: {min_gap: ~}\nscenarios: []\n", 1, "")]
fn harness_errors_name_the_line(#[case] text: &str, #[case] line: u32, #[case] needle: &str) {
    let err = harness(text).unwrap_err();
    assert_eq!(err.line.map(|l| l.0), Some(line), "{}", err.render());
    assert!(err.message.contains(needle), "{}", err.render());
}

#[test]
fn bfcl_equality_standardises_strings_as_bfcl_does() {
    use super::bfcl_equal;
    use serde_json::json;
    for (a, b) in [
        (json!("New York"), json!("new-york")),
        (json!("A, B."), json!("ab")),
        (json!("it's"), json!("it\"s")),
        (json!("ÉCOLE_*^/"), json!("école")),
        (json!(3), json!(3.0)),
        (json!(["x y", 1]), json!(["XY", 1.0])),
        (json!({"k": "a b"}), json!({"k": "AB"})),
    ] {
        assert!(bfcl_equal(&a, &b), "{a} ~ {b}");
    }
    for (a, b) in [
        (json!("abc"), json!("abd")),
        (json!("ab"), json!("abc")),
        (json!("abc"), json!("ab")),
        (json!("1"), json!(1)),
        (json!(["a"]), json!(["a", "a"])),
        (json!({"k": "a"}), json!({"j": "a"})),
    ] {
        assert!(!bfcl_equal(&a, &b), "{a} !~ {b}");
    }
}

#[test]
fn paths_are_the_same_where_a_file_system_reads_them_alike() {
    use super::{Normalize, path_equal, same_path};
    use serde_json::json;
    for (a, b) in [
        ("./app.py", "app.py"),
        ("/home/dev/repo/", "/home/dev/repo"),
        ("src//lib.rs", "src/lib.rs"),
        ("/srv/./data/x.csv", "/srv/data/x.csv"),
        (".", "./"),
        ("/", "//"),
        ("gs://bucket/a/b/", "gs://bucket/a//b"),
        ("../up", "./../up"),
    ] {
        assert!(same_path(a, b), "{a} ~ {b}");
        assert!(same_path(b, a), "{b} ~ {a}");
    }
    for (a, b) in [
        ("app.py", "/app.py"),
        ("src/lib.rs", "src/main.rs"),
        ("a/../b", "b"),
        ("App.py", "app.py"),
        ("gs://bucket/a", "gs://other/a"),
        ("gs://bucket/a", "gs:/bucket/a"),
        ("", "."),
        ("a b", "a_b"),
    ] {
        assert!(!same_path(a, b), "{a} !~ {b}");
        assert!(!same_path(b, a), "{b} !~ {a}");
    }
    // `normalize: path` in an `any_of`: strings inside arrays and objects too.
    assert!(path_equal(&json!(["./a", "b/"]), &json!(["a", "b"])));
    assert!(path_equal(
        &json!({"p": "./a", "n": 2}),
        &json!({"p": "a", "n": 2.0})
    ));
    assert!(!path_equal(&json!(["a", "b"]), &json!(["b", "a"])));
    let any = super::AnyOf {
        options: vec![json!(["app.py", "test.py"]), json!(["."])],
        normalize: Some(Normalize::Path),
        ..Default::default()
    };
    let exact = |x: &serde_json::Value, y: &serde_json::Value| x == y;
    assert!(any.accepts(&json!(["./app.py", "test.py"]), &exact));
    assert!(any.accepts(&json!(["./"]), &exact));
    assert!(!any.accepts(&json!(["app.py"]), &exact));
    // `{path: base}`: a relative path read from the base, on either side.
    use super::same_path_from;
    for (a, b) in [
        ("/srv/p/notes/a.md", "notes/a.md"),
        ("/srv/p/notes/a.md", "./notes//a.md"),
        ("notes/a.md", "/srv/p/notes/a.md"),
        ("/srv/p", "."),
    ] {
        assert!(same_path_from(Some("/srv/p"), a, b), "{a} ~ {b}");
    }
    for (a, b) in [
        ("/srv/p/notes/a.md", "p/notes/a.md"),
        ("/srv/p/notes/a.md", "../p/notes/a.md"),
        ("/srv/p/a.md", ""),
    ] {
        assert!(!same_path_from(Some("/srv/p"), a, b), "{a} !~ {b}");
    }
    assert!(!same_path_from(None, "/srv/p/notes/a.md", "notes/a.md"));
    // The one spelling: borrowed where it is spelt so already.
    use super::normal_path;
    use std::borrow::Cow;
    assert_eq!(normal_path("./src//lib.rs/"), "src/lib.rs");
    assert_eq!(normal_path("gs://b//x/./y/"), "gs://b/x/y");
    assert_eq!(normal_path("./"), ".");
    assert_eq!(normal_path("//"), "/");
    for spelt in ["/srv/a.md", "gs://b/x", "notes/a.md", ""] {
        assert!(matches!(normal_path(spelt), Cow::Borrowed(_)), "{spelt}");
    }
}

#[test]
fn a_trajectory_gate_loads_and_a_bad_one_is_refused_at_its_place() {
    let h = harness(
        "tools: [s.tools.json]\nthresholds: {pass: 0.7, trajectory: {match: in_order, min: 0.5}}\nscenarios: []\n",
    )
    .unwrap();
    assert_eq!(
        h.thresholds.trajectory,
        Some(super::TrajectoryGate {
            kind: super::TrajectoryMatch::InOrder,
            min: 0.5
        })
    );
    for (bad, said) in [
        (
            "{match: in_ordr, min: 0.5}",
            "harnesses/s.yaml:2:45: unknown trajectory match `in_ordr`: exact, in_order or any_order",
        ),
        ("{match: exact, min: 1.5}", "thresholds.trajectory.min"),
        ("{match: exact}", "missing field `min`"),
    ] {
        let e = harness(&format!(
            "tools: [s.tools.json]\nthresholds: {{pass: 0.7, trajectory: {bad}}}\nscenarios: []\n"
        ))
        .unwrap_err()
        .to_string();
        assert!(e.contains(said), "{bad}: {e}");
    }
}

/// Keys found from the line index (issue 31): under the key, whether the transcript is block
/// YAML, one long JSON line (where every key is searched for back from its value) or has
/// non-ASCII text before the key; a quoted key's column is its quote's.
#[test]
fn unknown_parameters_point_at_their_keys() {
    let key = |t: &Transcript, call: usize, arg: &str| {
        let c = t.calls().nth(call).unwrap().1;
        let f =
            crate::finding::Finding::new(crate::finding::Code::UnknownParam, format!("/{arg}"), "");
        let l = c.location_for(&f);
        (l.line, l.column)
    };
    let t = transcript(
        "scenario: x\ncalls:\n  - tool: a\n    arguments:\n      pp: 1\n      q:\n        - 2\n",
    )
    .unwrap();
    assert_eq!(key(&t, 0, "pp"), (5, 7));
    assert_eq!(key(&t, 0, "q"), (6, 7));
    let mut line = String::from(r#"{"scenario": "x", "calls": ["#);
    for i in 0..50 {
        line.push_str(&format!(
            r#"{{"tool": "a", "arguments": {{"id": "id-{i}", "n": {i}}}}}, "#
        ));
    }
    line.push_str(r#"{"tool": "é", "arguments": {"ü": "é", "id": 1}}]}"#);
    let t = transcript(&line).unwrap();
    for i in [0, 17, 49] {
        let at = line.find(&format!(r#""id": "id-{i}""#)).unwrap();
        assert_eq!(key(&t, i, "id"), (1, at as u32 + 1), "call {i}");
        let at = line.find(&format!(r#""n": {i}}}"#)).unwrap();
        assert_eq!(key(&t, i, "n"), (1, at as u32 + 1), "call {i}");
    }
    let chars = |s: &str| s.chars().count() as u32;
    let at = line.rfind(r#""id": 1"#).unwrap();
    assert_eq!(key(&t, 50, "id"), (1, chars(&line[..at]) + 1));
    let at = line.rfind(r#""ü""#).unwrap();
    assert_eq!(key(&t, 50, "ü"), (1, chars(&line[..at]) + 1));
}

/// A key's place, found back from its value's, counted in characters in a file that is not
/// ASCII and in one that is (where a column is the byte offset), on one long line and in a
/// block mapping.
#[test]
fn a_keys_place_is_counted_in_characters() {
    let column_of =
        |line: &str, needle: &str| line[..line.find(needle).unwrap()].chars().count() as u32 + 1;
    for prefix in ["", "é東"] {
        let line = format!(
            r#"{{"note": "{prefix}", "calls": [{{"tool": "t", "arguments": {{"kéy": 1, "k": 22}}}}]}}"#
        );
        let file = SourceFile::from_text("t.json", line.clone());
        let value = (1, column_of(&line, "22"));
        assert_eq!(
            super::key_position(&file, "k", value),
            (1, column_of(&line, r#""k""#)),
            "{line}"
        );
        assert_eq!(
            super::key_position(&file, "kéy", (1, column_of(&line, "1,"))),
            (1, column_of(&line, r#""kéy""#)),
        );
        // No such key before the value: the value's place.
        assert_eq!(super::key_position(&file, "nope", value), value);
    }
    let block = "calls:\n  - tool: t\n    arguments:\n      ké:\n        x: 1\n";
    let file = SourceFile::from_text("t.yaml", block);
    assert_eq!(super::key_position(&file, "ké", (5, 9)), (4, 7));
}
