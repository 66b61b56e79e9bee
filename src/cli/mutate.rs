//! `agent-seer mutate [SUITES…]`: mutation testing of suites — which broken-by-construction
//! runs each suite catches, and why each survivor got through.

use std::io::Write;
use std::path::{Path, PathBuf};

use agent_seer::check::{Suite, SuiteMutation, mutate_suite};
use agent_seer::harness::{Transcript, discover};

use super::Outcome;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Suites to mutate, by name or harness file. Default: every suite of the project.
    suites: Vec<String>,
    /// The project root. Default: AGENT_SEER_ROOT, else the nearest directory up from here
    /// with a harnesses/ folder.
    #[arg(long)]
    root: Option<PathBuf>,
    /// How to print the result.
    #[arg(long, value_enum, default_value_t)]
    format: MutateFormat,
    /// Write every mutant as a transcript labelled `expect: fail` under DIR/<suite>/, for
    /// review (DIR is created; an existing file or link there is never replaced).
    #[arg(long, value_name = "DIR")]
    write: Option<PathBuf>,
    /// Exit 1 when a suite's mutation score (killed / mutants) is below this, in 0–1.
    #[arg(long, value_name = "SCORE", value_parser = score_in_range)]
    min_score: Option<f64>,
}

fn score_in_range(s: &str) -> Result<f64, String> {
    let v: f64 = s.parse().map_err(|e| format!("{e}"))?;
    if (0.0..=1.0).contains(&v) {
        Ok(v)
    } else {
        Err(format!("{s} is not within 0–1"))
    }
}

#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum MutateFormat {
    /// A table per suite and operator, then every survivor with its reason.
    #[default]
    Human,
    /// One JSON document: every suite, every mutant, killed or not and why.
    Json,
    /// A Markdown summary (a pull request comment or a job summary).
    Markdown,
    /// One self-contained HTML page: the score per suite, a suite × operator table shaded by
    /// the share killed, and every survivor with its reason.
    Html,
}

pub fn run(args: Args, out: &mut dyn Write) -> anyhow::Result<Outcome> {
    let layout = super::project_layout(args.root.clone())?;
    let all = discover(&layout)?;
    let wanted = |name: &str, harness: Option<&Path>| {
        args.suites.is_empty() || args.suites.iter().any(|s| wanted_one(s, name, harness))
    };
    let mut results = Vec::new();
    for files in &all {
        let Some(harness) = files.harness.as_deref() else {
            continue;
        };
        if !wanted(&files.suite, Some(harness)) {
            continue;
        }
        let suite = Suite::load(harness)?;
        let transcripts: Vec<Transcript> = files
            .transcripts
            .iter()
            .filter(|(_, p)| p.extension().is_some_and(|e| e == "yaml" || e == "yml"))
            .map(|(_, p)| Transcript::load(p))
            .collect::<Result<_, _>>()?;
        results.push(mutate_suite(&suite, &transcripts));
    }
    for s in &args.suites {
        if !all
            .iter()
            .any(|f| wanted_one(s, &f.suite, f.harness.as_deref()))
        {
            anyhow::bail!("no suite `{s}` in {}", layout.harnesses.display());
        }
    }
    if let Some(dir) = &args.write {
        write_mutants(dir, &results)?;
    }
    match args.format {
        MutateFormat::Human => human(&results, out)?,
        MutateFormat::Json => writeln!(out, "{}", serde_json::to_string_pretty(&results)?)?,
        MutateFormat::Markdown => markdown(&results, out)?,
        MutateFormat::Html => out.write_all(html(&results).as_bytes())?,
    }
    let below = args.min_score.is_some_and(|min| {
        results
            .iter()
            .any(|r| r.score().is_some_and(|s| s + 1e-9 < min))
    });
    Ok(if below {
        Outcome::Findings
    } else {
        Outcome::Clean
    })
}

fn wanted_one(given: &str, name: &str, harness: Option<&Path>) -> bool {
    given == name
        || harness.is_some_and(|h| {
            Path::new(given) == h
                || Path::new(given).canonicalize().ok().as_deref()
                    == h.canonicalize().ok().as_deref()
        })
}

fn score(r: &SuiteMutation) -> String {
    r.score().map_or("-".to_owned(), |s| format!("{s:.3}"))
}

fn human(results: &[SuiteMutation], out: &mut dyn Write) -> anyhow::Result<()> {
    for r in results {
        writeln!(
            out,
            "{}: mutation score {} ({}/{} killed)",
            r.suite,
            score(r),
            r.killed(),
            r.outcomes.len()
        )?;
        for (op, killed, total) in r.by_operator() {
            writeln!(out, "  {:24} {killed:>3}/{total:<3}", op.as_str())?;
        }
        for o in r.outcomes.iter().filter(|o| !o.killed) {
            writeln!(
                out,
                "  SURVIVED {} [{}] {}\n           why: {}",
                o.mutant.source,
                o.mutant.operator.as_str(),
                o.mutant.what,
                o.why.as_deref().unwrap_or("")
            )?;
        }
        for s in &r.skipped {
            writeln!(out, "  skipped {s}")?;
        }
    }
    Ok(())
}

fn markdown(results: &[SuiteMutation], out: &mut dyn Write) -> anyhow::Result<()> {
    writeln!(out, "## agent-seer mutate\n")?;
    writeln!(out, "| suite | mutation score | killed | mutants |")?;
    writeln!(out, "|---|---:|---:|---:|")?;
    for r in results {
        writeln!(
            out,
            "| {} | {} | {} | {} |",
            r.suite,
            score(r),
            r.killed(),
            r.outcomes.len()
        )?;
    }
    for r in results {
        let survivors: Vec<_> = r.outcomes.iter().filter(|o| !o.killed).collect();
        if survivors.is_empty() {
            continue;
        }
        writeln!(out, "\n### {}: survivors\n", r.suite)?;
        writeln!(out, "| operator | source | mutant | why it survived |")?;
        writeln!(out, "|---|---|---|---|")?;
        for o in survivors {
            let cell = |s: &str| s.replace('|', "\\|").replace('\n', " ");
            writeln!(
                out,
                "| {} | {} | {} | {} |",
                o.mutant.operator.as_str(),
                cell(&o.mutant.source),
                cell(&o.mutant.what),
                cell(o.why.as_deref().unwrap_or(""))
            )?;
        }
    }
    Ok(())
}

/// The HTML page: no script, no fetch, one inline style sheet.
fn html(results: &[SuiteMutation]) -> String {
    use std::fmt::Write as _;
    let mut operators: Vec<&'static str> = Vec::new();
    for r in results {
        for (op, _, _) in r.by_operator() {
            if !operators.contains(&op.as_str()) {
                operators.push(op.as_str());
            }
        }
    }
    let mut s = String::from(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>agent-seer mutate</title>\n<style>\n\
         body{font:14px/1.45 system-ui,sans-serif;margin:2rem;color:#1f2328}\n\
         table{border-collapse:collapse;margin:1rem 0}td,th{border:1px solid #d0d7de;padding:.3rem .6rem;text-align:left}\n\
         th{background:#f6f8fa}td.n{text-align:right;font-variant-numeric:tabular-nums}\n\
         code{font:12px ui-monospace,monospace;background:#f6f8fa;padding:0 .2rem}\n\
         </style></head><body>\n<h1>agent-seer mutate</h1>\n",
    );
    s.push_str("<table data-table=\"scores\"><tr><th>suite</th><th>mutation score</th><th>killed</th><th>mutants</th></tr>\n");
    for r in results {
        let _ = writeln!(
            s,
            "<tr><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>",
            esc(&r.suite),
            score(r),
            r.killed(),
            r.outcomes.len()
        );
    }
    s.push_str(
        "</table>\n<h2>Killed by operator</h2>\n<table data-table=\"operators\"><tr><th>suite</th>",
    );
    for op in &operators {
        let _ = write!(s, "<th>{}</th>", esc(op));
    }
    s.push_str("</tr>\n");
    for r in results {
        let _ = write!(s, "<tr><td>{}</td>", esc(&r.suite));
        let by: Vec<_> = r.by_operator();
        for op in &operators {
            match by.iter().find(|(o, _, _)| o.as_str() == *op) {
                Some((_, killed, total)) => {
                    let share = *killed as f64 / (*total).max(1) as f64;
                    // Red where mutants survive, white where all are killed.
                    let tint = (255.0 - (1.0 - share) * 120.0).round() as u8;
                    let _ = write!(
                        s,
                        "<td class=\"n\" style=\"background:rgb(255,{tint},{tint})\">{killed}/{total}</td>"
                    );
                }
                None => s.push_str("<td class=\"n\">-</td>"),
            }
        }
        s.push_str("</tr>\n");
    }
    s.push_str("</table>\n");
    for r in results {
        let survivors: Vec<_> = r.outcomes.iter().filter(|o| !o.killed).collect();
        if survivors.is_empty() {
            continue;
        }
        let _ = writeln!(s, "<h2>{}: survivors</h2>", esc(&r.suite));
        s.push_str("<table data-table=\"survivors\"><tr><th>operator</th><th>source</th><th>mutant</th><th>why it survived</th></tr>\n");
        for o in survivors {
            let _ = writeln!(
                s,
                "<tr data-mark=\"survivor\"><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                esc(o.mutant.operator.as_str()),
                esc(&o.mutant.source),
                code_spans(&esc(&o.mutant.what)),
                code_spans(&esc(o.why.as_deref().unwrap_or("")))
            );
        }
        s.push_str("</table>\n");
    }
    s.push_str("</body></html>\n");
    s
}

/// Text for HTML: `&`, `<`, `>` and `"` escaped.
fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// `` `x` `` as `<code>x</code>` in text already escaped.
fn code_spans(escaped: &str) -> String {
    let mut out = String::new();
    for (i, part) in escaped.split('`').enumerate() {
        if i % 2 == 1 {
            out.push_str("<code>");
            out.push_str(part);
            out.push_str("</code>");
        } else {
            out.push_str(part);
        }
    }
    if escaped.matches('`').count() % 2 == 1 {
        // An unpaired backtick: the text as it was.
        return escaped.to_owned();
    }
    out
}

/// Writes each mutant under `dir/<suite>/`: new files only (`create_new` refuses an existing
/// file and any link, dangling or not), in directories that are no links.
fn write_mutants(dir: &Path, results: &[SuiteMutation]) -> anyhow::Result<()> {
    let real_dir = |d: &Path| -> anyhow::Result<()> {
        match std::fs::symlink_metadata(d) {
            Ok(m) if m.file_type().is_symlink() => {
                anyhow::bail!(
                    "{} is a symbolic link: mutate writes only into real directories",
                    d.display()
                )
            }
            Ok(m) if m.is_dir() => Ok(()),
            Ok(_) => anyhow::bail!("{} exists and is no directory", d.display()),
            Err(_) => Ok(std::fs::create_dir_all(d)?),
        }
    };
    real_dir(dir)?;
    for r in results {
        let sub = dir.join(&r.suite);
        real_dir(&sub)?;
        for (n, o) in r.outcomes.iter().enumerate() {
            let source = o.mutant.source.replace([':', '/', '\\'], "-");
            let name = format!("{source}--{}-{n}.yaml", o.mutant.operator.as_str());
            let text = o.mutant.doc.to_yaml_text()?;
            let path = sub.join(name);
            let mut f = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&path)
                .map_err(|e| {
                    anyhow::anyhow!("{}: {e} (mutate never replaces a file)", path.display())
                })?;
            f.write_all(text.as_bytes())?;
        }
    }
    Ok(())
}
