//! Reports of a run, for people and machines.
//!
//! Every trial ends as a [`TrialRecord`]; the harness writes each to the run directory
//! ([`RunDir`]), `check` and `run` build them directly, and [`Report::new`] gathers them. A
//! report renders as a terminal summary ([`Report::human`]), stable JSON ([`Report::json`],
//! schema in `schemas/report.schema.json`), JUnit XML ([`junit`]), a PR-comment Markdown
//! summary ([`markdown`]), a self-contained HTML page with inline SVG charts ([`html`]), and
//! GitHub annotations and SARIF for CI ([`ci`]).
//! Rendering returns strings; the library never prints.

pub mod ci;
pub mod html;
pub mod junit;
pub mod markdown;
pub mod otlp;
mod record;
mod rundir;
mod svg;

use std::fmt::Write;

use anstyle::{AnsiColor, Style};

pub use crate::check::Progress;
pub use crate::check::{
    FindingRecord, HarnessRecord, JudgeRecord, LedgerEntry, LiveRecord, ScoreRecord, Status,
    TranscriptRecord, TrialRecord,
};
pub use crate::harness::{TrialId, TrialKind};
use crate::trajectory::Trajectory;
pub use record::{AgreementRecord, FORMAT, Report, SuiteCounts};
pub use rundir::{RunDir, RunDirError, process_run_id, utc_stamp};

/// How much the terminal summary shows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Verbosity {
    /// Failures and the totals only.
    Quiet,
    /// A line per trial, failures in full, gates, the per-suite table.
    #[default]
    Normal,
    /// Also the warnings of passing trials.
    Verbose,
}

const PASS: Style = AnsiColor::Green.on_default().bold();
const FAIL: Style = AnsiColor::Red.on_default().bold();
const DIM: Style = AnsiColor::Yellow.on_default();

fn paint(style: Style, text: &str) -> String {
    format!("{style}{text}{style:#}")
}

/// The status tag of a trial line, colored (a terminal that wants no color strips it).
pub fn tag(status: Status) -> String {
    match status {
        Status::Passed => paint(PASS, "PASS "),
        Status::Failed => paint(FAIL, "FAIL "),
        Status::Xfailed => paint(DIM, "XFAIL"),
        Status::Ignored => paint(DIM, "SKIP "),
    }
}

/// One trial's line: status, name, score.
pub fn trial_line(t: &TrialRecord, width: usize) -> String {
    let mut line = format!("{} {:width$}", tag(t.status), t.name);
    if let Some(j) = &t.judge {
        let _ = write!(
            line,
            "  judge TC {:.3}, combined {:.3}",
            j.score.tc, j.combined_tc
        );
    } else if let Some(score) = t.transcript.as_ref().and_then(|tr| tr.score.as_ref()) {
        let _ = write!(line, "  {}", dimensions(score));
    }
    if let (Status::Xfailed | Status::Ignored, Some(m)) = (t.status, &t.message) {
        let _ = write!(line, "  {m}");
    }
    line.trim_end().to_owned()
}

/// `TC 0.667 (usage 1.000, selection 0.667, ordering n/a, arguments 0.333)`.
pub fn dimensions(score: &ScoreRecord) -> String {
    score.line()
}

/// `trajectory (policy | literal): exact 1.000 | 0.000, in-order …, any-order …, F1 …`: the
/// ADK / Vertex AI trajectory metrics of a transcript, under its match policies and literally.
pub fn trajectory_line(t: &Trajectory) -> String {
    let (p, l) = (&t.policy, &t.literal);
    format!(
        "trajectory (policy | literal): exact {:.3} | {:.3}, in-order {:.3} | {:.3}, any-order {:.3} | {:.3}, F1 {:.3} | {:.3}",
        p.exact_match,
        l.exact_match,
        p.in_order_match,
        l.in_order_match,
        p.any_order_match,
        l.any_order_match,
        p.f1,
        l.f1
    )
}

impl Report {
    /// The terminal report: one line per trial, the failures in full, the gates, then the
    /// per-suite table.
    pub fn human(&self, verbosity: Verbosity) -> String {
        let mut s = String::new();
        let width = self.trials.iter().map(|t| t.name.len()).max().unwrap_or(0);
        if verbosity != Verbosity::Quiet {
            for t in &self.trials {
                s.push_str(&trial_line(t, width));
                if let Some(tr) = &t.transcript
                    && verbosity == Verbosity::Verbose
                {
                    if let Some(traj) = &tr.trajectory {
                        let _ = write!(s, "\n        {}", trajectory_line(traj));
                    }
                    if t.status == Status::Passed {
                        for f in &tr.findings {
                            let _ =
                                write!(s, "\n        {}[{}]: {}", f.severity, f.code, f.message);
                        }
                    }
                }
                s.push('\n');
            }
        }
        let failures: Vec<&TrialRecord> = self
            .trials
            .iter()
            .filter(|t| t.status == Status::Failed)
            .collect();
        if !failures.is_empty() {
            s.push_str(if verbosity == Verbosity::Quiet {
                "failures:\n"
            } else {
                "\nfailures:\n"
            });
            for t in failures {
                let _ = writeln!(
                    s,
                    "\n---- {} ----\n{}",
                    t.name,
                    t.message.as_deref().unwrap_or("").trim_end()
                );
            }
        }
        if verbosity != Verbosity::Quiet {
            for d in self.trials.iter().filter_map(|t| t.discrimination.as_ref()) {
                s.push('\n');
                s.push_str(&d.table());
            }
        }
        if !s.is_empty() {
            s.push('\n');
        }
        s.push_str(&self.table());
        s
    }

    /// The per-suite table and the result line.
    pub fn table(&self) -> String {
        let mut s = String::new();
        let w = self
            .suites
            .keys()
            .map(String::len)
            .max()
            .unwrap_or(5)
            .max(5);
        let unlabelled = self.has_unlabelled();
        let _ = writeln!(
            s,
            "{:w$}  trials  passed  failed  xfailed  correct passed  broken caught{}",
            "suite",
            if unlabelled {
                "  unlabelled passed"
            } else {
                ""
            }
        );
        let mut row = |name: &str, c: &SuiteCounts| {
            let cells = c.cells(unlabelled);
            let _ = write!(
                s,
                "{name:w$}  {:>6}  {:>6}  {:>6}  {:>7}  {:>14}  {:>13}",
                cells[0], cells[1], cells[2], cells[3], cells[4], cells[5]
            );
            if let Some(u) = cells.get(6) {
                let _ = write!(s, "  {u:>17}");
            }
            s.push('\n');
        };
        for (name, c) in &self.suites {
            row(name, c);
        }
        row("total", &self.totals);
        for (key, e) in &self.ledger {
            let _ = writeln!(
                s,
                "ledger {key}: {} calls ({} cached), {} input + {} output tokens{}",
                e.calls,
                e.cached,
                e.input_tokens,
                e.output_tokens,
                e.estimated_cost_usd
                    .map_or(String::new(), |c| format!(", ~${c:.4}"))
            );
        }
        for why in &self.incomplete {
            let _ = writeln!(s, "{}: {why}", paint(FAIL, "incomplete run"));
        }
        let ignored = if self.totals.ignored > 0 {
            format!("; {} ignored", self.totals.ignored)
        } else {
            String::new()
        };
        let _ = writeln!(
            s,
            "\nresult: {}. {} passed; {} failed; {} xfailed{ignored}",
            if self.passed {
                paint(PASS, "ok")
            } else {
                paint(FAIL, "FAILED")
            },
            self.totals.passed,
            self.totals.failed,
            self.totals.xfailed
        );
        s
    }

    /// The report as stable JSON (`schemas/report.schema.json`).
    pub fn json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default()
    }
}
