//! Generation stage 1 against a scripted LLM: validated records, a retry with the problem fed
//! back, and a hallucinated tool name dropped and counted.

use agent_seer::check::Suite;
use agent_seer::generate::Generator;
use agent_seer::spec::{Capabilities, ToolSet};
use wiremock::{Request as WireRequest, Respond};

use super::*;

struct Interpreter;

impl Respond for Interpreter {
    fn respond(&self, req: &WireRequest) -> ResponseTemplate {
        let body: Value = serde_json::from_slice(&req.body).unwrap();
        let user = body["messages"][1]["content"].as_str().unwrap();
        let tool = user
            .lines()
            .next()
            .unwrap()
            .trim_start_matches("Tool name: ")
            .to_owned();
        let retry = user.contains("previous answer was rejected");
        let name = match tool.as_str() {
            // Always a name that is not in the spec.
            "veo_extend_video" => "veo_extend".to_owned(),
            // Wrong once, right when told.
            "veo_i2v" if !retry => "veo_image_to_video".to_owned(),
            other => other.to_owned(),
        };
        let answer = json!({"tool_name": name, "what_it_does": "Makes a video.", "what_it_needs": "A prompt.", "why_its_used": "Ads.",
            "enterprise_context": ["Media Production"]});
        ResponseTemplate::new(200).set_body_json(openai_body(&answer.to_string()))
    }
}

/// `agent-seer generate … --llm openai:scripted --verify -o <dir>/harnesses` from the
/// repository root against `server`, its cache under `dir`.
async fn generate(server: &MockServer, dir: &Path, args: &[&str]) -> std::process::Output {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_agent-seer"));
    cmd.arg("generate")
        .args(args)
        .args(["--llm", "openai:scripted", "--verify", "-o"])
        .arg(dir.join("harnesses"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("AGENT_SEER_OPENAI_BASE_URL", server.uri())
        .env("AGENT_SEER_LLM_CACHE", dir.join("cache"))
        .env_remove("AGENT_SEER_LLM");
    tokio::task::spawn_blocking(move || cmd.output().unwrap())
        .await
        .unwrap()
}

#[tokio::test]
async fn interpret_validates_retries_and_drops() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(Interpreter)
        .mount(&server)
        .await;
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let spec = ToolSet::load(&root.join("harnesses/veo.tools.json")).unwrap();
    let caps = vec![Capabilities::load(&root.join("capabilities/mcp-veo-go.yaml")).unwrap()];
    let (_dir, c) = live_openai(&server);
    let mut g = Generator::new(&c, &spec, &caps);
    let records = g.interpret().await.unwrap();
    let names: Vec<&str> = records.iter().map(|r| r.tool_name.as_str()).collect();
    assert_eq!(
        names,
        [
            "veo_first_last_to_video",
            "veo_i2v",
            "veo_ingredients_to_video",
            "veo_reference_to_video",
            "veo_t2v"
        ]
    );
    let stage = &g.report.stages["interpret"];
    assert_eq!(stage.produced, 5);
    assert_eq!(stage.retried, 1, "veo_i2v needed a second attempt");
    assert_eq!(stage.dropped.len(), 1);
    assert!(
        stage.dropped[0]
            .starts_with("veo_extend_video: tool_name must be exactly `veo_extend_video`"),
        "{:?}",
        stage.dropped
    );
    // 4 tools × 1 + veo_i2v × 2 + veo_extend_video × 3.
    let reqs = server.received_requests().await.unwrap();
    assert_eq!(reqs.len(), 4 + 2 + 3);
    // The schema sent allows the asked tool's name alone: a provider that decodes under it
    // cannot misspell the name (the check above catches one that does not).
    for r in &reqs {
        let body: Value = serde_json::from_slice(&r.body).unwrap();
        let user = body["messages"][1]["content"].as_str().unwrap();
        let asked = user
            .lines()
            .next()
            .unwrap()
            .trim_start_matches("Tool name: ");
        let schema = &body["response_format"]["json_schema"]["schema"];
        assert_eq!(
            schema["properties"]["tool_name"]["enum"],
            json!([asked]),
            "{schema}"
        );
    }
}

/// A run where every interpretation is dropped writes its report, says on stderr that the
/// harness holds nothing, and exits 1: an empty harness is no success.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_generation_that_keeps_nothing_exits_1_with_its_report() {
    let server = MockServer::start().await;
    let wrong = json!({"tool_name": "The Weather App", "what_it_does": "x", "what_it_needs": "y",
        "why_its_used": "z", "enterprise_context": ["Travel"]});
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_json(openai_body(&wrong.to_string())))
        .mount(&server)
        .await;
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("harnesses");
    let o = generate(
        &server,
        dir.path(),
        &["--spec", "harnesses/lyria.tools.json", "--suite", "empty"],
    )
    .await;
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    let report: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(report["scenarios"], 0);
    let dropped = report["stages"]["interpret"]["dropped"].as_array().unwrap();
    assert_eq!(dropped.len(), 1, "{report}");
    assert!(
        dropped[0]
            .as_str()
            .unwrap()
            .contains("not `The Weather App`"),
        "{report}"
    );
    let last = stderr
        .lines()
        .last()
        .unwrap_or_default()
        .replace(out.to_str().unwrap(), "[out]");
    insta::assert_snapshot!(last, @"error: nothing written to [out]/empty.yaml: no scenario survived generation; the report's `stages` and `verify` say what was dropped and why");
    // An empty harness is not written (nor its tools, nor a staging directory left behind).
    assert_eq!(report["harness"], Value::Null);
    assert_eq!(files_in(&out), Vec::<String>::new());
}

/// The file names under `dir` (hidden ones too), sorted; none for a missing directory.
fn files_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|r| {
            r.map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

/// `generate … -o <out>` against `server`, its cache under `dir`, from the repository root.
async fn generate_into(
    server: &MockServer,
    dir: &Path,
    out: &Path,
    args: &[&str],
) -> std::process::Output {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_agent-seer"));
    cmd.arg("generate")
        .args(args)
        .args(["--llm", "openai:scripted", "--verify", "-o"])
        .arg(out)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("AGENT_SEER_OPENAI_BASE_URL", server.uri())
        .env("AGENT_SEER_LLM_CACHE", dir.join("cache"))
        .env_remove("AGENT_SEER_LLM");
    tokio::task::spawn_blocking(move || cmd.output().unwrap())
        .await
        .unwrap()
}

/// `generate -o harnesses` over a hand-written harness, with `--spec` and `--caps` inside `-o`:
/// without `--force` it is refused before any model is asked; with `--force`, a run that keeps
/// nothing still writes nothing; and a matrix already inside `-o` is never copied onto itself
/// (it became 0 bytes; issue 18, item 1).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn generate_never_destroys_the_users_files() {
    let server = MockServer::start().await;
    let wrong = json!({"tool_name": "The Weather App", "what_it_does": "x", "what_it_needs": "y",
        "why_its_used": "z", "enterprise_context": ["Travel"]});
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_json(openai_body(&wrong.to_string())))
        .mount(&server)
        .await;
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("harnesses");
    std::fs::create_dir_all(&out).unwrap();
    let mine = [
        ("lyria.yaml", root.join("harnesses/lyria.yaml")),
        ("lyria.tools.json", root.join("harnesses/lyria.tools.json")),
        (
            "mcp-lyria-go.yaml",
            root.join("capabilities/mcp-lyria-go.yaml"),
        ),
    ];
    for (name, from) in &mine {
        std::fs::copy(from, out.join(name)).unwrap();
    }
    let snapshot = || -> Vec<(String, Vec<u8>)> {
        files_in(&out)
            .into_iter()
            .map(|n| {
                let bytes = std::fs::read(out.join(&n)).unwrap();
                (n, bytes)
            })
            .collect()
    };
    let before = snapshot();
    let (spec, caps) = (out.join("lyria.tools.json"), out.join("mcp-lyria-go.yaml"));
    let args = [
        "--spec",
        spec.to_str().unwrap(),
        "--caps",
        caps.to_str().unwrap(),
        "--suite",
        "lyria",
    ];
    let o = generate_into(&server, dir.path(), &out, &args).await;
    let stderr = String::from_utf8_lossy(&o.stderr).replace(dir.path().to_str().unwrap(), "[dir]");
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    insta::assert_snapshot!(stderr.trim_end(), @r#"
    error: would overwrite [dir]/harnesses/lyria.yaml, which the run did not write; nothing was written (--force overwrites)
      --> [dir]/harnesses
    "#);
    assert_eq!(server.received_requests().await.unwrap().len(), 0);
    assert_eq!(snapshot(), before);
    // With --force, a run that keeps nothing replaces nothing.
    let mut forced = args.to_vec();
    forced.push("--force");
    let o = generate_into(&server, dir.path(), &out, &forced).await;
    assert_eq!(
        o.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(!server.received_requests().await.unwrap().is_empty());
    assert_eq!(snapshot(), before);
}

/// A `--suite` that is no plain file name is refused before any model is asked, naming it,
/// and nothing is written (`--suite ../../x` wrote two levels up; issue 18, item 2).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_suite_name_that_is_no_file_name_is_refused() {
    let server = MockServer::start().await;
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("a/b/out");
    let mut rendered = Vec::new();
    for suite in ["../../x", "/abs/x", "", "x\u{7}"] {
        let o = generate_into(
            &server,
            dir.path(),
            &out,
            &["--spec", "harnesses/lyria.tools.json", "--suite", suite],
        )
        .await;
        let stderr =
            String::from_utf8_lossy(&o.stderr).replace(dir.path().to_str().unwrap(), "[dir]");
        assert_eq!(o.status.code(), Some(2), "{stderr}");
        rendered.push(stderr);
    }
    insta::assert_snapshot!(rendered.join("---\n"));
    assert_eq!(server.received_requests().await.unwrap().len(), 0);
    assert!(
        files_in(dir.path()).iter().all(|n| n == "cache"),
        "{:?}",
        files_in(dir.path())
    );
}

/// A matrix and a spec already inside `-o` stay as they are when the run succeeds: the harness
/// references them where they lie (the matrix was copied onto itself and became 0 bytes).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_matrix_inside_the_output_is_never_copied_onto_itself() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(Pipeline)
        .mount(&server)
        .await;
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("harnesses");
    std::fs::create_dir_all(&out).unwrap();
    let (spec, caps) = (out.join("veo.tools.json"), out.join("mcp-veo-go.yaml"));
    std::fs::copy(root.join("harnesses/veo.tools.json"), &spec).unwrap();
    std::fs::copy(root.join("capabilities/mcp-veo-go.yaml"), &caps).unwrap();
    let matrix = std::fs::read(&caps).unwrap();
    let o = generate_into(
        &server,
        dir.path(),
        &out,
        &[
            "--spec",
            spec.to_str().unwrap(),
            "--caps",
            caps.to_str().unwrap(),
            "--suite",
            "veo-gen",
        ],
    )
    .await;
    let report = json_stdout(&o);
    assert_eq!(std::fs::read(&caps).unwrap(), matrix);
    assert_eq!(
        files_in(&out),
        [
            "mcp-veo-go.yaml",
            "veo-gen.tools.json",
            "veo-gen.yaml",
            "veo.tools.json"
        ]
    );
    let suite = Suite::load(&out.join("veo-gen.yaml")).unwrap();
    assert_eq!(
        suite.harness.scenarios.len(),
        report["verify"]["kept"].as_array().unwrap().len()
    );
}

/// The gs:// values among a call's arguments (what the user must give in the prompt).
fn uris(params: &Value) -> String {
    let mut out = Vec::new();
    for v in params.as_object().unwrap().values() {
        match v {
            Value::String(s) if s.starts_with("gs://") => out.push(s.clone()),
            Value::Array(items) => {
                out.extend(items.iter().filter_map(|i| i.as_str()).map(str::to_owned))
            }
            _ => {}
        }
    }
    out.join(", ")
}

/// Answers a scenarios request with one simple scenario per offered tool, at most eight an
/// answer (a model that stalls, as the paper's did on 64 tools), so only the coverage loop
/// reaches every tool.
struct Writer;

impl Respond for Writer {
    fn respond(&self, req: &WireRequest) -> ResponseTemplate {
        let body: Value = serde_json::from_slice(&req.body).unwrap();
        let user = body["messages"][1]["content"].as_str().unwrap();
        let offered: Vec<&str> = user
            .lines()
            .filter_map(|l| l.strip_prefix("- "))
            .map(|l| l.split(':').next().unwrap())
            .collect();
        let retry = user.contains("previous answer was rejected");
        let scenarios: Vec<Value> = offered
            .iter()
            .take(8)
            .map(|tool| {
                let (name, params) = match *tool {
                    // A hallucinated name, fixed when told.
                    "veo_i2v" if !retry => ("veo_image2video", json!({"image_uri": "gs://b/a.png"})),
                    "veo_i2v" => ("veo_i2v", json!({"image_uri": "gs://b/a.png", "model": "veo-3.1-generate-001"})),
                    // A call the linter always rejects (veo-2.0 with audio on): dropped.
                    "veo_t2v" => ("veo_t2v", json!({"prompt": "p", "model": "veo-2.0-generate-001", "generate_audio": true})),
                    "veo_extend_video" => ("veo_extend_video", json!({"video_uri": "gs://b/v.mp4", "model": "veo-3.1-lite-generate-001"})),
                    "veo_first_last_to_video" => ("veo_first_last_to_video", json!({"first_image_uri": "gs://b/a.png", "last_image_uri": "gs://b/z.png", "model": "veo-3.1-generate-001"})),
                    "veo_reference_to_video" | "veo_ingredients_to_video" => (*tool, json!({"prompt": "p", "reference_image_uris": ["gs://b/r.png"], "model": "veo-3.1-generate-preview"})),
                    other => (other, json!({"x": "v"})),
                };
                json!({"title": format!("use {tool}"), "tier": "simple", "category": "c", "prompt": format!("please use {tool} with {}", uris(&params)),
                    "agent_workflow": [{"function_name": name, "parameters": params, "quick_explanation": "because"}],
                    "novelty_reason": "n", "agent_followup": "f"})
            })
            .collect();
        ResponseTemplate::new(200)
            .set_body_json(openai_body(&json!({"scenarios": scenarios}).to_string()))
    }
}

fn explanation(name: &str) -> agent_seer::generate::interpret::ToolExplanation {
    agent_seer::generate::interpret::ToolExplanation {
        tool_name: name.into(),
        what_it_does: "d".into(),
        what_it_needs: "n".into(),
        why_its_used: "w".into(),
        enterprise_context: vec!["Ops".into()],
    }
}

#[tokio::test]
async fn coverage_loop_reaches_every_tool_of_a_64_tool_spec() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(Writer)
        .mount(&server)
        .await;
    let tools: Vec<Value> = (0..64)
        .map(|i| json!({"name": format!("t{i:02}"), "inputSchema": {"type": "object", "properties": {"x": {"type": "string"}}, "required": ["x"]}}))
        .collect();
    let spec = ToolSet::from_json(&Value::Array(tools)).unwrap();
    let linter = agent_seer::lint::Linter::new(&spec, vec![]).unwrap();
    let records: Vec<_> = spec.tools().iter().map(|t| explanation(&t.name)).collect();
    let (_dir, c) = live_openai(&server);
    let mut g = Generator::new(&c, &spec, &[]);
    let plan = agent_seer::generate::scenarios::Plan {
        simple: 3,
        complex: 0,
        rounds: 5,
        batch: 12,
    };
    let (scenarios, cov) = g.scenarios(&records, &linter, plan).await.unwrap();
    assert_eq!((cov.covered, cov.tools), (64, 64), "{:?}", cov.uncovered);
    assert!(cov.gini < 0.2, "{}", cov.gini);
    assert!(scenarios.len() >= 64);
    // Round 1: 6 batches of ≤12 (48 covered), round 2: 16 left in 2 batches, round 3: 4 left.
    let reqs = server.received_requests().await.unwrap();
    assert_eq!(reqs.len(), 6 + 2 + 1);
    // Each request's schema allows the tools it offers and no other, each call's parameters
    // under that tool's input schema.
    for r in &reqs {
        let body: Value = serde_json::from_slice(&r.body).unwrap();
        let user = body["messages"][1]["content"].as_str().unwrap();
        let offered: Vec<&str> = user
            .lines()
            .filter_map(|l| l.strip_prefix("- "))
            .map(|l| l.split(':').next().unwrap())
            .collect();
        let calls = body["response_format"]["json_schema"]["schema"]["properties"]["scenarios"]
            ["items"]["properties"]["agent_workflow"]["items"]["anyOf"]
            .as_array()
            .unwrap();
        let names: Vec<&Value> = calls
            .iter()
            .map(|c| &c["properties"]["function_name"]["enum"][0])
            .collect();
        let offered_names: Vec<Value> = offered.iter().map(|o| json!(o)).collect();
        assert_eq!(names, offered_names.iter().collect::<Vec<_>>());
        for (call, name) in calls.iter().zip(&offered) {
            assert_eq!(
                call["properties"]["parameters"],
                spec.tools()
                    .iter()
                    .find(|t| t.name == *name)
                    .unwrap()
                    .input_schema,
                "{name}"
            );
        }
        // A tool's input schema leaves its object open: OpenAI's strict mode would refuse it.
        assert_eq!(body["response_format"]["json_schema"]["strict"], false);
    }
}

#[tokio::test]
async fn veo_scenarios_drop_what_the_linter_rejects() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(Writer)
        .mount(&server)
        .await;
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let spec = ToolSet::load(&root.join("harnesses/veo.tools.json")).unwrap();
    let caps = vec![Capabilities::load(&root.join("capabilities/mcp-veo-go.yaml")).unwrap()];
    let linter = agent_seer::lint::Linter::new(&spec, caps.clone()).unwrap();
    let records: Vec<_> = spec.tools().iter().map(|t| explanation(&t.name)).collect();
    let (_dir, c) = live_openai(&server);
    let mut g = Generator::new(&c, &spec, &caps);
    let plan = agent_seer::generate::scenarios::Plan {
        simple: 6,
        complex: 0,
        rounds: 2,
        batch: 12,
    };
    let (scenarios, cov) = g.scenarios(&records, &linter, plan).await.unwrap();
    // veo_t2v's only scenario is rejected by the linter every time (V2), so it stays uncovered.
    assert_eq!(cov.uncovered, ["veo_t2v"]);
    assert!(
        scenarios.iter().all(|s| s
            .agent_workflow
            .iter()
            .all(|c| c.function_name != "veo_image2video")),
        "the hallucinated name was fixed on retry"
    );
    let stage = &g.report.stages["scenarios"];
    assert!(
        stage
            .dropped
            .iter()
            .all(|d| d.contains("veo-2.0-generate-001")),
        "{:?}",
        stage.dropped
    );
    assert_eq!(stage.dropped.len(), 2, "one per round: {:?}", stage.dropped);
    assert_eq!(stage.retried, 2);
}

/// Answers every stage of the pipeline for the veo spec, well-formed and consistent.
struct Pipeline;

fn veo_args(tool: &str) -> Value {
    match tool {
        "veo_t2v" => {
            json!({"prompt": "a paper boat in the rain", "model": "veo-3.1-fast-generate-001", "duration": 6, "bucket": "gs://b/out/"})
        }
        "veo_i2v" => {
            json!({"prompt": "push in", "image_uri": "gs://b/in/frame.png", "model": "veo-3.1-generate-001"})
        }
        "veo_extend_video" => {
            json!({"video_uri": "gs://b/out/boat.mp4", "model": "veo-3.1-lite-generate-001"})
        }
        "veo_first_last_to_video" => {
            json!({"first_image_uri": "gs://b/in/a.png", "last_image_uri": "gs://b/in/z.png", "model": "veo-3.1-generate-001"})
        }
        t if t.starts_with('t') && t.len() == 3 => json!({"x": "v"}),
        _ => {
            json!({"prompt": "p", "reference_image_uris": ["gs://b/in/r.png"], "model": "veo-3.1-generate-preview"})
        }
    }
}

/// The user's own files a scenario's first call takes.
fn inputs_of(tool: &str) -> String {
    let v = veo_args(tool);
    let mut out: Vec<String> = Vec::new();
    for (k, x) in v.as_object().unwrap() {
        if k == "bucket" {
            continue;
        }
        match x {
            Value::String(s) if s.starts_with("gs://") => out.push(s.clone()),
            Value::Array(items) => {
                out.extend(items.iter().filter_map(|i| i.as_str()).map(str::to_owned))
            }
            _ => {}
        }
    }
    out.join(", ")
}

impl Respond for Pipeline {
    fn respond(&self, req: &WireRequest) -> ResponseTemplate {
        let body: Value = serde_json::from_slice(&req.body).unwrap();
        ResponseTemplate::new(200).set_body_json(openai_body(&pipeline_answer(&body).to_string()))
    }
}

/// [`Pipeline`]'s answer to a chat-completions request body.
fn pipeline_answer(body: &Value) -> Value {
    {
        let user = body["messages"][1]["content"].as_str().unwrap();
        match body["response_format"]["json_schema"]["name"]
            .as_str()
            .unwrap()
        {
            "tool_explanation" => {
                let tool = user
                    .lines()
                    .next()
                    .unwrap()
                    .trim_start_matches("Tool name: ");
                json!({"tool_name": tool, "what_it_does": "Makes video.", "what_it_needs": "A prompt or images.", "why_its_used": "Ads.", "enterprise_context": ["Media Production"]})
            }
            "scenarios" => {
                let offered: Vec<&str> = user
                    .lines()
                    .filter_map(|l| l.strip_prefix("- "))
                    .map(|l| l.split(':').next().unwrap())
                    .collect();
                let mut list: Vec<Value> = offered
                    .iter()
                    .map(|t| json!({"title": format!("Use {t}"), "tier": "simple", "category": "Video", "prompt": format!("Please use {t} for our campaign, with our files {}.", inputs_of(t)),
                        "agent_workflow": [{"function_name": t, "parameters": veo_args(t), "quick_explanation": "the tool for it"}],
                        "novelty_reason": "n", "agent_followup": "f"}))
                    .collect();
                list.push(json!({"title": "Boat then longer boat", "tier": "complex", "category": "Video", "prompt": "Make a rainy paper-boat clip, then extend it.",
                    "agent_workflow": [
                        {"function_name": "veo_t2v", "parameters": veo_args("veo_t2v"), "quick_explanation": "the clip"},
                        {"function_name": "veo_extend_video", "parameters": veo_args("veo_extend_video"), "quick_explanation": "longer"}],
                    "novelty_reason": "a hand-off", "agent_followup": "f"}));
                json!({"scenarios": list})
            }
            "mocked_workflow" => {
                let calls: Vec<&str> = user
                    .lines()
                    .filter(|l| l.chars().next().is_some_and(|c| c.is_ascii_digit()))
                    .collect();
                let uris: Vec<Vec<String>> = calls
                    .iter()
                    .map(|l| {
                        l.split('"')
                            .filter(|s| s.starts_with("gs://"))
                            .map(str::to_owned)
                            .collect()
                    })
                    .collect();
                let outputs: Vec<Value> = (0..calls.len())
                    .map(|i| {
                        let mut made = vec![format!("gs://b/out/call{i}.mp4")];
                        made.extend(uris.iter().skip(i + 1).flatten().filter(|u| u.ends_with(".mp4")).cloned());
                        let mut content = vec![json!({"type": "text", "text": format!("Generated 1 video(s). Videos saved to GCS: {}.", made.join(", "))})];
                        content.extend(made.iter().map(|u| json!({"type": "resource_link", "uri": u, "mimeType": "video/mp4"})));
                        json!({"content": content})
                    })
                    .collect();
                json!({"outputs": outputs, "expected_response": format!("Your video is at gs://b/out/call{}.mp4.", calls.len() - 1)})
            }
            "expansion" => json!({"turns": [
                {"prompt": "Make a rainy paper-boat clip.", "calls": [1], "followup": "Now extend it."},
                {"prompt": "Extend gs://b/out/boat.mp4 by a few seconds.", "calls": [2], "followup": "Thanks!"}]}),
            other => panic!("unexpected stage {other}"),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_whole_pipeline_on_the_veo_spec() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(Pipeline)
        .mount(&server)
        .await;
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("harnesses");
    let o = generate(
        &server,
        dir.path(),
        &[
            "--spec",
            "harnesses/veo.tools.json",
            "--caps",
            "capabilities/mcp-veo-go.yaml",
            "--seed-outputs",
            "harnesses/veo.seed_outputs.json",
            "--suite",
            "veo-gen",
        ],
    )
    .await;
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}{stderr}",
        String::from_utf8_lossy(&o.stdout)
    );
    let report: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(report["coverage"]["covered"], 6);
    assert_eq!(report["coverage"]["tools"], 6);
    assert_eq!(report["multi_turn"], 1);
    assert_eq!(
        report["grounding"]["high"].as_u64().unwrap()
            + report["grounding"]["medium"].as_u64().unwrap(),
        8,
        "{report}"
    );
    let kept = report["verify"]["kept"].as_array().unwrap();
    assert_eq!(
        kept.len(),
        7,
        "every scenario discriminates: {}",
        report["verify"]
    );
    // The harness loads unchanged and its oracles lint clean.
    let suite = Suite::load(&out.join("veo-gen.yaml")).unwrap();
    assert_eq!(suite.harness.scenarios.len(), 7);
    let multi = suite
        .harness
        .scenarios
        .iter()
        .find(|s| s.turns.len() == 2)
        .expect("the expanded scenario");
    assert_eq!(multi.turns[1].workflow[0].call.tool, "veo_extend_video");
    for sc in &suite.harness.scenarios {
        for step in sc.turns.iter().flat_map(|t| &t.workflow) {
            let errors: Vec<_> = suite
                .linter
                .lint(&step.call.tool, step.call.arguments())
                .into_iter()
                .filter(|f| f.severity == agent_seer::finding::Severity::Error)
                .collect();
            assert!(errors.is_empty(), "{}: {errors:?}", sc.id);
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_whole_pipeline_on_a_64_tool_spec_and_the_harness_runs_under_cargo_test() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(Pipeline)
        .mount(&server)
        .await;
    let dir = tempfile::tempdir().unwrap();
    let tools: Vec<Value> = (0..64)
        .map(|i| json!({"name": format!("t{i:02}"), "description": format!("Tool {i}."), "inputSchema": {"type": "object", "properties": {"x": {"type": "string"}}, "required": ["x"]}}))
        .collect();
    let spec_path = dir.path().join("t64.tools.json");
    std::fs::write(&spec_path, serde_json::to_string(&tools).unwrap()).unwrap();
    let o = generate(
        &server,
        dir.path(),
        &["--spec", spec_path.to_str().unwrap(), "--suite", "t64"],
    )
    .await;
    let report = json_stdout(&o);
    assert_eq!(
        (
            report["coverage"]["covered"].as_u64(),
            report["coverage"]["tools"].as_u64()
        ),
        (Some(64), Some(64)),
        "{}",
        report["stages"]
    );
    assert_eq!(
        report["grounding"]["low"], 64,
        "no seed outputs: schema-only grounding"
    );
    let kept = report["verify"]["kept"].as_array().unwrap().len();
    assert!(kept >= 64, "{}", report["verify"]);
    // The produced harness, as the agents test target sees it.
    let root = dir.path().to_path_buf();
    let o = tokio::task::spawn_blocking(move || {
        std::process::Command::new(env!("CARGO"))
            .args(["test", "--test", "agents", "--", "t64::"])
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .env("AGENT_SEER_ROOT", root)
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(text.contains("test t64::harness ... ok"), "{text}");
}

/// Malformed stage answers — not JSON, then the wrong shape — are asked again and, when they
/// never improve, dropped and counted; the stage goes on.
#[tokio::test]
async fn malformed_stage_answers_are_dropped_and_counted() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_json(openai_body(
            "Sure! Here are some scenarios: 1. make a video",
        )))
        .up_to_n_times(2)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .respond_with(
            ResponseTemplate::new(200).set_body_json(openai_body(r#"{"scenarios": "none"}"#)),
        )
        .mount(&server)
        .await;
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let spec = ToolSet::load(&root.join("harnesses/lyria.tools.json")).unwrap();
    let linter = agent_seer::lint::Linter::new(&spec, vec![]).unwrap();
    let (_dir, c) = live_openai(&server);
    let mut g = Generator::new(&c, &spec, &[]);
    let plan = agent_seer::generate::scenarios::Plan {
        simple: 1,
        complex: 0,
        rounds: 1,
        batch: 12,
    };
    let (scenarios, cov) = g
        .scenarios(&[explanation("lyria_generate_music")], &linter, plan)
        .await
        .unwrap();
    assert!(scenarios.is_empty());
    assert_eq!(cov.uncovered, ["lyria_generate_music"]);
    let stage = &g.report.stages["scenarios"];
    assert_eq!(stage.dropped.len(), 1);
    assert!(
        stage.dropped[0].contains("does not fit the schema"),
        "{:?}",
        stage.dropped
    );
    let reqs = server.received_requests().await.unwrap();
    assert_eq!(reqs.len(), 3);
    let third: Value = serde_json::from_slice(&reqs[2].body).unwrap();
    assert!(
        third["messages"][1]["content"]
            .as_str()
            .unwrap()
            .contains("no complete JSON object"),
        "the problem was fed back"
    );
}

/// A 64-tool spec (`t00` … `t63`, one string parameter each), written into `dir`.
fn t64_spec(dir: &Path) -> std::path::PathBuf {
    let tools: Vec<Value> = (0..64)
        .map(|i| json!({"name": format!("t{i:02}"), "description": format!("Tool {i}."), "inputSchema": {"type": "object", "properties": {"x": {"type": "string"}}, "required": ["x"]}}))
        .collect();
    let path = dir.join("t64.tools.json");
    std::fs::write(&path, serde_json::to_string(&tools).unwrap()).unwrap();
    path
}

/// `generate … --llm openai:scripted --verify -o <out>` from the repository root against
/// `base_url`, its cache in `cache`, with `env` set: its report (without the harness's path)
/// and the harness's bytes.
async fn generate_at(
    base_url: &str,
    cache: &Path,
    out: &Path,
    args: &[&str],
    env: &[(&str, &str)],
) -> (Value, Vec<u8>) {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_agent-seer"));
    cmd.arg("generate")
        .args(args)
        .args(["--llm", "openai:scripted", "--verify", "-o"])
        .arg(out)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("AGENT_SEER_OPENAI_BASE_URL", base_url)
        .env("AGENT_SEER_LLM_CACHE", cache)
        .env_remove("AGENT_SEER_LLM")
        .env_remove("AGENT_SEER_LLM_CONCURRENCY")
        .envs(env.iter().copied());
    let o = tokio::task::spawn_blocking(move || cmd.output().unwrap())
        .await
        .unwrap();
    let mut report = json_stdout(&o);
    let harness = report["harness"].as_str().unwrap().to_owned();
    report.as_object_mut().unwrap().remove("harness");
    (report, std::fs::read(harness).unwrap())
}

/// The harness and the report are the same at concurrency 1 and 8: on the 64-tool spec,
/// whose coverage rounds retry and drop (every batch's cross-tool scenario names tools the
/// spec lacks), against the same answers arriving in whatever order; and on the veo spec
/// from a recorded cache, replayed at 1 and at 8 with no request made.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_harness_and_report_are_the_same_at_any_concurrency() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(Pipeline)
        .mount(&server)
        .await;
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let spec = t64_spec(d);
    let t64 = ["--spec", spec.to_str().unwrap(), "--suite", "t64"];
    let mut runs = Vec::new();
    for n in ["1", "8"] {
        let args: Vec<&str> = t64.iter().copied().chain(["--concurrency", n]).collect();
        let (cache, out) = (d.join(format!("cache-{n}")), d.join(format!("out-{n}")));
        runs.push(generate_at(&server.uri(), &cache, &out, &args, &[]).await);
    }
    assert!(
        !runs[0].0["stages"]["scenarios"]["dropped"]
            .as_array()
            .unwrap()
            .is_empty(),
        "the run drops scenarios: {}",
        runs[0].0["stages"]
    );
    assert_eq!(runs[0].0, runs[1].0, "the report");
    assert!(
        runs[0].1 == runs[1].1,
        "the harness differs:\n{}\n---\n{}",
        String::from_utf8_lossy(&runs[0].1),
        String::from_utf8_lossy(&runs[1].1)
    );

    let veo = [
        "--spec",
        "harnesses/veo.tools.json",
        "--caps",
        "capabilities/mcp-veo-go.yaml",
        "--seed-outputs",
        "harnesses/veo.seed_outputs.json",
        "--suite",
        "veo-gen",
    ];
    let cache = d.join("cache-veo");
    let args: Vec<&str> = veo.iter().copied().chain(["--concurrency", "8"]).collect();
    let (_, live) = generate_at(&server.uri(), &cache, &d.join("veo-live"), &args, &[]).await;
    let asked = server.received_requests().await.unwrap().len();
    let mut replays = Vec::new();
    for n in ["1", "8"] {
        let args: Vec<&str> = veo.iter().copied().chain(["--concurrency", n]).collect();
        let out = d.join(format!("veo-replay-{n}"));
        let replay = [("AGENT_SEER_LLM", "replay")];
        replays.push(generate_at(&server.uri(), &cache, &out, &args, &replay).await);
    }
    assert_eq!(server.received_requests().await.unwrap().len(), asked);
    assert_eq!(replays[0].0, replays[1].0, "the replayed report");
    assert!(
        replays[0].1 == live && replays[1].1 == live,
        "the replayed harness"
    );
}

/// Requests an OpenAI-compatible server holds at once: now and at most.
#[derive(Default)]
struct InFlight {
    now: std::sync::atomic::AtomicUsize,
    max: std::sync::atomic::AtomicUsize,
}

/// A plain HTTP/1.1 server answering as [`Pipeline`], holding each request 30 ms before it
/// answers and counting the requests it holds at once (wiremock's responders run when a
/// request arrives and cannot see when its answer leaves).
async fn in_flight_server() -> (String, std::sync::Arc<InFlight>) {
    use std::sync::atomic::Ordering::SeqCst;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let uri = format!("http://{}", listener.local_addr().unwrap());
    let counts = std::sync::Arc::new(InFlight::default());
    let shared = counts.clone();
    tokio::spawn(async move {
        while let Ok((mut sock, _)) = listener.accept().await {
            let counts = shared.clone();
            tokio::spawn(async move {
                let mut buf = Vec::new();
                loop {
                    // One request: headers, then `content-length` bytes of body.
                    let (head, len) = loop {
                        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                            let head = String::from_utf8_lossy(&buf[..end]).to_lowercase();
                            let len = head
                                .lines()
                                .find_map(|l| l.strip_prefix("content-length:"))
                                .map_or(0, |v| v.trim().parse::<usize>().unwrap());
                            break (end + 4, len);
                        }
                        let mut chunk = [0u8; 8192];
                        match sock.read(&mut chunk).await {
                            Ok(0) | Err(_) => return,
                            Ok(n) => buf.extend_from_slice(&chunk[..n]),
                        }
                    };
                    while buf.len() < head + len {
                        let mut chunk = [0u8; 8192];
                        match sock.read(&mut chunk).await {
                            Ok(0) | Err(_) => return,
                            Ok(n) => buf.extend_from_slice(&chunk[..n]),
                        }
                    }
                    let body: Value = serde_json::from_slice(&buf[head..head + len]).unwrap();
                    buf.drain(..head + len);
                    let now = counts.now.fetch_add(1, SeqCst) + 1;
                    counts.max.fetch_max(now, SeqCst);
                    tokio::time::sleep(Duration::from_millis(30)).await;
                    // Released before the answer leaves: the client cannot send the next
                    // request before it has this answer.
                    counts.now.fetch_sub(1, SeqCst);
                    let text = openai_body(&pipeline_answer(&body).to_string()).to_string();
                    let response = format!(
                        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{text}",
                        text.len()
                    );
                    if sock.write_all(response.as_bytes()).await.is_err() {
                        return;
                    }
                }
            });
        }
    });
    (uri, counts)
}

/// The cap holds: the server never holds more requests at once than `--concurrency` (or
/// `AGENT_SEER_LLM_CONCURRENCY` without it) allows, and holds more than one when it allows
/// more; 0 is refused before any model is asked.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn generation_keeps_to_the_concurrency_cap() {
    let dir = tempfile::tempdir().unwrap();
    let veo = [
        "--spec",
        "harnesses/veo.tools.json",
        "--caps",
        "capabilities/mcp-veo-go.yaml",
        "--suite",
        "veo-gen",
    ];
    let mut seen = Vec::new();
    for (i, (flag, env)) in [(Some("1"), None), (Some("3"), Some("8")), (None, Some("2"))]
        .into_iter()
        .enumerate()
    {
        let (uri, counts) = in_flight_server().await;
        let mut args = veo.to_vec();
        args.extend(flag.map(|n| ["--concurrency", n]).into_iter().flatten());
        let env: Vec<(&str, &str)> = env
            .map(|n| ("AGENT_SEER_LLM_CONCURRENCY", n))
            .into_iter()
            .collect();
        let (cache, out) = (
            dir.path().join(format!("cache-{i}")),
            dir.path().join(format!("out-{i}")),
        );
        generate_at(&uri, &cache, &out, &args, &env).await;
        seen.push(counts.max.load(std::sync::atomic::Ordering::SeqCst));
    }
    assert_eq!(seen[0], 1, "--concurrency 1");
    assert!(
        (2..=3).contains(&seen[1]),
        "--concurrency 3 over the variable's 8: {seen:?}"
    );
    assert_eq!(seen[2], 2, "AGENT_SEER_LLM_CONCURRENCY=2: {seen:?}");

    let o = std::process::Command::new(env!("CARGO_BIN_EXE_agent-seer"))
        .args([
            "generate",
            "--spec",
            "harnesses/veo.tools.json",
            "--suite",
            "x",
            "--llm",
            "openai:m",
            "-o",
        ])
        .arg(dir.path().join("zero"))
        .args(["--concurrency", "0"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&o.stderr);
    insta::assert_snapshot!(stderr.lines().next().unwrap_or_default(), @"error: invalid value '0' for '--concurrency <N>': 0 lets no model call through; give 1 or more");
}
