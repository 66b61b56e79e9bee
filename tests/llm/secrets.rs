//! Keys a provider echoes back are redacted from errors, answers, cache entries, transcripts
//! and what the binary prints.

use agent_seer::check::Suite;
use wiremock::{Request as WireRequest, Respond};

use super::faults::judge_cli;
use super::*;

/// A 401 body that quotes the credential header, as some gateways do.
fn echo_401(header_line: &str) -> ResponseTemplate {
    ResponseTemplate::new(401).set_body_string(format!(
        r#"{{"error": {{"message": "Incorrect API key provided: {header_line}", "type": "invalid_request_error"}}}}"#
    ))
}

/// A provider pointed at a mock server.
type AtServer = fn(&MockServer) -> Provider;

#[tokio::test]
async fn an_echoed_key_in_an_error_is_redacted_for_every_provider() {
    let providers: Vec<(&str, AtServer, String)> = vec![
        ("openai", openai, format!("authorization: Bearer {KEY}")),
        (
            "gemini",
            |s| Provider::Gemini {
                base_url: s.uri(),
                key: Some(KEY.into()),
            },
            format!("x-goog-api-key: {KEY}"),
        ),
        (
            "anthropic",
            |s| Provider::Anthropic {
                base_url: s.uri(),
                key: Some(KEY.into()),
            },
            format!("x-api-key: {KEY}"),
        ),
        (
            "vertex",
            |s| Provider::Vertex {
                base_url: s.uri(),
                project: "p".into(),
                location: "l".into(),
                token: Some(KEY.into()),
            },
            format!("authorization: Bearer {KEY}"),
        ),
    ];
    for (name, provider, line) in providers {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .respond_with(echo_401(&line))
            .expect(1)
            .mount(&server)
            .await;
        let err = grade(provider(&server), Duration::from_secs(5))
            .await
            .unwrap_err();
        let msg = err.to_string();
        assert!(
            matches!(err, LlmError::Http { status: 401, .. }),
            "{name}: {msg}"
        );
        assert!(!msg.contains(KEY), "{name}: {msg}");
        assert!(msg.contains("[redacted]"), "{name}: {msg}");
    }
}

#[tokio::test]
async fn a_key_at_the_excerpt_cut_is_redacted_whole() {
    // The key straddles the 300-character excerpt: no prefix of it may survive.
    let server = MockServer::start().await;
    let body = format!("{}{KEY}", "x".repeat(290));
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(401).set_body_string(body))
        .mount(&server)
        .await;
    let err = grade(openai(&server), Duration::from_secs(5))
        .await
        .unwrap_err()
        .to_string();
    assert!(!err.contains(&KEY[..10]), "{err}");
    // And in a body that is not JSON.
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_string(format!("<html>{KEY}</html>")))
        .mount(&server)
        .await;
    let err = grade(openai(&server), Duration::from_secs(5))
        .await
        .unwrap_err()
        .to_string();
    assert!(!err.contains(KEY) && err.contains("[redacted]"), "{err}");
}

#[tokio::test]
async fn an_answer_that_quotes_the_key_is_redacted_before_it_is_cached() {
    let server = MockServer::start().await;
    let answer = json!({"score": 3, "why": format!("the key is {KEY}")}).to_string();
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_json(openai_body(&answer)))
        .expect(1)
        .mount(&server)
        .await;
    let mut req = request();
    // A prompt can carry a key too (a transcript that quotes one).
    req.user = format!("Grade this call: {{\"token\": \"{KEY}\"}}");
    let (dir, c) = live_openai(&server);
    let g: Grade = c.structured(&req, check).await.unwrap();
    assert_eq!(g.why, "the key is [redacted]");
    let key = c.cache_key(&req);
    let text =
        std::fs::read_to_string(dir.path().join(&key[..2]).join(format!("{key}.json"))).unwrap();
    assert!(!text.contains(KEY), "{text}");
    assert!(text.contains("the key is [redacted]"), "{text}");
    // A Gemini answer split over parts spells the key only once joined.
    let server = MockServer::start().await;
    let (a, b) = KEY.split_at(8);
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "candidates": [{"content": {"parts": [{"text": format!("{{\"score\": 3, \"why\": \"{a}")}, {"text": format!("{b}\"}}")}]}, "finishReason": "STOP"}]
        })))
        .mount(&server)
        .await;
    let g = grade(
        Provider::Gemini {
            base_url: server.uri(),
            key: Some(KEY.into()),
        },
        Duration::from_secs(5),
    )
    .await
    .unwrap();
    assert_eq!(g.why, "[redacted]");
}

/// An agent that passes the key as an argument, then quotes it in its reply.
struct Leaky;

impl Respond for Leaky {
    fn respond(&self, req: &WireRequest) -> ResponseTemplate {
        let body: Value = serde_json::from_slice(&req.body).unwrap();
        let last = body["messages"].as_array().unwrap().last().unwrap().clone();
        let msg = if last["role"] == "tool" {
            json!({"role": "assistant", "content": format!("Done. Your key is {KEY}.")})
        } else {
            let args = json!({"prompt": format!("lo-fi piano {KEY}"), "model_id": "lyria-3-clip-preview", "output_gcs_bucket": "mybucket"});
            json!({"role": "assistant", "content": null, "tool_calls": [{"id": "call_1", "type": "function",
                "function": {"name": "lyria_generate_music", "arguments": args.to_string()}}]})
        };
        ResponseTemplate::new(200).set_body_json(
            json!({"choices": [{"index": 0, "finish_reason": "stop", "message": msg}]}),
        )
    }
}

#[tokio::test]
async fn a_transcript_never_holds_a_key_the_agent_quotes() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/chat/completions"))
        .respond_with(Leaky)
        .mount(&server)
        .await;
    let dir = tempfile::tempdir().unwrap();
    let suite =
        Suite::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("harnesses/lyria.yaml")).unwrap();
    let c = client(
        openai(&server),
        dir.path(),
        CacheMode::Live,
        Duration::from_secs(5),
    );
    let opts = agent_seer::agent::Options {
        step_budget: 4,
        repeat: 1,
        out_dir: dir.path().join("out"),
        agent: "openai:leaky".into(),
        ..agent_seer::agent::Options::default()
    };
    let results = agent_seer::agent::run_suite(&c, &suite, &opts)
        .await
        .unwrap();
    assert!(!results.is_empty());
    for r in &results {
        for run in &r.runs {
            let text = std::fs::read_to_string(&run.transcript).unwrap();
            assert!(!text.contains(KEY), "{text}");
            assert!(text.contains("Your key is [redacted]."), "{text}");
            assert!(text.contains("lo-fi piano [redacted]"), "{text}");
        }
    }
}

/// What the binary prints after a 401 that quotes the key, and another key of the
/// environment, holds neither.
#[tokio::test]
async fn the_cli_prints_no_echoed_key() {
    const OTHER: &str = "sk-ant-other-provider-secret";
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(echo_401(&format!(
            "authorization: Bearer {KEY} (also seen: {OTHER})"
        )))
        .expect(1)
        .mount(&server)
        .await;
    let dir = tempfile::tempdir().unwrap();
    let mut o = judge_cli(
        &server,
        dir.path(),
        "transcripts/lyria/ly0-correct.yaml",
        &[("ANTHROPIC_API_KEY", OTHER)],
    )
    .await;
    o.stdout.extend(o.stderr);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("HTTP 401"), "{out}");
    assert!(!out.contains(KEY) && !out.contains(OTHER), "{out}");
    assert!(out.contains("[redacted]"), "{out}");
}
