//! Google ADK eval sets (issue 19, item 4): `import adk` makes a suite of an eval set and its
//! recorded runs, and agent-seer's trajectory metrics (the literal rule) give the
//! `tool_trajectory_avg_score` ADK's own `TrajectoryEvaluator` gives, case by case and match
//! type by match type, on the sample `tests/fixtures/adk/` (written and scored by ADK 2.13.0;
//! `regenerate.sh --check` re-runs ADK's evaluator in CI).

use std::collections::BTreeMap;

use agent_seer::check::{Suite, evaluate};
use agent_seer::harness::Transcript;
use serde_json::Value;

use super::*;

fn adk(rel: &str) -> std::path::PathBuf {
    repo().join("tests/fixtures/adk").join(rel)
}

/// Per eval set: (expected file, recorded file, tools, which cases).
fn sets() -> Vec<(&'static str, &'static str, &'static str, &'static str)> {
    vec![
        (
            "time_single",
            "evalsets/time_agent/time_single.evalset.json",
            "recorded/time_agent/time_single.evalset.json",
            "harnesses/time.tools.json",
        ),
        (
            "time_multi",
            "evalsets/time_agent/time_multi.evalset.json",
            "recorded/time_agent/time_multi.evalset.json",
            "harnesses/time.tools.json",
        ),
        (
            "memory_graph",
            "evalsets/memory_agent/memory_graph.evalset.json",
            "recorded/memory_agent/memory_graph.evalset.json",
            "harnesses/memory.tools.json",
        ),
        (
            "legacy_cases",
            "evalsets/memory_agent/legacy_cases.json",
            "recorded/memory_agent/memory_graph.evalset.json",
            "harnesses/memory.tools.json",
        ),
    ]
}

/// Our literal trajectory metrics and verdict for every recorded case of a set, as imported.
fn ours(
    set: &str,
    evalset: &str,
    recorded: &str,
    tools: &str,
) -> BTreeMap<String, ([f64; 3], String)> {
    let dir = tempfile::tempdir().unwrap();
    let o = run_in(
        &repo(),
        &[
            "import",
            "adk",
            adk(evalset).to_str().unwrap(),
            "--recorded",
            adk(recorded).to_str().unwrap(),
            "--tools",
            repo().join(tools).to_str().unwrap(),
            "--suite",
            set,
            "-o",
            dir.path().to_str().unwrap(),
        ],
        None,
    );
    // The legacy list names two of the recorded set's cases; the others are not its own.
    if set == "legacy_cases" {
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(
            stderr(&o).contains("is no case of eval set"),
            "{}",
            stderr(&o)
        );
        return BTreeMap::new();
    }
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let suite = Suite::load(&dir.path().join(format!("harnesses/{set}.yaml"))).unwrap();
    let mut out = BTreeMap::new();
    for e in std::fs::read_dir(dir.path().join("transcripts").join(set)).unwrap() {
        let t = Transcript::load(&e.unwrap().path()).unwrap();
        let ev = evaluate(&suite, &t).unwrap();
        // The fast verdict agrees with the engines' under the trajectory gate too.
        assert_eq!(
            agent_seer::check::verdict(&suite, &t).unwrap(),
            ev.verdict,
            "{}",
            t.id
        );
        let m = ev.trajectory.as_ref().expect("a scenario").literal;
        let codes: Vec<String> = ev
            .findings
            .iter()
            .filter(|f| f.severity == agent_seer::finding::Severity::Error)
            .map(|f| f.code.to_string())
            .collect();
        let tc = ev.score.as_ref().map_or(0.0, |s| s.tc);
        let why = if codes.is_empty() {
            String::new()
        } else {
            format!("; {}", codes.join(", "))
        };
        let verdict = format!("{:?} (TC {tc:.3}{why})", ev.verdict);
        out.insert(
            t.id.clone(),
            (
                [m.exact_match, m.in_order_match, m.any_order_match],
                verdict,
            ),
        );
    }
    out
}

#[test]
fn trajectory_scores_are_adks_on_every_case() {
    let scores: Value =
        serde_json::from_str(&std::fs::read_to_string(adk("scores.json")).unwrap()).unwrap();
    let mut rows = Vec::new();
    let mut verdicts = Vec::new();
    let mut agree = 0;
    let mut total = 0;
    for (set, evalset, recorded, tools) in sets() {
        let mine = ours(set, evalset, recorded, tools);
        for (case, s) in scores["eval_sets"][set]["cases"]
            .as_object()
            .into_iter()
            .flatten()
        {
            let Some((m, verdict)) = mine.get(case) else {
                continue;
            };
            // Where the verdict differs from ADK's at its configured match type and threshold.
            let configured = s["configured"].as_str().unwrap_or("EXACT");
            let status = s[configured]["overall_eval_status"].as_str().unwrap_or("-");
            let ours_pass = verdict.starts_with("Pass");
            if (status == "PASSED") != ours_pass {
                verdicts.push(format!(
                    "{set}/{case}: ADK {configured} {status}; agent-seer {verdict}"
                ));
            }
            for (k, kind) in ["EXACT", "IN_ORDER", "ANY_ORDER"].iter().enumerate() {
                total += 1;
                let theirs = &s[*kind];
                let same = theirs["overall_score"]
                    .as_f64()
                    .is_some_and(|x| (x - m[k]).abs() < 1e-9);
                if same {
                    agree += 1;
                } else {
                    rows.push(format!(
                        "{set}/{case} {kind}: ADK {}, agent-seer {:.3}",
                        theirs
                            .get("overall_score")
                            .filter(|v| !v.is_null())
                            .map_or_else(
                                || theirs.get("error").map_or("-".into(), |e| e.to_string()),
                                ToString::to_string
                            ),
                        m[k]
                    ));
                }
            }
        }
    }
    insta::assert_snapshot!(
        format!(
            "{agree} of {total} scores agree\n{}\n\nverdicts that differ:\n{}",
            rows.join("\n"),
            verdicts.join("\n")
        ),
        @r#"
        99 of 105 scores agree
        time_multi/recorded_fewer_turns EXACT: ADK "ValueError: actual_invocations and expected_invocations must have the same length; got 1 and 2.", agent-seer 0.500
        time_multi/recorded_fewer_turns IN_ORDER: ADK "ValueError: actual_invocations and expected_invocations must have the same length; got 1 and 2.", agent-seer 0.500
        time_multi/recorded_fewer_turns ANY_ORDER: ADK "ValueError: actual_invocations and expected_invocations must have the same length; got 1 and 2.", agent-seer 0.500
        memory_graph/args_none_vs_empty EXACT: ADK 0.0, agent-seer 1.000
        memory_graph/args_none_vs_empty IN_ORDER: ADK 0.0, agent-seer 1.000
        memory_graph/args_none_vs_empty ANY_ORDER: ADK 0.0, agent-seer 1.000

        verdicts that differ:
        time_single/empty_expected_with_calls: ADK IN_ORDER PASSED; agent-seer Fail (TC 0.222)
        memory_graph/args_none_vs_empty: ADK ANY_ORDER FAILED; agent-seer Pass (TC 1.000)
        memory_graph/forget_unrequested_delete: ADK ANY_ORDER PASSED; agent-seer Fail (TC 0.750; oracle.unrequested_effect)
        memory_graph/numbers_and_types: ADK ANY_ORDER PASSED; agent-seer Fail (TC 0.667; lint.type, lint.type, lint.type)
        "#
    );
}

/// The two legacy shapes read as ADK's loaders read them: one case named after the file, or
/// one case per `name`.
#[test]
fn legacy_eval_sets_read_as_adk_reads_them() {
    use agent_seer::ingest::adk;
    let read = |rel: &str| {
        adk::read_eval_set(&agent_seer::source::SourceFile::read(&adk(rel)).unwrap()).unwrap()
    };
    let one = read("evalsets/memory_agent/legacy_forget.test.json");
    assert_eq!(one.id, "legacy_forget");
    assert_eq!(one.cases.len(), 1);
    assert_eq!(
        one.cases[0].invocations[0].tool_uses[0].name,
        "delete_entities"
    );
    let many = read("evalsets/memory_agent/legacy_cases.json");
    let ids: Vec<&str> = many.cases.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, ["forget_optional_check", "note_swapped"]);
    let config = adk::read_criterion(
        &agent_seer::source::SourceFile::read(&adk("evalsets/memory_agent/test_config.json"))
            .unwrap(),
    )
    .unwrap();
    assert_eq!(
        config,
        Some(adk::Criterion {
            threshold: 0.5,
            match_type: adk::MatchType::AnyOrder
        })
    );
}
