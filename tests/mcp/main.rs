//! The MCP side: our stdio client against our mock server (`agent-seer serve`), against
//! servers that hang, crash or print garbage, against a paging server, and — when `.ci/run`
//! provides them inside a loopback-only namespace — against real servers from npm.

use std::path::PathBuf;
use std::time::Duration;

use agent_seer::check::{Suite, Verdict, evaluate};
use agent_seer::harness::Transcript;
use agent_seer::mcp::Client;
use serde_json::{Value, json};

pub(crate) fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

pub(crate) fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Runtime::new().unwrap()
}

pub(crate) fn bin() -> String {
    env!("CARGO_BIN_EXE_agent-seer").to_owned()
}

/// A scenario as the generation stage writes one (simple tier), for [`generate_against`].
pub(crate) fn scenario(title: &str, prompt: &str, calls: Vec<Value>) -> Value {
    json!({"title": title, "tier": "simple", "category": "c", "prompt": prompt,
        "agent_workflow": calls, "novelty_reason": "n", "agent_followup": "Thanks."})
}

/// A writing model scripted over the OpenAI wire format: it explains each tool and offers
/// `scenarios`; with a server, no other stage may ask it.
struct Writer {
    scenarios: Value,
}

impl wiremock::Respond for Writer {
    fn respond(&self, req: &wiremock::Request) -> wiremock::ResponseTemplate {
        let body: Value = serde_json::from_slice(&req.body).unwrap();
        let user = body["messages"][1]["content"].as_str().unwrap();
        let answer = match body["response_format"]["json_schema"]["name"]
            .as_str()
            .unwrap()
        {
            "tool_explanation" => {
                let tool = user
                    .lines()
                    .next()
                    .unwrap()
                    .trim_start_matches("Tool name: ");
                json!({"tool_name": tool, "what_it_does": "Does it.", "what_it_needs": "Its inputs.",
                    "why_its_used": "Work.", "enterprise_context": ["Operations"]})
            }
            "scenarios" => json!({"scenarios": self.scenarios}),
            other => panic!("with a server no {other} request is made"),
        };
        wiremock::ResponseTemplate::new(200).set_body_json(json!({"id": "chatcmpl-1", "object": "chat.completion", "model": "m-1",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": answer.to_string()}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 40, "completion_tokens": 12, "total_tokens": 52}}))
    }
}

/// `agent-seer generate --spec harnesses/<suite>.tools.json [extra…] --verify -o <dir>/harnesses
/// -- <server…>` with the scripted model offering `scenarios`; exits 0, gives the report.
pub(crate) async fn generate_against(
    dir: &std::path::Path,
    suite: &str,
    extra: &[&str],
    scenarios: Value,
    server: &[String],
) -> Value {
    let llm = wiremock::MockServer::start().await;
    wiremock::Mock::given(wiremock::matchers::method("POST"))
        .respond_with(Writer { scenarios })
        .mount(&llm)
        .await;
    let mut cmd = std::process::Command::new(bin());
    cmd.args([
        "generate",
        "--spec",
        &format!("harnesses/{suite}.tools.json"),
    ])
    .args(["--suite", &format!("{suite}-gen")])
    .args(extra)
    .args([
        "--llm",
        "openai:scripted",
        "--rounds",
        "1",
        "--verify",
        "-o",
    ])
    .arg(dir.join("harnesses"))
    .arg("--")
    .args(server)
    .current_dir(repo())
    .env("AGENT_SEER_OPENAI_BASE_URL", llm.uri())
    .env("AGENT_SEER_LLM_CACHE", dir.join("cache"))
    .env("OTEL_SDK_DISABLED", "true")
    .env_remove("AGENT_SEER_LLM");
    let o = tokio::task::spawn_blocking(move || cmd.output().unwrap())
        .await
        .unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{stdout}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_str(&stdout).unwrap()
}

fn args(a: &[&str]) -> Vec<String> {
    a.iter().map(|s| (*s).to_owned()).collect()
}

async fn start(
    program: &str,
    a: &[&str],
    timeout: Duration,
) -> Result<Client, agent_seer::mcp::McpError> {
    Client::start(program, &args(a), &[], timeout).await
}

#[test]
fn serve_advertises_the_harness_tools() {
    rt().block_on(async {
        let harness = repo().join("harnesses/veo.yaml");
        let mut c = start(
            &bin(),
            &["serve", harness.to_str().unwrap()],
            Duration::from_secs(10),
        )
        .await
        .unwrap();
        assert_eq!(c.info.as_ref().unwrap().name, "veo");
        let tools = c.list_tools().await.unwrap();
        let captured: Value = serde_json::from_str(
            &std::fs::read_to_string(repo().join("harnesses/veo.tools.json")).unwrap(),
        )
        .unwrap();
        assert_eq!(
            Value::Array(tools),
            captured,
            "the mock serves the captured tools/list unchanged"
        );
        c.close().await;
    });
}

/// A scripted session through `serve` records a transcript that grades exactly like the
/// hand-written transcripts of the same calls.
#[test]
fn recorded_sessions_grade_like_hand_written_transcripts() {
    let suite = Suite::load(&repo().join("harnesses/veo.yaml")).unwrap();
    for id in ["a0-correct", "a1-wrong-model-audio", "a6-wrong-param-names"] {
        let hand = Transcript::load(&repo().join(format!("transcripts/veo/{id}.yaml"))).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let record = dir.path().join(format!("{id}.yaml"));
        rt().block_on(async {
            let harness = repo().join("harnesses/veo.yaml");
            let mut c = start(
                &bin(),
                &[
                    "serve",
                    harness.to_str().unwrap(),
                    "--record",
                    record.to_str().unwrap(),
                ],
                Duration::from_secs(10),
            )
            .await
            .unwrap();
            for (_, call) in hand.calls() {
                let result = c.call_tool(&call.tool, call.arguments()).await.unwrap();
                assert!(
                    result.get("content").is_some(),
                    "a CallToolResult: {result}"
                );
            }
            c.close().await;
        });
        let recorded = Transcript::load(&record).unwrap();
        assert_eq!(
            recorded.scenario.as_deref(),
            hand.scenario.as_deref(),
            "{id}: the scenario is told from the calls"
        );
        let (a, b) = (
            evaluate(&suite, &hand).unwrap(),
            evaluate(&suite, &recorded).unwrap(),
        );
        assert_eq!(a.verdict, b.verdict, "{id}");
        // `serve` answers a call the server would reject with the server's error, where the
        // hand-written transcript records no output: only the recording can say the server
        // refused it (`oracle.step_undone`).
        let codes = |e: &agent_seer::check::Evaluation| {
            e.findings
                .iter()
                .filter(|f| f.code.to_string() != "oracle.step_undone")
                .map(|f| (f.code, f.pointer.clone()))
                .collect::<Vec<_>>()
        };
        assert_eq!(codes(&a), codes(&b), "{id}");
        assert!(
            (a.score.unwrap().tc - b.score.unwrap().tc).abs() < 1e-9,
            "{id}"
        );
        if id == "a0-correct" {
            assert_eq!(b.verdict, Verdict::Pass);
        }
    }
}

#[test]
fn serve_answers_rejected_and_unknown_calls_with_error_results() {
    rt().block_on(async {
        let harness = repo().join("harnesses/omni.yaml");
        let mut c = start(&bin(), &["serve", harness.to_str().unwrap()], Duration::from_secs(10)).await.unwrap();
        let r = c.call_tool("omni_video_generation", &json!({"prompt": "x", "top_p": 1.5})).await.unwrap();
        assert_eq!(r["isError"], true);
        assert!(r["content"][0]["text"].as_str().unwrap().contains("top_p"), "{r}");
        let e = c.call_tool("veo_t2v", &json!({"prompt": "x"})).await.unwrap_err();
        assert!(e.to_string().contains("Unknown tool: veo_t2v"), "{e}");
        let ok = c.call_tool("omni_video_generation", &json!({"prompt": "a dancer in a neon alley, ambient city sound", "model": "Omni", "gcs_bucket_uri": "mybucket/omni/"})).await.unwrap();
        assert_eq!(ok["content"][1]["uri"], "gs://mybucket/omni/omni_20261129120000_0.mp4");
        let err = c.request("resources/list", json!({})).await.unwrap_err();
        assert!(err.to_string().contains("Method not found: resources/list"), "{err}");
        c.close().await;
    });
}

#[test]
fn a_server_that_hangs_times_out_with_its_stderr() {
    rt().block_on(async {
        let err = start(
            "sh",
            &["-c", "echo 'loading model…' >&2; sleep 30"],
            Duration::from_millis(500),
        )
        .await
        .err()
        .unwrap();
        let text = err.to_string();
        assert!(
            text.contains("`initialize` got no answer within 500ms"),
            "{text}"
        );
        assert!(text.contains("loading model…"), "the stderr tail: {text}");
    });
}

#[test]
fn a_server_that_crashes() {
    rt().block_on(async {
        let err = start(
            "sh",
            &["-c", "echo 'fatal: no credentials' >&2; exit 3"],
            Duration::from_secs(5),
        )
        .await
        .err()
        .unwrap();
        let text = err.to_string();
        assert!(
            text.contains("the server exited (exit status: 3)"),
            "{text}"
        );
        assert!(text.contains("fatal: no credentials"), "{text}");
    });
}

#[test]
fn a_server_that_prints_garbage() {
    rt().block_on(async {
        let err = start(
            "sh",
            &[
                "-c",
                "read l; echo 'Starting server v1.2 on stdio...'; sleep 5",
            ],
            Duration::from_secs(5),
        )
        .await
        .err()
        .unwrap();
        assert!(err.to_string().contains("not JSON-RPC to stdout"), "{err}");
        assert!(err.to_string().contains("Starting server v1.2"), "{err}");
    });
}

#[test]
fn a_missing_program() {
    rt().block_on(async {
        let err = start("/nonexistent/mcp-server", &[], Duration::from_secs(5))
            .await
            .err()
            .unwrap();
        assert!(
            err.to_string()
                .contains("cannot start `/nonexistent/mcp-server`"),
            "{err}"
        );
    });
}

/// A server that pages its tools three at a time.
const PAGER: &str = r#"
import json, sys
tools = [{"name": f"t{i}", "inputSchema": {"type": "object"}} for i in range(7)]
for line in sys.stdin:
    m = json.loads(line)
    if "id" not in m: continue
    if m["method"] == "initialize":
        r = {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}}, "serverInfo": {"name": "pager", "version": "1"}}
    elif m["method"] == "tools/list":
        start = int((m.get("params") or {}).get("cursor") or 0)
        r = {"tools": tools[start:start + 3]}
        if start + 3 < len(tools): r["nextCursor"] = str(start + 3)
    else:
        r = {}
    print(json.dumps({"jsonrpc": "2.0", "id": m["id"], "result": r}), flush=True)
"#;

#[test]
fn tools_list_follows_next_cursor() {
    rt().block_on(async {
        let mut c = start("python3", &["-c", PAGER], Duration::from_secs(10))
            .await
            .unwrap();
        let names: Vec<String> = c
            .list_tools()
            .await
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_owned())
            .collect();
        assert_eq!(names, ["t0", "t1", "t2", "t3", "t4", "t5", "t6"]);
        c.close().await;
    });
}

#[test]
fn inspect_saves_and_profiles() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("tools.json");
    let o = std::process::Command::new(bin())
        .args([
            "inspect",
            "-o",
            out.to_str().unwrap(),
            "--",
            &bin(),
            "serve",
            repo().join("harnesses/lyria.yaml").to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("server    lyria ") && text.contains("tools     lyria_generate_music"),
        "{text}"
    );
    let saved: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let captured: Value = serde_json::from_str(
        &std::fs::read_to_string(repo().join("harnesses/lyria.tools.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(saved, captured);
}

/// `inspect -o` replaces its own capture (a re-capture in place) but never writes through a
/// link leading out of the folder, nor leaves half a capture behind.
#[test]
fn inspect_never_writes_through_a_link_out_of_its_folder() {
    let dir = tempfile::tempdir().unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    let target = elsewhere.path().join("victim.json");
    std::fs::write(&target, "keep me").unwrap();
    let out = dir.path().join("tools.json");
    std::os::unix::fs::symlink(&target, &out).unwrap();
    let inspect = || {
        std::process::Command::new(bin())
            .args([
                "inspect",
                "-o",
                out.to_str().unwrap(),
                "--",
                &bin(),
                "serve",
            ])
            .arg(repo().join("harnesses/lyria.yaml"))
            .output()
            .unwrap()
    };
    let o = inspect();
    assert_eq!(
        o.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep me");
    assert!(!dir.path().join("tools.server.json").exists());
    std::fs::remove_file(&out).unwrap();
    std::fs::write(&out, "an old capture").unwrap();
    let o = inspect();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(
        std::fs::read_to_string(&out)
            .unwrap()
            .contains("lyria_generate_music")
    );
}

mod faults;
mod generic;
mod generic_pypi;
mod hardening;
mod real;
mod sql;
mod twin;
