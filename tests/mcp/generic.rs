//! The generic npm servers the `memory` and `filesystem` suites grade
//! (`@modelcontextprotocol/server-memory`, `server-filesystem`, 2026.8.31), installed by
//! `.ci/mcp-e2e.sh` and started inside its loopback-only namespace with telemetry off
//! (`AGENT_SEER_NPM`). `inspect` against the real server must save exactly the shipped
//! `harnesses/<suite>.tools.json`: a server whose tools/list drifted from what the suite was
//! written against fails here (re-capture with `.ci/servers-npm.sh`, then review the diff).
//! And every mock and transcript `output:` must be what the real server answers, each scenario
//! from the starting state its harness's `ground:` declares (`agent-seer ground --check`), so
//! the suites' mocks stay the server's real answers.

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

/// `agent-seer ground HARNESS --check --transcripts -- SERVER…`: exit 0 when every mock and
/// recorded output is what the real server answers, from each scenario's set-up in the harness.
pub(crate) fn ground_check(harness: &std::path::Path, server: &[String]) -> std::process::Output {
    Command::new(bin())
        .args(["ground", "--check", "--transcripts", "--timeout", "60"])
        .arg(harness)
        .arg("--")
        .args(server)
        .current_dir(repo())
        .output()
        .unwrap()
}

pub(crate) fn assert_grounded(suite: &str, server: &[String]) {
    let o = ground_check(&repo().join(format!("harnesses/{suite}.yaml")), server);
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{suite}: the real server answers otherwise than the suite records:\n{stdout}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(stdout.contains(" 0 drifted, 0 refused"), "{stdout}");
}

/// Every memory mock and transcript output is the real server's answer, each scenario on a
/// fresh copy of the harness's graph (`ground.files`).
#[test]
#[ignore = "needs the npm servers that .ci/run installs (AGENT_SEER_NPM)"]
fn real_server_memory_answers_what_the_memory_suite_records() {
    assert_grounded("memory", &["node".into(), script("server-memory")]);
}

/// The same for the filesystem suite, on a fresh copy of its project (`/srv/project` in the
/// suite is the run's folder, both ways).
#[test]
#[ignore = "needs the npm servers that .ci/run installs (AGENT_SEER_NPM)"]
fn real_server_filesystem_answers_what_the_filesystem_suite_records() {
    assert_grounded(
        "filesystem",
        &[
            "node".into(),
            script("server-filesystem"),
            "{scratch}/project".into(),
        ],
    );
}

/// One edited mock is drift: `ground --check` exits 1 naming the step, its place and the
/// difference; without `--check` it writes the real answer back.
#[test]
#[ignore = "needs the npm servers that .ci/run installs (AGENT_SEER_NPM)"]
fn an_edited_mock_is_drift_named_by_its_step() {
    let dir = tempfile::tempdir().unwrap();
    let harnesses = dir.path().join("harnesses");
    std::fs::create_dir(&harnesses).unwrap();
    for f in ["memory.yaml", "memory.tools.json"] {
        std::fs::copy(repo().join("harnesses").join(f), harnesses.join(f)).unwrap();
    }
    let caps = dir.path().join("capabilities");
    std::fs::create_dir(&caps).unwrap();
    std::fs::copy(
        repo().join("capabilities/server-memory.yaml"),
        caps.join("server-memory.yaml"),
    )
    .unwrap();
    let harness = harnesses.join("memory.yaml");
    let text = std::fs::read_to_string(&harness).unwrap();
    let needle = "Wrote the first published algorithm for the Analytical Engine";
    let mock = text.find("\nscenarios:").unwrap();
    let at = mock + text[mock..].find(needle).unwrap();
    let edited = format!(
        "{}Wrote the second published algorithm{}",
        &text[..at],
        &text[at + "Wrote the first published algorithm".len()..]
    );
    std::fs::write(&harness, &edited).unwrap();
    let server = ["node".to_owned(), script("server-memory")];
    let o = Command::new(bin())
        .args(["ground", "--check", "--timeout", "60"])
        .arg(&harness)
        .arg("--")
        .args(&server)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{stdout}");
    let drift: Vec<&str> = stdout.lines().filter(|l| l.starts_with("drift")).collect();
    assert_eq!(drift.len(), 1, "{stdout}");
    // The step's place (where its mapping starts, above the edited line) and its name.
    let place = drift[0].split("memory.yaml:").nth(1).unwrap();
    let step_line: usize = place.split(':').next().unwrap().parse().unwrap();
    let edited_line = edited[..at].lines().count();
    assert!(step_line <= edited_line, "{stdout}");
    let step = edited.lines().nth(step_line - 1).unwrap().trim_start();
    assert!(
        step.trim_start_matches("- ")
            .starts_with("tool: read_graph"),
        "{step}\n{stdout}"
    );
    assert!(drift[0].contains("(`read_graph`)"), "{stdout}");
    assert!(
        drift[0].contains("scenario `") && drift[0].contains(", step "),
        "{stdout}"
    );
    assert!(
        stdout.contains("-") && stdout.contains("Wrote the second published algorithm"),
        "{stdout}"
    );
    // Grounding writes the server's answer back, and only there: the check passes again.
    let o = Command::new(bin())
        .args(["ground", "--timeout", "60"])
        .arg(&harness)
        .arg("--")
        .args(&server)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stdout));
    let after = std::fs::read_to_string(&harness).unwrap();
    assert!(!after.contains("second published"), "{after}");
    // One block rewritten as one line of JSON, at the step; every other line kept.
    let (old, new): (Vec<&str>, Vec<&str>) = (edited.lines().collect(), after.lines().collect());
    let prefix = old.iter().zip(&new).take_while(|(a, b)| a == b).count();
    let suffix = old
        .iter()
        .rev()
        .zip(new.iter().rev())
        .take_while(|(a, b)| a == b)
        .count();
    assert!(
        prefix >= step_line && prefix + suffix + 1 == new.len(),
        "{prefix} {suffix} {}",
        new.len()
    );
    assert!(
        new[prefix].trim_start().starts_with("mock_output: {"),
        "{}",
        new[prefix]
    );
    let o = ground_check(&harness, &server);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stdout));
}

/// `agent-seer init --suite s -- SERVER…` in a fresh project: the captured tools and the
/// scaffold, loaded as a capability matrix.
pub(crate) fn init(server: &[String]) -> (tempfile::TempDir, Vec<Value>, agent_seer::Capabilities) {
    let dir = tempfile::tempdir().unwrap();
    let o = Command::new(bin())
        .args(["init", "--suite", "s", "--timeout", "60", "--root"])
        .arg(dir.path())
        .arg("--")
        .args(server)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(
        o.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        stdout.contains("agent-seer ground harnesses/s.yaml -- "),
        "{stdout}"
    );
    let tools: Vec<Value> = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("harnesses/s.tools.json")).unwrap(),
    )
    .unwrap();
    let caps = agent_seer::Capabilities::load(&dir.path().join("capabilities/s.yaml")).unwrap();
    (dir, tools, caps)
}

/// Every tool's scaffolded effects are exactly its annotations, and none is marked proposed.
pub(crate) fn assert_effects_are_the_annotations(tools: &[Value], caps: &agent_seer::Capabilities) {
    assert!(!tools.is_empty());
    assert!(caps.unreviewed().is_empty(), "{:?}", caps.unreviewed());
    for t in tools {
        let name = t["name"].as_str().unwrap();
        let a = &t["annotations"];
        let e = &caps.tools[name].effects;
        assert_eq!(e.len(), 1, "{name}");
        let hint = |k: &str| a.get(k).and_then(Value::as_bool);
        assert_eq!(e[0].read_only, hint("readOnlyHint"), "{name}");
        assert_eq!(e[0].destructive, hint("destructiveHint"), "{name}");
        assert_eq!(e[0].idempotent, hint("idempotentHint"), "{name}");
        assert_eq!(e[0].open_world, hint("openWorldHint"), "{name}");
    }
}

#[test]
#[ignore = "needs the npm servers that .ci/run installs (AGENT_SEER_NPM)"]
fn init_takes_server_memorys_effects_from_its_annotations() {
    let (_dir, tools, caps) = init(&["node".into(), script("server-memory")]);
    assert_eq!(tools.len(), 9);
    assert_effects_are_the_annotations(&tools, &caps);
    // The relation's ends name entities that must exist.
    assert_eq!(
        caps.tools["create_relations"].inputs,
        ["/relations/*/from", "/relations/*/to"]
    );
}
