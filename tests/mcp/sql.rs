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
