//! `agent-seer check [PATHS…]`: the harness's verdicts, outside `cargo test`.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use agent_seer::check::{Status, TrialRecord};
use agent_seer::harness::TrialKind;
use agent_seer::report::{RunDir, RunFile, Summary, View, process_run_id};

use super::Outcome;
use super::output::{Progress, ReportArgs};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Transcript files or directories, or harness files (a harness selects its whole suite).
    /// Default: every suite of the project.
    paths: Vec<PathBuf>,
    /// The project root (holding harnesses/ and transcripts/). Default: AGENT_SEER_ROOT, else
    /// the nearest directory up from here with a harnesses/ folder, as cargo finds its manifest.
    #[arg(long)]
    root: Option<PathBuf>,
    #[command(flatten)]
    report: ReportArgs,
    /// Do not save the run under target/agent-seer/ (for `agent-seer report`).
    #[arg(long)]
    no_save: bool,
}

pub fn run(args: Args, out: &mut dyn Write) -> anyhow::Result<Outcome> {
    let config = super::project_config(args.root.clone());
    let layout = config.layout()?;
    let selection = super::Selection::new(&layout, &args.paths)?;
    let keep = |p: &Path| selection.keeps(p);
    let progress = Arc::new(Progress::new(args.report.quiet, false));
    let run_id = process_run_id();
    let run_dir =
        (!args.no_save).then(|| RunDir::new(&RunDir::cli_target(&layout.root), run_id.clone()));
    // Each record goes to the run's file as its trial ends (a temporary one with
    // `--no-save`), and the report is read back from it: memory holds one record at a time,
    // whatever the number of transcripts.
    let mut file: Option<RunFile> = None;
    let mut unloadable = false;
    super::run_plan_each(&config, &layout, &keep, &mut |r| {
        progress.tick(&r.name);
        unloadable |= self::unloadable(&r);
        let f = match &mut file {
            Some(f) => f,
            None => file.insert(match &run_dir {
                Some(d) => d.run_file()?,
                None => RunFile::temporary()?,
            }),
        };
        Ok(f.push(&r)?)
    })?;
    progress.finish();
    let Some(file) = file else {
        anyhow::bail!(
            "no trials found under {} and {}{}",
            layout.harnesses.display(),
            layout.transcripts.display(),
            if args.paths.is_empty() {
                ""
            } else {
                " matching the given paths"
            }
        );
    };
    if let Some(d) = &run_dir {
        d.finish(&file)?;
    }
    let summary = Summary::of(run_id, file.trials())?;
    let outcome = args.report.emit(
        View {
            summary: &summary,
            trials: file.trials(),
        },
        out,
    )?;
    // A file that does not load is bad input, exit 2 as the table says, not a failed trial's
    // 1 (issue 32, item 12); the report still shows every trial.
    Ok(if unloadable {
        Outcome::Failed(super::exit::INPUT)
    } else {
        outcome
    })
}

/// Whether a trial failed because its files did not load: a failed trial without what it
/// checks (a harness trial without its coverage, a transcript trial without its transcript, a
/// gate without its table).
pub(super) fn unloadable(r: &TrialRecord) -> bool {
    r.status == Status::Failed
        && match r.kind {
            TrialKind::Harness => r.harness.is_none(),
            TrialKind::Transcript => r.transcript.is_none(),
            TrialKind::Discrimination => r.discrimination.is_none(),
            _ => false,
        }
}
