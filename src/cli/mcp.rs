//! `agent-seer inspect -- <command…>` (a real server's tools) and `agent-seer serve <harness>`
//! (the mock server).

use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

use agent_seer::Linter;
use agent_seer::check::Suite;
use agent_seer::lint::LintError;
use agent_seer::mcp::{Client, server};
use agent_seer::spec::ToolSet;
use serde_json::json;

use super::{Format, Outcome};

#[derive(clap::Args, Debug)]
pub struct InspectArgs {
    /// Save the tools/list array here (JSON, exactly as the server sent it).
    #[arg(short, long)]
    output: Option<PathBuf>,
    /// Seconds to wait for the server to start and for each answer.
    #[arg(long, default_value_t = 30)]
    timeout: u64,
    #[arg(long, value_enum, default_value_t)]
    format: Format,
    /// The server command and its arguments (after `--`).
    #[arg(required = true, last = true)]
    command: Vec<String>,
}

#[derive(clap::Args, Debug)]
pub struct ServeArgs {
    /// The harness whose tools and mock outputs to serve.
    harness: PathBuf,
    /// Record every call received as a transcript here (rewritten after each call).
    #[arg(long)]
    record: Option<PathBuf>,
}

pub fn inspect(args: InspectArgs, out: &mut dyn Write) -> anyhow::Result<Outcome> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let (program, rest) = args
        .command
        .split_first()
        .ok_or_else(|| anyhow::anyhow!("no server command given after `--`"))?;
    let timeout = Duration::from_secs(args.timeout);
    let (info, tools) = rt.block_on(async {
        let mut client = Client::start(program, rest, &[], timeout).await?;
        let tools = client.list_tools().await;
        let info = client.info.clone();
        client.close().await;
        Ok::<_, agent_seer::mcp::McpError>((info, tools?))
    })?;
    let spec = ToolSet::from_json(&serde_json::Value::Array(tools.clone()))
        .map_err(|e| anyhow::anyhow!("the server's tools do not load: {e}"))?;
    let broken = uncompilable(&tools);
    if let Some(path) = &args.output {
        std::fs::write(path, serde_json::to_string_pretty(&tools)? + "\n")
            .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    }
    let profile = spec.profile();
    match args.format {
        Format::Json => writeln!(
            out,
            "{}",
            serde_json::to_string_pretty(
                &json!({"server": info, "profile": profile, "tools": tools.iter().map(|t| &t["name"]).collect::<Vec<_>>()})
            )?
        )?,
        Format::Human => {
            if let Some(i) = &info {
                writeln!(
                    out,
                    "server    {} {} (protocol {})",
                    i.name, i.version, i.protocol_version
                )?;
            }
            let names: Vec<&str> = spec.tools().iter().map(|t| t.name.as_str()).collect();
            writeln!(out, "tools     {}", names.join(", "))?;
            writeln!(out, "{profile}")?;
            if let Some(p) = &args.output {
                writeln!(out, "saved     {}", p.display())?;
            }
        }
    }
    if broken.is_empty() {
        return Ok(Outcome::Clean);
    }
    // Saved all the same (it is what the server says, and can be fixed by hand), but a
    // harness on it would not load, so this is a finding, not a clean capture.
    let mut err = std::io::stderr().lock();
    for (tool, why) in &broken {
        writeln!(
            err,
            "warning: tool `{tool}`: its inputSchema does not compile as JSON Schema ({why}); \
             a harness using these tools will not load until it is fixed"
        )?;
    }
    Ok(Outcome::Findings)
}

/// `(tool, compiler message)` for every tool whose input schema does not compile, compiled
/// one by one so that each is named.
fn uncompilable(tools: &[serde_json::Value]) -> Vec<(String, String)> {
    tools
        .iter()
        .filter_map(|tool| {
            let one = ToolSet::from_json(&serde_json::Value::Array(vec![tool.clone()])).ok()?;
            match Linter::new(&one, Vec::new()) {
                Err(LintError::InvalidSchema { tool, message, .. }) => Some((tool, message)),
                _ => None,
            }
        })
        .collect()
}

pub fn serve(args: ServeArgs) -> anyhow::Result<Outcome> {
    let suite = Suite::load(&args.harness)?;
    // Said before the first request, not after the first call ("cache …: Is a directory").
    if let Some(record) = &args.record
        && record.is_dir()
    {
        anyhow::bail!(
            "--record {}: is a directory; give the transcript file to write (e.g. {})",
            record.display(),
            record.join("session.yaml").display()
        );
    }
    let stdin = std::io::stdin().lock();
    let stdout = std::io::stdout().lock();
    server::serve(&suite, stdin, stdout, args.record.as_deref())?;
    Ok(Outcome::Clean)
}
