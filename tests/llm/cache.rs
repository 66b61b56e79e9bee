use super::*;

#[tokio::test]
async fn warm_cache_makes_no_requests() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(openai_body(r#"{"score": 6, "why": "cached"}"#)),
        )
        .expect(1) // checked when the server drops: one request over both runs
        .mount(&server)
        .await;
    let dir = tempfile::tempdir().unwrap();
    let cold = client(
        openai(&server),
        dir.path(),
        CacheMode::Live,
        Duration::from_secs(5),
    );
    let a: Grade = cold.structured(&request(), check).await.unwrap();
    let warm = client(
        openai(&server),
        dir.path(),
        CacheMode::Live,
        Duration::from_secs(5),
    );
    let b: Grade = warm.structured(&request(), check).await.unwrap();
    assert_eq!(a, b);
    assert_eq!(warm.ledger().entries()["openai:m-1"].cached, 1);
    assert_eq!(server.received_requests().await.unwrap().len(), 1);
    // The entry holds no key and says where it came from.
    let key = cold.cache_key(&request());
    let text =
        std::fs::read_to_string(dir.path().join(&key[..2]).join(format!("{key}.json"))).unwrap();
    assert!(!text.contains(KEY));
    assert!(text.contains("\"source\": \"recorded\""));
}

#[tokio::test]
async fn replay_answers_only_from_the_cache() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(
            ResponseTemplate::new(200).set_body_json(openai_body(r#"{"score": 2, "why": "r"}"#)),
        )
        .expect(1)
        .mount(&server)
        .await;
    let dir = tempfile::tempdir().unwrap();
    let recorder = client(
        openai(&server),
        dir.path(),
        CacheMode::Record,
        Duration::from_secs(5),
    );
    let _: Grade = recorder.structured(&request(), check).await.unwrap();
    // Replay needs no key and no server.
    let offline = Provider::OpenAi {
        base_url: "http://127.0.0.1:9".into(),
        key: None,
    };
    let replay = client(
        offline,
        dir.path(),
        CacheMode::Replay,
        Duration::from_secs(5),
    );
    let g: Grade = replay.structured(&request(), check).await.unwrap();
    assert_eq!(g.score, 2);
    let mut other = request();
    other.user.push_str(" (changed)");
    let err = replay
        .structured::<Grade, _>(&other, check)
        .await
        .unwrap_err();
    assert!(matches!(err, LlmError::CacheMiss { .. }), "{err}");
    assert!(
        err.to_string().contains(&replay.cache_key(&other)),
        "the miss names its key: {err}"
    );
}

#[test]
fn keys_change_with_every_input() {
    let dir = tempfile::tempdir().unwrap();
    let c = client(
        Provider::OpenAi {
            base_url: "http://x".into(),
            key: Some(KEY.into()),
        },
        dir.path(),
        CacheMode::Live,
        Duration::from_secs(1),
    );
    let base = c.cache_key(&request());
    let variants: Vec<Request> = vec![
        Request {
            temperature: 0.5,
            ..request()
        },
        Request {
            system: "Other.".into(),
            ..request()
        },
        Request {
            cache_tag: "test-2".into(),
            seed: None,
            ..request()
        },
        Request {
            schema: json!({"type": "object"}),
            ..request()
        },
    ];
    for v in variants {
        assert_ne!(c.cache_key(&v), base);
    }
    let same_key_other_secret = client(
        Provider::OpenAi {
            base_url: "http://y".into(),
            key: Some("other".into()),
        },
        dir.path(),
        CacheMode::Live,
        Duration::from_secs(1),
    );
    assert_eq!(
        same_key_other_secret.cache_key(&request()),
        base,
        "keys and URLs are not key material"
    );
    assert_eq!(base.len(), 64);
}

#[tokio::test]
async fn a_read_only_cache_is_a_clear_error_with_no_partial_entry() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(
            ResponseTemplate::new(200).set_body_json(openai_body(r#"{"score": 2, "why": "r"}"#)),
        )
        .mount(&server)
        .await;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("not-a-dir");
    std::fs::write(&file, "").unwrap();
    let err = client(
        openai(&server),
        &file,
        CacheMode::Live,
        Duration::from_secs(5),
    )
    .structured::<Grade, _>(&request(), check)
    .await
    .unwrap_err();
    assert!(matches!(err, LlmError::Cache { .. }), "{err}");
}

/// A hit in live mode reads the entry and writes nothing: a hand-written entry keeps its
/// bytes, its `source` and its modification time.
#[tokio::test]
async fn a_cache_hit_leaves_the_entry_untouched() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(
            ResponseTemplate::new(200).set_body_json(openai_body(r#"{"score": 1, "why": "x"}"#)),
        )
        .expect(0)
        .mount(&server)
        .await;
    let dir = tempfile::tempdir().unwrap();
    let c = client(
        openai(&server),
        dir.path(),
        CacheMode::Live,
        Duration::from_secs(5),
    );
    let key = c.cache_key(&request());
    let file = dir.path().join(&key[..2]).join(format!("{key}.json"));
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    let entry = json!({"key": key, "source": "hand-written: a test fixture", "provider": "openai",
        "model": "m-1", "answer": {"text": "{\"score\": 9, \"why\": \"by hand\"}",
        "usage": {"input_tokens": 0, "output_tokens": 0}}, "request": null});
    let bytes = serde_json::to_string_pretty(&entry).unwrap();
    std::fs::write(&file, &bytes).unwrap();
    let old = std::time::SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000_000);
    std::fs::File::options()
        .write(true)
        .open(&file)
        .unwrap()
        .set_modified(old)
        .unwrap();
    let g: Grade = c.structured(&request(), check).await.unwrap();
    assert_eq!(g.score, 9);
    assert_eq!(c.ledger().entries()["openai:m-1"].cached, 1);
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        bytes,
        "bytes unchanged"
    );
    assert_eq!(
        std::fs::metadata(&file).unwrap().modified().unwrap(),
        old,
        "not rewritten"
    );
}
