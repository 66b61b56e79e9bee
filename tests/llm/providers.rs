use super::*;

#[tokio::test]
async fn openai_compatible_request_and_answer() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/chat/completions"))
        .and(header("authorization", format!("Bearer {KEY}").as_str()))
        .and(body_partial_json(json!({
            "model": "m-1", "temperature": 0.0,
            "response_format": {"type": "json_schema", "json_schema": {"name": "grade", "strict": true}},
            "messages": [{"role": "system", "content": "You grade."}, {"role": "user", "content": "Grade this call."}]
        })))
        .respond_with(ResponseTemplate::new(200).set_body_json(openai_body(r#"{"score": 7, "why": "ok"}"#)))
        .expect(1)
        .mount(&server)
        .await;
    let (_dir, c) = live_openai(&server);
    let g: Grade = c.structured(&request(), check).await.unwrap();
    assert_eq!(
        g,
        Grade {
            score: 7,
            why: "ok".into()
        }
    );
    let ledger = c.ledger().entries();
    let e = &ledger["openai:m-1"];
    assert_eq!((e.calls, e.input_tokens, e.output_tokens), (1, 40, 12));
}

#[tokio::test]
async fn gemini_api_key_in_a_header_and_json_schema_mode() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1beta/models/m-1:generateContent"))
        .and(header("x-goog-api-key", KEY))
        .and(body_partial_json(json!({
            "systemInstruction": {"parts": [{"text": "You grade."}]},
            "contents": [{"role": "user", "parts": [{"text": "Grade this call."}]}],
            "generationConfig": {"temperature": 0.0, "responseMimeType": "application/json"}
        })))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "candidates": [{"content": {"role": "model", "parts": [{"text": "{\"score\": 3, "}, {"text": "\"why\": \"wrong model\"}"}]}, "finishReason": "STOP"}],
            "usageMetadata": {"promptTokenCount": 30, "candidatesTokenCount": 9, "totalTokenCount": 39}
        })))
        .expect(1)
        .mount(&server)
        .await;
    let dir = tempfile::tempdir().unwrap();
    let c = client(
        Provider::Gemini {
            base_url: server.uri(),
            key: Some(KEY.into()),
        },
        dir.path(),
        CacheMode::Live,
        Duration::from_secs(5),
    );
    let g: Grade = c.structured(&request(), check).await.unwrap();
    assert_eq!(g.score, 3);
    let received = &server.received_requests().await.unwrap()[0];
    assert!(
        !received.url.as_str().contains(KEY),
        "the key never goes in the URL"
    );
    let body: Value = serde_json::from_slice(&received.body).unwrap();
    assert_eq!(
        body["generationConfig"]["responseJsonSchema"]["required"],
        json!(["score", "why"])
    );
}

#[tokio::test]
async fn vertex_bearer_token_and_path() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/projects/proj-1/locations/us-central1/publishers/google/models/m-1:generateContent"))
        .and(header("authorization", "Bearer ya29.token"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "candidates": [{"content": {"parts": [{"text": "{\"score\": 9, \"why\": \"fine\"}"}]}, "finishReason": "STOP"}]
        })))
        .expect(1)
        .mount(&server)
        .await;
    let dir = tempfile::tempdir().unwrap();
    let p = Provider::Vertex {
        base_url: server.uri(),
        project: "proj-1".into(),
        location: "us-central1".into(),
        token: Some("ya29.token".into()),
    };
    let g: Grade = client(p, dir.path(), CacheMode::Live, Duration::from_secs(5))
        .structured(&request(), check)
        .await
        .unwrap();
    assert_eq!(g.score, 9);
}

#[tokio::test]
async fn anthropic_forced_tool_call() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/messages"))
        .and(header("x-api-key", KEY))
        .and(header("anthropic-version", "2023-06-01"))
        .and(body_partial_json(json!({"system": "You grade.", "tool_choice": {"type": "tool", "name": "grade"}, "tools": [{"name": "grade"}]})))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "id": "msg_1", "type": "message", "role": "assistant", "model": "m-1", "stop_reason": "tool_use",
            "content": [{"type": "tool_use", "id": "toolu_1", "name": "grade", "input": {"score": 5, "why": "meh"}}],
            "usage": {"input_tokens": 50, "output_tokens": 20}
        })))
        .expect(1)
        .mount(&server)
        .await;
    let dir = tempfile::tempdir().unwrap();
    let c = client(
        Provider::Anthropic {
            base_url: server.uri(),
            key: Some(KEY.into()),
        },
        dir.path(),
        CacheMode::Live,
        Duration::from_secs(5),
    );
    let g: Grade = c.structured(&request(), check).await.unwrap();
    assert_eq!(
        g,
        Grade {
            score: 5,
            why: "meh".into()
        }
    );
    assert_eq!(c.ledger().entries()["anthropic:m-1"].output_tokens, 20);
}

#[test]
fn configuration_errors_are_clear() {
    let err = LlmConfig::from_env("gpt-4o", "/tmp".into()).unwrap_err();
    assert!(err.to_string().contains("expected provider:model"), "{err}");
    let err = LlmConfig::from_env("bard:x", "/tmp".into()).unwrap_err();
    assert!(err.to_string().contains("unknown provider `bard`"), "{err}");
}

/// The Responses API as a judge: `instructions`, a user `message` item, `text.format` as a
/// strict JSON schema; the answer from the `output_text` of the `message` item, after a
/// reasoning item.
#[tokio::test]
async fn openai_responses_request_and_answer() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/responses"))
        .and(header("authorization", format!("Bearer {KEY}").as_str()))
        .and(body_partial_json(json!({
            "model": "m-1", "instructions": "You grade.", "max_output_tokens": 200,
            "input": [{"type": "message", "role": "user", "content": "Grade this call."}],
            "text": {"format": {"type": "json_schema", "name": "grade", "strict": true}}
        })))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "id": "resp_1", "object": "response", "status": "completed", "model": "m-1",
            "output": [
                {"type": "reasoning", "id": "rs_1", "summary": []},
                {"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
                 "content": [{"type": "output_text", "text": "{\"score\": 5, \"why\": \"fine\"}", "annotations": []}]}
            ],
            "usage": {"input_tokens": 33, "output_tokens": 7, "total_tokens": 40}
        })))
        .expect(1)
        .mount(&server)
        .await;
    let dir = tempfile::tempdir().unwrap();
    let c = client(
        Provider::OpenAiResponses {
            base_url: server.uri(),
            key: Some(KEY.into()),
        },
        dir.path(),
        CacheMode::Live,
        Duration::from_secs(5),
    );
    let g: Grade = c.structured(&request(), check).await.unwrap();
    assert_eq!(g.score, 5);
    let e = &c.ledger().entries()["openai-responses:m-1"];
    assert_eq!((e.input_tokens, e.output_tokens), (33, 7));
}
