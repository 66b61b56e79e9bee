//! `agent-seer mutate`: the report in each format, a weak suite's survivors with their
//! reasons and the `--min-score` gate, and `--write` never replacing a file or following a
//! link.

use super::*;

const SQL_TOOLS: &str = r#"{"tools": [{"name": "write_query", "inputSchema": {"type": "object",
  "properties": {"query": {"type": "string"}}, "required": ["query"]}}]}"#;

const SQL_CAPS: &str = "server: sql\nsql_dialect: sqlite\ntools:\n  write_query:\n    sql: [query]\n    effects:\n      - { read_only: false, destructive: true, idempotent: false }\n";

/// A suite whose one step leaves its SQL to the judge (`semantic`).
fn weak() -> tempfile::TempDir {
    project(&[
        ("harnesses/shop.tools.json", SQL_TOOLS),
        ("capabilities/sql.yaml", SQL_CAPS),
        (
            "harnesses/shop.yaml",
            "tools: [shop.tools.json]\ncapabilities: [../capabilities/sql.yaml]\nscenarios:\n  - id: cancel\n    turns:\n      - prompt: Cancel order 1003 in the orders table.\n        workflow:\n          - tool: write_query\n            arguments: { query: \"UPDATE orders SET status = 'cancelled' WHERE id = 1003\" }\n            match: { query: semantic }\n            mock_output: { content: [ { type: text, text: \"1 row\" } ] }\n",
        ),
    ])
}

#[test]
fn mutate_reports_every_operator_and_names_what_let_a_survivor_through() {
    let dir = weak();
    let o = run_in(dir.path(), &["mutate"], None);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    insta::assert_snapshot!("mutate_weak_human", stdout(&o));
    let o = run_in(dir.path(), &["mutate", "--min-score", "1"], None);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    let o = run_in(dir.path(), &["mutate", "--format", "json"], None);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let survivors: Vec<&serde_json::Value> = v[0]["outcomes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|o| o["killed"] == false)
        .collect();
    assert!(!survivors.is_empty());
    assert!(
        survivors.iter().any(|s| s["why"]
            .as_str()
            .unwrap()
            .contains("`semantic` on `/query`")),
        "{survivors:#?}"
    );
    let o = run_in(dir.path(), &["mutate", "--format", "markdown"], None);
    insta::assert_snapshot!("mutate_weak_markdown", stdout(&o));
    let o = run_in(dir.path(), &["mutate", "--format", "html"], None);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let html = stdout(&o);
    insta::assert_snapshot!("mutate_weak_html", html);
    // One survivor row per survivor, its reason with the policy as code; nothing to fetch.
    assert_eq!(
        html.matches(r#"data-mark="survivor""#).count(),
        survivors.len()
    );
    assert!(
        html.contains("<code>semantic</code> on <code>/query</code>"),
        "{html}"
    );
    for needle in ["<script", "<link", "src=", "url("] {
        assert!(!html.contains(needle), "{needle}");
    }
    let o = run_in(dir.path(), &["mutate", "nosuch"], None);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("no suite `nosuch`"), "{}", stderr(&o));
}

#[test]
fn write_adds_labelled_transcripts_and_never_replaces_or_follows_a_link() {
    let dir = weak();
    let out = dir.path().join("mutants");
    let o = run_in(dir.path(), &["mutate", "--write", "mutants"], None);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let files: Vec<_> = std::fs::read_dir(out.join("shop")).unwrap().collect();
    assert!(files.len() >= 5, "{}", files.len());
    let first = files[0].as_ref().unwrap().path();
    let text = std::fs::read_to_string(&first).unwrap();
    assert!(text.contains("expect: fail"), "{text}");
    assert!(text.contains("scenario: cancel"), "{text}");
    // A second run finds its files there and replaces none.
    let before = std::fs::read_to_string(&first).unwrap();
    let o = run_in(dir.path(), &["mutate", "--write", "mutants"], None);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("never replaces"), "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(&first).unwrap(), before);
    // A link where a suite's folder would go is refused, and nothing is written through it.
    let elsewhere = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("m2")).unwrap();
    std::os::unix::fs::symlink(elsewhere.path(), dir.path().join("m2/shop")).unwrap();
    let o = run_in(dir.path(), &["mutate", "--write", "m2"], None);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("symbolic link"), "{}", stderr(&o));
    assert_eq!(std::fs::read_dir(elsewhere.path()).unwrap().count(), 0);
}

/// Two strict steps swapped into an order the workflow also accepts are no fault, so no
/// mutant: the memory suite's `link-people` takes the two creates in either order, and every
/// mutant of its correct runs is killed.
#[test]
fn a_swap_into_an_accepted_order_is_no_mutant() {
    let o = run_in(&repo(), &["mutate", "memory", "--format", "json"], None);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let outcomes = v[0]["outcomes"].as_array().unwrap();
    let swaps_of = |source: &str| {
        outcomes
            .iter()
            .filter(|o| o["source"] == source && o["operator"] == "strict_swap")
            .count()
    };
    for source in [
        "m02-link-one-call-each",
        "m23-link-charles-first-separate-calls",
    ] {
        assert_eq!(swaps_of(source), 0, "{source}");
    }
    // A swap the workflow refuses (the relation before the entities) is still a mutant.
    assert_eq!(swaps_of("m01-link-correct"), 1);
    let survivors: Vec<_> = outcomes.iter().filter(|o| o["killed"] == false).collect();
    assert!(survivors.is_empty(), "{survivors:#?}");
}
