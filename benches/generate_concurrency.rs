//! Generation throughput against a mock LLM that answers in 200 ms: the four stages on a
//! 64-tool spec (198 requests: 64 interpretations, one coverage round of 6 batches, 96 mocked
//! scenarios, 32 expansions) at concurrency 1 and at concurrency 8.
//! `cargo bench --bench generate_concurrency` prints both wall times, the speed-up, and the
//! bound the stage barriers set (each stage, and each coverage round, waits for its slowest
//! record before the next begins).

mod common;

#[cfg(feature = "mimalloc")]
#[global_allocator]
static ALLOC: agent_seer::Allocator = agent_seer::Allocator;

use common::delay;

use std::time::{Duration, Instant};

use agent_seer::generate::{Generator, mocks::Seeds, scenarios::Plan, write};
use agent_seer::lint::Linter;
use agent_seer::llm::{CacheMode, Client, LlmConfig, Provider};
use agent_seer::spec::ToolSet;
use serde_json::{Value, json};
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

/// Answers every stage, well-formed: per offered tool one simple scenario, and per pair of
/// offered tools one complex scenario of two calls (which stage 4 splits into two turns).
struct Writer;

impl Respond for Writer {
    fn respond(&self, req: &Request) -> ResponseTemplate {
        let body: Value = serde_json::from_slice(&req.body).expect("json body");
        let user = body["messages"][1]["content"].as_str().unwrap_or_default();
        let call = |t: &str| json!({"function_name": t, "parameters": {"x": "v"}, "quick_explanation": "q"});
        let answer = match body["response_format"]["json_schema"]["name"].as_str() {
            Some("tool_explanation") => {
                let tool = user
                    .lines()
                    .next()
                    .unwrap_or_default()
                    .trim_start_matches("Tool name: ");
                json!({"tool_name": tool, "what_it_does": "Does it.", "what_it_needs": "An x.", "why_its_used": "Ops.", "enterprise_context": ["Ops"]})
            }
            Some("scenarios") => {
                let offered: Vec<&str> = user
                    .lines()
                    .filter_map(|l| l.strip_prefix("- "))
                    .filter_map(|l| l.split(':').next())
                    .collect();
                let mut list: Vec<Value> = offered
                    .iter()
                    .map(|t| json!({"title": format!("Use {t}"), "tier": "simple", "category": "Ops", "prompt": format!("Please use {t}."),
                        "agent_workflow": [call(t)], "novelty_reason": "n", "agent_followup": "f"}))
                    .collect();
                list.extend(offered.chunks(2).filter(|p| p.len() == 2).map(|p| {
                    json!({"title": format!("{} then {}", p[0], p[1]), "tier": "complex", "category": "Ops", "prompt": "Do both.",
                        "agent_workflow": [call(p[0]), call(p[1])], "novelty_reason": "n", "agent_followup": "f"})
                }));
                json!({"scenarios": list})
            }
            Some("mocked_workflow") => {
                let calls = user
                    .lines()
                    .filter(|l| l.chars().next().is_some_and(|c| c.is_ascii_digit()))
                    .count();
                let outputs: Vec<Value> = (0..calls)
                    .map(|i| json!({"content": [{"type": "text", "text": format!("Saved gs://b/out/call{i}.txt")}]}))
                    .collect();
                json!({"outputs": outputs, "expected_response": format!("Done: gs://b/out/call{}.txt.", calls.saturating_sub(1))})
            }
            Some("expansion") => json!({"turns": [
                {"prompt": "Do the first.", "calls": [1], "followup": "Now the second."},
                {"prompt": "Do the second.", "calls": [2], "followup": ""}]}),
            other => panic!("unexpected stage {other:?}"),
        };
        ResponseTemplate::new(200)
            .set_body_json(json!({"choices": [{"index": 0, "message": {"role": "assistant", "content": answer.to_string()}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 1000, "completion_tokens": 300}}))
            .set_delay(delay())
    }
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let tools: Vec<Value> = (0..64)
        .map(|i| json!({"name": format!("t{i:02}"), "description": format!("Tool {i}."), "inputSchema": {"type": "object", "properties": {"x": {"type": "string"}}, "required": ["x"]}}))
        .collect();
    let spec = ToolSet::from_json(&Value::Array(tools)).expect("spec");
    let linter = Linter::new(&spec, vec![]).expect("linter");
    let server = rt.block_on(MockServer::start());
    rt.block_on(
        Mock::given(method("POST"))
            .respond_with(Writer)
            .mount(&server),
    );
    let mut runs = Vec::new();
    for concurrency in [1, 8] {
        let dir = tempfile::tempdir().expect("temp dir");
        let client = Client::new(LlmConfig {
            provider: Provider::OpenAi {
                base_url: server.uri(),
                key: None,
            },
            model: "mock-200ms".into(),
            timeout: Duration::from_secs(30),
            concurrency,
            max_retries: 0,
            min_backoff: Duration::from_millis(10),
            max_backoff: Duration::from_secs(60),
            cache_dir: dir.path().to_path_buf(),
            mode: CacheMode::Record,
        })
        .expect("client");
        let mut g = Generator::new(&client, &spec, &[]);
        let start = Instant::now();
        let (mocked, expansions) = rt
            .block_on(async {
                let tools = g.interpret().await?;
                let plan = Plan::default();
                let (scenarios, _) = g.scenarios(&tools, &linter, plan).await?;
                let mocked = g.mocks(scenarios, &linter, &Seeds::new()).await?;
                let expansions = g.expand(&mocked).await?;
                Ok::<_, agent_seer::llm::LlmError>((mocked, expansions))
            })
            .expect("generation");
        let elapsed = start.elapsed();
        // What the harness is written from (a harness document is serialised only inside the
        // crate): the same at both concurrencies.
        write::harness("t64", "t64.tools.json", &[], &mocked, &expansions).expect("harness");
        let records = (mocked, expansions, g.report.clone());
        let calls: u64 = client.ledger().entries().values().map(|e| e.calls).sum();
        let stages: Vec<String> = g
            .report
            .stages
            .iter()
            .map(|(s, c)| format!("{s} {}", c.produced))
            .collect();
        println!(
            "generate, 64-tool spec, {calls} requests, mock LLM {} ms/answer, concurrency {concurrency}: {:.2} s ({})",
            delay().as_millis(),
            elapsed.as_secs_f64(),
            stages.join(", ")
        );
        runs.push((elapsed, records, calls));
    }
    assert_eq!(
        runs[0].1, runs[1].1,
        "the same harness at both concurrencies"
    );
    let speedup = runs[0].0.as_secs_f64() / runs[1].0.as_secs_f64();
    // Each stage (and coverage round) waits for its last record: 64, 6, 96, 32 requests run
    // in ceil(n / 8) waves of 200 ms at best.
    let waves: u64 = [64u64, 6, 96, 32].iter().map(|n| n.div_ceil(8)).sum();
    println!(
        "speed-up at concurrency 8: {speedup:.1}x (the stage barriers allow at most {:.1}x: {} requests in {waves} waves)",
        runs[0].2 as f64 / waves as f64,
        runs[0].2
    );
}
