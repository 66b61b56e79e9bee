//! `agent-seer audit SPEC… [--caps FILE…]`: what a tool spec hides from agents and judges —
//! prose-only constraints, the missing contract, one concept under several names across the
//! fleet, and the providers that refuse a schema as written.

use std::io::Write;
use std::path::PathBuf;

use agent_seer::audit::{Audit, SeedOutputs, Server, render};
use agent_seer::finding::Severity;
use agent_seer::spec::Capabilities;

use super::Outcome;

#[derive(clap::Args, Debug)]
#[command(after_help = "\
Findings are advice: `warning` (an agent is likely to trip on it) or `info` (a note). The exit \
code is 0 whatever is found, unless `--deny warnings`, which makes any warning exit 1 (as \
clippy's `-D warnings`); 2 is a spec, matrix or seed file that does not load.

Seed outputs: `X.seed_outputs.json` beside `X.tools.json` is found by itself; `--seed-outputs` \
names others (each goes to the server whose tools it names).")]
pub struct Args {
    /// Tool specs (tools/list results, OpenAI tools arrays, BFCL docs), one per server; several
    /// make a fleet, whose parameter names are compared.
    #[arg(required = true)]
    specs: Vec<PathBuf>,
    /// Capability matrices (each goes to the server whose tools it names): a prose finding then
    /// says whether a rule covers it.
    #[arg(long = "caps", num_args = 1..)]
    caps: Vec<PathBuf>,
    /// Seed-output files (`{"samples": [{"tool": …, "result": …}]}`), beyond the siblings.
    #[arg(long = "seed-outputs", num_args = 1..)]
    seed_outputs: Vec<PathBuf>,
    #[arg(long, value_enum, default_value_t)]
    format: AuditFormat,
    /// Show `info` notes too (the JSON output always has them).
    #[arg(long)]
    all: bool,
    /// `--deny warnings`: exit 1 when there is any warning.
    #[arg(long, value_enum)]
    deny: Option<Deny>,
}

#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum AuditFormat {
    #[default]
    Human,
    Json,
    Markdown,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Deny {
    Warnings,
}

pub fn run(args: Args, out: &mut dyn Write) -> anyhow::Result<Outcome> {
    let mut servers = args
        .specs
        .iter()
        .map(|p| Server::load(p, SeedOutputs::sibling_of(p).as_deref()))
        .collect::<Result<Vec<_>, _>>()?;
    // A schema `lint` and `check` refuse (one that does not compile, a `$ref` cycle that
    // accepts anything) is refused here too, at its place (issue 32, item 15): advice about a
    // spec no engine can use would be advice about the wrong thing.
    for s in &servers {
        agent_seer::Linter::new(&s.tools, Vec::new()).map_err(|e| match e.in_file(&s.tools) {
            Some(located) => anyhow::Error::from(located),
            None => e.into(),
        })?;
    }
    for p in &args.seed_outputs {
        let seeds = SeedOutputs::load(p)?;
        let s = servers
            .iter_mut()
            .find(|s| {
                s.tools
                    .tools()
                    .iter()
                    .any(|t| seeds.tools.contains(&t.name))
            })
            .ok_or_else(|| anyhow::anyhow!("{}: names no tool of the specs given", p.display()))?;
        s.seeds = Some(seeds);
    }
    for p in &args.caps {
        let m = Capabilities::load(p)?;
        // The server whose tools it names most (a fleet may share a tool name).
        let s = servers
            .iter_mut()
            .filter(|s| s.is_described_by(&m))
            .max_by_key(|s| {
                m.tools
                    .keys()
                    .filter(|t| s.tools.tools().iter().any(|x| &&x.name == t))
                    .count()
            })
            .ok_or_else(|| anyhow::anyhow!("{}: names no tool of the specs given", p.display()))?;
        m.check_against(&s.tools)?;
        s.caps.push(m);
    }
    let audit = Audit::run(&servers);
    let min = if args.all {
        Severity::Info
    } else {
        Severity::Warning
    };
    match args.format {
        AuditFormat::Human => write!(out, "{}", render::human(&audit, min))?,
        AuditFormat::Json => writeln!(out, "{}", render::json(&audit))?,
        AuditFormat::Markdown => write!(out, "{}", render::markdown(&audit, min))?,
    }
    let warned = audit.findings().any(|f| f.severity >= Severity::Warning);
    Ok(if args.deny == Some(Deny::Warnings) && warned {
        Outcome::Findings
    } else {
        Outcome::Clean
    })
}
