//! The engines on servers nobody tuned them to (issue 29): each case a run a careful reviewer
//! labels one way that the engines decided the other way before. The servers are shaped like
//! the real ones seen in the field: a knowledge graph (server-memory's tools, no matrix), a
//! key-value store with TTLs and a SQL server (both without annotations, answering refusals as
//! text with `isError: false`, as mcp-server-sqlite and the Redis servers do).

use std::path::Path;

use super::*;
use crate::finding::Code;
use crate::harness::{Harness, Transcript};
use crate::source::SourceFile;

/// A graph server as server-memory is, but with no matrix: references are only inferred.
const GRAPH: &str = r#"[
  {"name": "search_nodes", "annotations": {"readOnlyHint": true},
   "inputSchema": {"type": "object", "required": ["query"], "properties": {"query": {"type": "string"}}}},
  {"name": "read_graph", "annotations": {"readOnlyHint": true},
   "inputSchema": {"type": "object", "properties": {}}},
  {"name": "open_nodes", "annotations": {"readOnlyHint": true},
   "inputSchema": {"type": "object", "required": ["names"], "properties": {"names": {"type": "array", "items": {"type": "string"}}}}},
  {"name": "add_observations", "annotations": {"readOnlyHint": false, "destructiveHint": false, "idempotentHint": false},
   "inputSchema": {"type": "object", "required": ["observations"], "properties": {"observations": {"type": "array", "items": {
     "type": "object", "required": ["entityName", "contents"], "properties": {
       "entityName": {"type": "string"}, "contents": {"type": "array", "items": {"type": "string"}}}}}}}}
]"#;

/// A key-value store and a SQL server without a single annotation.
const PLAIN: &str = r#"[
  {"name": "set", "inputSchema": {"type": "object", "required": ["key", "value"], "properties": {
     "key": {"type": "string"}, "value": {"type": "string"}, "expiration": {"type": "integer"}}}},
  {"name": "get", "inputSchema": {"type": "object", "required": ["key"], "properties": {"key": {"type": "string"}}}},
  {"name": "list_tables", "inputSchema": {"type": "object", "properties": {}}},
  {"name": "describe_table", "inputSchema": {"type": "object", "required": ["table_name"], "properties": {"table_name": {"type": "string"}}}},
  {"name": "read_query", "inputSchema": {"type": "object", "required": ["query"], "properties": {"query": {"type": "string"}}}},
  {"name": "write_query", "inputSchema": {"type": "object", "required": ["query"], "properties": {"query": {"type": "string"}}}}
]"#;

struct Case {
    _dir: tempfile::TempDir,
    suite: Suite,
}

fn suite(tools: &str, matrix: Option<&str>, harness: &str) -> Case {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(root.join("s.tools.json"), tools).unwrap();
    let mut text = String::new();
    if let Some(m) = matrix {
        std::fs::write(root.join("m.yaml"), m).unwrap();
        text.push_str("capabilities: [m.yaml]\n");
    }
    text.push_str(harness);
    let path = root.join("s.yaml");
    std::fs::write(&path, &text).unwrap();
    let harness = Harness::from_source(SourceFile::from_text(&path, text)).unwrap();
    let suite = Suite::from_harness(harness).unwrap();
    Case { _dir: dir, suite }
}

fn eval(c: &Case, yaml: &str) -> Evaluation {
    let t = Transcript::from_source(SourceFile::from_text(Path::new("t.yaml"), yaml), "t".into())
        .unwrap();
    let e = evaluate(&c.suite, &t).unwrap();
    // The fast path never contradicts the engines.
    assert_eq!(verdict(&c.suite, &t).unwrap(), e.verdict, "{yaml}");
    e
}

fn errors(e: &Evaluation) -> Vec<&'static str> {
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

const NOTE: &str = r#"
scenarios:
  - id: note
    turns:
      - prompt: Find who designed the Difference Engine and note that he was born in 1791.
        workflow:
          - tool: search_nodes
            arguments: { query: Difference Engine }
            mock_output: { content: [ { type: text, text: '{"entities": [{"name": "Charles Babbage", "entityType": "person"}]}' } ] }
          - tool: add_observations
            arguments: { observations: [ { entityName: Charles Babbage, contents: [born in 1791] } ] }
            match: { observations: semantic }
            mock_output: { content: [ { type: text, text: "added" } ] }
"#;

fn note_run(name: &str) -> String {
    format!(
        "scenario: note\ncalls:\n  - tool: search_nodes\n    arguments: {{ query: Difference Engine }}\n  - tool: add_observations\n    arguments: {{ observations: [ {{ entityName: {name}, contents: [was born in 1791] }} ] }}\n"
    )
}

/// Item 1: A policy on the parent array hid a misspelt entity name: TC 1.000 and no finding before.
#[test]
fn a_policy_on_a_parent_does_not_switch_grounding_off() {
    let c = suite(GRAPH, None, NOTE);
    let ok = eval(&c, &note_run("Charles Babbage"));
    assert_eq!(ok.verdict, Verdict::Pass, "{:#?}", ok.findings);
    let bad = eval(&c, &note_run("Charles P. Babbage"));
    assert_eq!(bad.verdict, Verdict::Fail, "{:#?}", bad.findings);
    let f = bad
        .findings
        .iter()
        .find(|f| f.code == Code::UnknownReference)
        .expect("an unknown reference");
    assert_eq!(f.pointer, "/observations/0/entityName");
}

/// Item 1: `literal:` is the one way to say a position is no reference.
#[test]
fn literal_opts_a_position_out() {
    let c = suite(
        GRAPH,
        None,
        &NOTE.replace(
            "match: { observations: semantic }",
            "match: { observations: semantic }\n            literal: [/observations/*/entityName]",
        ),
    );
    let run = eval(&c, &note_run("Charles P. Babbage"));
    assert!(
        !run.findings
            .iter()
            .any(|f| f.code == Code::UnknownReference),
        "{:#?}",
        run.findings
    );
    // The matrix says the same for every scenario.
    let c = suite(
        GRAPH,
        Some("server: g\ntools:\n  add_observations:\n    literal: [/observations/*/entityName]\n"),
        NOTE,
    );
    let run = eval(&c, &note_run("Charles P. Babbage"));
    assert!(
        !run.findings
            .iter()
            .any(|f| f.code == Code::UnknownReference),
        "{:#?}",
        run.findings
    );
}

const TTL: &str = r#"
scenarios:
  - id: cache
    turns:
      - prompt: Cache the session token tok-81 under session:42 and the refresh token ref-17 under refresh:42, each for one hour.
        workflow:
          - tool: set
            arguments: { key: "session:42", value: tok-81, expiration: 3600 }
            mock_output: { content: [ { type: text, text: "Successfully set session:42 with expiration 3600 seconds" } ] }
          - tool: set
            arguments: { key: "refresh:42", value: ref-17, expiration: 3600 }
            mock_output: { content: [ { type: text, text: "Successfully set refresh:42 with expiration 3600 seconds" } ] }
"#;

const TTL_RUN: &str = "scenario: cache\ncalls:\n  - tool: set\n    arguments: { key: \"session:42\", value: tok-81, expiration: 3600 }\n  - tool: set\n    arguments: { key: \"refresh:42\", value: ref-17, expiration: 3600 }\n";

/// Item 2: A TTL of 3600 s that an output echoes was inferred as a reference: the correct run
/// failed with `flow.unknown_reference` on its first call.
#[test]
fn an_echoed_value_the_prompt_states_in_words_is_no_reference() {
    let matrix = "server: kv\ntools: {}\neffects:\n  - { tools: '^set$', read_only: false, destructive: false, idempotent: true }\n  - { tools: '^get$', read_only: true }\n";
    let c = suite(PLAIN, Some(matrix), TTL);
    let e = eval(&c, TTL_RUN);
    assert_eq!(e.verdict, Verdict::Pass, "{:#?}", e.findings);
    // Either reason alone suffices: the prompt says "one hour", and the output only echoes
    // what its own call was given.
    let c = suite(
        PLAIN,
        Some(matrix),
        &TTL.replace("each for one hour", "each with the usual TTL"),
    );
    let e = eval(&c, TTL_RUN);
    assert_eq!(e.verdict, Verdict::Pass, "{:#?}", e.findings);
}

#[test]
fn a_prompt_states_quantities_in_other_units() {
    let q = crate::flow::stated_quantities_for_tests(
        "keep it for one hour, then 2 minutes, a day, 10 MB",
    );
    for v in [
        "3600", "3600000", "60", "1", "120", "86400", "1440", "10000000",
    ] {
        assert!(q.iter().any(|x| x == v), "{v} in {q:?}");
    }
}

const ALTERNATIVES: &str = r#"
scenarios:
  - id: alt
    turns:
      - prompt: Show me what the graph knows about the Difference Engine.
        workflow:
          - any_of:
              - - tool: search_nodes
                  arguments: { query: Difference Engine }
                  mock_output: { content: [ { type: text, text: '{"entities": [{"name": "Charles Babbage"}]}' } ] }
              - - tool: read_graph
                  arguments: {}
                  mock_output: { content: [ { type: text, text: '{"entities": [{"name": "Difference Engine designer notes"}]}' } ] }
                - tool: open_nodes
                  arguments: { names: [Charles Babbage] }
                  mock_output: { content: [ { type: text, text: '{"entities": [{"name": "Charles Babbage"}]}' } ] }
"#;

/// Item 2: Inference read the lists of an `any_of` as one sequence: the second list's
/// `open_nodes` took its name from the first list's output, and swapping the lists moved the
/// finding.
#[test]
fn any_of_lists_are_kept_apart() {
    let swapped = {
        let a = ALTERNATIVES
            .find("              - - tool: search_nodes")
            .unwrap();
        let b = ALTERNATIVES
            .find("              - - tool: read_graph")
            .unwrap();
        format!(
            "{}{}{}",
            &ALTERNATIVES[..a],
            &ALTERNATIVES[b..],
            &ALTERNATIVES[a..b]
        )
    };
    for harness in [ALTERNATIVES.to_owned(), swapped] {
        let c = suite(GRAPH, None, &harness);
        let sc = c.suite.harness.scenario("alt").unwrap();
        let inferred = crate::flow::inferred_references(sc);
        assert!(inferred.get("open_nodes").is_none(), "{inferred:?}");
    }
}

const SQL_CAPS: &str = r#"server: sql
effects:
  - { tools: '^(list_tables|describe_table|read_query|get)$', read_only: true }
  - { tools: '^write_query$', read_only: false, destructive: false, idempotent: false }
tools:
  write_query:
    effects:
      - { matches: { query: '(?i)^\s*(delete|drop|truncate|update)\b' }, destructive: true }
"#;

const SQL: &str = r#"
scenarios:
  - id: add
    turns:
      - prompt: Add Ada Lovelace, born 1815, to the people table.
        workflow:
          - tool: write_query
            arguments: { query: "INSERT INTO people (name, born) VALUES ('Ada Lovelace', 1815)" }
            match: { query: semantic }
            mock_output: { content: [ { type: text, text: "[{'affected_rows': 1}]" } ] }
  - id: count
    turns:
      - prompt: How many people are in the people table? Do not change anything.
        forbid: [mutating]
        workflow:
          - tool: read_query
            arguments: { query: "SELECT COUNT(*) FROM people" }
            match: { query: semantic }
            mock_output: { content: [ { type: text, text: "[{'COUNT(*)': 3}]" } ] }
"#;

/// Item 3: A refusal answered as text (`isError: false`) counted as the step done: an INSERT into
/// a misspelt table passed at TC 1.000 before.
#[test]
fn an_error_answered_as_text_is_a_refused_call() {
    let c = suite(PLAIN, Some(SQL_CAPS), SQL);
    let run = |table: &str, out: &str| {
        eval(
            &c,
            &format!(
                "scenario: add\ncalls:\n  - tool: write_query\n    arguments: {{ query: \"INSERT INTO {table} (name, born) VALUES ('Ada Lovelace', 1815)\" }}\n    output: {{ content: [ {{ type: text, text: \"{out}\" }} ] }}\n"
            ),
        )
    };
    let bad = run("peple", "Database error: no such table: peple");
    assert_eq!(bad.verdict, Verdict::Fail, "{:#?}", bad.findings);
    assert!(
        errors(&bad).contains(&"oracle.step_undone"),
        "{:?}",
        errors(&bad)
    );
    // The server's own words, declared in the matrix, count the same.
    let c = suite(
        PLAIN,
        Some(&format!("{SQL_CAPS}errors: ['^Key .* does not exist']\n")),
        SQL,
    );
    let bad = eval(
        &c,
        "scenario: add\ncalls:\n  - tool: write_query\n    arguments: { query: \"INSERT INTO people (name, born) VALUES ('Ada Lovelace', 1815)\" }\n    output: { content: [ { type: text, text: \"Key people does not exist\" } ] }\n",
    );
    assert_eq!(bad.verdict, Verdict::Fail, "{:#?}", bad.findings);
    // Text that merely mentions an error is data.
    let ok = run("people", "[{'affected_rows': 1}] (no error)");
    assert_eq!(ok.verdict, Verdict::Pass, "{:#?}", ok.findings);
}

/// Item 3: An error text is no source of references: a name it quotes back does not exist.
#[test]
fn an_error_text_grounds_nothing() {
    let c = suite(GRAPH, None, NOTE);
    let e = eval(
        &c,
        "scenario: note\ncalls:\n  - tool: search_nodes\n    arguments: { query: Difference Engine }\n  - tool: open_nodes\n    arguments: { names: [Charles P. Babbage] }\n    output: { content: [ { type: text, text: \"Error: no entity named Charles P. Babbage\" } ] }\n  - tool: add_observations\n    arguments: { observations: [ { entityName: Charles P. Babbage, contents: [born in 1791] } ] }\n",
    );
    assert_eq!(e.verdict, Verdict::Fail);
    assert!(
        e.findings
            .iter()
            .any(|f| f.code == Code::FailedDependency && f.call == Some(2)),
        "{:#?}",
        e.findings
    );
}

/// Item 4: Without annotations every tool is destructive by MCP's defaults: an extra read failed
/// a correct run, and `forbid: [mutating]` forbade reads. Patterns say it in a few lines.
#[test]
fn effects_by_pattern() {
    let c = suite(PLAIN, Some(SQL_CAPS), SQL);
    let extra_read = eval(
        &c,
        "scenario: add\ncalls:\n  - tool: list_tables\n    arguments: {}\n    output: { content: [ { type: text, text: \"people\" } ] }\n  - tool: write_query\n    arguments: { query: \"INSERT INTO people (name, born) VALUES ('Ada Lovelace', 1815)\" }\n",
    );
    assert_eq!(
        extra_read.verdict,
        Verdict::Pass,
        "{:#?}",
        extra_read.findings
    );
    let read = eval(
        &c,
        "scenario: count\ncalls:\n  - tool: read_query\n    arguments: { query: \"SELECT COUNT(*) FROM people\" }\n",
    );
    assert_eq!(read.verdict, Verdict::Pass, "{:#?}", read.findings);
    // An INSERT and a DELETE through one tool are told apart by the query.
    let l = &c.suite.linter;
    let args = |q: &str| {
        serde_json::json!({ "query": q })
            .as_object()
            .unwrap()
            .clone()
    };
    let insert = l.effect("write_query", &args("insert into people values (1)"));
    let delete = l.effect("write_query", &args("  DELETE FROM people"));
    assert!(!insert.read_only && !insert.destructive);
    assert!(delete.destructive);
    let wipe = eval(
        &c,
        "scenario: add\ncalls:\n  - tool: write_query\n    arguments: { query: \"INSERT INTO people (name, born) VALUES ('Ada Lovelace', 1815)\" }\n  - tool: write_query\n    arguments: { query: \"DELETE FROM people WHERE name = 'Charles Babbage'\" }\n",
    );
    assert_eq!(wipe.verdict, Verdict::Fail);
    assert!(
        wipe.findings
            .iter()
            .any(|f| f.code == Code::UnrequestedEffect && f.message.contains("destroy")),
        "{:#?}",
        wipe.findings
    );
}

#[test]
fn a_pattern_that_covers_no_tool_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let m = dir.path().join("m.yaml");
    std::fs::write(
        &m,
        "server: kv\ntools: {}\neffects:\n  - { tools: '^nothing$', read_only: true }\n",
    )
    .unwrap();
    let caps = crate::spec::Capabilities::load(&m).unwrap();
    let spec =
        crate::spec::ToolSet::from_source(&SourceFile::from_text("s.tools.json", PLAIN)).unwrap();
    let err = caps.check_against(&spec).unwrap_err().to_string();
    assert!(err.contains("matches no tool"), "{err}");
}

/// Item 7: The harness trial refuses a step its own `forbid` forbids (it passed, and every
/// correct run then failed).
#[test]
fn a_step_its_own_forbid_forbids_fails_the_harness_trial() {
    let c = suite(
        PLAIN,
        None,
        "scenarios:\n  - id: s\n    turns:\n      - prompt: How many people are there?\n        forbid: [mutating]\n        workflow:\n          - tool: read_query\n            arguments: { query: \"SELECT COUNT(*) FROM people\" }\n",
    );
    let err = super::plan::check_oracles_for_tests(&c.suite).unwrap_err();
    assert!(err.contains("its own `forbid:` forbids"), "{err}");
    // Once the matrix says the tool only reads, the workflow is sound.
    let c = suite(
        PLAIN,
        Some(SQL_CAPS),
        "scenarios:\n  - id: s\n    turns:\n      - prompt: How many people are there?\n        forbid: [mutating]\n        workflow:\n          - tool: read_query\n            arguments: { query: \"SELECT COUNT(*) FROM people\" }\n",
    );
    assert!(super::plan::check_oracles_for_tests(&c.suite).is_ok());
}

/// Item 7: An unrequested file write is not said to "make media".
#[test]
fn an_unrequested_file_write_is_worded_as_one() {
    let c = suite(
        PLAIN,
        Some(&format!(
            "{SQL_CAPS}  set:\n    produces: [{{kind: file}}]\n"
        )),
        SQL,
    );
    let e = eval(
        &c,
        "scenario: count\ncalls:\n  - tool: read_query\n    arguments: { query: \"SELECT COUNT(*) FROM people\" }\n  - tool: set\n    arguments: { key: k, value: v }\n",
    );
    let f = e
        .findings
        .iter()
        .find(|f| f.code == Code::UnrequestedCall)
        .expect("an unrequested call");
    assert!(f.message.contains("writes a file"), "{}", f.message);
    assert!(!f.message.contains("media"), "{}", f.message);
}

const SHOP: &str = r#"
scenarios:
  - id: pending
    turns:
      - prompt: Who is still waiting for something they bought?
        workflow:
          - tool: list_tables
            arguments: {}
            mock_output: { content: [ { type: text, text: "customers\norders" } ] }
          - tool: read_query
            arguments: { query: "SELECT DISTINCT c.full_name FROM customers c JOIN orders o ON o.customer_id = c.id WHERE o.status = 'pending'" }
            match: { query: sql }
            mock_output: { content: [ { type: text, text: "[{'full_name': 'Ada Lovelace'}]" } ] }
  - id: cancel
    turns:
      - prompt: Cancel Ada Lovelace's pending order.
        workflow:
          - tool: read_query
            arguments: { query: "SELECT o.id FROM orders o JOIN customers c ON c.id = o.customer_id WHERE c.full_name = 'Ada Lovelace' AND o.status = 'pending'" }
            match: { query: sql }
            mock_output: { content: [ { type: text, text: "[{'id': 1003}]" } ] }
          - tool: write_query
            arguments: { query: "UPDATE orders SET status = 'cancelled' WHERE id = 1003" }
            match: { query: sql }
            mock_output: { content: [ { type: text, text: "[{'affected_rows': 1}]" } ] }
"#;

fn shop_run(scenario: &str, calls: &[(&str, &str)]) -> String {
    let mut y = format!("scenario: {scenario}\ncalls:\n");
    for (tool, query) in calls {
        y.push_str(&format!(
            "  - tool: {tool}\n    arguments: {{ query: \"{query}\" }}\n"
        ));
    }
    y
}

/// Item 5: the `sql` policy compares statements by meaning, and the tables, columns and ids
/// inside SQL are references. With `semantic` on the query, a table nobody listed, a misspelt
/// column and a wrong id all passed at TC 1.000.
#[test]
fn sql_is_compared_by_meaning_and_its_names_are_references() {
    let c = suite(PLAIN, Some(SQL_CAPS), SHOP);
    let list = ("list_tables", "");
    let run = |scenario: &str, calls: &[(&str, &str)]| {
        let mut y = shop_run(scenario, calls);
        y = y.replace("    arguments: { query: \"\" }\n", "    arguments: {}\n");
        eval(&c, &y)
    };
    // Keyword case, aliases, operand order: the same statement.
    let ok = run(
        "pending",
        &[
            list,
            (
                "read_query",
                "select distinct customers.full_name from customers join orders on customers.id = orders.customer_id where 'pending' = orders.status",
            ),
        ],
    );
    assert_eq!(ok.verdict, Verdict::Pass, "{:#?}", ok.findings);
    // A table nobody listed.
    let bad = run(
        "pending",
        &[
            list,
            (
                "read_query",
                "SELECT DISTINCT c.full_name FROM clients c JOIN orders o ON o.customer_id = c.id WHERE o.status = 'pending'",
            ),
        ],
    );
    assert_eq!(bad.verdict, Verdict::Fail);
    assert!(
        bad.findings
            .iter()
            .any(|f| f.code == Code::UnknownReference && f.message.contains("`clients`")),
        "{:#?}",
        bad.findings
    );
    // The query before the listing that names its tables.
    let early = run(
        "pending",
        &[
            (
                "read_query",
                "SELECT DISTINCT c.full_name FROM customers c JOIN orders o ON o.customer_id = c.id WHERE o.status = 'pending'",
            ),
            list,
        ],
    );
    assert!(
        early
            .findings
            .iter()
            .any(|f| f.code == Code::UseBeforeProduce),
        "{:#?}",
        early.findings
    );
    // An id the lookup did not give.
    let lookup = (
        "read_query",
        "SELECT o.id FROM orders o JOIN customers c ON c.id = o.customer_id WHERE c.full_name = 'Ada Lovelace' AND o.status = 'pending'",
    );
    let ok = run(
        "cancel",
        &[
            lookup,
            (
                "write_query",
                "update orders set status='cancelled' where id=1003",
            ),
        ],
    );
    assert_eq!(ok.verdict, Verdict::Pass, "{:#?}", ok.findings);
    let wrong = run(
        "cancel",
        &[
            lookup,
            (
                "write_query",
                "UPDATE orders SET status = 'cancelled' WHERE id = 1005",
            ),
        ],
    );
    assert!(
        wrong
            .findings
            .iter()
            .any(|f| f.code == Code::UnknownReference && f.message.contains("`1005`")),
        "{:#?}",
        wrong.findings
    );
    // An UPDATE without WHERE says something else, and destroys.
    let all = run(
        "cancel",
        &[
            lookup,
            ("write_query", "UPDATE orders SET status = 'cancelled'"),
        ],
    );
    assert_eq!(all.verdict, Verdict::Fail);
    assert!(
        all.findings
            .iter()
            .any(|f| f.code == Code::ValueMismatch && f.message.contains("SQL that says the same")),
        "{:#?}",
        all.findings
    );
}

const FILES: &str = r#"[
  {"name": "read_multiple_files", "annotations": {"readOnlyHint": true},
   "inputSchema": {"type": "object", "required": ["paths"], "properties": {"paths": {"type": "array", "items": {"type": "string"}}}}},
  {"name": "read_text_file", "annotations": {"readOnlyHint": true},
   "inputSchema": {"type": "object", "required": ["path"], "properties": {"path": {"type": "string"}}}}
]"#;

/// Item 6: two `read_text_file` calls for one `read_multiple_files` is a correct run a
/// reviewer passes; `per_item:` says so in one line.
#[test]
fn a_batch_step_is_done_by_one_call_per_item() {
    let c = suite(
        FILES,
        None,
        "scenarios:\n  - id: compare\n    turns:\n      - prompt: Compare /srv/a.md and /srv/b.md.\n        workflow:\n          - tool: read_multiple_files\n            arguments: { paths: [/srv/a.md, /srv/b.md] }\n            per_item: { tool: read_text_file, list: paths, as: path }\n",
    );
    let read = |p: &str| format!("  - tool: read_text_file\n    arguments: {{ path: {p} }}\n");
    let batch = eval(
        &c,
        "scenario: compare\ncalls:\n  - tool: read_multiple_files\n    arguments: { paths: [/srv/a.md, /srv/b.md] }\n",
    );
    assert_eq!(batch.verdict, Verdict::Pass, "{:#?}", batch.findings);
    let each = eval(
        &c,
        &format!(
            "scenario: compare\ncalls:\n{}{}",
            read("/srv/b.md"),
            read("/srv/a.md")
        ),
    );
    assert_eq!(each.verdict, Verdict::Pass, "{:#?}", each.findings);
    assert_eq!(each.score.unwrap().tc, 1.0);
    let one = eval(
        &c,
        &format!("scenario: compare\ncalls:\n{}", read("/srv/a.md")),
    );
    assert_eq!(one.verdict, Verdict::Fail);
    assert!(
        errors(&one).contains(&"oracle.missing_call"),
        "{:?}",
        errors(&one)
    );
}

/// Issue 30: `semantic` on a SQL parameter lets an UPDATE without its WHERE through, and the
/// mutation report says so by policy and parameter; the `sql` policy kills it.
#[test]
fn mutants_name_the_policy_that_let_them_through() {
    let cancel = |policy: &str| {
        format!(
            "scenarios:\n  - id: cancel\n    turns:\n      - prompt: Cancel order 1003.\n        workflow:\n          - tool: write_query\n            arguments: {{ query: \"UPDATE orders SET status = 'cancelled' WHERE id = 1003\" }}\n            match: {{ query: {policy} }}\n            mock_output: {{ content: [ {{ type: text, text: \"[{{'affected_rows': 1}}]\" }} ] }}\n"
        )
    };
    let weak = suite(PLAIN, Some(SQL_CAPS), &cancel("semantic"));
    let m = crate::check::mutate_suite(&weak.suite, &[]);
    let survivor = m
        .outcomes
        .iter()
        .find(|o| o.mutant.operator == crate::check::Operator::SqlDropWhere)
        .expect("an UPDATE without its WHERE");
    assert!(!survivor.killed, "{survivor:#?}");
    let why = survivor.why.as_deref().unwrap();
    assert!(why.contains("`semantic` on `/query`"), "{why}");
    assert!(m.score().unwrap() < 1.0);
    let strict = suite(PLAIN, Some(SQL_CAPS), &cancel("sql"));
    let m = crate::check::mutate_suite(&strict.suite, &[]);
    assert!(
        m.outcomes.iter().all(|o| o.killed),
        "{:#?}",
        m.outcomes.iter().filter(|o| !o.killed).collect::<Vec<_>>()
    );
    assert!(m.outcomes.len() >= 5, "{}", m.outcomes.len());
}
