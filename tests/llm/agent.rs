//! The live runner against scripted agents: a wiremock server speaking OpenAI chat
//! completions with tools, answering from the conversation so far.

use agent_seer::agent::{Options, run_suite};
use agent_seer::check::{Suite, Verdict};
use agent_seer::finding::Code;
use wiremock::{Request as WireRequest, Respond};

use super::*;

/// What the scripted agent does when the last message is the user's.
#[derive(Clone, Copy)]
enum Script {
    /// The oracle's call, then a reply.
    Correct,
    /// `model` instead of `model_id` (seed LY1), then a reply.
    WrongParam,
    /// The same call forever.
    Loop,
    /// The oracle's call written into `content` as a Qwen-style `<tool_call>` block (as a local
    /// model served without a tool parser answers), then a reply.
    TextCall,
    /// A fenced JSON call in `content`, forever.
    TextLoop,
}

impl Respond for Script {
    fn respond(&self, req: &WireRequest) -> ResponseTemplate {
        let body: Value = serde_json::from_slice(&req.body).unwrap();
        let messages = body["messages"].as_array().unwrap();
        let last = messages.last().unwrap();
        let prompt = messages.iter().rev().find(|m| m["role"] == "user").unwrap()["content"]
            .as_str()
            .unwrap()
            .to_owned();
        let pro = prompt.contains("2:30");
        let text = matches!(self, Script::TextCall | Script::TextLoop);
        let fenced = matches!(self, Script::TextLoop);
        let call = |args: Value| {
            if text {
                let c = json!({"name": "lyria_generate_music", "arguments": args}).to_string();
                let content = if fenced {
                    format!("I will generate it now.\n```json\n{c}\n```")
                } else {
                    format!("<tool_call>\n{c}\n</tool_call>")
                };
                return json!({"choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content}}],
                    "usage": {"prompt_tokens": 100, "completion_tokens": 20}});
            }
            json!({"choices": [{"index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant", "content": null,
                "tool_calls": [{"id": format!("call_{}", messages.len()), "type": "function",
                    "function": {"name": "lyria_generate_music", "arguments": args.to_string()}}]}}],
                "usage": {"prompt_tokens": 100, "completion_tokens": 20}})
        };
        let reply = json!({"choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "Done — your music is ready."}}],
            "usage": {"prompt_tokens": 120, "completion_tokens": 8}});
        let (prompt_arg, model) = if pro {
            (
                "sweeping orchestral trailer score, rising strings and brass",
                "lyria-3-pro-preview",
            )
        } else {
            (
                "lo-fi piano loop, warm and relaxed, for a podcast intro",
                "lyria-3-clip-preview",
            )
        };
        let body = match (self, last["role"].as_str()) {
            (Script::Loop | Script::TextLoop, _) => call(
                json!({"prompt": prompt_arg, "model_id": model, "output_gcs_bucket": "mybucket"}),
            ),
            (_, Some("tool")) => reply,
            (Script::Correct | Script::TextCall, _) => call(
                json!({"prompt": prompt_arg, "model_id": model, "output_gcs_bucket": "mybucket"}),
            ),
            (Script::WrongParam, _) => {
                call(json!({"prompt": prompt_arg, "model": model, "output_gcs_bucket": "mybucket"}))
            }
        };
        ResponseTemplate::new(200).set_body_json(body)
    }
}

async fn run(
    script: Script,
    steps: usize,
) -> (
    Vec<agent_seer::agent::ScenarioRuns>,
    tempfile::TempDir,
    MockServer,
) {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/chat/completions"))
        .respond_with(script)
        .mount(&server)
        .await;
    let (results, dir) = run_lyria(openai(&server), "openai:scripted", steps, 2).await;
    (results, dir, server)
}

/// Runs the Lyria suite with the agent behind `provider`; transcripts go to a temp dir.
async fn run_lyria(
    provider: Provider,
    agent: &str,
    steps: usize,
    repeat: usize,
) -> (Vec<agent_seer::agent::ScenarioRuns>, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let suite =
        Suite::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("harnesses/lyria.yaml")).unwrap();
    let c = client(
        provider,
        dir.path(),
        CacheMode::Live,
        Duration::from_secs(5),
    );
    let opts = Options {
        step_budget: steps,
        repeat,
        out_dir: dir.path().join("out"),
        agent: agent.into(),
        ..Options::default()
    };
    let results = run_suite(&c, &suite, &opts).await.unwrap();
    (results, dir)
}

/// Issue 32, item 2: `run -o` writes its transcripts through the one writer: a link in the
/// folder that leads outside it is refused, never written through.
#[cfg(unix)]
#[tokio::test]
async fn a_run_never_writes_through_a_link_out_of_its_folder() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/chat/completions"))
        .respond_with(Script::Correct)
        .mount(&server)
        .await;
    let dir = tempfile::tempdir().unwrap();
    let suite =
        Suite::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("harnesses/lyria.yaml")).unwrap();
    let out = dir.path().join("out");
    std::fs::create_dir_all(&out).unwrap();
    let outside = dir.path().join("outside.yaml");
    let first = &suite.harness.scenarios[0].id;
    std::os::unix::fs::symlink(&outside, out.join(format!("{first}.yaml"))).unwrap();
    let c = client(
        openai(&server),
        dir.path(),
        CacheMode::Live,
        Duration::from_secs(5),
    );
    let opts = Options {
        step_budget: 8,
        repeat: 1,
        out_dir: out,
        agent: "openai:scripted".into(),
        ..Options::default()
    };
    let e = run_suite(&c, &suite, &opts).await.unwrap_err().to_string();
    assert!(e.contains("outside the output folder"), "{e}");
    assert!(!outside.exists());
}

#[tokio::test]
async fn a_correct_agent_passes_every_run() {
    let (results, _dir, server) = run(Script::Correct, 8).await;
    assert_eq!(results.len(), 2);
    for r in &results {
        assert_eq!(r.runs.len(), 2);
        assert!(
            r.pass_all() && r.pass_any() && !r.flaky(),
            "{}: {:#?}",
            r.scenario,
            r.runs[0].evaluation.findings
        );
        assert!((r.mean_tc().unwrap() - 1.0).abs() < 1e-9);
        let t = std::fs::read_to_string(&r.runs[0].transcript).unwrap();
        assert!(
            t.contains("agent: openai:scripted") && t.contains("reply: Done"),
            "{t}"
        );
    }
    // The agent saw the MCP specs as OpenAI tools and got tool results back by call id.
    let reqs = server.received_requests().await.unwrap();
    let first: Value = serde_json::from_slice(&reqs[0].body).unwrap();
    assert_eq!(
        first["tools"][0]["function"]["name"],
        "lyria_generate_music"
    );
    assert_eq!(
        first["tools"][0]["function"]["parameters"]["required"],
        json!(["prompt"])
    );
    let second: Value = serde_json::from_slice(&reqs[1].body).unwrap();
    let tool_msg = second["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .unwrap();
    assert!(
        tool_msg["content"]
            .as_str()
            .unwrap()
            .contains("gs://mybucket/lyria_output_Ab3xYz9Q.wav"),
        "the mock output: {tool_msg}"
    );
    assert_eq!(reqs.len(), 8, "2 scenarios × 2 runs × (call + reply)");
}

#[tokio::test]
async fn a_broken_agent_is_graded_like_the_seed_case() {
    let (results, _dir, _server) = run(Script::WrongParam, 8).await;
    for r in &results {
        assert!(!r.pass_any());
        let e = &r.runs[0].evaluation;
        assert_eq!(e.verdict, Verdict::Fail);
        assert!(
            e.findings
                .iter()
                .any(|f| f.code == Code::UnknownParam && f.pointer == "/model"),
            "{:#?}",
            e.findings
        );
    }
}

/// A call written as text in `content` (a local model without a tool parser) is a call: it is
/// answered, recorded, replayed to the model as a tool call, and graded like any other.
#[tokio::test]
async fn a_call_written_as_text_is_a_call() {
    let (results, _dir, server) = run(Script::TextCall, 4).await;
    for r in &results {
        for run in &r.runs {
            assert_eq!(
                run.evaluation.verdict,
                Verdict::Pass,
                "{:#?}",
                run.evaluation.findings
            );
            let t = std::fs::read_to_string(&run.transcript).unwrap();
            assert!(
                t.contains("tool: lyria_generate_music") && !t.contains("<tool_call>"),
                "{t}"
            );
        }
    }
    // The second request replays the call as a structured tool call with its result.
    let reqs = server.received_requests().await.unwrap();
    let second: Value = serde_json::from_slice(&reqs[1].body).unwrap();
    let msgs = second["messages"].as_array().unwrap();
    let assistant = msgs.iter().find(|m| m["role"] == "assistant").unwrap();
    assert_eq!(
        assistant["tool_calls"][0]["function"]["name"],
        "lyria_generate_music"
    );
    assert!(msgs.iter().any(|m| m["role"] == "tool"));
}

/// A model that writes the same fenced call forever is stopped by the step budget.
#[tokio::test]
async fn a_text_call_loop_stops_at_the_step_budget() {
    let (results, _dir, _server) = run(Script::TextLoop, 3).await;
    for r in &results {
        let run = &r.runs[0];
        assert!(run.stopped_at_budget);
        assert_eq!(run.evaluation.verdict, Verdict::Fail);
        assert!(
            run.evaluation
                .findings
                .iter()
                .any(|f| f.code == Code::StepBudget)
        );
    }
}

#[tokio::test]
async fn a_looping_agent_stops_at_the_step_budget() {
    let (results, _dir, server) = run(Script::Loop, 3).await;
    for r in &results {
        let run = &r.runs[0];
        assert!(run.stopped_at_budget);
        assert_eq!(run.evaluation.verdict, Verdict::Fail);
        let f = run
            .evaluation
            .findings
            .iter()
            .find(|f| f.code == Code::StepBudget)
            .expect("a step-budget finding");
        assert!(f.message.contains("after 3 rounds"), "{}", f.message);
        assert!(
            run.evaluation
                .findings
                .iter()
                .any(|f| f.code == Code::RedundantCall),
            "the repeats are redundant calls too"
        );
        let t = std::fs::read_to_string(&run.transcript).unwrap();
        assert!(t.contains("stopped at the step budget (3 rounds)"), "{t}");
    }
    assert_eq!(
        server.received_requests().await.unwrap().len(),
        2 * 2 * 3,
        "exactly the budget, no more"
    );
}

/// The same loop over Gemini's wire format: function declarations with `parametersJsonSchema`,
/// `functionCall` parts back, `functionResponse` parts out.
#[tokio::test]
async fn a_gemini_agent() {
    struct Gemini;
    impl Respond for Gemini {
        fn respond(&self, req: &WireRequest) -> ResponseTemplate {
            let body: Value = serde_json::from_slice(&req.body).unwrap();
            let contents = body["contents"].as_array().unwrap();
            let last = &contents.last().unwrap()["parts"][0];
            let prompt = contents
                .iter()
                .rev()
                .find_map(|c| c["parts"][0]["text"].as_str())
                .unwrap_or("");
            let (p, model) = if prompt.contains("2:30") {
                (
                    "sweeping orchestral trailer score, rising strings and brass",
                    "lyria-3-pro-preview",
                )
            } else {
                (
                    "lo-fi piano loop, warm and relaxed, for a podcast intro",
                    "lyria-3-clip-preview",
                )
            };
            let parts = if last.get("functionResponse").is_some() {
                json!([{"text": "Here is your music."}])
            } else {
                json!([{"functionCall": {"name": "lyria_generate_music", "args": {"prompt": p, "model_id": model, "output_gcs_bucket": "mybucket"}}}])
            };
            ResponseTemplate::new(200).set_body_json(json!({"candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP"}]}))
        }
    }
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1beta/models/m-1:generateContent"))
        .respond_with(Gemini)
        .mount(&server)
        .await;
    let gemini = Provider::Gemini {
        base_url: server.uri(),
        key: Some(KEY.into()),
    };
    let (results, _dir) = run_lyria(gemini, "gemini:scripted", 4, 1).await;
    assert!(
        results.iter().all(|r| r.pass_all()),
        "{:#?}",
        results[0].runs[0].evaluation.findings
    );
    let first: Value =
        serde_json::from_slice(&server.received_requests().await.unwrap()[0].body).unwrap();
    assert_eq!(
        first["tools"][0]["functionDeclarations"][0]["parametersJsonSchema"]["required"],
        json!(["prompt"])
    );
    let second: Value =
        serde_json::from_slice(&server.received_requests().await.unwrap()[1].body).unwrap();
    let response =
        &second["contents"].as_array().unwrap().last().unwrap()["parts"][0]["functionResponse"];
    assert_eq!(response["name"], "lyria_generate_music");
}

/// `agent-seer run` end to end: a scripted agent and, because `AGENT_SEER_JUDGE` is set, a
/// judge on the same OpenAI-compatible mock (told apart by `response_format`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_run_verb_grades_and_judges() {
    struct Both;
    impl Respond for Both {
        fn respond(&self, req: &WireRequest) -> ResponseTemplate {
            let body: Value = serde_json::from_slice(&req.body).unwrap();
            if body.get("response_format").is_some() {
                let verdict = json!({"usage": {"necessity": 10, "overuse": 10}, "selection": {"correctness": 10, "specificity": 10, "completeness": 10},
                    "ordering": {"applicable": false, "sequence_logic": 10, "dependency_handling": 10, "execution_efficiency": 10},
                    "arguments": {"completeness": 10, "name_accuracy": 10, "value_accuracy": 8, "type_compliance": 10, "format_compliance": 10, "relevancy": 10},
                    "coherence": {"logical_flow": 3, "completeness": 3, "conciseness": 3, "topic_relevance": 3, "context_retention": 0},
                    "failures": ["argument_value"], "rationale": "mock judge"});
                return ResponseTemplate::new(200).set_body_json(openai_body(&verdict.to_string()));
            }
            Script::Correct.respond(req)
        }
    }
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/chat/completions"))
        .respond_with(Both)
        .mount(&server)
        .await;
    let dir = tempfile::tempdir().unwrap();
    let (uri, out, cache) = (
        server.uri(),
        dir.path().join("out"),
        dir.path().join("cache"),
    );
    let o = tokio::task::spawn_blocking(move || {
        std::process::Command::new(env!("CARGO_BIN_EXE_agent-seer"))
            .args([
                "run",
                "harnesses/lyria.yaml",
                "--agent",
                "openai:scripted",
                "--format",
                "json",
                "-o",
                out.to_str().unwrap(),
            ])
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .env("AGENT_SEER_OPENAI_BASE_URL", uri)
            .env("AGENT_SEER_JUDGE", "openai:mock-judge")
            .env("AGENT_SEER_LLM_CACHE", cache)
            .env_remove("AGENT_SEER_LLM")
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    let v = json_stdout(&o);
    for s in v["scenarios"].as_array().unwrap() {
        assert_eq!(s["pass_all"], true);
        assert_eq!(s["mean_tc"], 1.0);
        let judge = s["judge_tc"].as_f64().unwrap();
        assert!(
            (judge - (1.0 + 1.0 + (5.0 + 0.8) / 6.0) / 3.0).abs() < 1e-9,
            "{judge}"
        );
    }
}

/// A scenario id names its run's transcript: one that is no plain file name (`../../escape`)
/// is refused at its line before the agent is called once, and nothing is written outside
/// `-o` (issue 18, item 2).
#[tokio::test]
async fn a_scenario_id_that_is_no_file_name_is_refused_before_any_call() {
    let server = MockServer::start().await;
    let reply = json!({"choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "Done."}}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1}});
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_json(reply))
        .mount(&server)
        .await;
    let dir = tempfile::tempdir().unwrap();
    let h = dir.path().join("harnesses");
    std::fs::create_dir_all(&h).unwrap();
    std::fs::write(
        h.join("t.tools.json"),
        r#"{"tools": [{"name": "paint", "inputSchema": {"type": "object", "properties": {"prompt": {"type": "string"}}}}]}"#,
    )
    .unwrap();
    std::fs::write(
        h.join("t.yaml"),
        "tools: [t.tools.json]\nscenarios:\n  - id: fine\n    turns:\n      - prompt: paint a cat\n  - id: ../../escape\n    turns:\n      - prompt: paint a dog\n",
    )
    .unwrap();
    // The harness does not load: the id is refused at its place.
    let Err(refused) = Suite::load(&h.join("t.yaml")) else {
        panic!("a harness with a path for a scenario id loaded");
    };
    let refused = refused.to_string();
    insta::assert_snapshot!(refused.replace(dir.path().to_str().unwrap(), "[dir]"), @"[dir]/harnesses/t.yaml:6:9: scenario id `../../escape` cannot be a file name: it contains a path separator (`/`)");
    // Nor does a harness made in code run one: the runner checks the id it names a file by.
    std::fs::write(
        h.join("t.yaml"),
        "tools: [t.tools.json]\nscenarios:\n  - id: fine\n    turns:\n      - prompt: paint a cat\n  - id: later\n    turns:\n      - prompt: paint a dog\n",
    )
    .unwrap();
    let mut harness = agent_seer::harness::Harness::load(&h.join("t.yaml")).unwrap();
    harness.scenarios[1].id = "../../escape".into();
    let suite = Suite::from_harness(harness).unwrap();
    let c = client(
        openai(&server),
        dir.path(),
        CacheMode::Live,
        Duration::from_secs(5),
    );
    let out = dir.path().join("a/b/out");
    let opts = Options {
        step_budget: 2,
        repeat: 1,
        out_dir: out.clone(),
        agent: "openai:scripted".into(),
        ..Options::default()
    };
    let Err(err) = run_suite(&c, &suite, &opts).await else {
        panic!("a scenario id with a path separator was run");
    };
    let text = err
        .to_string()
        .replace(dir.path().to_str().unwrap(), "[dir]");
    insta::assert_snapshot!(text, @"[dir]/harnesses/t.yaml:6:5: scenario id `../../escape` cannot be a file name: it contains a path separator (`/`) (`run` names each transcript by its scenario)");
    assert_eq!(server.received_requests().await.unwrap().len(), 0);
    assert!(!dir.path().join("a/escape.yaml").exists());
    assert!(!out.exists());
}
