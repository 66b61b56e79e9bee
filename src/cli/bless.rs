//! `agent-seer bless [PATHS…]`: make failing transcript trials pass by accepting what the
//! agent does now (the oracle) or what the engines find now (a broken transcript's faults),
//! showing each diff first.

use std::io::Write;
use std::path::{Path, PathBuf};

use agent_seer::bless::{Blessing, bless};
use agent_seer::check::Status;
use agent_seer::report::TrialKind;

use super::Outcome;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Transcript files or directories, or harness files. Default: every suite.
    paths: Vec<PathBuf>,
    /// The project root. Default: AGENT_SEER_ROOT, else the nearest directory up from here
    /// with a harnesses/ folder.
    #[arg(long)]
    root: Option<PathBuf>,
    /// Show the diffs without writing anything; exit 1 when there are any (a CI check).
    #[arg(long)]
    dry_run: bool,
}

pub fn run(args: Args, out: &mut dyn Write) -> anyhow::Result<Outcome> {
    let config = super::project_config(args.root.clone());
    let layout = config.layout()?;
    let selection = super::Selection::new(&layout, &args.paths)?;
    let keep = |p: &Path| selection.keeps(p);
    let records = super::run_plan(&config, &layout, &keep, &mut |_| {})?;
    let failing: Vec<_> = records
        .iter()
        .filter(|r| r.kind == TrialKind::Transcript && r.status == Status::Failed)
        .collect();
    let (mut blessed, mut refused) = (0, 0);
    for r in &failing {
        let (Some(tr), Some(harness)) = (&r.transcript, layout.harness_file(&r.suite)) else {
            writeln!(
                out,
                "{}: not blessed: {}",
                r.name,
                r.message
                    .as_deref()
                    .unwrap_or("it cannot be loaded")
                    .lines()
                    .next()
                    .unwrap_or("")
            )?;
            refused += 1;
            continue;
        };
        match bless(&harness, Path::new(&tr.path))? {
            Blessing::Edit(edit) => {
                writeln!(out, "{}: {}", r.name, edit.what)?;
                out.write_all(edit.diff().as_bytes())?;
                if !args.dry_run {
                    edit.apply()?;
                }
                blessed += 1;
            }
            Blessing::Unchanged => {}
            Blessing::Refused(why) => {
                writeln!(out, "{}: not blessed: {why}", r.name)?;
                refused += 1;
            }
        }
    }
    writeln!(
        out,
        "{} {blessed} trial(s); {refused} not blessed; {} already passing",
        if args.dry_run {
            "would bless"
        } else {
            "blessed"
        },
        records
            .iter()
            .filter(|r| r.kind == TrialKind::Transcript && r.status != Status::Failed)
            .count()
    )?;
    // A dry run with changes pending is a finding (a CI check that the suite is blessed).
    Ok(if refused == 0 && !(args.dry_run && blessed > 0) {
        Outcome::Clean
    } else {
        Outcome::Findings
    })
}
