//! What a report says about a run as a whole, gathered in one pass over its records: the
//! counts per suite, the verdict, and every aggregate a renderer draws (the column width, the
//! charts' bins and means, the heat map, the gates, the coverage, the worst cases, the judges'
//! agreement). The main type here is [`Summary`], built with [`Summary::of`].
//!
//! A renderer reads a [`View`]: the summary beside the run's [`Trials`], which it walks again
//! for what is per trial (lines, failures, rows). So a report on a run of any size holds its
//! aggregates and one record at a time; the same code renders a [`Report`](super::Report) held
//! in memory and the record file `check` writes as it runs, byte for byte alike.

use std::collections::{BTreeMap, BTreeSet};
use std::io;

use super::record::{FORMAT, agreement};
use super::{AgreementRecord, SuiteCounts, Trials};
use crate::check::{LedgerEntry, Status, TrialRecord};
use crate::finding::SubDimension;
use crate::harness::{Expect, TrialKind};

/// How many near-threshold cases the Markdown report lists.
pub const WORST: usize = 5;

/// A run's aggregates, in the order its records sort by name.
#[derive(Clone, Debug, PartialEq)]
pub struct Summary {
    /// `agent-seer-report/1`.
    pub format: String,
    /// The run's id.
    pub run_id: String,
    /// No trial failed and no process was left unfinished.
    pub passed: bool,
    /// Counts over every suite.
    pub totals: SuiteCounts,
    /// Counts per suite.
    pub suites: BTreeMap<String, SuiteCounts>,
    /// LLM calls by `provider:model`.
    pub ledger: BTreeMap<String, LedgerEntry>,
    /// Two graders' agreement, when a judge ran.
    pub agreement: Option<AgreementRecord>,
    /// What a killed process left unfinished.
    pub incomplete: Vec<String>,
    /// The longest trial name (the terminal's column).
    pub width: usize,
    /// Broken transcripts the engines caught (they passed as labelled).
    pub caught: usize,
    /// Each suite's figures for the charts, by suite.
    pub stats: BTreeMap<String, SuiteStats>,
    /// Each gate, in trial order.
    pub gates: Vec<Gate>,
    /// Each harness trial's coverage, in trial order: (suite, record).
    pub harnesses: Vec<(String, crate::check::HarnessRecord)>,
    /// The correct transcripts with the lowest TC, lowest first (at most [`WORST`]).
    pub worst: Vec<Worst>,
    /// The judges' scores, for the agreement.
    judged: Vec<Judged>,
}

/// One suite's figures for the charts.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SuiteStats {
    /// Graded transcripts (deterministic and live).
    pub graded: usize,
    /// The pass threshold of its first graded transcript.
    pub threshold: Option<f64>,
    /// TC in ten bins over [0, 1]: of the correct (and unlabelled) transcripts, of the broken.
    pub bins: [[usize; 10]; 2],
    /// Graded transcripts with a TC, correct and broken: the per-case chart's dots.
    pub cases: [usize; 2],
    /// The sum of their TC, correct and broken (for the chart's means).
    pub case_tc: [f64; 2],
    /// The longest case name, in characters.
    pub longest: usize,
    /// Per sub-dimension ([`SubDimension::ALL`]), the sum and count of the correct
    /// transcripts' scores.
    pub heat: Vec<(f64, usize)>,
    /// The first gap its gates report.
    pub gap: Option<f64>,
    /// The scenarios its transcripts answer.
    pub scenarios: BTreeSet<String>,
}

impl SuiteStats {
    /// Mean of each sub-dimension over the correct transcripts (`None` where none has it).
    pub fn heat_row(&self) -> Vec<Option<f64>> {
        self.heat
            .iter()
            .map(|(sum, n)| (*n > 0).then(|| sum / *n as f64))
            .collect()
    }

    /// The mean TC of the correct (`true`) or broken cases, when there are any.
    pub fn case_mean(&self, correct: bool) -> Option<f64> {
        let i = usize::from(!correct);
        (self.cases[i] > 0).then(|| self.case_tc[i] / self.cases[i] as f64)
    }
}

/// A gate's figures (its table is in its record).
#[derive(Clone, Debug, PartialEq)]
pub struct Gate {
    /// The suite.
    pub suite: String,
    /// How the gate's trial ended.
    pub status: Status,
    /// Mean TC of the correct transcripts.
    pub mean_correct: Option<f64>,
    /// Mean TC of the broken transcripts.
    pub mean_broken: Option<f64>,
    /// Their difference.
    pub gap: Option<f64>,
    /// The gap to the broken runs that fail on TC alone.
    pub gap_on_tc: Option<f64>,
    /// The least gap the gate accepts.
    pub min_gap: f64,
    /// Broken transcripts whose named faults were all found.
    pub hits: usize,
    /// Broken transcripts that name their faults.
    pub named: usize,
}

/// A correct transcript close to failing.
#[derive(Clone, Debug, PartialEq)]
pub struct Worst {
    /// The trial.
    pub name: String,
    /// Its TC.
    pub tc: f64,
    /// Its suite's pass threshold.
    pub pass_threshold: f64,
    /// The codes of its findings, sorted.
    pub codes: Vec<String>,
}

/// What every renderer reads: a run's [`Summary`] and its [`Trials`] in name order.
#[derive(Clone, Copy, Debug)]
pub struct View<'a> {
    /// The aggregates.
    pub summary: &'a Summary,
    /// The records.
    pub trials: Trials<'a>,
}

/// A judge trial's scores, for the agreement.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Judged {
    pub name: String,
    pub judge: String,
    pub oracle_tc: Option<f64>,
    pub tc: f64,
}

impl Summary {
    /// The summary of a run's records, read once in name order.
    pub fn of(run_id: impl Into<String>, trials: Trials<'_>) -> io::Result<Summary> {
        let mut s = Summary::empty(run_id.into());
        for t in trials.iter() {
            let t = t?;
            s.add(&t);
        }
        Ok(s.finish())
    }

    /// The summary of records in memory, sorted by name.
    pub fn of_records(run_id: impl Into<String>, records: &[TrialRecord]) -> Summary {
        let mut s = Summary::empty(run_id.into());
        for t in records {
            s.add(t);
        }
        s.finish()
    }

    fn empty(run_id: String) -> Summary {
        Summary {
            format: FORMAT.to_owned(),
            run_id,
            passed: true,
            totals: SuiteCounts::default(),
            suites: BTreeMap::new(),
            ledger: BTreeMap::new(),
            agreement: None,
            incomplete: Vec::new(),
            width: 0,
            caught: 0,
            stats: BTreeMap::new(),
            gates: Vec::new(),
            harnesses: Vec::new(),
            worst: Vec::new(),
            judged: Vec::new(),
        }
    }

    fn finish(mut self) -> Summary {
        for c in self.suites.values() {
            self.totals.merge(c);
        }
        self.passed = self.totals.failed == 0;
        self.agreement = agreement(&self.judged);
        self
    }

    fn add(&mut self, t: &TrialRecord) {
        self.width = self.width.max(t.name.len());
        self.suites.entry(t.suite.clone()).or_default().add(t);
        let stats = self
            .stats
            .entry(t.suite.clone())
            .or_insert_with(|| SuiteStats {
                heat: vec![(-0.0, 0); SubDimension::ALL.len()],
                ..SuiteStats::default()
            });
        if let Some(sc) = t.transcript.as_ref().and_then(|tr| tr.scenario.as_ref())
            && !stats.scenarios.contains(sc)
        {
            stats.scenarios.insert(sc.clone());
        }
        if let Some(d) = &t.discrimination {
            if stats.gap.is_none() {
                stats.gap = d.gap;
            }
            self.gates.push(Gate {
                suite: d.suite.clone(),
                status: t.status,
                mean_correct: d.mean_correct,
                mean_broken: d.mean_broken,
                gap: d.gap,
                gap_on_tc: d.gap_on_tc,
                min_gap: d.min_gap,
                hits: d.hits,
                named: d.named,
            });
        }
        if let (TrialKind::Harness, Some(h)) = (t.kind, &t.harness) {
            self.harnesses.push((t.suite.clone(), h.clone()));
        }
        if let Some(j) = &t.judge {
            self.judged.push(Judged {
                name: t.name.clone(),
                judge: j.judge.clone(),
                oracle_tc: j.oracle_tc,
                tc: j.score.tc,
            });
        }
        let (TrialKind::Transcript | TrialKind::Live, Some(tr)) = (t.kind, &t.transcript) else {
            return;
        };
        // A graded transcript: the charts' population.
        let correct = tr.expects() == Expect::Pass;
        if t.status == Status::Passed && !correct {
            self.caught += 1;
        }
        stats.graded += 1;
        stats.threshold.get_or_insert(tr.pass_threshold);
        let Some(tc) = tr.tc() else {
            return;
        };
        let group = usize::from(!correct);
        stats.bins[group][bin(tc)] += 1;
        // Summed in name order from -0.0, as `Iterator::sum` would sum them.
        if stats.cases[group] == 0 {
            stats.case_tc[group] = -0.0;
        }
        stats.cases[group] += 1;
        stats.case_tc[group] += tc;
        let name = t.name.rsplit("::").next().unwrap_or(&t.name);
        stats.longest = stats.longest.max(name.chars().count());
        if !correct {
            return;
        }
        if let Some(score) = &tr.score {
            for (cell, d) in stats.heat.iter_mut().zip(SubDimension::ALL.iter()) {
                if let Some(v) = score.get(*d) {
                    cell.0 += v;
                    cell.1 += 1;
                }
            }
        }
        let worst = Worst {
            name: t.name.clone(),
            tc,
            pass_threshold: tr.pass_threshold,
            codes: tr
                .findings
                .iter()
                .map(|f| f.code.clone())
                .collect::<BTreeSet<_>>()
                .into_iter()
                .collect(),
        };
        let at = self.worst.partition_point(|w| {
            w.tc.total_cmp(&worst.tc)
                .then_with(|| w.name.cmp(&worst.name))
                .is_le()
        });
        if at < WORST {
            self.worst.insert(at, worst);
            self.worst.truncate(WORST);
        }
    }

    /// The report of a run some of whose processes did not finish: it does not pass.
    pub fn with_incomplete(mut self, incomplete: Vec<String>) -> Self {
        self.passed &= incomplete.is_empty();
        self.incomplete = incomplete;
        self
    }

    /// Whether a transcript of the run had no label: the tables then show `unlabelled
    /// passed` beside `correct passed`.
    pub fn has_unlabelled(&self) -> bool {
        self.totals.unlabelled > 0
    }

    /// The failed trials' count.
    pub fn failed(&self) -> usize {
        self.totals.failed
    }
}

/// The histogram bin of a TC: ten over [0, 1], the last closed.
pub fn bin(v: f64) -> usize {
    ((v.clamp(0.0, 1.0) * 10.0).floor() as usize).min(9)
}
