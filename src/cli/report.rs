//! `agent-seer report [RUN_DIR]`: a run's records, assembled and rendered.

use std::io::Write;
use std::path::PathBuf;

use agent_seer::report::{Report, RunDir};

use super::Outcome;
use super::output::ReportArgs;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The run directory (`target/agent-seer/<run-id>`). Default: the latest run, named by
    /// `target/agent-seer/latest`.
    run_dir: Option<PathBuf>,
    /// The project root whose `target/` holds the runs. Default: AGENT_SEER_ROOT, else the
    /// nearest directory up from here with a harnesses/ folder.
    #[arg(long)]
    root: Option<PathBuf>,
    #[command(flatten)]
    report: ReportArgs,
}

pub fn run(args: Args, out: &mut dyn Write) -> anyhow::Result<Outcome> {
    let dir = match args.run_dir {
        Some(d) => d,
        None => RunDir::latest(&RunDir::cli_target(&super::project_root(args.root)))?,
    };
    let (records, incomplete) = RunDir::read_run(&dir)?;
    let id = dir.file_name().map_or_else(
        || dir.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    let unloadable = records.iter().any(super::check::unloadable);
    let report = Report::new(id, records).with_incomplete(incomplete);
    let outcome = args.report.emit_report(&report, out)?;
    // A run with a file that did not load is bad input, as `check` says of it (exit 2).
    Ok(if unloadable {
        Outcome::Failed(super::exit::INPUT)
    } else {
        outcome
    })
}
