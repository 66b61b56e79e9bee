//! One exit-code contract for every verb (issue 18, item 12): a provider that fails is exit 3
//! in `judge`, `judge-agreement`, `judge-certify`, `generate` and `run` alike (they gave 1 and 2 for the same
//! fault), a setup that cannot work (no Gemini key) is exit 2 before any request, and
//! `judge-agreement` names the cause when the judgements failed.

use super::*;

/// A provider that refuses every request with 401, its body echoing nothing secret.
async fn refusing() -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(
            ResponseTemplate::new(401)
                .set_body_string(r#"{"error": {"message": "Incorrect API key provided"}}"#),
        )
        .mount(&server)
        .await;
    server
}

/// `agent-seer ARGS` against `server` as the OpenAI-compatible provider, with `key` (or none)
/// and a fresh cache; returns the exit code and what it printed, stdout then stderr
/// (temporary paths as `[dir]`).
async fn verb(server: &MockServer, args: &[String], key: Option<&str>) -> (Option<i32>, String) {
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_agent-seer"));
    cmd.args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("AGENT_SEER_OPENAI_BASE_URL", server.uri())
        .env("AGENT_SEER_LLM_CACHE", dir.path().join("cache"))
        .env("AGENT_SEER_LLM_BACKOFF_MS", "1")
        .env("AGENT_SEER_ROOT", env!("CARGO_MANIFEST_DIR"))
        .env_remove("AGENT_SEER_LLM")
        .env_remove("AGENT_SEER_JUDGE")
        .env_remove("OPENAI_API_KEY")
        .env_remove("GEMINI_API_KEY");
    if let Some(k) = key {
        cmd.env("OPENAI_API_KEY", k);
    }
    let out = dir.path().join("out");
    let out = out.to_str().unwrap().to_owned();
    cmd.args(args.iter().any(|a| a == "-o").then_some(out.as_str()));
    let o = tokio::task::spawn_blocking(move || cmd.output().unwrap())
        .await
        .unwrap();
    let printed = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    (
        o.status.code(),
        printed.replace(dir.path().to_str().unwrap(), "[dir]"),
    )
}

const TRANSCRIPTS: [&str; 2] = [
    "transcripts/lyria/ly0-correct.yaml",
    "transcripts/lyria/ly1-wrong-param-model.yaml",
];

/// Every verb that talks to a provider, with `provider` (`openai` or `gemini`) as its model.
fn verbs(provider: &str) -> Vec<(&'static str, Vec<String>)> {
    let m1 = format!("{provider}:m-1");
    let m2 = format!("{provider}:m-2");
    let with = |words: &[&str], transcripts: bool| {
        let mut v: Vec<String> = words.iter().map(|w| (*w).to_owned()).collect();
        if transcripts {
            v.extend(TRANSCRIPTS.iter().map(|t| (*t).to_owned()));
        }
        v
    };
    vec![
        ("judge", with(&["judge", "--judge", &m1], true)),
        (
            "judge-agreement",
            with(
                &["judge-agreement", "--judge", &m1, "--second-judge", &m2],
                true,
            ),
        ),
        (
            "judge-certify",
            with(&["judge-certify", "--judge", &m1, "--judge", &m2], true),
        ),
        (
            "generate",
            with(
                &[
                    "generate",
                    "--spec",
                    "harnesses/lyria.tools.json",
                    "--llm",
                    &m1,
                    "--suite",
                    "lyria",
                    "-o",
                ],
                false,
            ),
        ),
        (
            "run",
            with(
                &["run", "harnesses/lyria.yaml", "--agent", &m1, "-o"],
                false,
            ),
        ),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_provider_is_exit_3_in_every_verb() {
    let server = refusing().await;
    for (name, args) in verbs("openai") {
        let (code, stderr) = verb(&server, &args, Some(KEY)).await;
        assert_eq!(code, Some(3), "{name}: {stderr}");
        assert!(
            stderr.contains("HTTP 401"),
            "{name} names the cause: {stderr}"
        );
        assert!(!stderr.contains(KEY), "{name} printed the key");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_key_is_exit_2_before_any_request() {
    let server = refusing().await;
    for (name, args) in verbs("gemini") {
        let (code, stderr) = verb(&server, &args, None).await;
        assert_eq!(code, Some(2), "{name}: {stderr}");
        assert!(stderr.contains("GEMINI_API_KEY"), "{name}: {stderr}");
    }
    assert_eq!(server.received_requests().await.unwrap().len(), 0);
}

/// The agreement verb said only "fewer than two transcripts were judged by both judges" after
/// 401s; now it says how many judgements failed, by which judge, and the first error.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn judge_agreement_names_why_nothing_was_judged() {
    let server = refusing().await;
    let (_, args) = verbs("openai").swap_remove(1);
    let (code, stderr) = verb(&server, &args, Some(KEY)).await;
    assert_eq!(code, Some(3));
    insta::assert_snapshot!(stderr.trim_end(), @r#"error: fewer than two transcripts were judged by both judges (0 of 2): 2 of 2 judgements by openai:m-1 failed, 2 of 2 judgements by openai:m-2 failed; the first error: openai answered HTTP 401: {"error": {"message": "Incorrect API key provided"}}"#);
}

/// A provider that never answers in time: `run` says which timeout ran out, once, and exits 3
/// (it said "did not answer within 0ns", twice: the chat call did not pass its timeout down).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_timeout_names_the_timeout_once() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_delay(Duration::from_secs(3)))
        .mount(&server)
        .await;
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_agent-seer"));
    cmd.args(["run", "harnesses/time.yaml", "--agent", "openai:m-1", "-o"])
        .arg(dir.path().join("out"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("AGENT_SEER_OPENAI_BASE_URL", server.uri())
        .env("AGENT_SEER_LLM_CACHE", dir.path().join("cache"))
        .env("AGENT_SEER_LLM_BACKOFF_MS", "1")
        .env("AGENT_SEER_LLM_TIMEOUT_SECS", "1")
        .env_remove("AGENT_SEER_LLM")
        .env_remove("AGENT_SEER_JUDGE");
    let o = tokio::task::spawn_blocking(move || cmd.output().unwrap())
        .await
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(3), "{stderr}");
    assert_eq!(
        stderr.matches("did not answer within 1s").count(),
        1,
        "{stderr}"
    );
    assert!(!stderr.contains("0ns"), "{stderr}");
}
