//! Judge throughput against a mock LLM that answers in 200 ms: 40 transcripts at concurrency 1
//! and at concurrency 8. `cargo bench --bench judge_concurrency` prints both wall times and the
//! speed-up (the LLM's latency, not our code, is what concurrency hides).

mod common;

#[cfg(feature = "mimalloc")]
#[global_allocator]
static ALLOC: agent_seer::Allocator = agent_seer::Allocator;

use common::delay;

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use agent_seer::check::{Suite, evaluate, load_transcript};
use agent_seer::harness::{Layout, discover};
use agent_seer::judge::{self, Job, Mode, Verdict};
use agent_seer::llm::{CacheMode, Client, LlmConfig, Provider};
use serde_json::json;
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, ResponseTemplate};

fn jobs(n: usize) -> Vec<Job> {
    let layout = Layout::under(Path::new(env!("CARGO_MANIFEST_DIR")));
    let mut out = Vec::new();
    for files in discover(&layout).expect("discover") {
        let suite =
            Arc::new(Suite::load(files.harness.as_deref().expect("harness")).expect("suite"));
        for (_, p) in &files.transcripts {
            // A recorded run (`*.json`, `*.jsonl`) is read by `ingest`, as `check` reads it;
            // `Transcript::load` reads YAML transcripts only (issue 31: this panicked).
            let t = load_transcript(&suite, p).unwrap_or_else(|e| panic!("{e}"));
            let evaluation = evaluate(&suite, &t).expect("evaluate");
            if evaluation.score.is_some() {
                out.push(Job {
                    suite: suite.clone(),
                    transcript: t,
                    evaluation,
                });
            }
        }
    }
    out.truncate(n);
    out
}

fn main() {
    // `cargo test` runs benches with --test-ish flags only under `cargo test --benches`; a bench
    // binary invoked with `--list` (nextest) has nothing to list.
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let jobs = jobs(40);
    assert_eq!(
        jobs.len(),
        40,
        "the shipped suites hold at least 40 scored transcripts"
    );
    let answer = serde_json::to_string(&Verdict::from_score(
        jobs[0].evaluation.score.as_ref().expect("score"),
    ))
    .expect("json");
    let server = rt.block_on(MockServer::start());
    rt.block_on(
        Mock::given(method("POST"))
            .respond_with(
                ResponseTemplate::new(200)
                    .set_body_json(json!({"choices": [{"index": 0, "message": {"role": "assistant", "content": answer}, "finish_reason": "stop"}],
                        "usage": {"prompt_tokens": 2000, "completion_tokens": 150}}))
                    .set_delay(delay()),
            )
            .mount(&server),
    );
    let mut times = Vec::new();
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
        let start = Instant::now();
        let results = rt.block_on(judge::judge_many(&client, jobs.clone(), Mode::Enriched));
        let elapsed = start.elapsed();
        assert!(results.iter().all(Result::is_ok), "every judgement parsed");
        println!(
            "judge 40 transcripts, mock LLM {} ms/answer, concurrency {concurrency}: {:.2} s",
            delay().as_millis(),
            elapsed.as_secs_f64()
        );
        times.push(elapsed);
    }
    println!(
        "speed-up at concurrency 8: {:.1}x",
        times[0].as_secs_f64() / times[1].as_secs_f64()
    );
}
