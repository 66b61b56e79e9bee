//! The generic npm servers the `memory` and `filesystem` suites grade
//! (`@modelcontextprotocol/server-memory`, `server-filesystem`, 2026.8.31), installed by
//! `.ci/mcp-e2e.sh` and started inside its loopback-only namespace with telemetry off
//! (`AGENT_SEER_NPM`). `inspect` against the real server must save exactly the shipped
//! `harnesses/<suite>.tools.json`: a server whose tools/list drifted from what the suite was
//! written against fails here (re-capture with `.ci/servers-npm.sh`, then review the diff).

use std::process::Command;

use super::*;

fn script(name: &str) -> String {
    let npm = std::env::var("AGENT_SEER_NPM").expect("AGENT_SEER_NPM: run through .ci/run");
    format!("{npm}/node_modules/@modelcontextprotocol/{name}/dist/index.js")
}

/// `agent-seer inspect` of `node <script> <args…>` with `env`, the saved tools.
fn inspect(script: &str, a: &[String], env: &[(&str, String)]) -> Value {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("tools.json");
    let mut cmd = Command::new(bin());
    cmd.args([
        "inspect",
        "-o",
        out.to_str().unwrap(),
        "--timeout",
        "60",
        "--",
        "node",
        script,
    ])
    .args(a);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let o = cmd.output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap()
}

fn shipped(suite: &str) -> Value {
    let path = repo().join(format!("harnesses/{suite}.tools.json"));
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn names(tools: &Value) -> Vec<&str> {
    tools
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect()
}

#[test]
#[ignore = "needs the npm servers that .ci/run installs (AGENT_SEER_NPM)"]
fn real_server_memory_matches_the_memory_suite() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("memory.jsonl").display().to_string();
    let saved = inspect(&script("server-memory"), &[], &[("MEMORY_FILE_PATH", file)]);
    assert_eq!(
        names(&saved),
        [
            "create_entities",
            "create_relations",
            "add_observations",
            "delete_entities",
            "delete_observations",
            "delete_relations",
            "read_graph",
            "search_nodes",
            "open_nodes"
        ]
    );
    assert_eq!(
        saved,
        shipped("memory"),
        "harnesses/memory.tools.json is what the server lists"
    );
}

#[test]
#[ignore = "needs the npm servers that .ci/run installs (AGENT_SEER_NPM)"]
fn real_server_filesystem_matches_the_filesystem_suite() {
    let root = tempfile::tempdir().unwrap();
    let saved = inspect(
        &script("server-filesystem"),
        &[root.path().display().to_string()],
        &[],
    );
    assert_eq!(names(&saved).len(), 14, "{:?}", names(&saved));
    assert_eq!(
        saved,
        shipped("filesystem"),
        "harnesses/filesystem.tools.json is what the server lists"
    );
}
