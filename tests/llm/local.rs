//! End to end against a real OpenAI-compatible server: llama.cpp's llama-server with
//! SmolLM2-135M-Instruct, built and started by `.ci/run` (recipe in .ci/llm-server.sh) inside a
//! loopback-only network namespace, which sets `AGENT_SEER_LOCAL_LLM` to its base URL. A 135M
//! model's scores are noise: these tests assert the pipeline (a valid parsed score, the cache
//! written, replay identical, malformed answers ending in a clear error), never its numbers.

use std::sync::Arc;

use agent_seer::check::{Suite, evaluate};
use agent_seer::harness::Transcript;
use agent_seer::judge::{self, Job, Mode};

use super::*;

fn base_url() -> String {
    std::env::var("AGENT_SEER_LOCAL_LLM")
        .expect("AGENT_SEER_LOCAL_LLM: run through .ci/run, which starts llama-server")
}

fn local(cache: &Path, mode: CacheMode) -> Client {
    Client::new(LlmConfig {
        provider: Provider::OpenAi {
            base_url: base_url(),
            key: None,
        },
        model: "smollm2-135m-instruct".into(),
        // A 1.5B model on one thread of a busy 2-core machine took up to 477 s for a judge
        // answer (bench/llm-quality.md): the timeout leaves room for that.
        timeout: Duration::from_secs(900),
        concurrency: 1,
        max_retries: 2,
        min_backoff: Duration::from_millis(200),
        max_backoff: Duration::from_secs(60),
        cache_dir: cache.to_path_buf(),
        mode,
    })
    .unwrap()
}

fn jobs() -> Vec<Job> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let suite = Arc::new(Suite::load(&root.join("harnesses/lyria.yaml")).unwrap());
    ["ly0-correct", "ly1-wrong-param-model"]
        .iter()
        .map(|id| {
            let t = Transcript::load(&root.join(format!("transcripts/lyria/{id}.yaml"))).unwrap();
            let evaluation = evaluate(&suite, &t).unwrap();
            Job {
                suite: suite.clone(),
                transcript: t,
                evaluation,
            }
        })
        .collect()
}

#[test]
#[ignore = "needs the local llama-server that .ci/run starts (AGENT_SEER_LOCAL_LLM)"]
fn local_judge_records_then_replays() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let recorder = local(dir.path(), CacheMode::Record);
    let first = rt.block_on(judge::judge_many(&recorder, jobs(), Mode::Enriched));
    let mut scores = Vec::new();
    for r in &first {
        let j = r
            .as_ref()
            .unwrap_or_else(|e| panic!("the real model's answer did not parse: {e}"));
        j.verdict.check().unwrap();
        assert!((0.0..=1.0).contains(&j.score.tc) && (0.0..=1.0).contains(&j.coherence));
        scores.push(j.score.clone());
    }
    // Two judgements; more calls only if an answer had to be asked again.
    assert!(recorder.ledger().entries()["openai:smollm2-135m-instruct"].calls >= 2);
    let entries = walk(dir.path());
    assert_eq!(entries.len(), 2, "one cache entry per transcript");
    assert!(
        entries
            .iter()
            .all(|t| t.contains("\"source\": \"recorded\""))
    );
    // Replay: no server needed, identical scores.
    let replay = Client::new(LlmConfig {
        provider: Provider::OpenAi {
            base_url: "http://127.0.0.1:9".into(),
            key: None,
        },
        ..local(dir.path(), CacheMode::Replay).config().clone()
    })
    .unwrap();
    let second = rt.block_on(judge::judge_many(&replay, jobs(), Mode::Enriched));
    let again: Vec<_> = second.into_iter().map(|r| r.unwrap().score).collect();
    assert_eq!(again, scores);
    assert_eq!(
        replay.ledger().entries()["openai:smollm2-135m-instruct"].calls,
        0
    );
}

#[test]
#[ignore = "needs the local llama-server that .ci/run starts (AGENT_SEER_LOCAL_LLM)"]
fn local_truncated_answers_end_in_a_clear_error() {
    // Four output tokens cannot hold the object: llama-server stops with finish_reason
    // "length" and cut-off JSON, three times, then the client gives up naming the cause.
    let rt = tokio::runtime::Runtime::new().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let c = local(dir.path(), CacheMode::Live);
    let req = Request {
        max_tokens: 4,
        ..request()
    };
    let err = rt
        .block_on(c.structured::<Grade, _>(&req, check))
        .unwrap_err();
    match &err {
        LlmError::InvalidOutput {
            attempts: 3,
            problem,
            ..
        } => assert!(problem.contains("cut off at the token limit (4)"), "{err}"),
        other => panic!("{other}"),
    }
    assert!(walk(dir.path()).is_empty(), "nothing invalid is cached");
}

fn walk(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(std::fs::read_to_string(p).unwrap());
        }
    }
    out
}

#[test]
#[ignore = "needs the local llama-server that .ci/run starts (AGENT_SEER_LOCAL_LLM)"]
fn local_agent_is_run_recorded_and_graded() {
    // A 135M model rarely calls tools well: the runner must record whatever it did, grade it,
    // and end (exit 0 or 1), never crash or hang.
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_agent-seer"))
        .args([
            "run",
            "harnesses/lyria.yaml",
            "--agent",
            "openai:smollm2-135m-instruct",
            "--steps",
            "3",
            // Nothing is sent unless given: the settings the runner used to fix.
            "--temperature",
            "0",
            "--max-tokens",
            "512",
            "-o",
            out.to_str().unwrap(),
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("AGENT_SEER_OPENAI_BASE_URL", base_url())
        .env("AGENT_SEER_LLM_TIMEOUT_SECS", "900")
        .env_remove("OPENAI_API_KEY")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        matches!(o.status.code(), Some(0 | 1)),
        "{stdout}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        stdout.contains("podcast-intro") && stdout.contains("trailer-score"),
        "{stdout}"
    );
    for id in ["podcast-intro", "trailer-score"] {
        let t = agent_seer::harness::Transcript::load(&out.join(format!("{id}.yaml"))).unwrap();
        assert_eq!(t.scenario.as_deref(), Some(id));
    }
}

#[test]
#[ignore = "needs the local llama-server that .ci/run starts (AGENT_SEER_LOCAL_LLM)"]
fn local_generation_pipeline_validates_and_reports() {
    // Every stage under json_schema output from a 135M model: whatever it writes is validated,
    // retried, dropped and reported; what survives is a harness the runner loads.
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("tiny.tools.json");
    std::fs::write(
        &spec,
        r#"[{"name": "get_weather", "description": "Current weather for a city.", "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}},
            {"name": "send_email", "description": "Send an email.", "inputSchema": {"type": "object", "properties": {"to": {"type": "string"}, "body": {"type": "string"}}, "required": ["to", "body"]}}]"#,
    )
    .unwrap();
    let out = dir.path().join("harnesses");
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_agent-seer"))
        .args([
            "generate",
            "--spec",
            spec.to_str().unwrap(),
            "--suite",
            "tiny",
            "--llm",
            "openai:smollm2-135m-instruct",
            "--rounds",
            "1",
            "--simple",
            "1",
            "--complex",
            "0",
            "--verify",
            "-o",
            out.to_str().unwrap(),
        ])
        .env("AGENT_SEER_OPENAI_BASE_URL", base_url())
        .env("AGENT_SEER_LLM_TIMEOUT_SECS", "900")
        .env("AGENT_SEER_LLM_CACHE", dir.path().join("cache"))
        .env_remove("AGENT_SEER_LLM")
        .env_remove("OPENAI_API_KEY")
        .output()
        .unwrap();
    // Whatever the model writes ends in a report; an empty harness exits 1, says so, and is
    // not written.
    let stderr = String::from_utf8_lossy(&o.stderr);
    let report: Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}{stderr}", String::from_utf8_lossy(&o.stdout)));
    let interpret = &report["stages"]["interpret"];
    let dropped = interpret["dropped"].as_array().unwrap();
    assert_eq!(
        interpret["produced"].as_u64().unwrap() + dropped.len() as u64,
        2,
        "{report}"
    );
    // The schema allows the tool's own name alone, and llama.cpp decodes under it.
    assert!(
        !dropped
            .iter()
            .any(|d| d.as_str().unwrap().contains("tool_name must be")),
        "{report}"
    );
    if interpret["produced"].as_u64().unwrap() > 0 {
        assert!(report["stages"].get("scenarios").is_some(), "{report}");
    }
    let kept = report["verify"]["kept"].as_array().unwrap().len();
    match o.status.code() {
        Some(0) => {
            assert!(kept > 0, "{report}");
            let suite = agent_seer::check::Suite::load(&out.join("tiny.yaml")).unwrap();
            assert_eq!(suite.harness.scenarios.len(), kept, "{report}");
        }
        // An empty harness is not written.
        Some(1) => {
            assert_eq!(kept, 0, "{report}");
            assert!(stderr.contains("nothing written to"), "{stderr}");
            assert!(!out.join("tiny.yaml").exists(), "{report}");
        }
        other => panic!("exit {other:?}: {stderr}"),
    }
}
