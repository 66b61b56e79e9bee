//! The LLM layer against wiremock servers that speak each provider's real wire format: request
//! shapes, structured output, retries (429 with Retry-After, 5xx, timeouts), invalid and
//! truncated answers, refusals, and the cache (live, replay, zero requests when warm).

use std::path::Path;
use std::time::Duration;

use agent_seer::llm::{CacheMode, Client, LlmConfig, LlmError, Provider, Request};
use serde::Deserialize;
use serde_json::{Value, json};
use wiremock::matchers::{body_partial_json, header, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

const KEY: &str = "sk-test-SECRET-never-printed";

#[derive(Clone, Debug, Deserialize, PartialEq)]
struct Grade {
    score: u8,
    why: String,
}

fn check(g: &Grade) -> Result<(), String> {
    if g.score > 10 {
        Err(format!("score {} is above 10", g.score))
    } else {
        Ok(())
    }
}

fn request() -> Request {
    Request {
        system: "You grade.".into(),
        user: "Grade this call.".into(),
        schema_name: "grade".into(),
        schema: json!({"type": "object", "additionalProperties": false, "required": ["score", "why"],
            "properties": {"score": {"type": "integer", "minimum": 0, "maximum": 10}, "why": {"type": "string", "maxLength": 100}}}),
        temperature: 0.0,
        max_tokens: 200,
        cache_tag: "test-1".into(),
        seed: None,
    }
}

fn client(provider: Provider, cache: &Path, mode: CacheMode, timeout: Duration) -> Client {
    Client::new(LlmConfig {
        provider,
        model: "m-1".into(),
        timeout,
        concurrency: 4,
        max_retries: 3,
        min_backoff: Duration::from_millis(10),
        max_backoff: Duration::from_secs(60),
        cache_dir: cache.to_path_buf(),
        mode,
    })
    .unwrap()
}

/// A finished `agent-seer` run that must have succeeded: its stdout as JSON.
fn json_stdout(o: &std::process::Output) -> Value {
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_slice(&o.stdout).unwrap()
}

/// A live client for an OpenAI-compatible mock, with an empty cache that lives as long as the
/// returned directory.
fn live_openai(server: &MockServer) -> (tempfile::TempDir, Client) {
    let dir = tempfile::tempdir().unwrap();
    let c = client(
        openai(server),
        dir.path(),
        CacheMode::Live,
        Duration::from_secs(5),
    );
    (dir, c)
}

/// One structured call through a fresh client and an empty cache.
async fn grade(provider: Provider, timeout: Duration) -> Result<Grade, LlmError> {
    let dir = tempfile::tempdir().unwrap();
    client(provider, dir.path(), CacheMode::Live, timeout)
        .structured(&request(), check)
        .await
}

fn openai(server: &MockServer) -> Provider {
    Provider::OpenAi {
        base_url: server.uri(),
        key: Some(KEY.into()),
    }
}

fn openai_body(content: &str) -> Value {
    json!({"id": "chatcmpl-1", "object": "chat.completion", "model": "m-1",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 40, "completion_tokens": 12, "total_tokens": 52}})
}

mod agent;
mod agent_apis;
mod batch;
mod cache;
mod certify;
mod exit_codes;
mod faults;
mod generate;
mod local;
mod providers;
mod secrets;
