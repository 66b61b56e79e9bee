//! Real SQL servers from PyPI: `mcp-server-duckdb` 1.1.0 and `mcp-server-sqlite` 2025.4.25,
//! installed by `.ci/servers-sql.sh` into a venv (`AGENT_SEER_SQL_SERVERS` names it) and started
//! inside a loopback-only namespace with telemetry off (`.ci/mcp-e2e.sh`). Two kinds of drift
//! fail here: a `tools/list` that is no longer the shipped `harnesses/<suite>.tools.json`, and
//! an answer that is no longer the `mock_output` or `output:` the suite recorded from the real
//! server (each scenario and transcript replayed on a fresh fixture database by
//! `tests/fixtures/duckdb/client.py check`).

use std::path::PathBuf;
use std::process::Command;

use super::generic_pypi::inspect_equals_shipped;
use super::*;

/// The venv `.ci/servers-sql.sh` prints as its last line.
fn venv() -> PathBuf {
    PathBuf::from(
        std::env::var("AGENT_SEER_SQL_SERVERS")
            .expect("AGENT_SEER_SQL_SERVERS: the venv .ci/servers-sql.sh prints"),
    )
}

fn inspect(suite: &str, server: &str, db: &str) {
    let dir = tempfile::tempdir().unwrap();
    let program = venv().join("bin").join(server);
    let args = vec![
        "--db-path".to_owned(),
        dir.path().join(db).to_string_lossy().into_owned(),
    ];
    inspect_equals_shipped(
        program.to_str().unwrap(),
        &args,
        &format!("harnesses/{suite}.tools.json"),
    );
}

/// `client.py check` replays the harness's steps and every transcript's calls on the real
/// server and exits 1, naming the file and call, on any answer that differs.
fn replay(suite: &str) {
    let files: Vec<String> = std::fs::read_dir(repo().join("transcripts").join(suite))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    assert!(files.len() >= 20, "{suite}: {} transcripts", files.len());
    let o = Command::new(venv().join("bin/python"))
        .arg(repo().join("tests/fixtures/duckdb/client.py"))
        .args(["--suite", suite, "check"])
        .arg(repo().join(format!("harnesses/{suite}.yaml")))
        .args(&files)
        .current_dir(repo())
        .env("OTEL_SDK_DISABLED", "true")
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "{suite}: the real server answers differently from the suite:\n{}\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
#[ignore = "needs the PyPI servers that .ci/servers-sql.sh installs"]
fn real_duckdb_tools_equal_the_shipped_spec() {
    inspect("duckdb", "mcp-server-duckdb", "shop.duckdb");
}

#[test]
#[ignore = "needs the PyPI servers that .ci/servers-sql.sh installs"]
fn real_sqlite_tools_equal_the_shipped_spec() {
    inspect("sqlite", "mcp-server-sqlite", "library.db");
}

#[test]
#[ignore = "needs the PyPI servers that .ci/servers-sql.sh installs"]
fn duckdb_answers_are_the_recorded_ones() {
    replay("duckdb");
}

#[test]
#[ignore = "needs the PyPI servers that .ci/servers-sql.sh installs"]
fn sqlite_answers_are_the_recorded_ones() {
    replay("sqlite");
}

/// A server without annotations (mcp-server-sqlite): every tool's effects are proposed from its
/// name and marked for review, the SQL parameters are proposed as `sql`, and the effects match
/// what the hand-reviewed matrix of the shipped suite says where the name tells.
#[test]
#[ignore = "needs the PyPI servers that .ci/servers-sql.sh installs"]
fn init_proposes_effects_for_a_server_without_annotations() {
    let db = tempfile::tempdir().unwrap();
    let program = venv().join("bin/mcp-server-sqlite").display().to_string();
    let server = vec![
        program,
        "--db-path".into(),
        db.path().join("x.db").display().to_string(),
    ];
    let (_dir, tools, caps) = super::generic::init(&server);
    assert_eq!(tools.len(), 6);
    let open = caps.unreviewed();
    assert_eq!(open.len(), 6, "{open:?}");
    let reviewed =
        agent_seer::Capabilities::load(&repo().join("capabilities/mcp-server-sqlite.yaml"))
            .unwrap();
    for tool in [
        "list_tables",
        "describe_table",
        "read_query",
        "create_table",
        "append_insight",
    ] {
        let (got, want) = (
            &caps.tools[tool].effects[0],
            &reviewed.tools[tool].effects[0],
        );
        assert_eq!(got.read_only, want.read_only, "{tool}");
        assert_eq!(got.destructive, want.destructive, "{tool}");
    }
    assert_eq!(caps.tools["read_query"].sql, ["query"]);
    assert_eq!(caps.tools["describe_table"].inputs, ["table_name"]);
}

/// A server that answers errors as plain text (mcp-server-sqlite: `Error: no such table: …`,
/// no `isError`): `generate` against it drops the scenario whose oracle the server refused,
/// as the linter reads a refusal (the matrix's `errors:` and the common error texts), and keeps
/// the other with the server's real answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the PyPI servers that .ci/servers-sql.sh installs"]
async fn generate_drops_an_oracle_the_server_refuses_in_plain_text() {
    let call = |tool: &str, args: Value| json!({"function_name": tool, "parameters": args, "quick_explanation": "the call"});
    let scenarios = json!([
        super::scenario(
            "Tables",
            "Which tables does the database have?",
            vec![call("list_tables", json!({}))]
        ),
        super::scenario(
            "Overdue",
            "Read every row of the table overdue_loans.",
            vec![call(
                "read_query",
                json!({"query": "SELECT * FROM overdue_loans"})
            )]
        ),
    ]);
    let program = venv().join("bin/mcp-server-sqlite").display().to_string();
    let server = [program, "--db-path".into(), "{scratch}/x.db".into()];
    let dir = tempfile::tempdir().unwrap();
    let caps = ["--caps", "capabilities/mcp-server-sqlite.yaml"];
    let report = super::generate_against(dir.path(), "sqlite", &caps, scenarios, &server).await;
    let ground = &report["stages"]["ground"];
    assert_eq!(ground["produced"], 1, "{report}");
    let dropped = ground["dropped"].as_array().unwrap();
    assert_eq!(dropped.len(), 1, "{report}");
    let why = dropped[0].as_str().unwrap();
    assert!(
        why.starts_with(
            "scenario `overdue`, turn 1, step 1 (`read_query`): the server answered an error:"
        ),
        "{why}"
    );
    assert!(why.contains("no such table: overdue_loans"), "{why}");
    assert!(
        !why.contains("\"isError\": true"),
        "a plain-text refusal: {why}"
    );
    assert_eq!(report["verify"]["kept"], json!(["tables"]), "{report}");
}
