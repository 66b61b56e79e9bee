//! Real servers from PyPI: `mcp-server-git` and `mcp-server-time` 2026.10.19, installed by
//! `.ci/servers-pypi.sh` into a venv (`AGENT_SEER_PYPI_SERVERS` names it) and started inside a
//! loopback-only namespace with telemetry off (`.ci/mcp-e2e.sh`). Two kinds of drift fail here:
//! a `tools/list` that is no longer the shipped `harnesses/<suite>.tools.json`, and an answer
//! that is no longer a `mock_output` or transcript `output:` (`agent-seer ground --check`).

use std::path::{Path, PathBuf};
use std::process::Command;

use super::*;

/// The venv `.ci/servers-pypi.sh` prints as its last line.
fn venv() -> PathBuf {
    PathBuf::from(
        std::env::var("AGENT_SEER_PYPI_SERVERS")
            .expect("AGENT_SEER_PYPI_SERVERS: the venv .ci/servers-pypi.sh prints"),
    )
}

fn git_server(repo: &Path) -> (String, Vec<String>) {
    (
        venv().join("bin/mcp-server-git").display().to_string(),
        vec!["--repository".into(), repo.display().to_string()],
    )
}

fn time_server() -> (String, Vec<String>) {
    (
        venv().join("bin/mcp-server-time").display().to_string(),
        vec!["--local-timezone".into(), "UTC".into()],
    )
}

/// `agent-seer inspect` against the real server saves exactly the shipped tools/list; gives
/// what inspect printed.
pub(super) fn inspect_equals_shipped(program: &str, a: &[String], shipped: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("tools.json");
    let o = Command::new(bin())
        .args([
            "inspect",
            "-o",
            out.to_str().unwrap(),
            "--timeout",
            "60",
            "--",
            program,
        ])
        .args(a)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let saved: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let ours: Value =
        serde_json::from_str(&std::fs::read_to_string(repo().join(shipped)).unwrap()).unwrap();
    assert_eq!(
        saved, ours,
        "the real server's tools/list drifted from {shipped}: re-capture it (see the harness's header) and review the suite"
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
#[ignore = "needs the PyPI servers that .ci/servers-pypi.sh installs"]
fn real_git_tools_equal_the_shipped_spec() {
    let dir = tempfile::tempdir().unwrap();
    let repo_dir = dir.path().join("bookshop");
    let o = Command::new("bash")
        .arg(repo().join("harnesses/git.setup.sh"))
        .arg(&repo_dir)
        .arg("clean")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let (program, a) = git_server(&repo_dir);
    inspect_equals_shipped(&program, &a, "harnesses/git.tools.json");
}

#[test]
#[ignore = "needs the PyPI servers that .ci/servers-pypi.sh installs"]
fn real_time_tools_equal_the_shipped_spec() {
    let (program, a) = time_server();
    inspect_equals_shipped(&program, &a, "harnesses/time.tools.json");
}

/// A dual-era server slow to start (mcp 2.x importing under load, as on a busy CI machine)
/// misses the `server/discover` probe's 3 s, takes it late, and then refuses the handshake on
/// that connection: `inspect` asks again and speaks the stateless revision.
#[test]
#[ignore = "needs the PyPI servers that .ci/servers-pypi.sh installs"]
fn a_slow_stateless_server_is_not_taken_for_a_legacy_one() {
    let (program, a) = time_server();
    let script = format!("sleep 4; exec {program} {}", a.join(" "));
    let printed = inspect_equals_shipped(
        "sh",
        &["-c".to_owned(), script],
        "harnesses/time.tools.json",
    );
    assert!(
        printed.contains("(protocol 2026-07-28, modern)"),
        "{printed}"
    );
}

/// Every git mock and transcript output is the real server's answer (the hashes included), each
/// scenario on the repository `harnesses/git.setup.sh` builds afresh.
#[test]
#[ignore = "needs the PyPI servers that .ci/servers-pypi.sh installs"]
fn real_git_server_answers_what_the_git_suite_records() {
    let program = venv().join("bin/mcp-server-git").display().to_string();
    super::generic::assert_grounded(
        "git",
        &[program, "--repository".into(), "{scratch}/bookshop".into()],
    );
}

/// Every time mock and transcript output is the real server's answer, its clock frozen at the
/// capture's time (`ground.clock`, libfaketime).
#[test]
#[ignore = "needs the PyPI servers that .ci/servers-pypi.sh installs"]
fn real_time_server_answers_what_the_time_suite_records() {
    let (program, a) = time_server();
    let mut server = vec![program];
    server.extend(a);
    super::generic::assert_grounded("time", &server);
}

#[test]
#[ignore = "needs the PyPI servers that .ci/servers-pypi.sh installs"]
fn init_takes_mcp_server_gits_effects_from_its_annotations() {
    let dir = tempfile::tempdir().unwrap();
    let repo_dir = dir.path().join("bookshop");
    let o = Command::new("bash")
        .arg(repo().join("harnesses/git.setup.sh"))
        .arg(&repo_dir)
        .arg("clean")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let (program, a) = git_server(&repo_dir);
    let mut server = vec![program];
    server.extend(a);
    let (_dir, tools, caps) = super::generic::init(&server);
    assert_eq!(tools.len(), 12, "{tools:?}");
    super::generic::assert_effects_are_the_annotations(&tools, &caps);
}

/// Issue 30, item 4: `generate` with a server command takes its mocks from the real server
/// (`grounding: high`, no model asked for mocks) and drops the scenario the server refuses,
/// naming the step; `--verify` then keeps what the mutants cannot pass.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the PyPI servers that .ci/servers-pypi.sh installs"]
async fn generate_grounds_its_scenarios_in_the_real_server() {
    let call = |tool: &str, args: Value| json!({"function_name": tool, "parameters": args, "quick_explanation": "the call"});
    let scenarios = json!([
        super::scenario(
            "Tokyo now",
            "What time is it in Asia/Tokyo?",
            vec![call("get_current_time", json!({"timezone": "Asia/Tokyo"}))]
        ),
        super::scenario(
            "Standup in Kolkata",
            "Our standup is at 09:00 Asia/Tokyo; what is that in Asia/Kolkata?",
            vec![call(
                "convert_time",
                json!({"source_timezone": "Asia/Tokyo", "time": "09:00", "target_timezone": "Asia/Kolkata"})
            )]
        ),
        super::scenario(
            "Mars base",
            "What time is it in Mars/Olympus_Mons?",
            vec![call(
                "get_current_time",
                json!({"timezone": "Mars/Olympus_Mons"})
            )]
        ),
    ]);
    let (program, a) = time_server();
    let mut server = vec![program];
    server.extend(a);
    let dir = tempfile::tempdir().unwrap();
    let report = super::generate_against(dir.path(), "time", &[], scenarios, &server).await;
    let ground = &report["stages"]["ground"];
    assert_eq!(ground["produced"], 2, "{report}");
    let dropped = ground["dropped"].as_array().unwrap();
    assert_eq!(dropped.len(), 1, "{report}");
    let why = dropped[0].as_str().unwrap();
    assert!(
        why.starts_with("scenario `mars-base`, turn 1, step 1 (`get_current_time`): the server answered an error:"),
        "{why}"
    );
    assert!(why.contains("Mars/Olympus_Mons"), "{why}");
    assert!(report["stages"].get("mocks").is_none(), "{report}");
    assert_eq!(
        report["grounding"],
        json!({"high": 2, "medium": 0, "low": 0})
    );
    assert_eq!(
        report["verify"]["kept"],
        json!(["tokyo-now", "standup-in-kolkata"]),
        "{report}"
    );
    let suite = Suite::load(&dir.path().join("harnesses/time-gen.yaml")).unwrap();
    let step = |id: &str| suite.harness.scenario(id).unwrap().turns[0].workflow[0].clone();
    let standup = step("standup-in-kolkata");
    assert_eq!(
        standup.grounding,
        Some(agent_seer::harness::Grounding::High)
    );
    // The real conversion (zones without daylight saving): 09:00 in Tokyo is 05:30 in Kolkata.
    let text = standup.mock_output.as_ref().unwrap()["content"][0]["text"]
        .as_str()
        .unwrap();
    assert!(text.contains("\"time_difference\": \"-3.5h\""), "{text}");
    let tokyo = step("tokyo-now").mock_output.unwrap();
    assert_eq!(
        tokyo["structuredContent"]["timezone"], "Asia/Tokyo",
        "{tokyo}"
    );
}
