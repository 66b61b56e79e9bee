//! The live runner in every agent API `run` speaks (issue 20, item 5): OpenAI chat
//! completions, the OpenAI Responses API, Anthropic Messages and Gemini, each against a
//! wiremock server answering in that API's own wire format. The same scripted agent does a
//! two-call chain (look up Berlin's time, convert the time that lookup returned) and replies;
//! the requests show each format's replay of calls and results, its placement of the system
//! prompt and sampling settings, and the tools exactly as the harness captured them.

use agent_seer::agent::{Options, run_suite};
use agent_seer::check::Suite;
use agent_seer::harness::Harness;
use agent_seer::llm::Sampling;
use wiremock::{Request as WireRequest, Respond};

use super::*;

/// The agent APIs, as `run --agent` names them.
#[derive(Clone, Copy, Debug)]
enum Api {
    Chat,
    Responses,
    Anthropic,
    Gemini,
}

const APIS: [Api; 4] = [Api::Chat, Api::Responses, Api::Anthropic, Api::Gemini];

impl Api {
    /// The path the provider posts to (model `m-1`).
    fn path(self) -> &'static str {
        match self {
            Api::Chat => "/chat/completions",
            Api::Responses => "/responses",
            Api::Anthropic => "/v1/messages",
            Api::Gemini => "/v1beta/models/m-1:generateContent",
        }
    }

    fn provider(self, server: &MockServer) -> Provider {
        let (base_url, key) = (server.uri(), Some(KEY.to_owned()));
        match self {
            Api::Chat => Provider::OpenAi { base_url, key },
            Api::Responses => Provider::OpenAiResponses { base_url, key },
            Api::Anthropic => Provider::Anthropic { base_url, key },
            Api::Gemini => Provider::Gemini { base_url, key },
        }
    }

    /// The `--agent` spec of the command line.
    fn spec(self) -> &'static str {
        match self {
            Api::Chat => "openai:m-1",
            Api::Responses => "openai:responses:m-1",
            Api::Anthropic => "anthropic:m-1",
            Api::Gemini => "gemini:m-1",
        }
    }

    /// Tool results the request already carries: which step of the script comes next.
    fn results_in(self, body: &Value) -> usize {
        let items = |key: &str| body[key].as_array().cloned().unwrap_or_default();
        match self {
            Api::Chat => items("messages")
                .iter()
                .filter(|m| m["role"] == "tool")
                .count(),
            Api::Responses => items("input")
                .iter()
                .filter(|i| i["type"] == "function_call_output")
                .count(),
            Api::Anthropic => items("messages")
                .iter()
                .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
                .filter(|b| b["type"] == "tool_result")
                .count(),
            Api::Gemini => items("contents")
                .iter()
                .flat_map(|c| c["parts"].as_array().cloned().unwrap_or_default())
                .filter(|p| p.get("functionResponse").is_some())
                .count(),
        }
    }

    /// The tools a request declares, back in `tools/list` form.
    fn declared_tools(self, body: &Value) -> Vec<Value> {
        let tools = match self {
            Api::Gemini => body["tools"][0]["functionDeclarations"].clone(),
            _ => body["tools"].clone(),
        };
        tools
            .as_array()
            .unwrap()
            .iter()
            .map(|t| {
                let (f, schema) = match self {
                    Api::Chat => (&t["function"], "parameters"),
                    Api::Responses => (t, "parameters"),
                    Api::Anthropic => (t, "input_schema"),
                    Api::Gemini => (t, "parametersJsonSchema"),
                };
                json!({"name": f["name"], "description": f["description"], "inputSchema": f[schema]})
            })
            .collect()
    }
}

/// The script: Berlin's time, then the conversion of the time it returned, then a reply.
fn step(k: usize) -> Option<(&'static str, Value)> {
    match k {
        0 => Some(("get_current_time", json!({"timezone": "Europe/Berlin"}))),
        1 => Some((
            "convert_time",
            json!({"source_timezone": "Europe/Berlin", "time": "18:24", "target_timezone": "America/Los_Angeles"}),
        )),
        _ => None,
    }
}

const REPLY: &str = "It is 18:24 in Berlin, 09:24 in Los Angeles.";

/// A scripted agent in one API's wire format.
struct Scripted(Api);

impl Respond for Scripted {
    fn respond(&self, req: &WireRequest) -> ResponseTemplate {
        let Ok(body) = serde_json::from_slice::<Value>(&req.body) else {
            return ResponseTemplate::new(400);
        };
        let k = self.0.results_in(&body);
        let answer = match (self.0, step(k)) {
            (Api::Chat, Some((name, args))) => json!({
                "id": "chatcmpl-1", "object": "chat.completion", "model": "m-1",
                "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant", "content": null,
                    "tool_calls": [{"id": format!("call_{k}"), "type": "function", "function": {"name": name, "arguments": args.to_string()}}]}}],
                "usage": {"prompt_tokens": 50, "completion_tokens": 10, "total_tokens": 60}}),
            (Api::Chat, None) => json!({
                "id": "chatcmpl-1", "object": "chat.completion", "model": "m-1",
                "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": REPLY}}],
                "usage": {"prompt_tokens": 50, "completion_tokens": 10, "total_tokens": 60}}),
            (Api::Responses, call) => {
                // A reasoning model: a reasoning item (with its encrypted content) first.
                let mut output = vec![
                    json!({"type": "reasoning", "id": format!("rs_{k}"), "summary": [], "encrypted_content": format!("enc-{k}")}),
                ];
                output.push(match call {
                    Some((name, args)) => json!({"type": "function_call", "id": format!("fc_{k}"), "call_id": format!("call_{k}"),
                        "name": name, "arguments": args.to_string(), "status": "completed"}),
                    None => json!({"type": "message", "id": format!("msg_{k}"), "role": "assistant", "status": "completed",
                        "content": [{"type": "output_text", "text": REPLY, "annotations": []}]}),
                });
                json!({"id": format!("resp_{k}"), "object": "response", "created_at": 1_764_633_600, "status": "completed",
                    "model": "m-1", "output": output, "usage": {"input_tokens": 50, "output_tokens": 10, "total_tokens": 60}})
            }
            (Api::Anthropic, call) => {
                let (content, stop) = match call {
                    Some((name, args)) => (
                        json!([{"type": "text", "text": "Let me look."}, {"type": "tool_use", "id": format!("toolu_{k}"), "name": name, "input": args}]),
                        "tool_use",
                    ),
                    None => (json!([{"type": "text", "text": REPLY}]), "end_turn"),
                };
                json!({"id": format!("msg_{k}"), "type": "message", "role": "assistant", "model": "m-1", "content": content,
                    "stop_reason": stop, "stop_sequence": null, "usage": {"input_tokens": 50, "output_tokens": 10}})
            }
            (Api::Gemini, call) => {
                let parts = match call {
                    // Gemini 3 signs its calls; the signature must come back.
                    Some((name, args)) => {
                        json!([{"functionCall": {"name": name, "args": args}, "thoughtSignature": format!("sig-{k}")}])
                    }
                    None => json!([{"text": REPLY}]),
                };
                json!({"candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
                    "usageMetadata": {"promptTokenCount": 50, "candidatesTokenCount": 10, "totalTokenCount": 60}})
            }
        };
        ResponseTemplate::new(200).set_body_json(answer)
    }
}

/// The time suite cut to its chained scenario.
fn berlin_suite() -> Suite {
    let mut h =
        Harness::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("harnesses/time.yaml")).unwrap();
    h.scenarios.retain(|s| s.id == "berlin-now-in-la");
    assert_eq!(h.scenarios.len(), 1);
    Suite::from_harness(h).unwrap()
}

/// Runs the chained scenario once against `api`'s scripted agent with `opts`' system and
/// sampling; returns the requests' bodies, the run and its transcript's text.
async fn run_chain(
    api: Api,
    opts: Options,
) -> (Vec<Value>, agent_seer::agent::ScenarioRuns, String) {
    let (bodies, run, transcript, usage) = run_on(api, &berlin_suite(), opts).await;
    assert_eq!(
        usage,
        (3, 150, 30),
        "{api:?}: usage read from the API's own fields"
    );
    (bodies, run, transcript)
}

/// Runs `suite`'s first scenario once against `api`'s scripted agent; returns the requests'
/// bodies, the run, its transcript's text and the ledger's calls and tokens.
async fn run_on(
    api: Api,
    suite: &Suite,
    opts: Options,
) -> (
    Vec<Value>,
    agent_seer::agent::ScenarioRuns,
    String,
    (u64, u64, u64),
) {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path(api.path()))
        .respond_with(Scripted(api))
        .mount(&server)
        .await;
    let dir = tempfile::tempdir().unwrap();
    let c = client(
        api.provider(&server),
        dir.path(),
        CacheMode::Live,
        Duration::from_secs(5),
    );
    let opts = Options {
        out_dir: dir.path().join("out"),
        agent: api.spec().into(),
        ..opts
    };
    let mut results = run_suite(&c, suite, &opts).await.unwrap();
    let e = &c.ledger().entries()[&format!("{}:m-1", c.config().provider.name())];
    let usage = (e.calls as u64, e.input_tokens, e.output_tokens);
    let bodies = server
        .received_requests()
        .await
        .unwrap()
        .iter()
        .map(|r| serde_json::from_slice(&r.body).unwrap())
        .collect();
    let run = results.remove(0);
    let transcript = std::fs::read_to_string(&run.runs[0].transcript).unwrap();
    (bodies, run, transcript, usage)
}

/// Every API: call, result, call built on that result, result, reply — graded as a pass, with
/// the calls and the reply in the transcript.
#[tokio::test]
async fn a_two_call_chain_passes_in_every_api() {
    for api in APIS {
        let (bodies, run, t) = run_chain(api, Options::default()).await;
        assert_eq!(bodies.len(), 3, "{api:?}: call, call, reply");
        let r = &run.runs[0];
        assert!(run.pass_all(), "{api:?}: {:#?}", r.evaluation.findings);
        assert!(
            t.contains("tool: get_current_time")
                && t.contains("tool: convert_time")
                && t.contains(REPLY),
            "{api:?}: {t}"
        );
        // The last request carries both results, each answering its call by id.
        let last = &bodies[2];
        assert_eq!(api.results_in(last), 2, "{api:?}");
        let text = last.to_string();
        assert!(
            text.contains("2026-12-01T18:24:21+01:00") && text.contains("America/Los_Angeles"),
            "{api:?}: the mock outputs went back: {text}"
        );
    }
}

/// What each API's last request replays of the model's turns: Anthropic's content blocks and
/// `tool_result`s by `tool_use_id`, the Responses API's reasoning and `function_call` items as
/// given with `function_call_output`s by `call_id`, Gemini's parts with their thought
/// signatures.
#[tokio::test]
async fn each_api_replays_the_turns_in_its_own_shape() {
    let tidy = |v: &Value| {
        // The mock outputs are long; their presence is checked above.
        let mut v = v.clone();
        fn walk(v: &mut Value) {
            match v {
                Value::Object(o) => {
                    for (k, x) in o.iter_mut() {
                        if ["content", "output", "response"].contains(&k.as_str())
                            && (x.is_string() || x.is_object())
                            && x.to_string().contains("datetime")
                        {
                            *x = json!("[mock output]");
                        } else {
                            walk(x);
                        }
                    }
                }
                Value::Array(a) => a.iter_mut().for_each(walk),
                _ => {}
            }
        }
        walk(&mut v);
        if let Some(o) = v.as_object_mut() {
            o.remove("tools");
        }
        v
    };
    let (anthropic, ..) = run_chain(Api::Anthropic, Options::default()).await;
    insta::assert_json_snapshot!("anthropic_replay", tidy(&anthropic[2]));
    let (responses, ..) = run_chain(Api::Responses, Options::default()).await;
    insta::assert_json_snapshot!("responses_replay", tidy(&responses[2]));
    let (gemini, ..) = run_chain(Api::Gemini, Options::default()).await;
    insta::assert_json_snapshot!("gemini_replay", tidy(&gemini[2]));
    let (chat, ..) = run_chain(Api::Chat, Options::default()).await;
    insta::assert_json_snapshot!("chat_replay", tidy(&chat[2]));
}

/// `--system`, `--max-tokens`, `--temperature` and `--seed` in each API's spelling and place;
/// the seed only where the API has one.
#[tokio::test]
async fn the_system_prompt_and_sampling_settings_in_each_api() {
    for api in APIS {
        let seed = matches!(api, Api::Chat | Api::Gemini).then_some(7);
        let opts = Options {
            system: "Answer in one sentence.".into(),
            sampling: Sampling {
                max_tokens: Some(300),
                temperature: Some(0.2),
                seed,
            },
            ..Options::default()
        };
        let (bodies, ..) = run_chain(api, opts).await;
        let mut first = bodies[0].clone();
        first.as_object_mut().unwrap().remove("tools");
        insta::assert_json_snapshot!(format!("first_request_{api:?}"), first);
    }
}

/// Settings not given are not sent: no temperature, no token limit (but Anthropic's required
/// `max_tokens`), no seed; `--system ''` sends no system prompt at all.
#[tokio::test]
async fn settings_not_given_are_not_sent() {
    for api in APIS {
        let opts = Options {
            system: String::new(),
            ..Options::default()
        };
        let (bodies, ..) = run_chain(api, opts).await;
        let first = bodies[0].as_object().unwrap();
        let mut keys: Vec<&str> = first.keys().map(String::as_str).collect();
        keys.sort_unstable();
        let expected: &[&str] = match api {
            Api::Chat => &["messages", "model", "tool_choice", "tools"],
            Api::Responses => &["input", "model", "tools"],
            Api::Anthropic => &["max_tokens", "messages", "model", "tools"],
            Api::Gemini => &["contents", "tools"],
        };
        assert_eq!(keys, expected, "{api:?}");
        assert_eq!(
            first.get("max_tokens").map(|v| v == 4096),
            matches!(api, Api::Anthropic).then_some(true)
        );
        let text = bodies[0].to_string();
        assert!(!text.contains("You are an assistant"), "{api:?}: {text}");
    }
}

/// The agent's tools are the harness's captured tools exactly: every API declares each tool
/// of `time.tools.json` with its name, description and input schema unchanged.
#[tokio::test]
async fn the_tools_sent_are_the_captured_tools() {
    let captured: Value = serde_json::from_str(
        &std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("harnesses/time.tools.json"),
        )
        .unwrap(),
    )
    .unwrap();
    let captured: Vec<Value> = captured
        .as_array()
        .or_else(|| captured["tools"].as_array())
        .unwrap()
        .iter()
        .map(|t| json!({"name": t["name"], "description": t["description"], "inputSchema": t["inputSchema"]}))
        .collect();
    for api in APIS {
        let (bodies, ..) = run_chain(api, Options::default()).await;
        for body in &bodies {
            assert_eq!(api.declared_tools(body), captured, "{api:?}");
        }
        // The wrapper each API puts around a tool, its schema elided (it equals the capture).
        let first = match api {
            Api::Gemini => &bodies[0]["tools"][0]["functionDeclarations"][0],
            _ => &bodies[0]["tools"][0],
        };
        let text = first
            .to_string()
            .replace(&captured[0]["inputSchema"].to_string(), "\"[inputSchema]\"");
        let mut wrapper: Value = serde_json::from_str(&text).unwrap();
        wrapper = match api {
            Api::Gemini => json!([{"functionDeclarations": [wrapper, "…"]}]),
            _ => json!([wrapper, "…"]),
        };
        insta::assert_json_snapshot!(format!("tool_wrapper_{api:?}"), wrapper);
    }
}

/// `run` with a provider that answers HTTP 200 with a body not in its format: a clear error
/// naming the provider and what is missing, exit 3 (a provider failure), after one request.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_garbage_answer_is_exit_3_in_every_api() {
    for api in APIS {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .respond_with(ResponseTemplate::new(200).set_body_json(json!({"hello": "world"})))
            .mount(&server)
            .await;
        let (code, stderr) = run_verb(&server, &["--agent", api.spec()]).await;
        assert_eq!(code, Some(3), "{api:?}: {stderr}");
        insta::assert_snapshot!(format!("garbage_{api:?}"), stderr.trim_end());
        assert_eq!(
            server.received_requests().await.unwrap().len(),
            1,
            "{api:?}"
        );
    }
}

/// A seed the API cannot take, or a temperature outside the API's range, is a usage error
/// (exit 2) before any request.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn settings_an_api_cannot_take_are_refused_before_any_request() {
    let server = MockServer::start().await;
    let cases: [&[&str]; 4] = [
        &["--agent", "anthropic:m-1", "--seed", "7"],
        &["--agent", "openai:responses:m-1", "--seed", "7"],
        &["--agent", "anthropic:m-1", "--temperature", "1.5"],
        &["--agent", "openai:m-1", "--temperature", "NaN"],
    ];
    let mut seen = Vec::new();
    for args in cases {
        let (code, stderr) = run_verb(&server, args).await;
        assert_eq!(code, Some(2), "{args:?}: {stderr}");
        seen.push(format!(
            "{}\n  {}",
            args.join(" "),
            stderr.trim_end().lines().next().unwrap_or("")
        ));
    }
    insta::assert_snapshot!(seen.join("\n"));
    assert_eq!(server.received_requests().await.unwrap().len(), 0);
}

/// `agent-seer run harnesses/time.yaml ARGS -o DIR` with every provider's base URL at `server`
/// and a key for each; the exit code and stderr (temporary paths as `[dir]`).
async fn run_verb(server: &MockServer, args: &[&str]) -> (Option<i32>, String) {
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_agent-seer"));
    cmd.args(["run", "harnesses/time.yaml"])
        .args(args)
        .arg("-o")
        .arg(dir.path().join("out"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("AGENT_SEER_OPENAI_BASE_URL", server.uri())
        .env("AGENT_SEER_ANTHROPIC_BASE_URL", server.uri())
        .env("AGENT_SEER_GEMINI_BASE_URL", server.uri())
        .env("OPENAI_API_KEY", KEY)
        .env("ANTHROPIC_API_KEY", KEY)
        .env("GEMINI_API_KEY", KEY)
        .env("AGENT_SEER_LLM_CACHE", dir.path().join("cache"))
        .env("AGENT_SEER_LLM_BACKOFF_MS", "1")
        .env("AGENT_SEER_ROOT", env!("CARGO_MANIFEST_DIR"))
        .env_remove("AGENT_SEER_LLM")
        .env_remove("AGENT_SEER_JUDGE");
    let o = tokio::task::spawn_blocking(move || cmd.output().unwrap())
        .await
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr).replace(dir.path().to_str().unwrap(), "[dir]");
    (o.status.code(), stderr)
}

/// A result the mock marks `isError: true` (here: a tool the spec does not have) reaches
/// Anthropic as a `tool_result` with `is_error: true`; a good result carries no flag.
#[tokio::test]
async fn an_error_result_is_flagged_to_anthropic() {
    struct Wrong;
    impl Respond for Wrong {
        fn respond(&self, req: &WireRequest) -> ResponseTemplate {
            let Ok(body) = serde_json::from_slice::<Value>(&req.body) else {
                return ResponseTemplate::new(400);
            };
            let content = match Api::Anthropic.results_in(&body) {
                0 => {
                    json!([{"type": "tool_use", "id": "toolu_a", "name": "get_time", "input": {"zone": "Berlin"}}])
                }
                1 => {
                    json!([{"type": "tool_use", "id": "toolu_b", "name": "get_current_time", "input": {"timezone": "Europe/Berlin"}}])
                }
                _ => json!([{"type": "text", "text": REPLY}]),
            };
            ResponseTemplate::new(200).set_body_json(json!({"id": "msg_1", "type": "message", "role": "assistant", "model": "m-1",
                "content": content, "stop_reason": "tool_use", "usage": {"input_tokens": 1, "output_tokens": 1}}))
        }
    }
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/messages"))
        .and(header("x-api-key", KEY))
        .and(header("anthropic-version", "2023-06-01"))
        .respond_with(Wrong)
        .mount(&server)
        .await;
    let dir = tempfile::tempdir().unwrap();
    let c = client(
        Api::Anthropic.provider(&server),
        dir.path(),
        CacheMode::Live,
        Duration::from_secs(5),
    );
    let opts = Options {
        out_dir: dir.path().join("out"),
        agent: "anthropic:m-1".into(),
        ..Options::default()
    };
    let results = run_suite(&c, &berlin_suite(), &opts).await.unwrap();
    let t = std::fs::read_to_string(&results[0].runs[0].transcript).unwrap();
    assert!(t.contains("tool: get_time"), "{t}");
    let reqs = server.received_requests().await.unwrap();
    assert_eq!(reqs.len(), 3);
    let last: Value = serde_json::from_slice(&reqs[2].body).unwrap();
    let flags: Vec<(Value, Value)> = last["messages"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
        .filter(|b| b["type"] == "tool_result")
        .map(|b| (b["tool_use_id"].clone(), b["is_error"].clone()))
        .collect();
    assert_eq!(
        flags,
        [
            (json!("toolu_a"), json!(true)),
            (json!("toolu_b"), Value::Null)
        ]
    );
}

/// A reply stays in the conversation: the second turn's prompt follows the first turn's
/// reply, in every API (the runner dropped it, so a later turn lost what the agent had said).
#[tokio::test]
async fn a_reply_is_kept_for_the_next_turn() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("harnesses/time.tools.json"),
        dir.path().join("time.tools.json"),
    )
    .unwrap();
    let second = "And in Los Angeles, at that moment?";
    std::fs::write(
        dir.path().join("two.yaml"),
        format!("suite: two\ntools: [time.tools.json]\nscenarios:\n  - id: two-turns\n    turns:\n      - prompt: What time is it in Berlin?\n      - prompt: {second}\n"),
    )
    .unwrap();
    let suite = Suite::load(&dir.path().join("two.yaml")).unwrap();
    for api in APIS {
        // Turn 1: the script's two calls and its reply; turn 2: the reply again.
        let (bodies, _, t, _) = run_on(api, &suite, Options::default()).await;
        assert_eq!(bodies.len(), 4, "{api:?}");
        assert_eq!(t.matches(REPLY).count(), 2, "{api:?}: {t}");
        let turn2 = bodies[3].to_string();
        let (reply, prompt) = (turn2.find(REPLY), turn2.find(second));
        assert!(
            reply.is_some() && reply < prompt,
            "{api:?}: the reply before the next prompt: {turn2}"
        );
    }
}

/// `--system-file` through the command line: its text is the system prompt of every
/// request; a file that cannot be read, or `--system` with it, is a usage error (exit 2).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_system_prompt_from_a_file() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/chat/completions"))
        .respond_with(Scripted(Api::Chat))
        .mount(&server)
        .await;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("system.txt");
    std::fs::write(&file, "You are a careful scheduler.").unwrap();
    let file = file.to_str().unwrap();
    let (code, stderr) = run_verb(
        &server,
        &[
            "--agent",
            "openai:m-1",
            "--system-file",
            file,
            "--seed",
            "3",
        ],
    )
    .await;
    assert!(matches!(code, Some(0 | 1)), "{stderr}");
    let reqs = server.received_requests().await.unwrap();
    assert!(!reqs.is_empty());
    for r in &reqs {
        let body: Value = serde_json::from_slice(&r.body).unwrap();
        assert_eq!(
            body["messages"][0],
            json!({"role": "system", "content": "You are a careful scheduler."})
        );
        assert_eq!(body["seed"], 3);
    }
    let missing = dir.path().join("none.txt");
    let (code, stderr) = run_verb(
        &server,
        &[
            "--agent",
            "openai:m-1",
            "--system-file",
            missing.to_str().unwrap(),
        ],
    )
    .await;
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("--system-file"), "{stderr}");
    let (code, stderr) = run_verb(
        &server,
        &[
            "--agent",
            "openai:m-1",
            "--system",
            "x",
            "--system-file",
            file,
        ],
    )
    .await;
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("cannot be used with"), "{stderr}");
    assert_eq!(server.received_requests().await.unwrap().len(), reqs.len());
}
