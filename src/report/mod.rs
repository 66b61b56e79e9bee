//! Reports of a run, for people and machines.
//!
//! Every trial ends as a [`TrialRecord`]; the harness writes each to the run directory
//! ([`RunDir`]), `run` gathers them into a [`Report`] ([`Report::new`]), and `check` appends
//! each to a [`RunFile`] as its trial ends. A report renders as a terminal summary
//! ([`write_human`]), stable JSON ([`write_json`], schema in `schemas/report.schema.json`),
//! JUnit XML ([`junit`]), a PR-comment Markdown summary ([`markdown`]), a self-contained HTML
//! page with inline SVG charts ([`html`]), GitHub annotations and SARIF for CI ([`ci`]), and
//! OpenTelemetry events ([`otlp`]).
//!
//! Every renderer reads a [`View`]: the run's [`Summary`] (its counts and every aggregate a
//! chart or table needs, made in one pass) and its [`Trials`] in name order, walked again for
//! what is per trial and written out as it goes. So `check` on 30,000 transcripts holds one
//! record at a time (`bench/memory.sh`), and a [`Report`] in memory renders through the same
//! code (`Report::human`, `html::html`, … return strings). The library never prints.

pub mod ci;
pub mod html;
pub mod junit;
pub mod markdown;
pub mod otlp;
mod record;
mod rundir;
mod runfile;
mod summary;
mod svg;

use std::fmt::Write;
use std::io;

use anstyle::{AnsiColor, Style};

pub use crate::check::Progress;
pub use crate::check::{
    FindingRecord, HarnessRecord, JudgeRecord, LedgerEntry, LiveRecord, ScoreRecord, Status,
    TranscriptRecord, TrialRecord,
};
pub use crate::harness::{TrialId, TrialKind};
use crate::trajectory::Trajectory;
pub use record::{AgreementRecord, FORMAT, Report, SuiteCounts, heat_map};
pub use rundir::{RunDir, RunDirError, process_run_id, utc_stamp};
pub use runfile::{Iter, RunFile, Trials};
pub use summary::{Gate, SuiteStats, Summary, View, WORST, Worst, bin};

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
        let summary = self.summary();
        in_memory(|out| write_human(self.view(&summary), verbosity, out))
    }

    /// The per-suite table and the result line.
    pub fn table(&self) -> String {
        table(&self.summary())
    }

    /// The report as stable JSON (`schemas/report.schema.json`).
    pub fn json(&self) -> String {
        let summary = self.summary();
        in_memory(|out| write_json(self.view(&summary), out))
    }

    /// What the renderers read of this report: `summary` (its [`Report::summary`]) and its
    /// trials.
    pub fn view<'a>(&'a self, summary: &'a Summary) -> View<'a> {
        View {
            summary,
            trials: Trials::Memory(&self.trials),
        }
    }
}

/// What a renderer wrote into memory, as text (a renderer writes UTF-8, and reading records
/// from memory cannot fail).
pub(crate) fn in_memory(render: impl FnOnce(&mut Vec<u8>) -> io::Result<()>) -> String {
    let mut out = Vec::new();
    let _ = render(&mut out);
    String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// The terminal report ([`Report::human`]), written as it is made: a line per trial, the
/// failures, the gates' tables, then the per-suite table. Each part is one walk over the
/// trials.
pub fn write_human(
    view: View<'_>,
    verbosity: Verbosity,
    out: &mut dyn io::Write,
) -> io::Result<()> {
    let summary = view.summary;
    // Whether anything comes before the table (a blank line then separates them).
    let mut before = false;
    if verbosity != Verbosity::Quiet {
        for t in view.trials.iter() {
            let t = t?;
            let mut s = trial_line(&t, summary.width);
            if let Some(tr) = &t.transcript
                && verbosity == Verbosity::Verbose
            {
                if let Some(traj) = &tr.trajectory {
                    let _ = write!(s, "\n        {}", trajectory_line(traj));
                }
                if t.status == Status::Passed {
                    for f in &tr.findings {
                        let _ = write!(s, "\n        {}[{}]: {}", f.severity, f.code, f.message);
                    }
                }
            }
            s.push('\n');
            out.write_all(s.as_bytes())?;
            before = true;
        }
    }
    if summary.failed() > 0 {
        out.write_all(if verbosity == Verbosity::Quiet {
            b"failures:\n"
        } else {
            b"\nfailures:\n"
        })?;
        before = true;
        for t in view.trials.iter() {
            let t = t?;
            if t.status == Status::Failed {
                writeln!(
                    out,
                    "\n---- {} ----\n{}",
                    t.name,
                    t.message.as_deref().unwrap_or("").trim_end()
                )?;
            }
        }
    }
    if verbosity != Verbosity::Quiet && !summary.gates.is_empty() {
        for t in view.trials.iter() {
            if let Some(d) = &t?.discrimination {
                out.write_all(b"\n")?;
                out.write_all(d.table().as_bytes())?;
                before = true;
            }
        }
    }
    if before {
        out.write_all(b"\n")?;
    }
    out.write_all(table(summary).as_bytes())
}

/// The per-suite table and the result line.
pub fn table(summary: &Summary) -> String {
    let mut s = String::new();
    let w = summary
        .suites
        .keys()
        .map(String::len)
        .max()
        .unwrap_or(5)
        .max(5);
    let unlabelled = summary.has_unlabelled();
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
    for (name, c) in &summary.suites {
        row(name, c);
    }
    row("total", &summary.totals);
    for (key, e) in &summary.ledger {
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
    for why in &summary.incomplete {
        let _ = writeln!(s, "{}: {why}", paint(FAIL, "incomplete run"));
    }
    let ignored = if summary.totals.ignored > 0 {
        format!("; {} ignored", summary.totals.ignored)
    } else {
        String::new()
    };
    let _ = writeln!(
        s,
        "\nresult: {}. {} passed; {} failed; {} xfailed{ignored}",
        if summary.passed {
            paint(PASS, "ok")
        } else {
            paint(FAIL, "FAILED")
        },
        summary.totals.passed,
        summary.totals.failed,
        summary.totals.xfailed
    );
    s
}

/// The report as stable JSON ([`Report::json`], `schemas/report.schema.json`), written a trial
/// at a time: the same bytes as the [`Report`] serialised whole.
pub fn write_json(view: View<'_>, out: &mut dyn io::Write) -> io::Result<()> {
    let s = view.summary;
    // `Report`'s fields, in its order, with its rules for leaving one out.
    #[derive(serde::Serialize)]
    struct Json<'a> {
        format: &'a str,
        run_id: &'a str,
        passed: bool,
        totals: &'a SuiteCounts,
        suites: &'a std::collections::BTreeMap<String, SuiteCounts>,
        trials: Records<'a>,
        #[serde(skip_serializing_if = "std::collections::BTreeMap::is_empty")]
        ledger: std::collections::BTreeMap<&'a str, &'a LedgerEntry>,
        #[serde(skip_serializing_if = "Option::is_none")]
        agreement: Option<&'a AgreementRecord>,
        #[serde(skip_serializing_if = "<[String]>::is_empty")]
        incomplete: &'a [String],
    }
    let json = Json {
        format: &s.format,
        run_id: &s.run_id,
        passed: s.passed,
        totals: &s.totals,
        suites: &s.suites,
        trials: Records(view.trials),
        ledger: s.ledger.iter().map(|(k, v)| (k.as_str(), v)).collect(),
        agreement: s.agreement.as_ref(),
        incomplete: &s.incomplete,
    };
    let mut ser =
        serde_json::Serializer::with_formatter(out, serde_json::ser::PrettyFormatter::new());
    serde::Serialize::serialize(&json, &mut ser).map_err(io::Error::from)
}

/// Trials serialised as a JSON array, read one at a time.
pub(crate) struct Records<'a>(pub Trials<'a>);

impl serde::Serialize for Records<'_> {
    fn serialize<S: serde::Serializer>(&self, ser: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{Error, SerializeSeq};
        let mut seq = ser.serialize_seq(None)?;
        for t in self.0.iter() {
            seq.serialize_element(&*t.map_err(S::Error::custom)?)?;
        }
        seq.end()
    }
}
