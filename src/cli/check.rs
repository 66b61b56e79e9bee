//! `agent-seer check [PATHS…]`: the harness's verdicts, outside `cargo test`.

use std::io::Write;
use std::path::{Path, PathBuf};

use agent_seer::report::Summary;
use agent_seer::runner::{layout_at, run_checks};

use super::{Format, Outcome};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Transcript files or directories, or harness files (a harness selects its whole suite).
    /// Default: every suite of the project.
    paths: Vec<PathBuf>,
    /// The project root (holding harnesses/ and transcripts/). Default: AGENT_SEER_ROOT, else
    /// the working directory.
    #[arg(long)]
    root: Option<PathBuf>,
    #[arg(long, value_enum, default_value_t)]
    format: Format,
    /// Also list the warnings of passing trials.
    #[arg(short, long)]
    verbose: bool,
}

pub fn run(args: Args, out: &mut dyn Write) -> anyhow::Result<Outcome> {
    // Not CARGO_MANIFEST_DIR: under `cargo run` that names agent-seer's own manifest.
    let root = args
        .root
        .clone()
        .or_else(|| std::env::var_os("AGENT_SEER_ROOT").map(PathBuf::from))
        .unwrap_or_default();
    let layout = layout_at(&root)?;
    for p in &args.paths {
        if !p.exists() {
            anyhow::bail!("{}: no such file or directory", p.display());
        }
    }
    let wanted: Vec<PathBuf> = args.paths.iter().map(|p| normalize(p)).collect();
    let keep = |p: &Path| wanted.is_empty() || wanted.iter().any(|w| normalize(p).starts_with(w));
    let reports = run_checks(&layout, &keep)?;
    if reports.is_empty() {
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
    }
    let summary = Summary::new(&reports);
    match args.format {
        Format::Human => out.write_all(summary.human(args.verbose).as_bytes())?,
        Format::Json => writeln!(out, "{}", summary.json())?,
    }
    Ok(if summary.passed {
        Outcome::Clean
    } else {
        Outcome::Findings
    })
}

fn normalize(p: &Path) -> PathBuf {
    std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf())
}
