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
