//! A whole run: the [`TrialRecord`]s of its trials gathered into a [`Report`], with counts per
//! suite and the agreement of its graders.
//!
//! The JSON format is stable (`schemas/report.schema.json`, `format: "agent-seer-report/1"`);
//! the trial records themselves are the check layer's ([`crate::check::TrialRecord`]).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::summary::{Judged, SuiteStats, Summary};
use crate::check::{LedgerEntry, Status, TranscriptRecord, TrialRecord};
use crate::finding::SubDimension;
use crate::harness::{Expect, TrialId, TrialKind};

/// The value of [`Report::format`] this version writes.
pub const FORMAT: &str = "agent-seer-report/1";
/// Counts for one suite.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SuiteCounts {
    /// Trials of every kind.
    pub trials: usize,
    /// Of those, passed.
    pub passed: usize,
    /// Failed.
    pub failed: usize,
    /// Failed as their `xfail` label expected.
    pub xfailed: usize,
    /// Not run (a judge without a judge, a gate with nothing labelled).
    pub ignored: usize,
    /// Transcripts labelled `expect: pass`.
    pub correct: usize,
    /// Of the correct transcripts, those that passed.
    pub correct_passed: usize,
    /// Transcripts labelled `expect: fail`, and how many were caught with their faults.
    pub broken: usize,
    /// Of the broken transcripts, those caught with their faults.
    pub broken_caught: usize,
    /// Transcripts without a label (a recorded run dropped in): graded as if correct, but
    /// counted apart, since nobody said they are.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub unlabelled: usize,
    /// Of the unlabelled transcripts, those that passed.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub unlabelled_passed: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

impl SuiteCounts {
    /// The row every view shows: trials, passed, failed, xfailed, `correct passed` and
    /// `broken caught` (as `n/of`), and `unlabelled passed` when `unlabelled` (a report with
    /// an unlabelled transcript: [`Report::has_unlabelled`]).
    pub fn cells(&self, unlabelled: bool) -> Vec<String> {
        let mut cells = vec![
            self.trials.to_string(),
            self.passed.to_string(),
            self.failed.to_string(),
            self.xfailed.to_string(),
            format!("{}/{}", self.correct_passed, self.correct),
            format!("{}/{}", self.broken_caught, self.broken),
        ];
        if unlabelled {
            cells.push(format!("{}/{}", self.unlabelled_passed, self.unlabelled));
        }
        cells
    }

    pub(super) fn add(&mut self, t: &TrialRecord) {
        self.trials += 1;
        match t.status {
            Status::Passed => self.passed += 1,
            Status::Failed => self.failed += 1,
            Status::Xfailed => self.xfailed += 1,
            Status::Ignored => self.ignored += 1,
        }
        if let (TrialKind::Transcript | TrialKind::Live, Some(tr)) = (t.kind, &t.transcript) {
            let ok = t.status == Status::Passed;
            match tr.expect {
                Some(Expect::Pass) => {
                    self.correct += 1;
                    self.correct_passed += usize::from(ok);
                }
                Some(Expect::Fail) => {
                    self.broken += 1;
                    self.broken_caught += usize::from(ok);
                }
                None => {
                    self.unlabelled += 1;
                    self.unlabelled_passed += usize::from(ok);
                }
            }
        }
    }

    pub(super) fn merge(&mut self, o: &SuiteCounts) {
        self.trials += o.trials;
        self.passed += o.passed;
        self.failed += o.failed;
        self.xfailed += o.xfailed;
        self.ignored += o.ignored;
        self.correct += o.correct;
        self.correct_passed += o.correct_passed;
        self.broken += o.broken;
        self.broken_caught += o.broken_caught;
        self.unlabelled += o.unlabelled;
        self.unlabelled_passed += o.unlabelled_passed;
    }
}

/// Paired scores of two graders over the same transcripts (the HTML scatter).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AgreementRecord {
    /// The first grader (`oracle` or a judge's `provider:model`).
    pub x: String,
    /// The second grader.
    pub y: String,
    /// `(trial, x, y)`.
    pub points: Vec<(String, f64, f64)>,
    /// Pearson r of the two graders' TC, when it is defined.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pearson: Option<f64>,
    /// Mean absolute difference of the two graders' TC.
    pub mae: f64,
}

/// A whole run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// `agent-seer-report/1` ([`FORMAT`]).
    pub format: String,
    /// The run's id (`NEXTEST_RUN_ID`, or `<utc stamp>-<pid>`).
    pub run_id: String,
    /// No trial failed and no process was left unfinished.
    pub passed: bool,
    /// Counts over every suite.
    pub totals: SuiteCounts,
    /// Counts per suite.
    pub suites: BTreeMap<String, SuiteCounts>,
    /// Every trial, sorted by name.
    pub trials: Vec<TrialRecord>,
    /// LLM calls by `provider:model`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub ledger: BTreeMap<String, LedgerEntry>,
    /// Two graders' agreement, when a judge ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agreement: Option<AgreementRecord>,
    /// What a killed process left unfinished in the run directory ([`crate::report::RunDir::read_run`]);
    /// a run with anything here does not pass.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub incomplete: Vec<String>,
}

impl Report {
    /// Gathers trial records (sorted by name) into a report.
    pub fn new(run_id: impl Into<String>, mut trials: Vec<TrialRecord>) -> Self {
        trials.sort_by(|a, b| a.name.cmp(&b.name));
        let s = Summary::of_records(run_id, &trials);
        Self {
            format: s.format,
            run_id: s.run_id,
            passed: s.passed,
            totals: s.totals,
            suites: s.suites,
            trials,
            ledger: s.ledger,
            agreement: s.agreement,
            incomplete: s.incomplete,
        }
    }

    /// The report's [`Summary`]: its own counts, verdict, ledger and agreement, with the
    /// aggregates the renderers draw from its trials.
    pub fn summary(&self) -> Summary {
        let mut s = Summary::of_records(self.run_id.clone(), &self.trials);
        s.format.clone_from(&self.format);
        s.passed = self.passed;
        s.totals = self.totals.clone();
        s.suites.clone_from(&self.suites);
        s.ledger.clone_from(&self.ledger);
        s.agreement.clone_from(&self.agreement);
        s.incomplete.clone_from(&self.incomplete);
        s
    }

    /// The report of a run some of whose processes did not finish: it does not pass.
    pub fn with_incomplete(mut self, incomplete: Vec<String>) -> Self {
        self.passed &= incomplete.is_empty();
        self.incomplete = incomplete;
        self
    }

    /// The report with the LLM usage of its run.
    pub fn with_ledger(mut self, ledger: BTreeMap<String, LedgerEntry>) -> Self {
        self.ledger = ledger;
        self
    }

    /// Whether a transcript of the run had no label: the tables then show `unlabelled
    /// passed` beside `correct passed`.
    pub fn has_unlabelled(&self) -> bool {
        self.totals.unlabelled > 0
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

    /// Mean of each sub-dimension per suite over its correct and unlabelled transcripts
    /// (`None` where none has it): how good the agent is. Broken transcripts are left out —
    /// with them, a cell's colour said how many broken fixtures a suite has.
    pub fn heat_map(&self) -> BTreeMap<String, Vec<Option<f64>>> {
        heat_map(&self.summary())
    }
}

/// [`Report::heat_map`] of a summary.
pub fn heat_map(s: &Summary) -> BTreeMap<String, Vec<Option<f64>>> {
    s.suites
        .keys()
        .map(|suite| {
            let row = s
                .stats
                .get(suite)
                .map_or_else(|| vec![None; SubDimension::ALL.len()], SuiteStats::heat_row);
            (suite.clone(), row)
        })
        .collect()
}

/// Two graders over the same transcripts: two judges when two ran, else the oracle and the
/// one judge; `None` without a judge.
pub(super) fn agreement(judged: &[Judged]) -> Option<AgreementRecord> {
    let mut judges: Vec<&str> = judged.iter().map(|j| j.judge.as_str()).collect();
    judges.sort_unstable();
    judges.dedup();
    // The transcript trial a judge trial judges: `judge::veo::a1` pairs with `veo::a1`.
    let key = |name: &str| match name.parse::<TrialId>() {
        Ok(id) if id.kind == TrialKind::Judge => {
            TrialId::transcript(&id.suite, id.transcript.as_deref().unwrap_or_default()).to_string()
        }
        _ => name.to_owned(),
    };
    let (x, y, points): (String, String, Vec<(String, f64, f64)>) = match judges.as_slice() {
        [] => return None,
        [one] => (
            "oracle".to_owned(),
            (*one).to_owned(),
            judged
                .iter()
                .filter_map(|j| Some((key(&j.name), j.oracle_tc?, j.tc)))
                .collect(),
        ),
        [a, b, ..] => {
            let of = |name: &str| -> BTreeMap<String, f64> {
                judged
                    .iter()
                    .filter(|j| j.judge == name)
                    .map(|j| (key(&j.name), j.tc))
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
        pearson: crate::stats::pearson(&xs, &ys),
        mae,
        points,
    })
}
