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

/// Hand-made answers of `judge` on `paths`, in `cache`: `judge --write-fixtures` (the oracle's
/// own scores as the answer), then each of this judge's verdicts passed through `edit`.
fn hand_made(cache: &Path, judge: &str, paths: &[&str], edit: impl Fn(&mut serde_json::Value)) {
    let mut args = vec!["judge", "--judge", judge, "--write-fixtures"];
    args.extend_from_slice(paths);
    let c = cache.to_str().unwrap();
    let o = with_env(
        &args,
        &[("AGENT_SEER_LLM_CACHE", c), ("GEMINI_API_KEY", "unused")],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let model = judge.split_once(':').unwrap().1;
    for shard in std::fs::read_dir(cache).unwrap() {
        for f in std::fs::read_dir(shard.unwrap().path()).unwrap() {
            let p = f.unwrap().path();
            let mut entry: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
            if entry["model"] != model {
                continue;
            }
            let mut v: serde_json::Value =
                serde_json::from_str(entry["answer"]["text"].as_str().unwrap()).unwrap();
            edit(&mut v);
            entry["answer"]["text"] = v.to_string().into();
            std::fs::write(&p, entry.to_string()).unwrap();
        }
    }
}

/// Full marks on every tool-calling sub-dimension: a judge that passes everything.
fn always_pass(v: &mut serde_json::Value) {
    for group in ["usage", "selection", "ordering", "arguments"] {
        for (_, s) in v[group].as_object_mut().unwrap() {
            if s.is_u64() {
                *s = 10.into();
            }
        }
    }
    v["failures"] = serde_json::json!([]);
}

fn certify(cache: &Path, args: &[&str]) -> Output {
    let mut all = vec!["judge-certify"];
    all.extend_from_slice(args);
    with_env(
        &all,
        &[
            ("AGENT_SEER_LLM_CACHE", cache.to_str().unwrap()),
            ("AGENT_SEER_LLM", "replay"),
        ],
    )
}

/// A judge that passes everything, on Lyria's 7 labelled transcripts (5 broken): TPR 0/5,
/// TNR 2/2 with Wilson lower bound 2 / (2 + 1.96²) = 0.342, κ 0 (a constant rater agrees by
/// chance only); full marks beside the linter's three errors are three `missed`
/// disagreements. Below the bar: exit 1.
#[test]
fn certify_a_judge_that_always_passes() {
    let dir = tempfile::tempdir().unwrap();
    hand_made(
        dir.path(),
        "openai:always-pass",
        &["transcripts/lyria"],
        always_pass,
    );
    let args = [
        "--judge",
        "openai:always-pass",
        "--min-tpr",
        "0.8",
        "--min-tnr",
        "0.8",
        "transcripts/lyria",
    ];
    let o = certify(dir.path(), &args);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    insta::assert_snapshot!(stdout(&o), @r"
    judge certification on 7 labelled transcripts: 5 broken, base rate 0.714 (positive = broken, `expect: fail`)
    bar: TPR >= 0.80 and TNR >= 0.80

    judge               repeats            TPR  TPR lower            TNR  TNR lower   kappa  consistency  certified
    openai:always-pass        1    0.000 (0/5)      0.000    1.000 (2/2)      0.342   0.000            -  NO

    Krippendorff's alpha: - (1 rater; give --judge twice or --repeat 2)
    disagreements with the linter (tool names, parameter names, required, types): 3
      openai:always-pass  lyria::ly1-wrong-param-model  argument_name  missed: judge 1.0 despite lint.unknown_param
      openai:always-pass  lyria::ly2-wrong-bucket-name  argument_name  missed: judge 1.0 despite lint.unknown_param
      openai:always-pass  lyria::ly4-missing-prompt  argument_completeness  missed: judge 1.0 despite lint.missing_required
    ledger openai:always-pass: 0 calls (7 cached), 0 input + 0 output tokens
    ");
    let mut json = args.to_vec();
    json.extend(["--format", "json"]);
    let o = certify(dir.path(), &json);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let j = &v["certification"]["judges"][0];
    assert_eq!(
        j["confusion"],
        serde_json::json!({"tp": 0, "fn": 5, "tn": 2, "fp": 0})
    );
    assert_eq!(j["tpr"]["value"], 0.0);
    assert_eq!(j["tnr"]["value"], 1.0);
    let z = 1.959_963_984_540_054_f64;
    assert!((j["tnr"]["lower"].as_f64().unwrap() - 2.0 / (2.0 + z * z)).abs() < 1e-12);
    assert_eq!(j["kappa"], 0.0);
    assert_eq!(v["certification"]["base_rate"], 5.0 / 7.0);
    assert_eq!(v["certified"], false);
    assert_eq!(j["disagreements"].as_array().unwrap().len(), 3);
}

/// The oracle's own scores as two judges: every label matched, κ 1, and α 1 across them.
#[test]
fn certify_two_perfect_judges() {
    let dir = tempfile::tempdir().unwrap();
    for judge in ["openai:fixture-a", "gemini:fixture-b"] {
        hand_made(dir.path(), judge, &["transcripts/lyria"], |_| {});
    }
    let o = certify(
        dir.path(),
        &[
            "--judge",
            "openai:fixture-a",
            "--judge",
            "gemini:fixture-b",
            "--min-tpr",
            "0.8",
            "--min-tnr",
            "0.8",
            "--format",
            "json",
            "transcripts/lyria",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let c = &v["certification"];
    assert_eq!(c["raters"], 2);
    assert_eq!(c["alpha"], 1.0);
    for j in c["judges"].as_array().unwrap() {
        assert_eq!(j["kappa"], 1.0, "{j}");
        assert_eq!(j["certified"], true);
        assert_eq!(j["disagreements"], serde_json::json!([]));
    }
    assert_eq!(v["certified"], true);
}

/// A judge that gives full marks on types whatever the call holds contradicts the linter
/// where it reports `lint.type` (Nanobanana's NB7 passes a string for an integer): a
/// disagreement on a sub-dimension the deterministic stack decides exactly.
#[test]
fn certify_a_judge_blind_to_types() {
    let dir = tempfile::tempdir().unwrap();
    hand_made(
        dir.path(),
        "openai:type-blind",
        &["transcripts/nanobanana"],
        |v| v["arguments"]["type_compliance"] = 10.into(),
    );
    let o = certify(
        dir.path(),
        &[
            "--judge",
            "openai:type-blind",
            "--format",
            "json",
            "transcripts/nanobanana",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "no bar, a report: {}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(
        v["certification"]["judges"][0]["disagreements"],
        serde_json::json!([{
            "transcript": "nanobanana::nb7-malformed-type",
            "sub_dimension": "argument_type",
            "kind": "missed",
            "judge_score": 1.0,
            "codes": ["lint.type"],
        }])
    );
    assert_eq!(v["certified"], serde_json::Value::Null);
}

/// Repeats have cache entries of their own: with only the first recorded, replaying a second
/// is a miss (exit 2), not the first answer counted twice.
#[test]
fn certify_repeats_are_real_repeats() {
    let dir = tempfile::tempdir().unwrap();
    hand_made(dir.path(), "openai:once", &["transcripts/lyria"], |_| {});
    let o = certify(
        dir.path(),
        &[
            "--judge",
            "openai:once",
            "--repeat",
            "2",
            "transcripts/lyria",
        ],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("7 of 14 judgements by openai:once failed"),
        "{}",
        stderr(&o)
    );
    let o = certify(
        dir.path(),
        &[
            "--judge",
            "openai:once",
            "--min-tpr",
            "1.5",
            "transcripts/lyria",
        ],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("--min-tpr must be a number within 0–1, got 1.5"),
        "{}",
        stderr(&o)
    );
}
