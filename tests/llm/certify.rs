//! `agent-seer judge-certify` against a judge on a wiremock server speaking OpenAI's chat
//! completions: a judge that passes everything, asked twice per transcript (`--repeat 2`).

use super::*;

/// Full marks on every tool-calling sub-dimension, whatever the transcript.
pub(super) fn always_pass() -> Value {
    json!({"usage": {"necessity": 10, "overuse": 10}, "selection": {"correctness": 10, "specificity": 10, "completeness": 10},
        "ordering": {"applicable": false, "sequence_logic": 10, "dependency_handling": 10, "execution_efficiency": 10},
        "arguments": {"completeness": 10, "name_accuracy": 10, "value_accuracy": 10, "type_compliance": 10, "format_compliance": 10, "relevancy": 10},
        "coherence": {"logical_flow": 3, "completeness": 3, "conciseness": 3, "topic_relevance": 3, "context_retention": 0},
        "failures": [], "rationale": "mock judge: always pass"})
}

async fn certify(server: &MockServer, cache: &Path) -> std::process::Output {
    let (uri, cache) = (server.uri(), cache.to_path_buf());
    tokio::task::spawn_blocking(move || {
        std::process::Command::new(env!("CARGO_BIN_EXE_agent-seer"))
            .args([
                "judge-certify",
                "--judge",
                "openai:always-pass",
                "--repeat",
                "2",
                "--min-tpr",
                "0.8",
                "--min-tnr",
                "0.8",
                "--format",
                "json",
                "transcripts/lyria",
            ])
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .env("AGENT_SEER_OPENAI_BASE_URL", uri)
            .env("AGENT_SEER_LLM_CACHE", cache)
            .env("OPENAI_API_KEY", KEY)
            .env_remove("AGENT_SEER_LLM")
            .env_remove("AGENT_SEER_JUDGE")
            .output()
            .unwrap()
    })
    .await
    .unwrap()
}

/// Lyria has 7 labelled transcripts, 5 broken. The always-pass judge: TPR 0/5, TNR 2/2, κ 0,
/// below the bar (exit 1). Each repeat is its own request (14 in all) and agrees with the
/// first, so self-consistency is 1; α is undefined when every verdict is the same. Repeat 2 is
/// sent with `seed: 2`. A second run asks nothing: both repeats are cached, each under its own
/// key.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_always_pass_judge_is_not_certified() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/chat/completions"))
        .and(header("authorization", format!("Bearer {KEY}").as_str()))
        .respond_with(
            ResponseTemplate::new(200).set_body_json(openai_body(&always_pass().to_string())),
        )
        .mount(&server)
        .await;
    let dir = tempfile::tempdir().unwrap();
    let o = certify(&server, dir.path()).await;
    assert_eq!(
        o.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let c = &v["certification"];
    let j = &c["judges"][0];
    assert_eq!(j["confusion"], json!({"tp": 0, "fn": 5, "tn": 2, "fp": 0}));
    assert_eq!(j["kappa"], 0.0);
    assert_eq!(j["repeats"], 2);
    assert_eq!(j["self_consistency"], 1.0);
    assert_eq!(c["alpha"], Value::Null);
    assert_eq!(c["raters"], 2);
    assert_eq!(v["certified"], false);
    let sent = server.received_requests().await.unwrap();
    assert_eq!(sent.len(), 14);
    // Repeat 1 is the judge trials' own request (no seed); repeat 2 is seeded with 2.
    let mut seeds: Vec<Value> = sent
        .iter()
        .map(|r| serde_json::from_slice::<Value>(&r.body).unwrap()["seed"].clone())
        .collect();
    seeds.sort_by_key(|s| s.to_string());
    assert_eq!(seeds, [vec![json!(2); 7], vec![Value::Null; 7]].concat());
    let again = certify(&server, dir.path()).await;
    assert_eq!(again.status.code(), Some(1));
    assert_eq!(
        server.received_requests().await.unwrap().len(),
        14,
        "both repeats replay from the cache"
    );
}
