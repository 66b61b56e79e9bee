//! A Markdown summary sized for a pull-request comment: the verdict, the per-suite table, the
//! discrimination gates, failures (folded), the worst cases and coverage. GitHub caps a
//! comment at 65,536 characters; failure bodies are cut to fit and the cut says so.

use std::fmt::Write;
use std::io;

use super::junit::strip_ansi;
use super::{Report, View};
use crate::check::Status;

/// The longest comment we write, under GitHub's limit with room for a bot's header.
pub const MAX_CHARS: usize = 60_000;
/// The longest failure body shown.
const MAX_FAILURE: usize = 3_000;

/// The report as a PR comment.
pub fn markdown(report: &Report) -> String {
    let summary = report.summary();
    markdown_of(report.view(&summary)).unwrap_or_default()
}

/// The report as a PR comment ([`markdown`]); it is kept under [`MAX_CHARS`], so it is made
/// in memory, reading the failed trials' records once.
pub fn markdown_of(view: View<'_>) -> io::Result<String> {
    let report = view.summary;
    let mut s = String::new();
    let t = &report.totals;
    let _ = writeln!(
        s,
        "## agent-seer: {} — {} passed, {} failed, {} xfailed{}\n",
        if report.passed {
            "✅ passed"
        } else {
            "❌ failed"
        },
        t.passed,
        t.failed,
        t.xfailed,
        if t.ignored > 0 {
            format!(", {} ignored", t.ignored)
        } else {
            String::new()
        }
    );
    let _ = writeln!(s, "Run `{}`.\n", report.run_id);
    let unlabelled = report.has_unlabelled();
    s.push_str("| suite | trials | passed | failed | xfailed | correct passed | broken caught |");
    s.push_str(if unlabelled {
        " unlabelled passed |\n|---|---:|---:|---:|---:|---:|---:|---:|\n"
    } else {
        "\n|---|---:|---:|---:|---:|---:|---:|\n"
    });
    let mut row = |name: &str, c: &super::SuiteCounts, bold: bool| {
        let b = if bold { "**" } else { "" };
        let _ = writeln!(s, "| {b}{name}{b} | {} |", c.cells(unlabelled).join(" | "));
    };
    for (name, c) in &report.suites {
        row(name, c, false);
    }
    row("total", &report.totals, true);

    if !report.gates.is_empty() {
        s.push_str("\n### Discrimination\n\n");
        s.push_str(
            "| suite | gate | mean TC correct | mean TC broken | gap | gated gap | min gap | faults found |\n",
        );
        s.push_str("|---|---|---:|---:|---:|---:|---:|---:|\n");
        let f = |v: Option<f64>| v.map_or("–".to_owned(), |v| format!("{v:.3}"));
        for d in &report.gates {
            let _ = writeln!(
                s,
                "| {} | {} | {} | {} | {} | {} | {:.3} | {}/{} |",
                d.suite,
                match d.status {
                    Status::Passed => "✅",
                    Status::Failed => "❌",
                    _ => "–",
                },
                f(d.mean_correct),
                f(d.mean_broken),
                f(d.gap),
                f(d.gap_on_tc),
                d.min_gap,
                d.hits,
                d.named
            );
        }
    }

    let failed = report.failed();
    let mut budget_note = None;
    if failed > 0 {
        let _ = writeln!(s, "\n### Failures ({failed})\n");
        let mut i = 0;
        for t in view.trials.iter() {
            let t = t?;
            if t.status != Status::Failed {
                continue;
            }
            let body = strip_ansi(t.message.as_deref().unwrap_or("").trim_end());
            let first = body.lines().next().unwrap_or("");
            let prefix = format!("{}: ", t.name);
            let first = first.strip_prefix(&prefix).unwrap_or(first).to_owned();
            let mut shown: String = body.chars().take(MAX_FAILURE).collect();
            if shown.len() < body.len() {
                shown.push_str("\n… (cut; the full message is in the JSON and HTML reports)");
            }
            let entry = format!(
                "<details><summary><code>{}</code>: {}</summary>\n\n```text\n{}\n```\n\n</details>\n",
                t.name,
                escape(&first),
                shown.replace("```", "`\u{200b}``")
            );
            if s.len() + entry.len() > MAX_CHARS - 2_000 {
                budget_note = Some(failed - i);
                break;
            }
            s.push_str(&entry);
            i += 1;
        }
        if let Some(n) = budget_note {
            let _ = writeln!(
                s,
                "\n{n} more failure(s) not shown (comment size limit); see the HTML report."
            );
        }
    }

    // The correct transcripts closest to failing: where a regression would land first.
    if !report.worst.is_empty() {
        s.push_str("\n### Worst cases\n\nCorrect transcripts with the lowest TC (the first to fail when the agent regresses):\n\n");
        s.push_str("| trial | TC | pass at | margin | findings |\n|---|---:|---:|---:|---|\n");
        for w in &report.worst {
            let tc = w.tc;
            let _ = writeln!(
                s,
                "| `{}` | {tc:.3} | {:.3} | {:+.3} | {} |",
                w.name,
                w.pass_threshold,
                tc - w.pass_threshold,
                if w.codes.is_empty() {
                    "–".to_owned()
                } else {
                    w.codes.join(", ")
                }
            );
        }
    }

    if !report.harnesses.is_empty() {
        s.push_str("\n### Coverage\n\n");
        s.push_str("| suite | scenarios with a transcript | tools called by an oracle | tools no oracle calls |\n|---|---:|---:|---|\n");
        for (suite, h) in &report.harnesses {
            let exercised = report.stats.get(suite).map(|st| &st.scenarios);
            let covered = h
                .scenarios
                .iter()
                .filter(|id| exercised.is_some_and(|e| e.contains(id.as_str())))
                .count();
            let _ = writeln!(
                s,
                "| {} | {covered}/{} | {}/{} | {} |",
                suite,
                h.scenarios.len(),
                h.tools - h.uncovered_tools.len(),
                h.tools,
                if h.uncovered_tools.is_empty() {
                    "–".to_owned()
                } else {
                    h.uncovered_tools
                        .iter()
                        .map(|t| format!("`{t}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                }
            );
        }
    }

    if !report.ledger.is_empty() {
        s.push_str("\n### LLM calls\n\n| model | calls | cached | input tokens | output tokens | est. cost |\n|---|---:|---:|---:|---:|---:|\n");
        for (k, e) in &report.ledger {
            let _ = writeln!(
                s,
                "| {k} | {} | {} | {} | {} | {} |",
                e.calls,
                e.cached,
                e.input_tokens,
                e.output_tokens,
                e.estimated_cost_usd
                    .map_or("–".to_owned(), |c| format!("${c:.4}"))
            );
        }
    }
    Ok(s)
}

/// Escapes what Markdown would read as markup in a table cell or summary line.
fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('|', "\\|")
}
