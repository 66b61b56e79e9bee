use super::*;

fn with_env(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_agent-seer"));
    cmd.args(args)
        .current_dir(repo())
        .env_remove("AGENT_SEER_JUDGE")
        .env_remove("AGENT_SEER_LLM");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().unwrap()
}

#[test]
fn judge_replays_the_committed_fixtures() {
    let o = with_env(
        &[
            "judge",
            "--judge",
            "openai:fixture-judge",
            "--format",
            "json",
            "transcripts/veo",
        ],
        &[("AGENT_SEER_LLM", "replay")],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let rows = v["results"].as_array().unwrap();
    assert_eq!(rows.len(), 11);
    let a1 = rows
        .iter()
        .find(|r| r["trial"] == "veo::a1-wrong-model-audio")
        .unwrap();
    assert!((a1["judge_tc"].as_f64().unwrap() - a1["oracle_tc"].as_f64().unwrap()).abs() < 0.02);
    assert_eq!(
        v["ledger"]["openai:fixture-judge"]["calls"], 0,
        "replay makes no calls"
    );
    assert_eq!(v["ledger"]["openai:fixture-judge"]["cached"], 11);
}

#[test]
fn replay_miss_is_a_clear_error() {
    let o = with_env(
        &[
            "judge",
            "--judge",
            "openai:never-recorded",
            "transcripts/lyria/ly0-correct.yaml",
        ],
        &[("AGENT_SEER_LLM", "replay")],
    );
    assert_eq!(o.status.code(), Some(2), "a replay miss is an input error");
    assert!(
        stdout(&o).contains("replay mode: no cached answer for key"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn agreement_between_two_recorded_judges() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().to_str().unwrap();
    for judge in ["openai:fixture-a", "gemini:fixture-b"] {
        let o = with_env(
            &[
                "judge",
                "--judge",
                judge,
                "--write-fixtures",
                "transcripts/veo",
                "transcripts/lyria",
            ],
            &[
                ("AGENT_SEER_LLM_CACHE", cache),
                ("GEMINI_API_KEY", "unused"),
            ],
        );
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    }
    let o = with_env(
        &[
            "judge-agreement",
            "--judge",
            "openai:fixture-a",
            "--second-judge",
            "gemini:fixture-b",
            "--format",
            "json",
            "transcripts/veo",
            "transcripts/lyria",
        ],
        &[
            ("AGENT_SEER_LLM_CACHE", cache),
            ("AGENT_SEER_LLM", "replay"),
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["n"], 18);
    let tc = &v["dimensions"]["tc"];
    assert!(
        (tc["pearson"]["value"].as_f64().unwrap() - 1.0).abs() < 1e-9,
        "identical fixtures agree perfectly: {tc}"
    );
    assert_eq!(tc["mae"]["value"], 0.0);
    assert_eq!(tc["within_0_1"]["value"], 1.0);
}
