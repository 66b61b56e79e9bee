//! Reports of a run: per-trial results and per-suite counts, rendered for people (a table) and
//! machines (JSON). The main type is [`Summary`], built with [`Summary::new`] from the runner's
//! [`TrialReport`]s. Rendering returns strings; the library never prints.

use std::collections::BTreeMap;
use std::fmt::Write;

use serde::Serialize;

use crate::harness::Expect;
use crate::runner::{Status, TrialReport};

/// Counts for one suite.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct SuiteCounts {
    pub trials: usize,
    pub passed: usize,
    pub failed: usize,
    pub xfailed: usize,
    /// Transcripts labelled `expect: pass`, and how many passed.
    pub correct: usize,
    pub correct_passed: usize,
    /// Transcripts labelled `expect: fail`, and how many were caught with their faults.
    pub broken: usize,
    pub broken_caught: usize,
}

/// A run's results.
#[derive(Serialize)]
pub struct Summary<'a> {
    pub passed: bool,
    pub suites: BTreeMap<String, SuiteCounts>,
    pub totals: SuiteCounts,
    #[serde(serialize_with = "trials")]
    pub trials: &'a [TrialReport],
}

impl<'a> Summary<'a> {
    pub fn new(trials: &'a [TrialReport]) -> Self {
        let mut suites: BTreeMap<String, SuiteCounts> = BTreeMap::new();
        for t in trials {
            let c = suites.entry(t.suite.clone()).or_default();
            c.trials += 1;
            match t.status {
                Status::Passed => c.passed += 1,
                Status::Failed => c.failed += 1,
                Status::Xfailed => c.xfailed += 1,
            }
            if let Some(ev) = &t.evaluation {
                let ok = t.status == Status::Passed;
                match ev.label.expect.unwrap_or(Expect::Pass) {
                    Expect::Pass => {
                        c.correct += 1;
                        c.correct_passed += usize::from(ok);
                    }
                    Expect::Fail => {
                        c.broken += 1;
                        c.broken_caught += usize::from(ok);
                    }
                }
            }
        }
        let mut totals = SuiteCounts::default();
        for c in suites.values() {
            totals.trials += c.trials;
            totals.passed += c.passed;
            totals.failed += c.failed;
            totals.xfailed += c.xfailed;
            totals.correct += c.correct;
            totals.correct_passed += c.correct_passed;
            totals.broken += c.broken;
            totals.broken_caught += c.broken_caught;
        }
        Self {
            passed: totals.failed == 0,
            suites,
            totals,
            trials,
        }
    }

    /// The human report: one line per trial, the failures in full, then the per-suite table.
    pub fn human(&self, verbose: bool) -> String {
        let mut s = String::new();
        let width = self.trials.iter().map(|t| t.name.len()).max().unwrap_or(0);
        for t in self.trials {
            let tag = match t.status {
                Status::Passed => "PASS ",
                Status::Failed => "FAIL ",
                Status::Xfailed => "XFAIL",
            };
            let mut line = format!("{tag} {:width$}", t.name);
            if let Some(score) = t.evaluation.as_ref().and_then(|e| e.score.as_ref()) {
                let _ = write!(line, "  {}", crate::runner::dimensions(score));
            }
            if let (Status::Xfailed, Some(m)) = (t.status, &t.message) {
                let _ = write!(line, "  {m}");
            }
            s.push_str(line.trim_end());
            if let Some(ev) = &t.evaluation
                && verbose
                && t.status == Status::Passed
                && !ev.findings.is_empty()
            {
                for f in &ev.findings {
                    let _ = write!(s, "\n        {f}");
                }
            }
            s.push('\n');
        }
        let failures: Vec<&TrialReport> = self
            .trials
            .iter()
            .filter(|t| t.status == Status::Failed)
            .collect();
        if !failures.is_empty() {
            s.push_str("\nfailures:\n");
            for t in failures {
                let _ = writeln!(
                    s,
                    "\n---- {} ----\n{}",
                    t.name,
                    t.message.as_deref().unwrap_or("").trim_end()
                );
            }
        }
        for d in self.trials.iter().filter_map(|t| t.discrimination.as_ref()) {
            s.push('\n');
            s.push_str(&d.table());
        }
        s.push('\n');
        s.push_str(&self.table());
        s
    }

    /// The per-suite table.
    pub fn table(&self) -> String {
        let mut s = String::new();
        let w = self
            .suites
            .keys()
            .map(String::len)
            .max()
            .unwrap_or(5)
            .max(5);
        let _ = writeln!(
            s,
            "{:w$}  trials  passed  failed  xfailed  correct passed  broken caught",
            "suite"
        );
        let mut row = |name: &str, c: &SuiteCounts| {
            let _ = writeln!(
                s,
                "{name:w$}  {:>6}  {:>6}  {:>6}  {:>7}  {:>14}  {:>13}",
                c.trials,
                c.passed,
                c.failed,
                c.xfailed,
                format!("{}/{}", c.correct_passed, c.correct),
                format!("{}/{}", c.broken_caught, c.broken),
            );
        };
        for (name, c) in &self.suites {
            row(name, c);
        }
        row("total", &self.totals);
        let _ = writeln!(
            s,
            "\nresult: {}. {} passed; {} failed; {} xfailed",
            if self.passed { "ok" } else { "FAILED" },
            self.totals.passed,
            self.totals.failed,
            self.totals.xfailed
        );
        s
    }

    pub fn json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default()
    }
}

fn trials<S: serde::Serializer>(trials: &&[TrialReport], s: S) -> Result<S::Ok, S::Error> {
    #[derive(Serialize)]
    struct Row<'a> {
        name: &'a str,
        suite: &'a str,
        status: Status,
        #[serde(skip_serializing_if = "Option::is_none")]
        message: Option<&'a str>,
        #[serde(skip_serializing_if = "Option::is_none")]
        evaluation: Option<&'a crate::runner::Evaluation>,
        #[serde(skip_serializing_if = "Option::is_none")]
        discrimination: Option<&'a crate::runner::Discrimination>,
    }
    s.collect_seq(trials.iter().map(|t| Row {
        name: &t.name,
        suite: &t.suite,
        status: t.status,
        message: t.message.as_deref(),
        evaluation: t.evaluation.as_ref(),
        discrimination: t.discrimination.as_ref(),
    }))
}
