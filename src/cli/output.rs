//! What `check`, `run` and `report` share: the report formats and files, verbosity, and the
//! progress display (a bar on a terminal, plain lines otherwise, nothing with `--quiet`).

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use agent_seer::report::{Report, RunDir, Verbosity, View, ci, html, junit, markdown};
use clap::ValueEnum;

use super::Outcome;

/// What a report prints on stdout.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum ReportFormat {
    /// Trial lines, failures in full, gates, the per-suite table.
    #[default]
    Human,
    /// The stable JSON report (`agent-seer schema report`).
    Json,
    /// JUnit XML, one testcase per trial.
    Junit,
    /// A summary sized for a pull-request comment.
    Markdown,
    /// One self-contained HTML page with charts.
    Html,
    /// GitHub Actions annotations (`::error file=…,line=…::…`), one per finding on its YAML
    /// line, then the per-suite table.
    Github,
    /// SARIF 2.1.0, for GitHub code scanning.
    Sarif,
}

/// Report files to write besides what is printed.
#[derive(clap::Args, Debug, Default)]
pub struct ReportFiles {
    /// Also write the JSON report to FILE.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Also write JUnit XML to FILE.
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// Also write the Markdown summary to FILE (for a PR comment).
    #[arg(long, value_name = "FILE")]
    pub markdown: Option<PathBuf>,
    /// Also write the HTML report to FILE.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// Also write SARIF 2.1.0 to FILE (for `github/codeql-action/upload-sarif`).
    #[arg(long, value_name = "FILE")]
    pub sarif: Option<PathBuf>,
    /// Also write the results as OpenTelemetry `gen_ai.evaluation.result` events (OTLP JSON
    /// logs) to FILE, linked to the traces recorded runs came from.
    #[arg(long, value_name = "FILE")]
    pub otlp: Option<PathBuf>,
}

impl ReportFiles {
    /// Writes each requested file (atomically), each as it is rendered.
    pub fn write(&self, view: View<'_>) -> anyhow::Result<()> {
        type Render = fn(View<'_>, &mut dyn Write) -> std::io::Result<()>;
        let markdown: Render = |v, out| out.write_all(markdown::markdown_of(v)?.as_bytes());
        let sarif: Render = |v, out| ci::write_sarif(v, &place, out);
        for (path, render) in [
            (&self.json, agent_seer::report::write_json as Render),
            (&self.junit, junit::write_junit),
            (&self.markdown, markdown),
            (&self.html, html::write_html),
            (&self.sarif, sarif),
        ] {
            if let Some(p) = path {
                agent_seer::source::write_atomically_with(p, |out| {
                    let mut out = EndsLine::new(out);
                    render(view, &mut out)?;
                    out.end_line()
                })
                .map_err(|e| anyhow::anyhow!("{}: cannot write: {e}", p.display()))?;
            }
        }
        if let Some(p) = &self.otlp {
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos());
            agent_seer::source::write_atomically_with(p, |out| {
                agent_seer::report::otlp::write_otlp(view, now, out)
            })
            .map_err(|e| anyhow::anyhow!("{}: cannot write: {e}", p.display()))?;
        }
        Ok(())
    }
}

/// A writer that remembers whether what went through it ends a line, so a file can be ended
/// with one newline whatever its renderer wrote last.
struct EndsLine<'a> {
    out: &'a mut dyn Write,
    last: Option<u8>,
}

impl<'a> EndsLine<'a> {
    fn new(out: &'a mut dyn Write) -> Self {
        Self { out, last: None }
    }

    fn end_line(&mut self) -> std::io::Result<()> {
        if self.last != Some(b'\n') {
            self.out.write_all(b"\n")?;
        }
        Ok(())
    }
}

impl Write for EndsLine<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.out.write(buf)?;
        if n > 0 {
            self.last = Some(buf[n - 1]);
        }
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush()
    }
}

#[derive(clap::Args, Debug, Default)]
pub struct ReportArgs {
    /// What to print on stdout.
    #[arg(long, value_enum, default_value_t)]
    pub format: ReportFormat,
    #[command(flatten)]
    pub files: ReportFiles,
    /// Print only failures and the totals, and no progress.
    #[arg(short, long, conflicts_with = "verbose")]
    pub quiet: bool,
    /// Also list the warnings of passing trials.
    #[arg(short, long)]
    pub verbose: bool,
}

impl ReportArgs {
    pub fn verbosity(&self) -> Verbosity {
        match (self.quiet, self.verbose) {
            (true, _) => Verbosity::Quiet,
            (_, true) => Verbosity::Verbose,
            _ => Verbosity::Normal,
        }
    }

    /// Prints the report in the chosen format, writes the requested files, and concludes.
    pub fn emit(&self, view: View<'_>, out: &mut dyn Write) -> anyhow::Result<Outcome> {
        self.files.write(view)?;
        step_summary(view)?;
        // One write per line would be one system call per line on a pipe.
        let mut out = std::io::BufWriter::with_capacity(1 << 16, out);
        let o: &mut dyn Write = &mut out;
        match self.format {
            ReportFormat::Human => agent_seer::report::write_human(view, self.verbosity(), o)?,
            ReportFormat::Json => {
                agent_seer::report::write_json(view, o)?;
                o.write_all(b"\n")?;
            }
            ReportFormat::Junit => {
                junit::write_junit(view, o)?;
                o.write_all(b"\n")?;
            }
            ReportFormat::Markdown => o.write_all(markdown::markdown_of(view)?.as_bytes())?,
            ReportFormat::Html => html::write_html(view, o)?,
            ReportFormat::Github => ci::write_github(view, &place, o)?,
            ReportFormat::Sarif => {
                ci::write_sarif(view, &place, o)?;
                o.write_all(b"\n")?;
            }
        }
        out.flush()?;
        Ok(if view.summary.passed {
            Outcome::Clean
        } else {
            Outcome::Findings
        })
    }

    /// [`ReportArgs::emit`] of a report held in memory.
    pub fn emit_report(&self, report: &Report, out: &mut dyn Write) -> anyhow::Result<Outcome> {
        let summary = report.summary();
        self.emit(report.view(&summary), out)
    }
}

/// Where an annotated file is, for GitHub: a report's path resolved from the working
/// directory (`../../transcripts/a.yaml` from a subfolder, or absolute under nextest), then
/// made relative to GitHub's workspace (the repository root) when set, else to the working
/// directory; a path outside it is kept as written.
fn place(p: &str) -> String {
    let Ok(cwd) = std::env::current_dir() else {
        return p.to_owned();
    };
    let base = std::env::var_os("GITHUB_WORKSPACE")
        .filter(|v| !v.is_empty())
        .map_or_else(|| cwd.clone(), PathBuf::from);
    let abs = agent_seer::source::join_tidy(&cwd, Path::new(p));
    abs.strip_prefix(&base)
        .map_or_else(|_| p.to_owned(), |r| r.to_string_lossy().into_owned())
}

/// In a GitHub Actions step (`GITHUB_STEP_SUMMARY` names a file), appends the Markdown report
/// to the job summary, as GitHub asks: the step's other writes to it are kept.
fn step_summary(view: View<'_>) -> anyhow::Result<()> {
    let Some(path) = std::env::var_os("GITHUB_STEP_SUMMARY").filter(|v| !v.is_empty()) else {
        return Ok(());
    };
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .map_err(|e| {
            anyhow::anyhow!(
                "{}: cannot append the job summary: {e}",
                Path::new(&path).display()
            )
        })?;
    let mut text = markdown::markdown_of(view)?;
    if !text.ends_with('\n') {
        text.push('\n');
    }
    file.write_all(text.as_bytes())?;
    Ok(())
}

/// Writes every record of a report to a fresh run directory under the project's `target/`, so
/// `agent-seer report` can render it again later.
pub fn save_run(root: &Path, report: &Report) -> anyhow::Result<RunDir> {
    let run = RunDir::new(&RunDir::cli_target(root), report.run_id.clone());
    for t in &report.trials {
        run.write(t)?;
    }
    run.close()?;
    Ok(run)
}

/// A progress display for long work: an indicatif spinner on a terminal, plain lines on a
/// pipe (CI logs), nothing when quiet. `plain` says whether plain lines are wanted at all (for
/// fast verbs whose report already lists every trial, they are not).
pub struct Progress {
    bar: Option<indicatif::ProgressBar>,
    plain: bool,
}

impl Progress {
    pub fn new(quiet: bool, plain: bool) -> Self {
        let tty = std::io::stderr().is_terminal();
        let bar = (!quiet && tty).then(|| {
            let bar = indicatif::ProgressBar::new_spinner();
            bar.set_style(
                indicatif::ProgressStyle::with_template("{spinner} {pos:>5} {msg}")
                    .unwrap_or_else(|_| indicatif::ProgressStyle::default_spinner()),
            );
            bar.enable_steady_tick(std::time::Duration::from_millis(120));
            bar
        });
        Self {
            bar,
            plain: plain && !quiet && !tty,
        }
    }

    /// One unit of work done.
    pub fn tick(&self, message: &str) {
        if let Some(bar) = &self.bar {
            bar.inc(1);
            bar.set_message(message.to_owned());
        } else if self.plain {
            eprintln!("{message}");
        }
    }

    /// A shareable callback for the library.
    pub fn callback(self: &Arc<Self>) -> Arc<dyn Fn(&str) + Send + Sync> {
        let me = self.clone();
        Arc::new(move |m: &str| me.tick(m))
    }

    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}
