use super::*;

#[tokio::test]
async fn rate_limit_honours_retry_after() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(
            ResponseTemplate::new(429)
                .insert_header("retry-after", "1")
                .set_body_string("slow down"),
        )
        .up_to_n_times(1)
        .expect(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .respond_with(
            ResponseTemplate::new(200).set_body_json(openai_body(r#"{"score": 1, "why": "x"}"#)),
        )
        .expect(1)
        .mount(&server)
        .await;
    let (_dir, c) = live_openai(&server);
    let start = std::time::Instant::now();
    let g: Grade = c.structured(&request(), check).await.unwrap();
    assert_eq!(g.score, 1);
    // Retry-After: 1 overrides the 10 ms backoff.
    assert!(
        start.elapsed() >= Duration::from_millis(900),
        "{:?}",
        start.elapsed()
    );
}

#[tokio::test]
async fn server_errors_are_retried_then_reported() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(500).set_body_string("internal"))
        .expect(4) // the first try and three retries
        .mount(&server)
        .await;
    let err = grade(openai(&server), Duration::from_secs(5))
        .await
        .unwrap_err();
    assert!(matches!(err, LlmError::Http { status: 500, .. }), "{err}");
    assert!(!err.to_string().contains(KEY));
}

#[tokio::test]
async fn a_500_then_success() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(503))
        .up_to_n_times(2)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .respond_with(
            ResponseTemplate::new(200).set_body_json(openai_body(r#"{"score": 4, "why": "x"}"#)),
        )
        .mount(&server)
        .await;
    let g: Grade = grade(openai(&server), Duration::from_secs(5))
        .await
        .unwrap();
    assert_eq!(g.score, 4);
    assert_eq!(server.received_requests().await.unwrap().len(), 3);
}

#[tokio::test]
async fn a_server_that_hangs_times_out() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(openai_body("{}"))
                .set_delay(Duration::from_secs(5)),
        )
        .mount(&server)
        .await;
    let err = grade(openai(&server), Duration::from_millis(200))
        .await
        .unwrap_err();
    assert!(matches!(err, LlmError::Timeout { .. }), "{err}");
    assert_eq!(
        server.received_requests().await.unwrap().len(),
        4,
        "timeouts are retried"
    );
}

#[tokio::test]
async fn truncated_json_is_retried_then_a_clear_error() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_json(openai_body(
            r#"{"score": 7, "why": "the model ran out of tok"#,
        )))
        .expect(3)
        .mount(&server)
        .await;
    let dir = tempfile::tempdir().unwrap();
    let err = client(
        openai(&server),
        dir.path(),
        CacheMode::Live,
        Duration::from_secs(5),
    )
    .structured::<Grade, _>(&request(), check)
    .await
    .unwrap_err();
    match err {
        LlmError::InvalidOutput {
            attempts,
            problem,
            excerpt,
        } => {
            assert_eq!(attempts, 3);
            assert!(problem.contains("no complete JSON object"), "{problem}");
            assert!(excerpt.starts_with("{\"score\": 7"), "{excerpt}");
        }
        other => panic!("{other}"),
    }
    assert!(
        std::fs::read_dir(dir.path())
            .map(|d| d.count())
            .unwrap_or(0)
            == 0,
        "invalid answers are never cached"
    );
}

#[tokio::test]
async fn schema_invalid_answer_is_fed_back() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(
            ResponseTemplate::new(200).set_body_json(openai_body(r#"{"score": 42, "why": "x"}"#)),
        )
        .up_to_n_times(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(openai_body(r#"Here you go: {"score": 8, "why": "fixed"}"#)),
        )
        .mount(&server)
        .await;
    let g: Grade = grade(openai(&server), Duration::from_secs(5))
        .await
        .unwrap();
    assert_eq!(g.score, 8);
    let second: Value =
        serde_json::from_slice(&server.received_requests().await.unwrap()[1].body).unwrap();
    let user = second["messages"][1]["content"].as_str().unwrap();
    assert!(
        user.contains("previous answer was rejected: score 42 is above 10"),
        "{user}"
    );
}

#[tokio::test]
async fn wrong_shape_is_retried() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_json(openai_body(r#"{"grade": "A"}"#)))
        .expect(3)
        .mount(&server)
        .await;
    let err = grade(openai(&server), Duration::from_secs(5))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("does not fit the schema"), "{err}");
}

#[tokio::test]
async fn refusals_are_errors_not_retries() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "choices": [{"index": 0, "message": {"role": "assistant", "content": null, "refusal": "I can't help with that."}, "finish_reason": "stop"}]
        })))
        .expect(1)
        .mount(&server)
        .await;
    let err = grade(openai(&server), Duration::from_secs(5))
        .await
        .unwrap_err();
    assert!(matches!(err, LlmError::Refusal { .. }), "{err}");
    assert!(err.to_string().contains("can't help"), "{err}");
}

#[tokio::test]
async fn gemini_safety_block_is_a_refusal() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(json!({"promptFeedback": {"blockReason": "SAFETY"}})),
        )
        .expect(1)
        .mount(&server)
        .await;
    let dir = tempfile::tempdir().unwrap();
    let err = client(
        Provider::Gemini {
            base_url: server.uri(),
            key: Some(KEY.into()),
        },
        dir.path(),
        CacheMode::Live,
        Duration::from_secs(5),
    )
    .structured::<Grade, _>(&request(), check)
    .await
    .unwrap_err();
    assert!(matches!(err, LlmError::Refusal { .. }), "{err}");
}

#[tokio::test]
async fn non_json_body_is_malformed() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_string("<html>proxy</html>"))
        .mount(&server)
        .await;
    let err = grade(openai(&server), Duration::from_secs(5))
        .await
        .unwrap_err();
    assert!(matches!(err, LlmError::Malformed { .. }), "{err}");
}

#[tokio::test]
async fn a_closed_port_is_a_transport_error() {
    // Bind, learn the port, close: nothing listens there any more.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let dir = tempfile::tempdir().unwrap();
    let p = Provider::OpenAi {
        base_url: format!("http://127.0.0.1:{port}"),
        key: None,
    };
    let err = client(p, dir.path(), CacheMode::Live, Duration::from_secs(2))
        .structured::<Grade, _>(&request(), check)
        .await
        .unwrap_err();
    assert!(matches!(err, LlmError::Transport { .. }), "{err}");
}

/// An answer the provider stopped at its token limit is cut off, in each wire format — even
/// when the text happens to parse — and asked again with that said; three in a row end in an
/// error that names the cause.
#[tokio::test]
async fn answers_cut_off_at_the_token_limit_are_named_and_retried() {
    // (provider, API path, a cut-off answer whose text parses, a complete one)
    let cases: Vec<(&str, &str, Value, Value)> = vec![
        (
            "openai",
            "/chat/completions",
            json!({"choices": [{"index": 0, "message": {"role": "assistant", "content": "{\"score\": 7, \"why\": \"o\"}"}, "finish_reason": "length"}]}),
            openai_body(r#"{"score": 7, "why": "ok"}"#),
        ),
        (
            "gemini",
            "/v1beta/models/m-1:generateContent",
            json!({"candidates": [{"content": {"parts": [{"text": "{\"score\": 7, \"why\": \"o\"}"}]}, "finishReason": "MAX_TOKENS"}]}),
            json!({"candidates": [{"content": {"parts": [{"text": "{\"score\": 7, \"why\": \"ok\"}"}]}, "finishReason": "STOP"}]}),
        ),
        (
            "anthropic",
            "/v1/messages",
            json!({"type": "message", "role": "assistant", "stop_reason": "max_tokens",
                "content": [{"type": "tool_use", "id": "t", "name": "grade", "input": {"score": 7, "why": "o"}}]}),
            json!({"type": "message", "role": "assistant", "stop_reason": "tool_use",
                "content": [{"type": "tool_use", "id": "t", "name": "grade", "input": {"score": 7, "why": "ok"}}]}),
        ),
    ];
    for (name, api, cut, whole) in cases {
        let provider = |server: &MockServer| match name {
            "openai" => openai(server),
            "gemini" => Provider::Gemini {
                base_url: server.uri(),
                key: Some(KEY.into()),
            },
            _ => Provider::Anthropic {
                base_url: server.uri(),
                key: Some(KEY.into()),
            },
        };
        // Cut off once, then whole: the retry says why.
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .and(path(api))
            .respond_with(ResponseTemplate::new(200).set_body_json(cut.clone()))
            .up_to_n_times(1)
            .mount(&server)
            .await;
        Mock::given(method("POST"))
            .and(path(api))
            .respond_with(ResponseTemplate::new(200).set_body_json(whole))
            .mount(&server)
            .await;
        let dir = tempfile::tempdir().unwrap();
        let c = client(
            provider(&server),
            dir.path(),
            CacheMode::Live,
            Duration::from_secs(5),
        );
        let g: Grade = c.structured(&request(), check).await.unwrap();
        assert_eq!(g.why, "ok", "{name}");
        let reqs = server.received_requests().await.unwrap();
        assert_eq!(reqs.len(), 2, "{name}");
        let second = String::from_utf8_lossy(&reqs[1].body);
        assert!(
            second.contains("cut off at the token limit (200)"),
            "{name}: {second}"
        );
        // Cut off every time: the error names the cause, and nothing is cached.
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .and(path(api))
            .respond_with(ResponseTemplate::new(200).set_body_json(cut))
            .expect(3)
            .mount(&server)
            .await;
        let dir = tempfile::tempdir().unwrap();
        let err = client(
            provider(&server),
            dir.path(),
            CacheMode::Live,
            Duration::from_secs(5),
        )
        .structured::<Grade, _>(&request(), check)
        .await
        .unwrap_err();
        match err {
            LlmError::InvalidOutput { problem, .. } => {
                assert!(
                    problem.contains("cut off at the token limit"),
                    "{name}: {problem}"
                )
            }
            other => panic!("{name}: {other}"),
        }
        assert_eq!(
            std::fs::read_dir(dir.path())
                .map(|d| d.count())
                .unwrap_or(0),
            0,
            "{name}: a cut-off answer is never cached"
        );
    }
}

/// Answers from a fixed cycle of responses, counting requests.
struct Cycle(Vec<ResponseTemplate>, std::sync::atomic::AtomicUsize);

impl Cycle {
    fn new(responses: Vec<ResponseTemplate>) -> Self {
        Self(responses, std::sync::atomic::AtomicUsize::new(0))
    }
}

impl wiremock::Respond for Cycle {
    fn respond(&self, _: &wiremock::Request) -> ResponseTemplate {
        let n = self.1.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        self.0[n % self.0.len()].clone()
    }
}

/// Runs `fut`, failing the test when it takes longer than `secs` (an unbounded retry loop
/// would never end).
async fn within<T>(secs: u64, fut: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(secs), fut)
        .await
        .expect("the call did not end: its retries are not bounded")
}

#[tokio::test]
async fn retry_after_zero_is_retried_within_the_budget_then_reported() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(
            ResponseTemplate::new(429)
                .insert_header("retry-after", "0")
                .set_body_string("slow down"),
        )
        .mount(&server)
        .await;
    let err = within(20, grade(openai(&server), Duration::from_secs(5)))
        .await
        .unwrap_err();
    assert_eq!(
        server.received_requests().await.unwrap().len(),
        4,
        "the first request and three retries"
    );
    assert!(matches!(err, LlmError::Http { status: 429, .. }), "{err}");
    assert!(err.to_string().contains("slow down"), "{err}");
}

#[tokio::test]
async fn retry_after_is_capped_at_the_backoff_maximum() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(
            ResponseTemplate::new(429)
                .insert_header("retry-after", "75")
                .set_body_string("come back in 75 s"),
        )
        .mount(&server)
        .await;
    let dir = tempfile::tempdir().unwrap();
    let c = Client::new(LlmConfig {
        max_backoff: Duration::from_millis(200),
        ..client(
            openai(&server),
            dir.path(),
            CacheMode::Live,
            Duration::from_secs(5),
        )
        .config()
        .clone()
    })
    .unwrap();
    let start = std::time::Instant::now();
    let err = within(20, c.structured::<Grade, _>(&request(), check))
        .await
        .unwrap_err();
    let took = start.elapsed();
    assert!(matches!(err, LlmError::Http { status: 429, .. }), "{err}");
    assert_eq!(server.received_requests().await.unwrap().len(), 4);
    // Three waits of at most 200 ms each, not 75 s.
    assert!(
        took >= Duration::from_millis(500) && took < Duration::from_secs(5),
        "{took:?}"
    );
}

/// Transport and answer-shape retries share one budget: three 500s then a schema-invalid
/// answer, repeating, is four requests, not three answers of four requests each.
#[tokio::test]
async fn one_budget_covers_transport_and_answer_retries() {
    let server = MockServer::start().await;
    let e500 = || ResponseTemplate::new(500).set_body_string("internal");
    let invalid = ResponseTemplate::new(200).set_body_json(openai_body(r#"{"grade": "A"}"#));
    Mock::given(method("POST"))
        .respond_with(Cycle::new(vec![e500(), e500(), e500(), invalid.clone()]))
        .mount(&server)
        .await;
    let err = within(20, grade(openai(&server), Duration::from_secs(5)))
        .await
        .unwrap_err();
    assert_eq!(server.received_requests().await.unwrap().len(), 4);
    match &err {
        LlmError::InvalidOutput {
            attempts, problem, ..
        } => {
            assert_eq!(*attempts, 4, "{err}");
            assert!(problem.contains("does not fit the schema"), "{err}");
        }
        other => panic!("{other}"),
    }
    // An invalid answer, then 500s: the 500 is the last cause, still four requests.
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(invalid)
        .up_to_n_times(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .respond_with(e500())
        .mount(&server)
        .await;
    let err = within(20, grade(openai(&server), Duration::from_secs(5)))
        .await
        .unwrap_err();
    assert_eq!(server.received_requests().await.unwrap().len(), 4);
    assert!(matches!(err, LlmError::Http { status: 500, .. }), "{err}");
}

/// The defaults of `LlmConfig::from_env`, through the binary: a provider that answers 500
/// forever gets the first request and three retries for a transcript, then a clear error.
#[tokio::test]
async fn the_cli_makes_four_requests_against_a_failing_provider() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(500).set_body_string("internal"))
        .mount(&server)
        .await;
    let dir = tempfile::tempdir().unwrap();
    let o = judge_cli(
        &server,
        dir.path(),
        "transcripts/lyria/ly0-correct.yaml",
        &[],
    )
    .await;
    let out = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert_ne!(o.status.code(), Some(0), "{out}");
    assert_eq!(server.received_requests().await.unwrap().len(), 4, "{out}");
    assert!(out.contains("HTTP 500"), "{out}");
}

/// `agent-seer judge --judge openai:m-1 PATH` from the repository root against `server`,
/// with [`KEY`] as the key, a 1 ms backoff, its cache under `dir` and `env` set.
pub(crate) async fn judge_cli(
    server: &MockServer,
    dir: &Path,
    path: &str,
    env: &[(&str, &str)],
) -> std::process::Output {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_agent-seer"));
    cmd.args(["judge", "--judge", "openai:m-1", path])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("OPENAI_API_KEY", KEY)
        .env("AGENT_SEER_OPENAI_BASE_URL", server.uri())
        .env("AGENT_SEER_LLM_CACHE", dir.join("cache"))
        .env("AGENT_SEER_LLM_BACKOFF_MS", "1")
        .env_remove("AGENT_SEER_LLM")
        .env_remove("AGENT_SEER_JUDGE")
        .envs(env.iter().copied());
    tokio::task::spawn_blocking(move || cmd.output().unwrap())
        .await
        .unwrap()
}
