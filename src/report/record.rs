//! The run report's data: one [`TrialRecord`] per trial, gathered into a [`Report`].
//!
//! These types are the stable JSON format (`schemas/report.schema.json`, `format:
//! "agent-seer-report/1"`): owned, plain data, so a report written by one process (a nextest
//! trial) is read back by another (`agent-seer report`). Field names only grow; a renamed or
//! removed field bumps the format.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::finding::{Finding, SubDimension};
use crate::harness::{Expect, Label};
use crate::llm::LedgerEntry;
use crate::runner::{Discrimination, Evaluation, Status, Verdict};
use crate::score::Score;

/// The value of [`Report::format`] this version writes.
pub const FORMAT: &str = "agent-seer-report/1";

/// What a trial checks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TrialKind {
    /// `<suite>::harness`: the harness loads and its oracles lint clean.
    Harness,
    /// `<suite>::<transcript>`: the deterministic engines over one transcript.
    Transcript,
    /// `<suite>::discrimination`: the suite's merge gate.
    Discrimination,
    /// `judge::<suite>::<transcript>`: the LLM judge's combined verdict.
    Judge,
    /// `run::<suite>::<scenario>#<n>`: one live agent run, graded.
    Live,
}

impl TrialKind {
    /// The kind a trial name implies.
    pub fn of(name: &str) -> Self {
        if name.starts_with("judge::") {
            TrialKind::Judge
        } else if name.starts_with("run::") {
            TrialKind::Live
        } else if name.ends_with("::harness") {
            TrialKind::Harness
        } else if name.ends_with("::discrimination") {
            TrialKind::Discrimination
        } else {
            TrialKind::Transcript
        }
    }
}

/// A score: the four dimensions, the three aggregates and every applicable sub-dimension.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ScoreRecord {
    pub tc: f64,
    pub tc_harmonic: f64,
    pub tc_min: f64,
    pub usage: f64,
    pub selection: f64,
    #[serde(default)]
    pub ordering: Option<f64>,
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
                .map(|(d, v)| (d.as_str().to_owned(), *v))
                .collect(),
        }
    }
}

impl ScoreRecord {
    pub fn get(&self, d: SubDimension) -> Option<f64> {
        self.sub.get(d.as_str()).copied()
    }
}

/// One finding, with where it points.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FindingRecord {
    pub code: String,
    pub severity: String,
    pub sub_dimension: String,
    pub message: String,
    /// JSON pointer into the call's arguments.
    #[serde(default)]
    pub pointer: String,
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
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scenario: Option<String>,
    /// The label: `pass`, `fail`, or absent (treated as `pass`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expect: Option<Expect>,
    /// Faults the label names, and those no finding answered.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub faults: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub missed_faults: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub xfail: Option<String>,
    pub verdict: Verdict,
    pub pass_threshold: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score: Option<ScoreRecord>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub turn_scores: Vec<ScoreRecord>,
    pub findings: Vec<FindingRecord>,
    /// The expected-vs-actual call diff, when the calls differ from the oracle.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diff: Option<String>,
}

impl TranscriptRecord {
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
            findings: ev.findings.iter().map(FindingRecord::from).collect(),
            diff: diff.filter(|d| !d.is_empty()),
        }
    }

    /// The label's expectation, `pass` when unlabelled.
    pub fn expects(&self) -> Expect {
        self.expect.unwrap_or(Expect::Pass)
    }

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
    pub score: ScoreRecord,
    pub coherence: f64,
    pub rationale: String,
    /// The oracle's TC and the combined (lower) one the verdict uses.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oracle_tc: Option<f64>,
    pub combined_tc: f64,
    pub verdict: Verdict,
}

/// What a harness trial learnt about its suite: the coverage of the spec by its oracles.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct HarnessRecord {
    pub path: String,
    pub scenarios: Vec<String>,
    /// Tools in the spec, and those no oracle workflow calls.
    pub tools: usize,
    pub uncovered_tools: Vec<String>,
}

/// One live run's bookkeeping (`agent-seer run`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LiveRecord {
    pub agent: String,
    pub scenario: String,
    /// 1-based run number of `repeat`.
    pub run: usize,
    pub repeat: usize,
    pub stopped_at_budget: bool,
}

/// One trial's result.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TrialRecord {
    pub name: String,
    pub suite: String,
    pub kind: TrialKind,
    pub status: Status,
    /// Why it failed (or the xfail reason), as the terminal shows it: findings with their YAML
    /// lines quoted, the call diff.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transcript: Option<TranscriptRecord>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub harness: Option<HarnessRecord>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub discrimination: Option<Discrimination>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judge: Option<JudgeRecord>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub live: Option<LiveRecord>,
}

impl TrialRecord {
    /// A record with only a name, suite and status.
    pub fn bare(
        name: impl Into<String>,
        suite: &str,
        status: Status,
        message: Option<String>,
    ) -> Self {
        let name = name.into();
        Self {
            kind: TrialKind::of(&name),
            name,
            suite: suite.to_owned(),
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

/// Counts for one suite.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SuiteCounts {
    pub trials: usize,
    pub passed: usize,
    pub failed: usize,
    pub xfailed: usize,
    pub ignored: usize,
    /// Transcripts labelled `expect: pass` (or unlabelled), and how many passed.
    pub correct: usize,
    pub correct_passed: usize,
    /// Transcripts labelled `expect: fail`, and how many were caught with their faults.
    pub broken: usize,
    pub broken_caught: usize,
}

impl SuiteCounts {
    /// The row every view shows: trials, passed, failed, xfailed, `correct passed` and
    /// `broken caught` (as `n/of`).
    pub fn cells(&self) -> [String; 6] {
        [
            self.trials.to_string(),
            self.passed.to_string(),
            self.failed.to_string(),
            self.xfailed.to_string(),
            format!("{}/{}", self.correct_passed, self.correct),
            format!("{}/{}", self.broken_caught, self.broken),
        ]
    }

    fn add(&mut self, t: &TrialRecord) {
        self.trials += 1;
        match t.status {
            Status::Passed => self.passed += 1,
            Status::Failed => self.failed += 1,
            Status::Xfailed => self.xfailed += 1,
            Status::Ignored => self.ignored += 1,
        }
        if let (TrialKind::Transcript | TrialKind::Live, Some(tr)) = (t.kind, &t.transcript) {
            let ok = t.status == Status::Passed;
            match tr.expects() {
                Expect::Pass => {
                    self.correct += 1;
                    self.correct_passed += usize::from(ok);
                }
                Expect::Fail => {
                    self.broken += 1;
                    self.broken_caught += usize::from(ok);
                }
            }
        }
    }

    fn merge(&mut self, o: &SuiteCounts) {
        self.trials += o.trials;
        self.passed += o.passed;
        self.failed += o.failed;
        self.xfailed += o.xfailed;
        self.ignored += o.ignored;
        self.correct += o.correct;
        self.correct_passed += o.correct_passed;
        self.broken += o.broken;
        self.broken_caught += o.broken_caught;
    }
}

/// Paired scores of two graders over the same transcripts (the HTML scatter).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AgreementRecord {
    pub x: String,
    pub y: String,
    /// `(trial, x, y)`.
    pub points: Vec<(String, f64, f64)>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pearson: Option<f64>,
    pub mae: f64,
}

/// A whole run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Report {
    pub format: String,
    pub run_id: String,
    pub passed: bool,
    pub totals: SuiteCounts,
    pub suites: BTreeMap<String, SuiteCounts>,
    pub trials: Vec<TrialRecord>,
    /// LLM calls by `provider:model`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub ledger: BTreeMap<String, LedgerEntry>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agreement: Option<AgreementRecord>,
}

impl Report {
    /// Gathers trial records (sorted by name) into a report.
    pub fn new(run_id: impl Into<String>, mut trials: Vec<TrialRecord>) -> Self {
        trials.sort_by(|a, b| a.name.cmp(&b.name));
        let mut suites: BTreeMap<String, SuiteCounts> = BTreeMap::new();
        for t in &trials {
            suites.entry(t.suite.clone()).or_default().add(t);
        }
        let mut totals = SuiteCounts::default();
        for c in suites.values() {
            totals.merge(c);
        }
        let agreement = agreement(&trials);
        Self {
            format: FORMAT.to_owned(),
            run_id: run_id.into(),
            passed: totals.failed == 0,
            totals,
            suites,
            trials,
            ledger: BTreeMap::new(),
            agreement,
        }
    }

    pub fn with_ledger(mut self, ledger: BTreeMap<String, LedgerEntry>) -> Self {
        self.ledger = ledger;
        self
    }

    /// The report's trials of one suite.
    pub fn suite_trials<'a>(&'a self, suite: &'a str) -> impl Iterator<Item = &'a TrialRecord> {
        self.trials.iter().filter(move |t| t.suite == suite)
    }

    /// Graded transcripts (deterministic and live), the population of the charts.
    pub fn graded(&self) -> impl Iterator<Item = (&TrialRecord, &TranscriptRecord)> {
        self.trials
            .iter()
            .filter_map(|t| match (t.kind, &t.transcript) {
                (TrialKind::Transcript | TrialKind::Live, Some(tr)) => Some((t, tr)),
                _ => None,
            })
    }

    /// Mean of each sub-dimension per suite over its graded transcripts (`None` where no
    /// transcript has it).
    pub fn heat_map(&self) -> BTreeMap<String, Vec<Option<f64>>> {
        let mut out = BTreeMap::new();
        for suite in self.suites.keys() {
            let row = SubDimension::ALL
                .iter()
                .map(|d| {
                    let vals: Vec<f64> = self
                        .graded()
                        .filter(|(t, _)| &t.suite == suite)
                        .filter_map(|(_, tr)| tr.score.as_ref()?.get(*d))
                        .collect();
                    (!vals.is_empty()).then(|| vals.iter().sum::<f64>() / vals.len() as f64)
                })
                .collect();
            out.insert(suite.clone(), row);
        }
        out
    }
}

/// Two graders over the same transcripts: two judges when two ran, else the oracle and the
/// one judge; `None` without a judge.
fn agreement(trials: &[TrialRecord]) -> Option<AgreementRecord> {
    let judged: Vec<(&TrialRecord, &JudgeRecord)> = trials
        .iter()
        .filter_map(|t| Some((t, t.judge.as_ref()?)))
        .collect();
    let mut judges: Vec<&str> = judged.iter().map(|(_, j)| j.judge.as_str()).collect();
    judges.sort_unstable();
    judges.dedup();
    let key = |t: &TrialRecord| t.name.trim_start_matches("judge::").to_owned();
    let (x, y, points): (String, String, Vec<(String, f64, f64)>) = match judges.as_slice() {
        [] => return None,
        [one] => (
            "oracle".to_owned(),
            (*one).to_owned(),
            judged
                .iter()
                .filter_map(|(t, j)| Some((key(t), j.oracle_tc?, j.score.tc)))
                .collect(),
        ),
        [a, b, ..] => {
            let of = |name: &str| -> BTreeMap<String, f64> {
                judged
                    .iter()
                    .filter(|(_, j)| j.judge == name)
                    .map(|(t, j)| (key(t), j.score.tc))
                    .collect()
            };
            let (xa, yb) = (of(a), of(b));
            let points = xa
                .iter()
                .filter_map(|(k, x)| Some((k.clone(), *x, *yb.get(k)?)))
                .collect();
            ((*a).to_owned(), (*b).to_owned(), points)
        }
    };
    if points.is_empty() {
        return None;
    }
    let xs: Vec<f64> = points.iter().map(|p| p.1).collect();
    let ys: Vec<f64> = points.iter().map(|p| p.2).collect();
    let mae = xs.iter().zip(&ys).map(|(a, b)| (a - b).abs()).sum::<f64>() / xs.len() as f64;
    Some(AgreementRecord {
        x,
        y,
        pearson: crate::judge::agreement::pearson(&xs, &ys),
        mae,
        points,
    })
}
