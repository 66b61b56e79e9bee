//! `agent-seer init [--suite NAME] -- SERVER…`: the first files of a suite for a server — its
//! tools/list and identity captured, and a capability-matrix scaffold to review.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;

use agent_seer::audit::{Audit, Server as Audited};
use agent_seer::mcp::server;
use agent_seer::source::OutDir;
use agent_seer::spec::ToolSet;
use agent_seer::spec::scaffold::{self, Facts};
use serde_json::Value;

use super::Outcome;
use super::mcp::Target as Server;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The suite's name (default: the server's own name, made a file name).
    #[arg(long)]
    suite: Option<String>,
    /// The project root, where `harnesses/` and `capabilities/` go. Default: AGENT_SEER_ROOT,
    /// else the working directory.
    #[arg(long)]
    root: Option<PathBuf>,
    /// Replace files that exist (never a link that leads out of the project).
    #[arg(long)]
    force: bool,
    /// Do not call any tool. By default each tool that has required parameters and looks
    /// read-only is called once with `{}` (refused by argument validation before it does
    /// anything) to learn whether the server answers errors as plain text.
    #[arg(long)]
    no_probe: bool,
    #[command(flatten)]
    server: Server,
}

pub fn run(args: Args, out: &mut dyn Write) -> anyhow::Result<Outcome> {
    let layout = super::project_layout(args.root.clone())?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let (info, tools, texts, errors) = rt.block_on(async {
        let mut client = args.server.connect().await?;
        let listed = client.list_tools_text().await;
        let info = client.info.clone();
        let (tools, texts) = match listed {
            Ok(l) => l,
            Err(e) => {
                client.close().await;
                return Err(e.into());
            }
        };
        let mut errors = BTreeMap::new();
        if !args.no_probe {
            for tool in &tools {
                if let Some(text) = probe(&mut client, tool).await {
                    let name = tool
                        .get("name")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_owned();
                    errors.insert(name, text);
                }
            }
        }
        client.close().await;
        Ok::<_, anyhow::Error>((info, tools, texts, errors))
    })?;
    let info = info.ok_or_else(|| anyhow::anyhow!("the server said nothing of itself"))?;
    ToolSet::from_json(&Value::Array(tools.clone()))
        .map_err(|e| anyhow::anyhow!("the server's tools do not load: {e}"))?;
    let suite = match &args.suite {
        Some(s) => s.clone(),
        None => file_stem_of(&info.name),
    };
    agent_seer::source::file_name(&suite).map_err(|e| anyhow::anyhow!("--suite `{suite}`: {e}"))?;
    let tools_path = layout.harnesses.join(format!("{suite}.tools.json"));
    let server_path = server::sidecar_of(&tools_path);
    let matrix_path = layout
        .root
        .join("capabilities")
        .join(format!("{suite}.yaml"));
    // Everything is checked before anything is written: an existing file stops it all.
    let (tools_text, side) = agent_seer::mcp::proxy::capture_texts(&texts, &info);
    let mut capture = OutDir::new(&layout.root, args.force);
    capture.add(tools_path.clone(), tools_text.clone())?;
    capture.add(server_path.clone(), side)?;
    capture.add(matrix_path.clone(), String::new())?;
    capture.check()?;
    // The audit reads a spec file: it reads the capture from a scratch copy.
    let audit = audit_lines(&suite, &tools_text)?;
    let source = if let Some(u) = &args.server.url {
        format!("agent-seer init --url {u}")
    } else {
        format!("agent-seer init -- {}", args.server.command.join(" "))
    };
    let matrix = scaffold::render(&Facts {
        server: &info.name,
        version: &info.version,
        source: &source,
        tools: &tools,
        errors: &errors,
        audit: &audit,
    });
    // What is written must load as a matrix over these tools.
    let caps = agent_seer::Capabilities::from_source(&agent_seer::source::SourceFile::from_text(
        &matrix_path,
        matrix.as_str(),
    ))
    .map_err(|e| {
        anyhow::anyhow!(
            "the scaffold does not load (a bug; report it with the server's tools): {e}"
        )
    })?;
    let set = ToolSet::from_json(&Value::Array(tools.clone()))?;
    caps.check_against(&set).map_err(|e| {
        anyhow::anyhow!("the scaffold does not fit the tools (a bug; report it): {e}")
    })?;
    let mut files = OutDir::new(&layout.root, args.force);
    files.add(tools_path.clone(), tools_text)?;
    files.add(
        server_path.clone(),
        agent_seer::mcp::proxy::capture_texts(&texts, &info).1,
    )?;
    files.add(matrix_path.clone(), matrix)?;
    files.commit()?;
    let (annotated, proposed, unknown) = scaffold::census(&tools);
    let shown = |p: &PathBuf| {
        p.strip_prefix(&layout.root)
            .unwrap_or(p)
            .display()
            .to_string()
    };
    writeln!(
        out,
        "server    {} {} ({} tools)",
        info.name,
        info.version,
        tools.len()
    )?;
    writeln!(out, "wrote     {}", shown(&tools_path))?;
    writeln!(out, "          {}", shown(&server_path))?;
    writeln!(out, "          {}", shown(&matrix_path))?;
    writeln!(
        out,
        "effects   {annotated} from the server's annotations, {proposed} proposed from names (marked `proposed:`), {unknown} unknown"
    )?;
    if !errors.is_empty() {
        writeln!(
            out,
            "errors    {} tool(s) refused `{{}}` in plain text (no isError); its start is proposed as `errors:`",
            errors.len()
        )?;
    }
    let command = if args.server.command.is_empty() {
        format!("--url {}", args.server.url.as_deref().unwrap_or(""))
    } else {
        format!("-- {}", args.server.command.join(" "))
    };
    writeln!(out, "\nnext:")?;
    writeln!(
        out,
        "  1. review {}: every `proposed:` and every `inputs`, against the server",
        shown(&matrix_path)
    )?;
    writeln!(
        out,
        "  2. write harnesses/{suite}.yaml: scenarios with their oracle workflows (or `agent-seer generate`)"
    )?;
    writeln!(
        out,
        "  3. agent-seer ground harnesses/{suite}.yaml {command}"
    )?;
    writeln!(out, "  4. agent-seer mutate {suite}")?;
    writeln!(
        out,
        "  5. cargo test (or cargo nextest run): the suite's trials gate every pull request"
    )?;
    Ok(Outcome::Clean)
}

/// `tools/call` with `{}` for a tool that has required parameters and reads (annotated or by
/// its name): the text of the error it answers with, if it answers with one.
async fn probe(client: &mut agent_seer::mcp::Client, tool: &Value) -> Option<String> {
    if scaffold::required(tool).is_empty() {
        return None;
    }
    let reads = match scaffold::effects(tool) {
        scaffold::Effects::Annotated(h) | scaffold::Effects::Proposed(h, _) => {
            h.contains(&("read_only", true))
        }
        scaffold::Effects::Unknown => false,
    };
    if !reads {
        return None;
    }
    let name = tool.get("name").and_then(Value::as_str)?;
    let params = serde_json::json!({"name": name, "arguments": scaffold::empty_arguments()});
    let answer = client
        .request_reply("tools/call", params)
        .await
        .ok()?
        .ok()?;
    let is_error = answer.get("isError").and_then(Value::as_bool) == Some(true);
    let text: String = answer
        .get("content")
        .and_then(Value::as_array)?
        .iter()
        .filter_map(|c| c.get("text").and_then(Value::as_str))
        .collect::<Vec<_>>()
        .join("\n");
    // `{}` where arguments are required is refused, whatever the flag says. One flagged
    // `isError` is a refusal to every engine already, and so is a text the common shapes
    // recognise: only a refusal answered as plain text needs a pattern of its own.
    let known = is_error || agent_seer::lint::Linter::refuses_text_by_default(&text);
    (!text.is_empty() && !known).then_some(text)
}

/// The audit's findings for each tool, one line each.
fn audit_lines(suite: &str, tools_text: &str) -> anyhow::Result<BTreeMap<String, Vec<String>>> {
    let dir = std::env::temp_dir().join(format!("agent-seer-init-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let spec = dir.join(format!("{suite}.tools.json"));
    std::fs::write(&spec, tools_text)?;
    let loaded = Audited::load(&spec, None);
    let _ = std::fs::remove_dir_all(&dir);
    let server = loaded?;
    let audit = Audit::run(&[server]);
    let mut by_tool: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for f in audit.findings() {
        if let Some(t) = &f.tool {
            let what = match &f.param {
                Some(p) => format!("{} ({p}): {}", f.code.as_str(), f.message),
                None => format!("{}: {}", f.code.as_str(), f.message),
            };
            by_tool.entry(t.clone()).or_default().push(what);
        }
    }
    Ok(by_tool)
}

/// A server's name as a suite name: lower case, runs of anything but letters and digits as `-`
/// (`@modelcontextprotocol/server-memory` → `modelcontextprotocol-server-memory`).
fn file_stem_of(name: &str) -> String {
    let mut out = String::new();
    for c in name.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') && !out.is_empty() {
            out.push('-');
        }
    }
    let out = out.trim_end_matches('-').to_owned();
    if out.is_empty() {
        "server".to_owned()
    } else {
        out
    }
}
