//! An [`Audit`] as text: `file:line:col: severity[code]` lines for a terminal, a stable JSON
//! document for tools, and Markdown for a pull-request comment (a fleet table, then one
//! section per server).

use std::fmt::Write;

use serde::Serialize;

use super::{Audit, AuditFinding, Kind, Provider, ServerReport};
use crate::finding::Severity;

/// The JSON document's version; bumped when a field changes meaning.
pub const JSON_VERSION: u32 = 1;

fn place(f: &AuditFinding, file: &str) -> String {
    match &f.location {
        Some(l) => l.to_string(),
        None => format!("{file}: {}", f.pointer),
    }
}

fn subject(f: &AuditFinding) -> String {
    match (&f.tool, &f.param) {
        (Some(t), Some(p)) => format!("{t}.{p}: "),
        (Some(t), None) => format!("{t}: "),
        _ => String::new(),
    }
}

/// Findings at or above `min`, one per line with its quote and fix beneath, then a table per
/// server and the fleet's concepts.
pub fn human(audit: &Audit, min: Severity) -> String {
    let mut out = String::new();
    for s in &audit.servers {
        for f in s.findings.iter().filter(|f| f.severity >= min) {
            let _ = writeln!(
                out,
                "{}: {}[{}]: {}{}",
                place(f, &s.file),
                f.severity,
                f.code,
                subject(f),
                f.message
            );
            if let Some(q) = &f.quote {
                let _ = writeln!(out, "  | {q}");
            }
            if let Some(fix) = &f.fix {
                let _ = writeln!(out, "  = fix: {fix}");
            }
            if let Some(m) = &f.matrix {
                let _ = writeln!(out, "  = matrix: {m}");
            }
        }
    }
    if !out.is_empty() {
        out.push('\n');
    }
    out.push_str(&table(audit));
    if !audit.names.is_empty() {
        out.push('\n');
        for g in &audit.names {
            let _ = writeln!(
                out,
                "concept `{}` ({}): {}",
                g.proposed,
                g.ty,
                g.names().join(", ")
            );
        }
    }
    let (w, i) = totals(audit);
    let _ = writeln!(
        out,
        "\n{} server(s): {w} warning(s), {i} note(s){}",
        audit.servers.len(),
        if min > Severity::Info {
            " (notes not shown; --all shows them)"
        } else {
            ""
        }
    );
    out
}

fn totals(audit: &Audit) -> (usize, usize) {
    let count = |sev| audit.findings().filter(|f| f.severity == sev).count();
    (count(Severity::Warning), count(Severity::Info))
}

fn count(s: &ServerReport, k: Kind) -> usize {
    s.counts.get(&k).copied().unwrap_or(0)
}

fn refused(s: &ServerReport, p: Provider) -> String {
    format!(
        "{}/{}",
        s.refused_tools.get(&p).copied().unwrap_or(0),
        s.profile.tools
    )
}

/// The fleet table: per server its profile, its counts, and the tools each provider refuses.
fn table(audit: &Audit) -> String {
    let header = [
        "server",
        "tools",
        "params",
        "params/tool",
        "optional",
        "prose",
        "contract",
        "names",
        "openai-strict",
        "openai",
        "anthropic",
        "gemini",
    ];
    let rows: Vec<Vec<String>> = audit
        .servers
        .iter()
        .map(|s| {
            vec![
                s.server.clone(),
                s.profile.tools.to_string(),
                s.profile.parameters.to_string(),
                format!("{:.2}", s.profile.mean_params_per_tool),
                format!("{:.3}", s.profile.optional_ratio),
                count(s, Kind::Prose).to_string(),
                count(s, Kind::Contract).to_string(),
                count(s, Kind::Names).to_string(),
                refused(s, Provider::OpenAiStrict),
                refused(s, Provider::OpenAi),
                refused(s, Provider::Anthropic),
                refused(s, Provider::Gemini),
            ]
        })
        .collect();
    let widths: Vec<usize> = (0..header.len())
        .map(|i| {
            rows.iter()
                .map(|r| r[i].len())
                .chain([header[i].len()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let line = |cells: &[&str]| {
        let mut l = String::new();
        for (i, c) in cells.iter().enumerate() {
            if i == 0 {
                let _ = write!(l, "{c:<w$}", w = widths[i]);
            } else {
                let _ = write!(l, "  {c:>w$}", w = widths[i]);
            }
        }
        l.trim_end().to_owned() + "\n"
    };
    let mut out = line(&header);
    for r in &rows {
        out.push_str(&line(&r.iter().map(String::as_str).collect::<Vec<_>>()));
    }
    out
}

#[derive(Serialize)]
struct JsonDoc<'a> {
    version: u32,
    servers: &'a [ServerReport],
    names: &'a [super::NameGroup],
}

/// The audit as one JSON document (`version`, `servers` with profile, counts, refused tools
/// and findings, `names`).
pub fn json(audit: &Audit) -> String {
    serde_json::to_string_pretty(&JsonDoc {
        version: JSON_VERSION,
        servers: &audit.servers,
        names: &audit.names,
    })
    .expect("an audit serialises")
}

fn md_escape(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

/// The fleet table as Markdown (the book's audit guide shows the genmedia servers').
pub fn markdown_table(audit: &Audit) -> String {
    let mut out = String::from(
        "| server | tools | params | params/tool | optional ratio | prose-only | missing contract | fleet names | OpenAI strict refuses | OpenAI refuses | Anthropic refuses | Gemini refuses |\n|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n",
    );
    for s in &audit.servers {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {:.2} | {:.3} | {} | {} | {} | {} | {} | {} | {} |",
            s.server,
            s.profile.tools,
            s.profile.parameters,
            s.profile.mean_params_per_tool,
            s.profile.optional_ratio,
            count(s, Kind::Prose),
            count(s, Kind::Contract),
            count(s, Kind::Names),
            refused(s, Provider::OpenAiStrict),
            refused(s, Provider::OpenAi),
            refused(s, Provider::Anthropic),
            refused(s, Provider::Gemini),
        );
    }
    out
}

/// A pull-request comment: the fleet table, the concepts under several names, then per
/// server its profile and its findings at or above `min`.
pub fn markdown(audit: &Audit, min: Severity) -> String {
    let mut out = String::from("## agent-seer audit\n\n");
    out.push_str(&markdown_table(audit));
    if !audit.names.is_empty() {
        out.push_str("\n### One concept, several names\n\n| proposed | type | names (servers) |\n|---|---|---|\n");
        for g in &audit.names {
            let names = g
                .names()
                .iter()
                .map(|n| {
                    let mut servers: Vec<&str> = g
                        .uses
                        .iter()
                        .filter(|u| u.name == *n)
                        .map(|u| u.server.as_str())
                        .collect();
                    servers.dedup();
                    format!("`{n}` ({})", servers.join(", "))
                })
                .collect::<Vec<_>>()
                .join(", ");
            let _ = writeln!(out, "| `{}` | {} | {} |", g.proposed, g.ty, names);
        }
    }
    for s in &audit.servers {
        let p = &s.profile;
        let _ = write!(
            out,
            "\n### {}\n\n`{}`: {} tools, {} parameters ({:.2} per tool, max {}), optional ratio {:.3}, {} enum, {} nested, {} output schemas.\n\n",
            s.server,
            s.file,
            p.tools,
            p.parameters,
            p.mean_params_per_tool,
            p.max_params,
            p.optional_ratio,
            p.enum_params,
            p.nested_params,
            p.tools_with_output_schema
        );
        let shown: Vec<&AuditFinding> = s.findings.iter().filter(|f| f.severity >= min).collect();
        let hidden = s.findings.len() - shown.len();
        if hidden > 0 {
            let _ = writeln!(
                out,
                "_{hidden} note(s) (`info`) not shown; `--all` shows them._\n"
            );
        }
        if shown.is_empty() {
            out.push_str("No findings.\n");
            continue;
        }
        out.push_str("| where | code | finding | fix |\n|---|---|---|---|\n");
        for f in shown {
            let at = f
                .location
                .as_ref()
                .map_or_else(|| f.pointer.clone(), |l| format!("{}:{}", l.line, l.column));
            let mut what = format!("{}{}", subject(f), f.message);
            if let Some(q) = &f.quote {
                let _ = write!(what, " — “{q}”");
            }
            if let Some(m) = &f.matrix {
                let _ = write!(what, " ({m})");
            }
            let _ = writeln!(
                out,
                "| {at} | `{}` | {} | {} |",
                f.code,
                md_escape(&what),
                f.fix
                    .as_deref()
                    .map_or_else(String::new, |x| format!("`{}`", md_escape(x)))
            );
        }
    }
    out
}
