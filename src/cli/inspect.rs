//! `agent-seer inspect-spec FILE`: the paper's complexity profile of a tool spec.

use std::io::Write;
use std::path::PathBuf;

use agent_seer::spec::ToolSet;

use super::{Format, Outcome};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// A tools/list result, an OpenAI tools array, or BFCL function docs.
    file: PathBuf,
    #[arg(long, value_enum, default_value_t)]
    format: Format,
}

pub fn run(args: Args, out: &mut dyn Write) -> anyhow::Result<Outcome> {
    let set = ToolSet::load(&args.file)?;
    let profile = set.profile();
    match args.format {
        Format::Human => {
            writeln!(out, "{}", args.file.display())?;
            writeln!(out, "{profile}")?;
        }
        Format::Json => writeln!(out, "{}", serde_json::to_string_pretty(&profile)?)?,
    }
    Ok(Outcome::Clean)
}
