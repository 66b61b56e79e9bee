//! The generic npm servers the `memory` and `filesystem` suites grade
//! (`@modelcontextprotocol/server-memory`, `server-filesystem`, 2026.8.31), installed by
//! `.ci/mcp-e2e.sh` and started inside its loopback-only namespace with telemetry off
//! (`AGENT_SEER_NPM`). `inspect` against the real server must save exactly the shipped
//! `harnesses/<suite>.tools.json`: a server whose tools/list drifted from what the suite was
//! written against fails here (re-capture with `.ci/servers-npm.sh`, then review the diff).
//! And every transcript's recorded `output:` must be what the real server answers to its calls,
//! replayed from the scenario's starting state (`harnesses/memory.graph.json`,
//! `harnesses/filesystem.tree.json`), so the suites' mocks stay the server's real answers.

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

/// One stdio session with a real server, without our client: initialize, then each call's
/// `tools/call` in order; the results as the server sent them.
fn session(
    program: &str,
    a: &[String],
    env: &[(&str, String)],
    calls: &[(String, Value)],
) -> Vec<Value> {
    use std::io::{BufRead, BufReader, Write};
    use std::process::Stdio;
    let mut cmd = Command::new(program);
    cmd.args(a)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut answer = |id: u64| -> Value {
        lines
            .find_map(|l| {
                let v: Value = serde_json::from_str(&l.ok()?).ok()?;
                (v["id"] == id).then_some(v)
            })
            .unwrap_or_else(|| panic!("no answer to request {id}"))
    };
    let mut send = |m: Value| writeln!(stdin, "{m}").unwrap();
    send(
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}}),
    );
    answer(0);
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let mut results = Vec::new();
    for (i, (tool, arguments)) in calls.iter().enumerate() {
        let id = i as u64 + 1;
        send(
            json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": tool, "arguments": arguments}}),
        );
        let a = answer(id);
        results.push(
            a.get("result")
                .cloned()
                .unwrap_or_else(|| a["error"].clone()),
        );
    }
    let _ = child.kill();
    let _ = child.wait();
    results
}

/// Every string in `v` with `from` replaced by `to`.
pub(crate) fn rebase(v: &Value, from: &str, to: &str) -> Value {
    match v {
        Value::String(s) => Value::String(s.replace(from, to)),
        Value::Array(a) => Value::Array(a.iter().map(|x| rebase(x, from, to)).collect()),
        Value::Object(o) => Value::Object(
            o.iter()
                .map(|(k, x)| (k.clone(), rebase(x, from, to)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// Replays every transcript of `suite` against a fresh server (`start` prepares its state for
/// the transcript's scenario and returns the command, its environment and the path prefix the
/// recorded outputs use with the one this run uses) and asserts each recorded `output:` is what
/// the real server answers now.
fn replay(
    suite: &str,
    start: impl Fn(
        &str,
        &std::path::Path,
    ) -> (
        Vec<String>,
        Vec<(&'static str, String)>,
        Option<(String, String)>,
    ),
) {
    let dir = repo().join("transcripts").join(suite);
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    files.sort();
    assert!(files.len() >= 12, "{files:?}");
    for file in files {
        let t = Transcript::load(&file).unwrap();
        let scenario = t.scenario.clone().unwrap();
        let scratch = tempfile::tempdir().unwrap();
        let (a, env, rebase_paths) = start(&scenario, scratch.path());
        let (from, to) = rebase_paths.unwrap_or_default();
        let calls: Vec<(String, Value)> = t
            .calls()
            .map(|(_, c)| (c.tool.clone(), rebase(&c.arguments, &from, &to)))
            .collect();
        let got = session("node", &a, &env, &calls);
        for ((_, call), got) in t.calls().zip(got) {
            let recorded = call.output.as_ref().unwrap_or_else(|| {
                panic!(
                    "{}: call `{}` has no recorded output",
                    file.display(),
                    call.tool
                )
            });
            assert_eq!(
                rebase(recorded, &from, &to),
                got,
                "{}: `{}` answers otherwise now",
                file.display(),
                call.tool
            );
        }
    }
}

#[test]
#[ignore = "needs the npm servers that .ci/run installs (AGENT_SEER_NPM)"]
fn real_server_memory_answers_what_the_memory_transcripts_recorded() {
    let start: Value = serde_json::from_str(
        &std::fs::read_to_string(repo().join("harnesses/memory.graph.json")).unwrap(),
    )
    .unwrap();
    replay("memory", |scenario, scratch| {
        let file = scratch.join("memory.jsonl");
        let empty = start["empty_for"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s == scenario);
        if !empty {
            let mut lines = Vec::new();
            for e in start["entities"].as_array().unwrap() {
                let mut e = e.clone();
                e["type"] = json!("entity");
                lines.push(e.to_string());
            }
            for r in start["relations"].as_array().unwrap() {
                let mut r = r.clone();
                r["type"] = json!("relation");
                lines.push(r.to_string());
            }
            std::fs::write(&file, lines.join("\n")).unwrap();
        }
        (
            vec![script("server-memory")],
            vec![("MEMORY_FILE_PATH", file.display().to_string())],
            None,
        )
    });
}

#[test]
#[ignore = "needs the npm servers that .ci/run installs (AGENT_SEER_NPM)"]
fn real_server_filesystem_answers_what_the_filesystem_transcripts_recorded() {
    let tree: Value = serde_json::from_str(
        &std::fs::read_to_string(repo().join("harnesses/filesystem.tree.json")).unwrap(),
    )
    .unwrap();
    replay("filesystem", |_, scratch| {
        let root = scratch.canonicalize().unwrap().join("project");
        for (name, text) in tree["files"].as_object().unwrap() {
            let path = root.join(name);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text.as_str().unwrap()).unwrap();
        }
        for d in tree["empty_dirs"].as_array().unwrap() {
            std::fs::create_dir_all(root.join(d.as_str().unwrap())).unwrap();
        }
        let recorded = tree["root"].as_str().unwrap().to_owned();
        (
            vec![script("server-filesystem"), root.display().to_string()],
            // `~` in a path is the server's HOME: the transcripts were recorded with /root.
            vec![("HOME", "/root".to_owned())],
            Some((recorded, root.display().to_string())),
        )
    });
}
