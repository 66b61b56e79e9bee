//! The LLM judge: the paper's rubric (Appendix E) scored by a model — 14 tool-calling
//! sub-dimensions on 0–10 with the cascade rules, and 5 coherence dimensions on 1–3 — parsed
//! into the same [`Score`] the oracle fills.
//!
//! In the default **enriched** mode the judge sees the user turns, the specs of the tools
//! involved, the capability-matrix rows for the models the calls select, the tool outputs, the
//! agent's calls and reply, a reference workflow, and the deterministic findings, which it is
//! told are facts. **Raw-spec** mode gives only the specs and the transcript, to reproduce the
//! seeds' schema-blind baseline. Prompts are ours; they carry the paper's instructions. The
//! main entry is [`judge_many`], which gives a [`Judged`] (the [`Verdict`] and its [`Score`])
//! per transcript; [`agreement`] compares two judges. Inside the crate, `render` builds the
//! prompts, `trial::combine` is the one rule joining the judge's verdict with the engines', and
//! `EnvJudge` runs the harness's `judge::` trials.

pub mod agreement {
    //! Agreement between two judges (paper Appendix A.8): the statistics live in
    //! [`crate::stats`], neutral ground for the judge and the report.
    pub use crate::stats::*;
}
pub mod certify;
mod prompt;
mod trial;

pub(crate) use trial::EnvJudge;
pub use trial::combine;

use serde::{Deserialize, Serialize};

use crate::check::{Evaluation, Suite};
use crate::finding::SubDimension;
use crate::harness::{Scenario, Transcript};
use crate::llm::{Client, LlmError, Request};
use crate::score::Score;

pub(crate) use prompt::{RUBRIC_VERSION, render, schema};

/// What the judge is shown.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    /// Specs, capability-matrix rows, reference workflow and the deterministic findings.
    #[default]
    Enriched,
    /// Only the tool specs and the transcript (the seeds' baseline).
    RawSpec,
}

/// The judge's answer, as the schema asks for it: the 14 tool-calling sub-dimensions on 0–10
/// (Appendix E, Table 18), grouped as the rubric groups them, and coherence on 1–3.
/// [`Verdict::check`] holds it to those ranges.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Verdict {
    /// Whether tools were warranted, and overuse.
    pub usage: Usage,
    /// Whether the right tools were chosen.
    pub selection: Selection,
    /// Order and dataflow of the calls.
    pub ordering: Ordering,
    /// The calls' arguments against the schemas.
    pub arguments: Arguments,
    /// The reply's coherence.
    pub coherence: Coherence,
    /// Sub-dimensions that scored below 10, by their [`SubDimension`] names
    /// (`argument_value`, …); the schema allows 6.
    pub failures: Vec<String>,
    /// The judge's short reason (the schema allows 400 characters).
    pub rationale: String,
}

/// The usage sub-dimensions, 0–10.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Usage {
    /// Was calling tools warranted, rather than answering directly? The usage dimension.
    pub necessity: u8,
    /// 10 when no call was redundant or unnecessary; recorded, not averaged into TC.
    pub overuse: u8,
}

/// The selection sub-dimensions, 0–10.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Selection {
    /// Do the chosen tools match what the user asked for?
    pub correctness: u8,
    /// Where several tools could serve, was the most specific one chosen?
    pub specificity: u8,
    /// Was every tool the task needs called, and did those calls succeed?
    pub completeness: u8,
}

/// The ordering sub-dimensions, 0–10; they count only for two calls or more.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Ordering {
    /// The judge's view of whether ordering applies (false under two calls); [`Verdict::score`]
    /// also requires two calls.
    pub applicable: bool,
    /// Is the order logical; do later calls build on earlier ones?
    pub sequence_logic: u8,
    /// Does each call take its inputs from the outputs that produce them?
    pub dependency_handling: u8,
    /// No wasted, repeated or avoidable call?
    pub execution_efficiency: u8,
}

/// The argument sub-dimensions, 0–10, under the rubric's cascade rules (the prompt: a wrong
/// name or a missing required parameter puts value, type and format at 2 or below).
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Arguments {
    /// Are all required parameters given?
    pub completeness: u8,
    /// Does every parameter name match the schema exactly (case-sensitive)?
    pub name_accuracy: u8,
    /// Is every value correct, supported by the chosen model, and grounded in the request or
    /// an earlier output?
    pub value_accuracy: u8,
    /// Does every value have the schema's type?
    pub type_compliance: u8,
    /// Does every value follow the expected format (enums, patterns, URIs, ranges)?
    pub format_compliance: u8,
    /// No extra or invalid parameters outside the schema?
    pub relevancy: u8,
}

/// 1–3 each; `context_retention` 0 when there is no earlier turn to retain.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Coherence {
    /// Does the reply hold together logically?
    pub logical_flow: u8,
    /// Does it answer everything the user asked?
    pub completeness: u8,
    /// Is it concise?
    pub conciseness: u8,
    /// Does it stay on the user's topic?
    pub topic_relevance: u8,
    /// Does it use the earlier turns; 0 when there is none.
    pub context_retention: u8,
}

impl Verdict {
    /// Range checks the schema states but a provider may not enforce.
    pub fn check(&self) -> Result<(), String> {
        let tens = [
            ("usage.necessity", self.usage.necessity),
            ("usage.overuse", self.usage.overuse),
            ("selection.correctness", self.selection.correctness),
            ("selection.specificity", self.selection.specificity),
            ("selection.completeness", self.selection.completeness),
            ("ordering.sequence_logic", self.ordering.sequence_logic),
            (
                "ordering.dependency_handling",
                self.ordering.dependency_handling,
            ),
            (
                "ordering.execution_efficiency",
                self.ordering.execution_efficiency,
            ),
            ("arguments.completeness", self.arguments.completeness),
            ("arguments.name_accuracy", self.arguments.name_accuracy),
            ("arguments.value_accuracy", self.arguments.value_accuracy),
            ("arguments.type_compliance", self.arguments.type_compliance),
            (
                "arguments.format_compliance",
                self.arguments.format_compliance,
            ),
            ("arguments.relevancy", self.arguments.relevancy),
        ];
        if let Some((name, v)) = tens.iter().find(|(_, v)| *v > 10) {
            return Err(format!("{name} is {v}; scores are 0–10"));
        }
        let c = &self.coherence;
        let threes = [
            ("logical_flow", c.logical_flow),
            ("completeness", c.completeness),
            ("conciseness", c.conciseness),
            ("topic_relevance", c.topic_relevance),
        ];
        if let Some((name, v)) = threes.iter().find(|(_, v)| !(1..=3).contains(v)) {
            return Err(format!("coherence.{name} is {v}; coherence is 1–3"));
        }
        if c.context_retention > 3 {
            return Err(format!(
                "coherence.context_retention is {}; 1–3, or 0 when not applicable",
                c.context_retention
            ));
        }
        if let Some(f) = self
            .failures
            .iter()
            .find(|f| SubDimension::parse(f).is_none())
        {
            return Err(format!("failure `{f}` is not a sub-dimension name"));
        }
        Ok(())
    }

    /// The tool-calling score; ordering counts only when the judge says it applies and the
    /// turn has two calls or more (the paper's rule, which a judge can get wrong).
    pub fn score(&self, calls: usize) -> Score {
        use SubDimension::*;
        let n = |v: u8| f64::from(v) / 10.0;
        let mut sub = crate::score::SubScores::from_iter([
            (UsageNecessity, n(self.usage.necessity)),
            (UsageOveruse, n(self.usage.overuse)),
            (SelectionCorrectness, n(self.selection.correctness)),
            (SelectionSpecificity, n(self.selection.specificity)),
            (SelectionCompleteness, n(self.selection.completeness)),
            (ArgumentCompleteness, n(self.arguments.completeness)),
            (ArgumentName, n(self.arguments.name_accuracy)),
            (ArgumentValue, n(self.arguments.value_accuracy)),
            (ArgumentType, n(self.arguments.type_compliance)),
            (ArgumentFormat, n(self.arguments.format_compliance)),
            (ArgumentRelevancy, n(self.arguments.relevancy)),
        ]);
        if self.ordering.applicable && calls >= 2 {
            sub.insert(OrderingSequence, n(self.ordering.sequence_logic));
            sub.insert(OrderingDependency, n(self.ordering.dependency_handling));
            sub.insert(OrderingEfficiency, n(self.ordering.execution_efficiency));
        }
        Score::from_sub(sub)
    }

    /// Coherence, normalised to 0–1 and averaged (context retention only with history).
    pub fn coherence(&self, has_history: bool) -> f64 {
        let c = &self.coherence;
        let mut v = vec![
            c.logical_flow,
            c.completeness,
            c.conciseness,
            c.topic_relevance,
        ];
        if has_history && c.context_retention > 0 {
            v.push(c.context_retention);
        }
        v.iter().map(|x| (f64::from(*x) - 1.0) / 2.0).sum::<f64>() / v.len() as f64
    }

    /// The verdict the judge would give if it agreed exactly with a score (0–1 sub-dimensions
    /// rounded to 0–10). Used to write hand-made fixtures, which say so.
    pub fn from_score(score: &Score) -> Self {
        use SubDimension::*;
        let t = |d: SubDimension| {
            score
                .sub
                .get(d)
                .map_or(10, |v| (v * 10.0).round().clamp(0.0, 10.0) as u8)
        };
        let failures: Vec<String> = score
            .sub
            .iter()
            .filter(|(d, v)| *v < 1.0 && *d != UsageOveruse)
            .map(|(d, _)| d.as_str().to_owned())
            .collect();
        Verdict {
            usage: Usage {
                necessity: t(UsageNecessity),
                overuse: t(UsageOveruse),
            },
            selection: Selection {
                correctness: t(SelectionCorrectness),
                specificity: t(SelectionSpecificity),
                completeness: t(SelectionCompleteness),
            },
            ordering: Ordering {
                applicable: score.ordering.is_some(),
                sequence_logic: t(OrderingSequence),
                dependency_handling: t(OrderingDependency),
                execution_efficiency: t(OrderingEfficiency),
            },
            arguments: Arguments {
                completeness: t(ArgumentCompleteness),
                name_accuracy: t(ArgumentName),
                value_accuracy: t(ArgumentValue),
                type_compliance: t(ArgumentType),
                format_compliance: t(ArgumentFormat),
                relevancy: t(ArgumentRelevancy),
            },
            coherence: Coherence {
                logical_flow: 3,
                completeness: 3,
                conciseness: 3,
                topic_relevance: 3,
                context_retention: 0,
            },
            failures: failures.into_iter().take(6).collect(),
            rationale:
                "Hand-written fixture: the deterministic oracle's scores, not a model's judgement."
                    .into(),
        }
    }
}

/// A judged transcript.
#[derive(Clone, Debug, Serialize)]
pub struct Judged {
    /// The judge's answer, as it gave it.
    pub verdict: Verdict,
    /// The answer as a tool-calling [`Score`] (0–1), from [`Verdict::score`].
    pub score: Score,
    /// Coherence on 0–1, from [`Verdict::coherence`].
    pub coherence: f64,
    /// What the judge was shown.
    pub mode: Mode,
}

/// The judge's request for a transcript.
pub(crate) fn request(
    suite: &Suite,
    t: &Transcript,
    scenario: Option<&Scenario>,
    ev: &Evaluation,
    mode: Mode,
) -> Request {
    let (system, user) = render(suite, t, scenario, ev, mode);
    Request {
        system,
        user,
        schema_name: "tool_calling_judgement".into(),
        schema: schema(),
        temperature: 0.0,
        max_tokens: 1024,
        cache_tag: format!(
            "{RUBRIC_VERSION}/{}",
            match mode {
                Mode::Enriched => "enriched",
                Mode::RawSpec => "raw-spec",
            }
        ),
        seed: None,
    }
}

/// Judges one transcript (through the client's cache and retries).
pub(crate) async fn judge(
    client: &Client,
    suite: &Suite,
    t: &Transcript,
    scenario: Option<&Scenario>,
    ev: &Evaluation,
    mode: Mode,
) -> Result<Judged, LlmError> {
    judge_repeat(client, suite, t, scenario, ev, mode, 1).await
}

/// Repeat `repeat` (1-based) of a judgement: repeat 1 is [`judge`]'s own request, later ones
/// have cache entries of their own ([`certify::repeat_request`]).
pub(crate) async fn judge_repeat(
    client: &Client,
    suite: &Suite,
    t: &Transcript,
    scenario: Option<&Scenario>,
    ev: &Evaluation,
    mode: Mode,
    repeat: usize,
) -> Result<Judged, LlmError> {
    let req = certify::repeat_request(request(suite, t, scenario, ev, mode), repeat);
    let verdict: Verdict = client.structured(&req, Verdict::check).await?;
    Ok(judged(verdict, t, mode))
}

/// A verdict on `t` as a judgement: the score over its calls, coherence with its history.
fn judged(verdict: Verdict, t: &Transcript, mode: Mode) -> Judged {
    Judged {
        score: verdict.score(t.calls().count()),
        coherence: verdict.coherence(t.turns.len() > 1),
        verdict,
        mode,
    }
}

/// [`judge_many_repeat`] through the provider's batch API ([`Client::batch_structured`]): the
/// same prompts, cache entries and verdicts, at half the price and within a day. `on_event`
/// hears each round's cost estimate before it is sent, and each job's progress. Requests a
/// `--max-cost` budget kept from being sent end in [`LlmError::OverBudget`]; the rest are
/// judged.
pub async fn judge_many_batch(
    client: &Client,
    jobs: &[Job],
    mode: Mode,
    repeat: usize,
    options: &crate::llm::BatchOptions,
    on_event: &(dyn Fn(crate::llm::BatchEvent) + Send + Sync),
) -> Result<Vec<Result<Judged, LlmError>>, LlmError> {
    let requests: Vec<Request> = jobs
        .iter()
        .map(|j| {
            let scenario = j.suite.scenario_of(&j.transcript);
            certify::repeat_request(
                request(&j.suite, &j.transcript, scenario, &j.evaluation, mode),
                repeat,
            )
        })
        .collect();
    let verdicts = client
        .batch_structured::<Verdict, _>(&requests, Verdict::check, options, on_event)
        .await?;
    Ok(jobs
        .iter()
        .zip(verdicts)
        .map(|(j, v)| v.map(|verdict| judged(verdict, &j.transcript, mode)))
        .collect())
}

/// One transcript to judge, owned so judgements can run concurrently.
#[derive(Clone)]
pub struct Job {
    /// The suite the transcript belongs to (specs, matrices, the scenario), shared by its jobs.
    pub suite: std::sync::Arc<Suite>,
    /// The transcript to judge.
    pub transcript: Transcript,
    /// Its deterministic evaluation: findings for the enriched prompt, the oracle's score.
    pub evaluation: Evaluation,
}

/// Judges many transcripts at once; the client's concurrency cap bounds the calls in flight.
/// Results come back in the jobs' order.
pub async fn judge_many(
    client: &Client,
    jobs: Vec<Job>,
    mode: Mode,
) -> Vec<Result<Judged, LlmError>> {
    judge_many_repeat(client, jobs, mode, 1).await
}

/// [`judge_many`] for repeat `repeat` (1-based; see [`certify`] on repeats).
pub async fn judge_many_repeat(
    client: &Client,
    jobs: Vec<Job>,
    mode: Mode,
    repeat: usize,
) -> Vec<Result<Judged, LlmError>> {
    let mut set = tokio::task::JoinSet::new();
    let n = jobs.len();
    for (i, job) in jobs.into_iter().enumerate() {
        let client = client.clone();
        set.spawn(async move {
            let scenario = job.suite.scenario_of(&job.transcript);
            (
                i,
                judge_repeat(
                    &client,
                    &job.suite,
                    &job.transcript,
                    scenario,
                    &job.evaluation,
                    mode,
                    repeat,
                )
                .await,
            )
        });
    }
    let mut out: Vec<Option<Result<Judged, LlmError>>> = (0..n).map(|_| None).collect();
    while let Some(done) = set.join_next().await {
        match done {
            Ok((i, r)) => out[i] = Some(r),
            Err(e) => {
                if let Some(slot) = out.iter_mut().find(|s| s.is_none()) {
                    *slot = Some(Err(LlmError::Transport {
                        provider: "judge",
                        message: format!("task failed: {e}"),
                    }));
                }
            }
        }
    }
    out.into_iter()
        .map(|r| {
            r.unwrap_or_else(|| {
                Err(LlmError::Transport {
                    provider: "judge",
                    message: "lost task".into(),
                })
            })
        })
        .collect()
}

/// Writes a hand-made cache entry for a transcript: the answer a judge would give if it agreed
/// with the oracle, marked as hand-written in the file (never a model's judgement). Lets judge
/// trials run offline in CI; a prompt change turns them into cache misses.
pub fn write_fixture(
    client: &Client,
    suite: &Suite,
    t: &Transcript,
    ev: &Evaluation,
    mode: Mode,
) -> Result<bool, LlmError> {
    let Some(score) = &ev.score else {
        return Ok(false);
    };
    let scenario = suite.scenario_of(t);
    let req = request(suite, t, scenario, ev, mode);
    let answer = crate::llm::Answer {
        text: serde_json::to_string(&Verdict::from_score(score)).unwrap_or_default(),
        usage: crate::llm::Usage::default(),
        truncated: false,
        cached: false,
    };
    let cfg = client.config();
    client.cache().put_with_source(
        &client.cache_key(&req),
        cfg.provider.name(),
        &cfg.model,
        &req,
        &answer,
        "hand-written: the deterministic oracle's scores rendered as a judge answer by `agent-seer judge --write-fixtures`; not a model's judgement",
    )?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    fn veo_a1() -> (Suite, Transcript, Evaluation) {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let suite = Suite::load(&root.join("harnesses/veo.yaml")).unwrap();
        let t = Transcript::load(Path::new("transcripts/veo/a1-wrong-model-audio.yaml"))
            .unwrap_or_else(|_| {
                Transcript::load(&root.join("transcripts/veo/a1-wrong-model-audio.yaml")).unwrap()
            });
        let ev = crate::check::evaluate(&suite, &t).unwrap();
        (suite, t, ev)
    }

    /// The judge's prompts for seed 001's A1 (veo-2.0 with audio) in `mode`.
    fn veo_a1_prompts(mode: Mode) -> (String, String) {
        let (suite, t, ev) = veo_a1();
        render(&suite, &t, suite.harness.scenario("t2v-teaser"), &ev, mode)
    }

    #[test]
    fn enriched_prompt() {
        let (system, user) = veo_a1_prompts(Mode::Enriched);
        insta::assert_snapshot!("judge_system_enriched", system);
        // Paths differ by machine only in the findings' locations, which the prompt omits.
        insta::assert_snapshot!("judge_user_enriched_veo_a1", user);
        assert!(
            user.contains("model veo-2.0-generate-001"),
            "the matrix row of the chosen model"
        );
        assert!(user.contains("generate_audio: one of [false]; otherwise the call fails [V2]"));
        assert!(user.contains("error [cap.unsupported_value] lowers argument_value"));
    }

    /// A general workflow reads as what it allows: alternatives, an optional step, repeats,
    /// `any_of` lists, what the turn forbids.
    #[test]
    fn general_reference_workflow() {
        let dir = tempfile::tempdir().unwrap();
        let tools = r#"[{"name": "search_nodes", "annotations": {"readOnlyHint": true}, "inputSchema": {"type": "object", "properties": {"query": {"type": "string"}}}},
            {"name": "open_nodes", "annotations": {"readOnlyHint": true}, "inputSchema": {"type": "object", "properties": {"names": {"type": "array"}}}},
            {"name": "read_graph", "annotations": {"readOnlyHint": true}, "inputSchema": {"type": "object"}}]"#;
        std::fs::write(dir.path().join("g.tools.json"), tools).unwrap();
        let yaml = "scenarios:\n  - id: s\n    forbid: [destructive]\n    turns:\n      - prompt: Show Ada.\n        forbid: [read_graph]\n        workflow:\n          - { tool: search_nodes, arguments: { query: Ada }, optional: true }\n          - { tool: [open_nodes, search_nodes], arguments: { names: [Ada] }, min: 1, max: 2 }\n          - any_of:\n              - [ { tool: open_nodes, arguments: { names: [Ada] } } ]\n              - [ { tool: search_nodes, arguments: { query: Ada }, count: 2 } ]\n";
        let path = dir.path().join("g.yaml");
        std::fs::write(&path, yaml).unwrap();
        let suite = Suite::load(&path).unwrap();
        let t = Transcript::from_source(
            crate::source::SourceFile::from_text(
                "t.yaml",
                "scenario: s\ncalls:\n  - { tool: open_nodes, arguments: { names: [Ada] } }\n",
            ),
            "t".into(),
        )
        .unwrap();
        let ev = crate::check::evaluate(&suite, &t).unwrap();
        let (_, user) = render(&suite, &t, suite.harness.scenario("s"), &ev, Mode::Enriched);
        let start = user.find("## A reference workflow").unwrap();
        let end = user.find("## Deterministic findings").unwrap();
        insta::assert_snapshot!("judge_general_reference_workflow", &user[start..end]);
    }

    #[test]
    fn raw_spec_prompt_is_schema_only() {
        let (system, user) = veo_a1_prompts(Mode::RawSpec);
        insta::assert_snapshot!("judge_user_raw_spec_veo_a1", user);
        assert!(!system.contains("capability matrix"));
        assert!(
            !user.contains("Capability matrix")
                && !user.contains("Deterministic findings")
                && !user.contains("reference workflow")
        );
    }

    #[test]
    fn verdict_round_trip_and_checks() {
        let (_, t, ev) = veo_a1();
        let v = Verdict::from_score(ev.score.as_ref().unwrap());
        v.check().unwrap();
        let back = v.score(t.calls().count());
        assert!(
            (back.tc - ev.score.as_ref().unwrap().tc).abs() < 0.02,
            "{} vs {}",
            back.tc,
            ev.score.as_ref().unwrap().tc
        );
        let mut bad = v.clone();
        bad.arguments.value_accuracy = 11;
        assert!(
            bad.check()
                .unwrap_err()
                .contains("arguments.value_accuracy is 11")
        );
        let mut bad = v.clone();
        bad.coherence.logical_flow = 0;
        assert!(bad.check().is_err());
        let mut bad = v;
        bad.failures.push("vibes".into());
        assert!(bad.check().unwrap_err().contains("`vibes`"));
    }

    #[test]
    fn ordering_only_with_two_calls() {
        let (_, _, ev) = veo_a1();
        let mut v = Verdict::from_score(ev.score.as_ref().unwrap());
        v.ordering = Ordering {
            applicable: true,
            sequence_logic: 0,
            dependency_handling: 0,
            execution_efficiency: 0,
        };
        assert_eq!(
            v.score(1).ordering,
            None,
            "a judge cannot make ordering apply to one call"
        );
        assert_eq!(v.score(2).ordering, Some(0.0));
    }

    #[test]
    fn coherence_normalises_and_skips_retention_without_history() {
        let (_, _, ev) = veo_a1();
        let mut v = Verdict::from_score(ev.score.as_ref().unwrap());
        v.coherence = Coherence {
            logical_flow: 3,
            completeness: 2,
            conciseness: 1,
            topic_relevance: 3,
            context_retention: 1,
        };
        assert!((v.coherence(false) - (1.0 + 0.5 + 0.0 + 1.0) / 4.0).abs() < 1e-9);
        assert!((v.coherence(true) - (1.0 + 0.5 + 0.0 + 1.0 + 0.0) / 5.0).abs() < 1e-9);
    }
}
