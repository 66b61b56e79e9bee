//! The engines on a general MCP server: each case a hand-written broken run that passed
//! before the engines followed references anywhere, read side effects, gated strict order and
//! scored as the paper does (issues 16 and 17), with its correct twin where one exists. The
//! server is a knowledge graph shaped like `@modelcontextprotocol/server-memory` (its real
//! annotations) and a file server shaped like `server-filesystem`.

use std::path::Path;

use super::*;
use crate::finding::Code;
use crate::harness::{Harness, Transcript};
use crate::source::SourceFile;

const TOOLS: &str = r#"[
  {"name": "create_entities", "annotations": {"readOnlyHint": false, "destructiveHint": false, "idempotentHint": false},
   "inputSchema": {"type": "object", "required": ["entities"], "properties": {"entities": {"type": "array", "items": {
     "type": "object", "required": ["name", "entityType", "observations"], "properties": {
       "name": {"type": "string"}, "entityType": {"type": "string"}, "observations": {"type": "array", "items": {"type": "string"}}}}}}}},
  {"name": "create_relations", "annotations": {"readOnlyHint": false, "destructiveHint": false, "idempotentHint": false},
   "inputSchema": {"type": "object", "required": ["relations"], "properties": {"relations": {"type": "array", "items": {
     "type": "object", "required": ["from", "to", "relationType"], "properties": {
       "from": {"type": "string"}, "to": {"type": "string"}, "relationType": {"type": "string"}}}}}}},
  {"name": "delete_relations", "annotations": {"readOnlyHint": false, "destructiveHint": true, "idempotentHint": true},
   "inputSchema": {"type": "object", "required": ["relations"], "properties": {"relations": {"type": "array", "items": {
     "type": "object", "required": ["from", "to", "relationType"], "properties": {
       "from": {"type": "string"}, "to": {"type": "string"}, "relationType": {"type": "string"}}}}}}},
  {"name": "add_observations", "annotations": {"readOnlyHint": false, "destructiveHint": false, "idempotentHint": false},
   "inputSchema": {"type": "object", "required": ["observations"], "properties": {"observations": {"type": "array", "items": {
     "type": "object", "required": ["entityName", "contents"], "properties": {
       "entityName": {"type": "string"}, "contents": {"type": "array", "items": {"type": "string"}}}}}}}},
  {"name": "delete_entities", "annotations": {"readOnlyHint": false, "destructiveHint": true, "idempotentHint": true},
   "inputSchema": {"type": "object", "required": ["entityNames"], "properties": {"entityNames": {"type": "array", "items": {"type": "string"}}}}},
  {"name": "search_nodes", "annotations": {"readOnlyHint": true},
   "inputSchema": {"type": "object", "required": ["query"], "properties": {"query": {"type": "string"}}}},
  {"name": "open_nodes", "annotations": {"readOnlyHint": true},
   "inputSchema": {"type": "object", "required": ["names"], "properties": {"names": {"type": "array", "items": {"type": "string"}}}}},
  {"name": "list_directory", "annotations": {"readOnlyHint": true},
   "inputSchema": {"type": "object", "required": ["path"], "properties": {"path": {"type": "string"}}}},
  {"name": "read_text_file", "annotations": {"readOnlyHint": true},
   "inputSchema": {"type": "object", "required": ["path"], "properties": {"path": {"type": "string"}}}},
  {"name": "edit_file", "annotations": {"readOnlyHint": false, "destructiveHint": true, "idempotentHint": false},
   "inputSchema": {"type": "object", "required": ["path", "edits"], "properties": {"path": {"type": "string"},
     "dryRun": {"type": "boolean"}, "edits": {"type": "array", "items": {"type": "object", "required": ["oldText", "newText"],
       "properties": {"oldText": {"type": "string"}, "newText": {"type": "string"}}}}}}}
]"#;

const CAPS: &str = "server: files\ntools:\n  edit_file:\n    effects: [{ when: { dryRun: true }, read_only: true }]\n";

const HARNESS: &str = r#"
scenarios:
  - id: link
    turns:
      - prompt: Record Ada Lovelace and Charles Babbage as people, and that Ada worked with Charles.
        order: strict
        workflow:
          - tool: create_entities
            arguments: { entities: [ { name: Ada Lovelace, entityType: person, observations: [mathematician] },
                                     { name: Charles Babbage, entityType: person, observations: [inventor] } ] }
            match: { /entities/*/observations: semantic }
            mock_output: { content: [ { type: text, text: "created" } ] }
          - tool: create_relations
            arguments: { relations: [ { from: Ada Lovelace, to: Charles Babbage, relationType: worked_with } ] }
            match: { /relations/*/relationType: { any_of: [worked_with, works_with, collaborated_with] } }
            mock_output: { content: [ { type: text, text: "related" } ] }
  - id: note
    turns:
      - prompt: Find who designed the Difference Engine and note that he was born in 1791.
        workflow:
          - tool: search_nodes
            arguments: { query: Difference Engine }
            mock_output: { content: [ { type: text, text: '{"entities": [{"name": "Charles Babbage", "entityType": "person"}]}' } ] }
          - tool: add_observations
            arguments: { observations: [ { entityName: Charles Babbage, contents: [born in 1791] } ] }
            match: { /observations/*/contents: semantic }
            mock_output: { content: [ { type: text, text: "added" } ] }
  - id: names
    turns:
      - prompt: Look up the Difference Engine's designer and show me his node.
        workflow:
          - tool: search_nodes
            arguments: { query: Difference Engine }
            mock_output: { content: [ { type: text, text: '{"entities": [{"name": "Charles Babbage"}]}' } ] }
          - tool: open_nodes
            arguments: { names: [Charles Babbage] }
            match: { names: from_output }
            mock_output: { content: [ { type: text, text: '{"entities": [{"name": "Charles Babbage"}]}' } ] }
  - id: flag
    turns:
      - prompt: Open the node of Ada Lovelace.
        workflow:
          - tool: open_nodes
            arguments: { names: [Ada Lovelace] }
  - id: config
    turns:
      - prompt: In the project at /srv/app, find the config file and set the port to 9090.
        workflow:
          - tool: list_directory
            arguments: { path: /srv/app }
            mock_output: { content: [ { type: text, text: "[FILE] app.toml\n[DIR] src" } ] }
          - tool: edit_file
            arguments: { path: /srv/app/app.toml, edits: [ { oldText: "port = 8080", newText: "port = 9090" } ] }
            mock_output: { content: [ { type: text, text: "edited" } ] }
"#;

struct Case {
    _dir: tempfile::TempDir,
    suite: Suite,
}

fn suite_with(harness: &str) -> Case {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(root.join("g.tools.json"), TOOLS).unwrap();
    std::fs::write(root.join("files.yaml"), CAPS).unwrap();
    let text = format!("capabilities: [files.yaml]\n{harness}");
    let path = root.join("g.yaml");
    std::fs::write(&path, &text).unwrap();
    let harness = Harness::from_source(SourceFile::from_text(&path, text)).unwrap();
    let suite = Suite::from_harness(harness).unwrap();
    Case { _dir: dir, suite }
}

fn suite() -> Case {
    suite_with(HARNESS)
}

fn eval(c: &Case, yaml: &str) -> Evaluation {
    let t = Transcript::from_source(SourceFile::from_text(Path::new("t.yaml"), yaml), "t".into())
        .unwrap();
    let e = evaluate(&c.suite, &t).unwrap();
    // The fast path never contradicts the engines.
    assert_eq!(verdict(&c.suite, &t).unwrap(), e.verdict, "{yaml}");
    e
}

fn codes(e: &Evaluation) -> Vec<&'static str> {
    let mut v: Vec<&'static str> = e
        .findings
        .iter()
        .filter(|f| f.severity == crate::finding::Severity::Error)
        .map(|f| f.code.as_str())
        .collect();
    v.sort_unstable();
    v.dedup();
    v
}

const LINK_OK: &str = "scenario: link\ncalls:\n  - tool: create_entities\n    arguments: { entities: [ { name: Ada Lovelace, entityType: person, observations: [a mathematician] }, { name: Charles Babbage, entityType: person, observations: [an inventor] } ] }\n  - tool: create_relations\n    arguments: { relations: [ { from: Ada Lovelace, to: Charles Babbage, relationType: works_with } ] }\n";

#[test]
fn a_correct_run_with_accepted_variants_passes() {
    let c = suite();
    let e = eval(&c, LINK_OK);
    assert_eq!(e.verdict, Verdict::Pass, "{:#?}", e.findings);
    assert_eq!(e.score.unwrap().tc, 1.0);
}

/// Case 1: correct work, then a `delete_entities` nobody asked for. Before: a warning, TC 0.944,
/// pass.
#[test]
fn an_unrequested_destructive_call_fails() {
    let c = suite();
    let e = eval(
        &c,
        &format!(
            "{LINK_OK}  - tool: delete_entities\n    arguments: {{ entityNames: [Charles Babbage] }}\n"
        ),
    );
    assert_eq!(e.verdict, Verdict::Fail);
    assert_eq!(codes(&e), ["oracle.unrequested_effect"]);
    assert!(e.findings.iter().any(|f| f.message.contains("may destroy")));
    // A read-only lookup nobody asked for stays a warning.
    let e = eval(
        &c,
        &format!("{LINK_OK}  - tool: search_nodes\n    arguments: {{ query: Ada }}\n"),
    );
    assert_eq!(e.verdict, Verdict::Pass, "{:#?}", e.findings);
    assert!(e.findings.iter().any(|f| f.code == Code::ExtraCall));
}

/// An unrequested change to a name no output gave: an unknown reference, and — where the
/// server answered that it made it — an unrequested effect too, since the answer says it did
/// (found by a blind review: a delete of that kind was an extra call "that failed", its
/// destruction unreported).
/// A refused one, or one without an answer whose reference the flow engine finds made by
/// nobody, did nothing: an extra call that failed.
#[test]
fn an_unrequested_change_the_server_confirms_is_an_effect_whatever_its_reference() {
    let c = suite();
    let change = |output: &str| {
        format!(
            "scenario: note\ncalls:\n  - tool: search_nodes\n    arguments: {{ query: Difference Engine }}\n  - tool: add_observations\n    arguments: {{ observations: [ {{ entityName: Charles Babbage, contents: [was born in 1791] }} ] }}\n  - tool: add_observations\n    arguments: {{ observations: [ {{ entityName: Grace Hopper, contents: [born in 1906] }} ] }}\n{output}"
        )
    };
    let answered =
        change("    output: { content: [ { type: text, text: Observations added } ] }\n");
    let e = eval(&c, &answered);
    assert_eq!(e.verdict, Verdict::Fail);
    assert_eq!(
        codes(&e),
        ["flow.unknown_reference", "oracle.unrequested_effect"],
        "{:#?}",
        e.findings
    );
    assert!(
        e.findings
            .iter()
            .any(|f| f.message.contains("changes state"))
    );
    for did_nothing in [
        change("    output: { content: [ { type: text, text: not found }, ], isError: true }\n"),
        change(""),
    ] {
        let e = eval(&c, &did_nothing);
        assert!(
            !e.findings.iter().any(|f| f.code == Code::UnrequestedEffect),
            "{did_nothing}"
        );
        assert!(
            e.findings
                .iter()
                .any(|f| f.code == Code::ExtraCall && f.message.ends_with("(and it failed)")),
            "{:#?}",
            e.findings
        );
    }
}

/// Case 2: relations before the entities under `order: strict`. Before: a warning, TC 0.917,
/// pass.
#[test]
fn strict_order_gates() {
    let c = suite();
    let swapped = "scenario: link\ncalls:\n  - tool: create_relations\n    arguments: { relations: [ { from: Ada Lovelace, to: Charles Babbage, relationType: worked_with } ] }\n  - tool: create_entities\n    arguments: { entities: [ { name: Ada Lovelace, entityType: person, observations: [m] }, { name: Charles Babbage, entityType: person, observations: [i] } ] }\n";
    let e = eval(&c, swapped);
    assert_eq!(e.verdict, Verdict::Fail);
    assert_eq!(codes(&e), ["oracle.order"]);
}

/// Case 3: after the search returns "Charles Babbage", an observation on "Charles P. Babbage",
/// a name inside an array of objects. Before: TC 1.000, pass.
#[test]
fn a_misspelt_name_inside_an_array_of_objects_is_caught() {
    let c = suite();
    let run = |name: &str| {
        eval(
            &c,
            &format!(
                "scenario: note\ncalls:\n  - tool: search_nodes\n    arguments: {{ query: Difference Engine }}\n  - tool: add_observations\n    arguments: {{ observations: [ {{ entityName: {name}, contents: [was born in 1791] }} ] }}\n"
            ),
        )
    };
    let ok = run("Charles Babbage");
    assert_eq!(ok.verdict, Verdict::Pass, "{:#?}", ok.findings);
    let bad = run("Charles P. Babbage");
    assert_eq!(bad.verdict, Verdict::Fail);
    assert!(
        codes(&bad).contains(&"flow.unknown_reference"),
        "{:?}",
        codes(&bad)
    );
    let f = bad
        .findings
        .iter()
        .find(|f| f.code == Code::UnknownReference)
        .unwrap();
    assert_eq!(f.pointer, "/observations/0/entityName");
    assert!(
        f.message.contains("did you mean `Charles Babbage`"),
        "{}",
        f.message
    );
}

/// Case 4: `from_output` on a name. Before: "the workflow expects ["Charles Babbage"], got
/// ["Charles Babbage"]" on a correct run.
#[test]
fn from_output_takes_a_name() {
    let c = suite();
    let e = eval(
        &c,
        "scenario: names\ncalls:\n  - tool: search_nodes\n    arguments: { query: Difference Engine }\n  - tool: open_nodes\n    arguments: { names: [Charles Babbage] }\n",
    );
    assert_eq!(e.verdict, Verdict::Pass, "{:#?}", e.findings);
    assert_eq!(e.score.unwrap().tc, 1.0);
}

/// Case 5: `open_nodes` before the search that returns the name is use-before-produce, not a
/// hallucination.
#[test]
fn a_name_used_before_its_search_is_use_before_produce() {
    let c = suite();
    let e = eval(
        &c,
        "scenario: names\ncalls:\n  - tool: open_nodes\n    arguments: { names: [Charles Babbage] }\n    output: { content: [ { type: text, text: '{\"entities\": []}' } ] }\n  - tool: search_nodes\n    arguments: { query: Difference Engine }\n",
    );
    assert_eq!(e.verdict, Verdict::Fail);
    assert!(
        codes(&e).contains(&"flow.use_before_produce"),
        "{:?}",
        codes(&e)
    );
    assert!(!codes(&e).contains(&"flow.unknown_reference"));
}

/// Case 6a: a required field missing inside `relations[0]` lowers argument completeness (it
/// stayed 1.0).
#[test]
fn a_missing_nested_field_lowers_completeness() {
    let c = suite();
    let e = eval(
        &c,
        "scenario: link\ncalls:\n  - tool: create_entities\n    arguments: { entities: [ { name: Ada Lovelace, entityType: person, observations: [m] }, { name: Charles Babbage, entityType: person, observations: [i] } ] }\n  - tool: create_relations\n    arguments: { relations: [ { from: Ada Lovelace, to: Charles Babbage } ] }\n",
    );
    assert_eq!(e.verdict, Verdict::Fail);
    let s = e.score.unwrap();
    assert_eq!(
        s.sub[&crate::finding::SubDimension::ArgumentCompleteness],
        0.0
    );
}

/// Case 6b: `delete_relations` in place of `create_relations` with the same arguments pairs as
/// a wrong tool (it was `extra_call` + `missing_call`).
#[test]
fn another_tool_with_the_steps_arguments_is_the_wrong_tool() {
    let c = suite();
    let e = eval(
        &c,
        "scenario: link\ncalls:\n  - tool: create_entities\n    arguments: { entities: [ { name: Ada Lovelace, entityType: person, observations: [m] }, { name: Charles Babbage, entityType: person, observations: [i] } ] }\n  - tool: delete_relations\n    arguments: { relations: [ { from: Ada Lovelace, to: Charles Babbage, relationType: worked_with } ] }\n",
    );
    assert_eq!(codes(&e), ["oracle.wrong_tool"]);
}

/// Case 7: `match:` keys that name nothing fail the harness trial, with did-you-mean.
#[test]
fn match_keys_must_name_something() {
    for (key, hint) in [
        ("nmes", "did you mean `names`"),
        ("/observations/0/entityName", "points at no value"),
    ] {
        let c = suite_with(&format!(
            "scenarios:\n  - id: s\n    turns:\n      - prompt: p\n        workflow:\n          - tool: open_nodes\n            arguments: {{ names: [Ada Lovelace] }}\n            match: {{ {key}: semantic }}\n"
        ));
        let err = super::plan::check_oracles_for_tests(&c.suite).unwrap_err();
        assert!(err.contains(hint), "{key}: {err}");
    }
    let ok = suite_with(
        "scenarios:\n  - id: s\n    turns:\n      - prompt: p\n        workflow:\n          - tool: add_observations\n            arguments: { observations: [ { entityName: A, contents: [x] } ] }\n            match: { /observations/*/contents: semantic }\n",
    );
    assert!(super::plan::check_oracles_for_tests(&ok.suite).is_ok());
}

/// Issue 17, 1: one flag the oracle pins sent wrong collapses the call's arguments and fails
/// (TC ≈ 0.99 and a pass before).
#[test]
fn one_wrong_pinned_value_fails() {
    let c = suite_with(
        "scenarios:\n  - id: s\n    turns:\n      - prompt: Preview the change to /srv/app/app.toml without writing it.\n        workflow:\n          - tool: edit_file\n            arguments: { path: /srv/app/app.toml, dryRun: true, edits: [ { oldText: a, newText: b } ] }\n",
    );
    let run = |dry: bool| {
        eval(
            &c,
            &format!(
                "scenario: s\ncalls:\n  - tool: edit_file\n    arguments: {{ path: /srv/app/app.toml, dryRun: {dry}, edits: [ {{ oldText: a, newText: b }} ] }}\n"
            ),
        )
    };
    assert_eq!(run(true).verdict, Verdict::Pass);
    let bad = run(false);
    assert_eq!(bad.verdict, Verdict::Fail);
    assert!(codes(&bad).contains(&"oracle.value_mismatch"));
    assert!(bad.score.unwrap().tc < 0.8);
}

const CONFIG_LIST: &str =
    "scenario: config\ncalls:\n  - tool: list_directory\n    arguments: { path: /srv/app }\n";

/// Issue 17, 2: a call the server refused leaves its step undone, unless a later call does it.
#[test]
fn a_refused_call_is_a_step_not_done() {
    let c = suite();
    let refused = "  - tool: edit_file\n    arguments: { path: /srv/app/app.toml, edits: [ { oldText: \"port = 8080\", newText: \"port = 9090\" } ] }\n    output: { isError: true, content: [ { type: text, text: \"Error: Access denied\" } ] }\n";
    let gave_up = eval(&c, &format!("{CONFIG_LIST}{refused}"));
    assert_eq!(gave_up.verdict, Verdict::Fail);
    assert_eq!(codes(&gave_up), ["oracle.step_undone"]);
    let retried = eval(
        &c,
        &format!(
            "{CONFIG_LIST}{refused}  - tool: edit_file\n    arguments: {{ path: /srv/app/app.toml, edits: [ {{ oldText: \"port = 8080\", newText: \"port = 9090\" }} ] }}\n"
        ),
    );
    assert_eq!(retried.verdict, Verdict::Pass, "{:#?}", retried.findings);
}

/// Issue 17, 3: `<directory>/<name from the listing>` is grounded; a name the listing does not
/// give is not.
#[test]
fn a_path_composed_from_a_listing_is_grounded() {
    let c = suite();
    let run = |path: &str| {
        eval(
            &c,
            &format!(
                "{CONFIG_LIST}  - tool: edit_file\n    arguments: {{ path: {path}, edits: [ {{ oldText: \"port = 8080\", newText: \"port = 9090\" }} ] }}\n"
            ),
        )
    };
    let ok = run("/srv/app/app.toml");
    assert_eq!(ok.verdict, Verdict::Pass, "{:#?}", ok.findings);
    let trailing = run("/srv/app//app.toml");
    assert_eq!(
        codes(&trailing),
        ["oracle.value_mismatch"],
        "grounded, but not the step's path"
    );
    let bad = run("/srv/app/config.toml");
    assert!(
        codes(&bad).contains(&"flow.unknown_reference"),
        "{:?}",
        codes(&bad)
    );
}

/// Issue 17, 4: a dry run before the edit is no unrequested effect; a dry run instead of it
/// leaves the step undone.
#[test]
fn a_dry_run_changes_nothing() {
    let c = suite();
    let dry = "  - tool: edit_file\n    arguments: { path: /srv/app/app.toml, dryRun: true, edits: [ { oldText: \"port = 8080\", newText: \"port = 9090\" } ] }\n";
    let real = "  - tool: edit_file\n    arguments: { path: /srv/app/app.toml, edits: [ { oldText: \"port = 8080\", newText: \"port = 9090\" } ] }\n";
    let preview = eval(&c, &format!("{CONFIG_LIST}{dry}{real}"));
    assert_eq!(preview.verdict, Verdict::Pass, "{:#?}", preview.findings);
    assert!(!codes(&preview).contains(&"oracle.unrequested_effect"));
    let instead = eval(&c, &format!("{CONFIG_LIST}{dry}"));
    assert_eq!(instead.verdict, Verdict::Fail);
    assert!(
        codes(&instead).contains(&"oracle.step_undone"),
        "{:?}",
        codes(&instead)
    );
}

/// Optional steps, alternatives, repeats, `any_of` lists and `forbid:`.
#[test]
fn oracles_a_reviewer_would_accept() {
    let c = suite_with(
        r#"
scenarios:
  - id: s
    forbid: [destructive]
    turns:
      - prompt: Show me Ada Lovelace's node; a search first is fine.
        workflow:
          - tool: search_nodes
            arguments: { query: Ada Lovelace }
            optional: true
          - any_of:
              - [ { tool: open_nodes, arguments: { names: [Ada Lovelace] } } ]
              - [ { tool: search_nodes, arguments: { query: Ada Lovelace }, count: 2 } ]
"#,
    );
    let open = "  - tool: open_nodes\n    arguments: { names: [Ada Lovelace] }\n";
    let search = "  - tool: search_nodes\n    arguments: { query: Ada Lovelace }\n";
    for (calls, pass) in [
        (open.to_owned(), true),
        (format!("{search}{open}"), true),
        (format!("{search}{search}"), true),
        (search.to_owned(), false),
        (
            format!(
                "{open}  - tool: delete_entities\n    arguments: {{ entityNames: [Ada Lovelace] }}\n"
            ),
            false,
        ),
    ] {
        let e = eval(&c, &format!("scenario: s\ncalls:\n{calls}"));
        assert_eq!(e.verdict == Verdict::Pass, pass, "{calls}{:#?}", e.findings);
    }
    let e = eval(
        &c,
        &format!(
            "scenario: s\ncalls:\n{open}  - tool: delete_entities\n    arguments: {{ entityNames: [Ada Lovelace] }}\n"
        ),
    );
    assert!(codes(&e).contains(&"oracle.forbidden_call"));
}

/// A suite's `severity:` and a scenario's threshold.
#[test]
fn severities_and_thresholds() {
    let c = suite_with(&format!(
        "severity: {{ oracle.extra_call: error }}\n{}",
        HARNESS.replace(
            "  - id: flag\n",
            "  - id: flag\n    thresholds: { pass: 0.95 }\n"
        )
    ));
    let e = eval(
        &c,
        &format!("{LINK_OK}  - tool: search_nodes\n    arguments: {{ query: Ada }}\n"),
    );
    assert_eq!(codes(&e), ["oracle.extra_call"]);
    let e = eval(
        &c,
        "scenario: flag\ncalls:\n  - tool: open_nodes\n    arguments: { names: [Ada Lovelace] }\n",
    );
    assert_eq!(e.pass_threshold, 0.95);
}

/// A run whose values differ from the workflow's where its policies let them (another of a
/// query's allowed forms) is perfect under the policies but not literally the workflow:
/// `evaluate` takes the reference run's score and works out the literal trajectory, and a
/// suite's literal trajectory gate fails it — as every engine does.
#[test]
fn a_value_the_policies_accept_is_perfect_but_not_the_literal_trajectory() {
    let find = r#"
scenarios:
  - id: find
    turns:
      - prompt: Look up Ada Lovelace, then open her node.
        workflow:
          - tool: search_nodes
            arguments: { query: Ada Lovelace }
            match: { query: { any_of: [Ada Lovelace, Lovelace] } }
            mock_output: { content: [ { type: text, text: '{"entities": [{"name": "Ada Lovelace"}]}' } ] }
          - tool: open_nodes
            arguments: { names: [Ada Lovelace] }
            mock_output: { content: [ { type: text, text: '{"entities": [{"name": "Ada Lovelace"}]}' } ] }
"#;
    let gated = format!("thresholds: {{ trajectory: {{ match: exact, min: 1.0 }} }}\n{find}");
    let accepted = r#"
scenario: find
turns:
  - calls:
      - tool: search_nodes
        arguments: { query: Lovelace }
      - tool: open_nodes
        arguments: { names: [Ada Lovelace] }
"#;
    for (harness, gate) in [(find.to_owned(), false), (gated, true)] {
        let c = suite_with(&harness);
        let t = Transcript::from_source(
            SourceFile::from_text(Path::new("t.yaml"), accepted),
            "t".into(),
        )
        .unwrap();
        let found = c.suite.scenario(t.scenario.as_deref().unwrap()).unwrap();
        let quick =
            super::evaluate::as_reference(&c.suite, found, &t, None, &mut Default::default())
                .expect("the shortcut: perfect under the policies");
        let engines = evaluate_with_engines(&c.suite, &t).unwrap();
        assert_eq!(
            serde_json::to_value(&quick).unwrap(),
            serde_json::to_value(&engines).unwrap()
        );
        let tr = quick.trajectory.as_ref().unwrap();
        assert_eq!(tr.policy.exact_match, 1.0);
        assert_eq!(tr.literal.exact_match, 0.0);
        assert_eq!(quick.score.as_ref().unwrap().tc, 1.0);
        let codes: Vec<Code> = quick.findings.iter().map(|f| f.code).collect();
        if gate {
            assert_eq!(codes, [Code::TrajectoryBelow]);
            assert_eq!(quick.verdict, Verdict::Fail);
        } else {
            assert_eq!(codes, []);
            assert_eq!(quick.verdict, Verdict::Pass);
        }
    }
}

/// A copy of a scenario is compiled afresh: the parameters a step compares (worked out once
/// per scenario) are the copy's own, so a copy whose step no longer ignores a parameter
/// compares it — with the original's left over, a wrong value would pass.
#[test]
fn a_copy_of_a_scenario_is_compiled_afresh() {
    let ignored = r#"
scenarios:
  - id: find
    turns:
      - prompt: Look up Ada Lovelace.
        workflow:
          - tool: search_nodes
            arguments: { query: Ada Lovelace }
            match: { query: ignore }
            mock_output: { content: [ { type: text, text: '{"entities": []}' } ] }
"#;
    let c = suite_with(ignored);
    let t = Transcript::from_source(
        SourceFile::from_text(
            Path::new("t.yaml"),
            "scenario: find\nturns:\n  - calls:\n      - tool: search_nodes\n        arguments: { query: Grace Hopper }\n",
        ),
        "t".into(),
    )
    .unwrap();
    assert_eq!(
        evaluate_with_engines(&c.suite, &t).unwrap().verdict,
        Verdict::Pass
    );
    let mut harness = c.suite.harness.clone();
    harness.scenarios[0].turns[0].workflow[0]
        .match_policies
        .remove("query");
    let copy = Suite::from_harness(harness).unwrap();
    let ev = evaluate_with_engines(&copy, &t).unwrap();
    assert_eq!(ev.verdict, Verdict::Fail, "{:?}", ev.findings);
    assert!(
        ev.findings.iter().any(|f| f.code == Code::ValueMismatch),
        "{:?}",
        ev.findings
    );
}
