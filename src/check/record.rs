//! What a trial ends as: one [`TrialRecord`], with its [`Status`], gathered by the report into
//! a `Report`.
//!
//! These types are the stable JSON format (`schemas/report.schema.json`, `format:
//! "agent-seer-report/1"`): owned, plain data, so a record written by one process (a nextest
//! trial) is read back by another (`agent-seer report`). Field names only grow; a renamed or
//! removed field bumps the format. They live in the check layer because the trial plan makes
//! them; `report` re-exports them and renders them.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::{Discrimination, Evaluation, Verdict};
use crate::finding::{Finding, SubDimension};
use crate::harness::{Expect, Label, TrialId, TrialKind};
use crate::score::Score;
use crate::trajectory::Trajectory;

/// How one trial ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// It passed.
    Passed,
    /// It failed; the record's message says why.
    Failed,
    /// Failed as its `xfail` label expected: reported, not gating.
    Xfailed,
    /// Not run (a judge trial without a judge, a gate with nothing to gate); the message says
    /// why.
    Ignored,
}

/// LLM usage totals for one provider and model, as a report carries them.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LedgerEntry {
    /// Requests answered (by the provider or the cache).
    pub calls: u64,
    /// Of those, answered from the cache.
    pub cached: u64,
    /// Prompt tokens the provider reported.
    pub input_tokens: u64,
    /// Completion tokens the provider reported.
    pub output_tokens: u64,
    /// Of the calls, answered through the provider's batch API (billed at half the list price).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub batched: u64,
    /// USD, from list prices per million tokens where we know them (half of it for batched
    /// calls); `None` otherwise.
    pub estimated_cost_usd: Option<f64>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// A score: the four dimensions, the three aggregates and every applicable sub-dimension.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ScoreRecord {
    /// The paper's TC: the arithmetic mean of the applicable dimensions.
    pub tc: f64,
    /// TC as the harmonic mean of the dimensions.
    pub tc_harmonic: f64,
    /// TC as the least dimension.
    pub tc_min: f64,
    /// Usage (necessity).
    pub usage: f64,
    /// Selection: correctness, specificity, completeness.
    pub selection: f64,
    /// Ordering, where a turn has two calls or more.
    #[serde(default)]
    pub ordering: Option<f64>,
    /// Arguments: the six argument sub-dimensions.
    pub arguments: f64,
    /// Keyed by the rubric's names (`argument_value`, …).
    pub sub: BTreeMap<String, f64>,
}

impl From<&Score> for ScoreRecord {
    fn from(s: &Score) -> Self {
        Self {
            tc: s.tc,
            tc_harmonic: s.tc_harmonic,
            tc_min: s.tc_min,
            usage: s.usage,
            selection: s.selection,
            ordering: s.ordering,
            arguments: s.arguments,
            sub: s
                .sub
                .iter()
                .map(|(d, v)| (d.as_str().to_owned(), v))
                .collect(),
        }
    }
}

impl ScoreRecord {
    /// `TC 0.778 (usage 1.000, selection 1.000, ordering n/a, arguments 0.333)`.
    pub fn line(&self) -> String {
        let ordering = self
            .ordering
            .map_or("n/a".to_owned(), |o| format!("{o:.3}"));
        format!(
            "TC {:.3} (usage {:.3}, selection {:.3}, ordering {ordering}, arguments {:.3})",
            self.tc, self.usage, self.selection, self.arguments
        )
    }

    /// The value of one sub-dimension, where it applies.
    pub fn get(&self, d: SubDimension) -> Option<f64> {
        self.sub.get(d.as_str()).copied()
    }
}

/// One finding, with where it points.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FindingRecord {
    /// The finding's stable code (`cap.unsupported_value`).
    pub code: String,
    /// `error`, `warning` or `info`.
    pub severity: String,
    /// The rubric sub-dimension it lowers (`argument_value`).
    pub sub_dimension: String,
    /// What is wrong, in words.
    pub message: String,
    /// JSON pointer into the call's arguments.
    #[serde(default)]
    pub pointer: String,
    /// The capability-matrix rule it comes from, when one does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
    /// 0-based index of the call across the transcript's turns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call: Option<usize>,
    /// `file:line:column`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub location: Option<String>,
}

impl From<&Finding> for FindingRecord {
    fn from(f: &Finding) -> Self {
        Self {
            code: f.code.as_str().to_owned(),
            severity: f.severity.to_string(),
            sub_dimension: f.sub_dimension.as_str().to_owned(),
            message: f.message.clone(),
            pointer: f.pointer.clone(),
            rule: f.rule.clone(),
            call: f.call,
            location: f.location.as_ref().map(ToString::to_string),
        }
    }
}

/// What the engines concluded about one transcript.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TranscriptRecord {
    /// The transcript file.
    pub path: String,
    /// The scenario the transcript answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scenario: Option<String>,
    /// The label: `pass`, `fail`, or absent (treated as `pass`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expect: Option<Expect>,
    /// Faults the label names, and those no finding answered.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub faults: Vec<String>,
    /// The label's faults no finding answered.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub missed_faults: Vec<String>,
    /// The label's `xfail` reason.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub xfail: Option<String>,
    /// The engines' verdict.
    pub verdict: Verdict,
    /// The suite's pass threshold on TC.
    pub pass_threshold: f64,
    /// The whole transcript's score (mean of its turns).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score: Option<ScoreRecord>,
    /// Each turn's score.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub turn_scores: Vec<ScoreRecord>,
    /// The ADK / Vertex AI trajectory metrics, per turn and their mean (in the verdict only through a suite's `thresholds.trajectory` gate).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trajectory: Option<Trajectory>,
    /// Every finding.
    pub findings: Vec<FindingRecord>,
    /// The expected-vs-actual call diff, when the calls differ from the oracle.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diff: Option<String>,
    /// The trace the transcript was read from (a recorded OTLP run): where `--otlp` puts the
    /// results.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<crate::harness::TraceLink>,
}

impl TranscriptRecord {
    /// The record of an evaluated transcript at `path`, with its call diff if any.
    pub fn new(path: &Path, ev: &Evaluation, label: &Label, diff: Option<String>) -> Self {
        Self {
            path: path.display().to_string(),
            scenario: ev.scenario.clone(),
            expect: label.expect,
            faults: label.faults.clone(),
            missed_faults: ev.missed_faults().into_iter().map(str::to_owned).collect(),
            xfail: label.xfail.clone(),
            verdict: ev.verdict,
            pass_threshold: ev.pass_threshold,
            score: ev.score.as_ref().map(ScoreRecord::from),
            turn_scores: ev.turn_scores.iter().map(ScoreRecord::from).collect(),
            trajectory: ev.trajectory.clone(),
            findings: ev.findings.iter().map(FindingRecord::from).collect(),
            diff: diff.filter(|d| !d.is_empty()),
            trace: ev.trace.clone(),
        }
    }

    /// The label's expectation, `pass` when unlabelled.
    pub fn expects(&self) -> Expect {
        self.expect.unwrap_or(Expect::Pass)
    }

    /// The transcript's TC, when it answers a scenario.
    pub fn tc(&self) -> Option<f64> {
        self.score.as_ref().map(|s| s.tc)
    }
}

/// The judge's view of one transcript.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct JudgeRecord {
    /// `provider:model`.
    pub judge: String,
    /// `enriched` or `raw-spec`.
    pub mode: String,
    /// The judge's own score of the 14 sub-dimensions.
    pub score: ScoreRecord,
    /// The judge's coherence, 0–1 (the mean of its five 1–3 ratings, normalised).
    pub coherence: f64,
    /// The judge's reasons, in its words.
    pub rationale: String,
    /// The oracle's TC and the combined (lower) one the verdict uses.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oracle_tc: Option<f64>,
    /// The lower of the oracle's TC and the judge's (`judge::combine`, with the `judge` feature).
    pub combined_tc: f64,
    /// The combined verdict.
    pub verdict: Verdict,
}

impl JudgeRecord {
    /// One paragraph on how the combined verdict came about, for a trial's message.
    pub fn summary(&self, errors: usize, pass: f64) -> String {
        format!(
            "judge TC {:.3}, oracle TC {:.3}, combined {:.3} (pass at {pass:.3}); {errors} error finding(s); coherence {:.3}\nrationale: {}",
            self.score.tc,
            self.oracle_tc.unwrap_or(1.0),
            self.combined_tc,
            self.coherence,
            self.rationale
        )
    }
}

/// What a harness trial learnt about its suite: the coverage of the spec by its oracles.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct HarnessRecord {
    /// The harness file.
    pub path: String,
    /// Its scenario ids.
    pub scenarios: Vec<String>,
    /// Tools in the spec, and those no oracle workflow calls.
    pub tools: usize,
    /// Names of the spec's tools no oracle workflow calls.
    pub uncovered_tools: Vec<String>,
}

/// One live run's bookkeeping (`agent-seer run`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LiveRecord {
    /// The agent under test, `provider:model`.
    pub agent: String,
    /// The scenario it ran.
    pub scenario: String,
    /// 1-based run number of `repeat`.
    pub run: usize,
    /// How many runs `--repeat` asked for.
    pub repeat: usize,
    /// Whether the run ended at its step budget rather than with a reply.
    pub stopped_at_budget: bool,
}

/// One trial's result.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TrialRecord {
    /// The trial's name ([`TrialId`]'s `Display`).
    pub name: String,
    /// The suite the report files it under.
    pub suite: String,
    /// What the trial checks.
    pub kind: TrialKind,
    /// How it ended.
    pub status: Status,
    /// Why it failed (or the xfail reason), as the terminal shows it: findings with their YAML
    /// lines quoted, the call diff.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// A transcript or judge trial's transcript.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transcript: Option<TranscriptRecord>,
    /// A harness trial's coverage.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub harness: Option<HarnessRecord>,
    /// A gate's table.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub discrimination: Option<Discrimination>,
    /// A judge trial's judgement.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judge: Option<JudgeRecord>,
    /// A live run's bookkeeping.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub live: Option<LiveRecord>,
}

impl TrialRecord {
    /// A record with only the trial's identity and how it ended.
    pub fn new(id: &TrialId, status: Status, message: Option<String>) -> Self {
        Self {
            kind: id.kind,
            name: id.to_string(),
            suite: id.suite.clone(),
            status,
            message,
            transcript: None,
            harness: None,
            discrimination: None,
            judge: None,
            live: None,
        }
    }

    /// The oracle's TC of the trial's transcript, when it has one (a judge trial's own TC is
    /// in [`TrialRecord::judge`]).
    pub fn tc(&self) -> Option<f64> {
        self.transcript.as_ref().and_then(TranscriptRecord::tc)
    }
}
