//! `agent-seer diff-spec OLD NEW`: tools and parameters added, removed or changed between two
//! tools/list captures, and the harness scenarios each change touches.

use std::io::Write;
use std::path::PathBuf;

use agent_seer::harness::{Harness, discover, touch};
use agent_seer::spec::ToolSet;
use agent_seer::spec::diff::diff;

use super::{Format, Outcome};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The older capture (any accepted spec format).
    old: PathBuf,
    /// The newer capture.
    new: PathBuf,
    /// Harnesses to check for touched scenarios. Default: every harness of the project.
    #[arg(long = "harness", value_name = "FILE")]
    harnesses: Vec<PathBuf>,
    /// The project root. Default: AGENT_SEER_ROOT, else the nearest directory up from here
    /// with a harnesses/ folder.
    #[arg(long)]
    root: Option<PathBuf>,
    #[arg(long, value_enum, default_value_t)]
    format: Format,
}

pub fn run(args: Args, out: &mut dyn Write) -> anyhow::Result<Outcome> {
    let old = ToolSet::load(&args.old)?;
    let new = ToolSet::load(&args.new)?;
    let paths = if args.harnesses.is_empty() {
        let layout = super::project_layout(args.root.clone())?;
        discover(&layout)?
            .into_iter()
            .filter_map(|s| s.harness)
            .collect()
    } else {
        args.harnesses.clone()
    };
    let harnesses = paths
        .iter()
        .map(|p| Harness::load(p))
        .collect::<Result<Vec<_>, _>>()?;
    let mut changes = diff(&old, &new);
    touch(&mut changes, &harnesses);
    report(
        &changes,
        harnesses.len(),
        &args.old.display().to_string(),
        &args.new.display().to_string(),
        args.format,
        out,
    )?;
    Ok(if changes.is_empty() {
        Outcome::Clean
    } else {
        Outcome::Findings
    })
}

/// The changes, for a person or as JSON: `old` and `new` name the two captures, `harnesses`
/// how many harnesses were searched for touched scenarios.
pub(super) fn report(
    changes: &[agent_seer::spec::diff::Change],
    harnesses: usize,
    old: &str,
    new: &str,
    format: Format,
    out: &mut dyn Write,
) -> anyhow::Result<()> {
    match format {
        Format::Json => writeln!(out, "{}", serde_json::to_string_pretty(&changes)?)?,
        Format::Human => {
            if changes.is_empty() {
                writeln!(out, "no changes between {} and {}", old, new)?;
            }
            for c in changes {
                let sign = match c.kind {
                    "tool.added" | "param.added" => '+',
                    "tool.removed" | "param.removed" => '-',
                    _ => '~',
                };
                let what = match &c.param {
                    Some(p) => format!("{}.{p}", c.tool),
                    None => c.tool.clone(),
                };
                writeln!(
                    out,
                    "{sign} {what}: {}{}",
                    c.detail,
                    if c.breaking { "  [breaking]" } else { "" }
                )?;
                for t in &c.touches {
                    writeln!(out, "    touches {t}")?;
                }
            }
            let breaking = changes.iter().filter(|c| c.breaking).count();
            let touched: std::collections::BTreeSet<&str> = changes
                .iter()
                .flat_map(|c| &c.touches)
                .map(|t| t.split(" (").next().unwrap_or(t))
                .collect();
            writeln!(
                out,
                "\n{} change(s), {breaking} breaking; {} scenario(s) touched in {} harness(es)",
                changes.len(),
                touched.len(),
                harnesses
            )?;
        }
    }
    Ok(())
}
