//! A Markdown summary sized for a pull-request comment: the verdict, the per-suite table, the
//! discrimination gates, failures (folded), the worst cases and coverage. GitHub caps a
//! comment at 65,536 characters; failure bodies are cut to fit and the cut says so.

use std::collections::BTreeSet;
use std::fmt::Write;

use super::junit::strip_ansi;
use super::{Report, TrialKind};
use crate::check::Status;
use crate::harness::Expect;

/// The longest comment we write, under GitHub's limit with room for a bot's header.
pub const MAX_CHARS: usize = 60_000;
/// The longest failure body shown.
const MAX_FAILURE: usize = 3_000;
/// How many near-threshold cases are listed.
const WORST: usize = 5;

/// The report as a PR comment.
pub fn markdown(report: &Report) -> String {
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

    let gates: Vec<_> = report
        .trials
        .iter()
        .filter_map(|t| Some((t, t.discrimination.as_ref()?)))
        .collect();
    if !gates.is_empty() {
        s.push_str("\n### Discrimination\n\n");
        s.push_str(
            "| suite | gate | mean TC correct | mean TC broken | gap | gated gap | min gap | faults found |\n",
        );
        s.push_str("|---|---|---:|---:|---:|---:|---:|---:|\n");
        let f = |v: Option<f64>| v.map_or("–".to_owned(), |v| format!("{v:.3}"));
        for (t, d) in gates {
            let _ = writeln!(
                s,
                "| {} | {} | {} | {} | {} | {} | {:.3} | {}/{} |",
                d.suite,
                match t.status {
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

    let failures: Vec<_> = report
        .trials
        .iter()
        .filter(|t| t.status == Status::Failed)
        .collect();
    let mut budget_note = None;
    if !failures.is_empty() {
        let _ = writeln!(s, "\n### Failures ({})\n", failures.len());
        for (i, t) in failures.iter().enumerate() {
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
                budget_note = Some(failures.len() - i);
                break;
            }
            s.push_str(&entry);
        }
        if let Some(n) = budget_note {
            let _ = writeln!(
                s,
                "\n{n} more failure(s) not shown (comment size limit); see the HTML report."
            );
        }
    }

    // The correct transcripts closest to failing: where a regression would land first.
    let mut close: Vec<_> = report
        .graded()
        .filter(|(_, tr)| tr.expects() == Expect::Pass)
        .filter_map(|(t, tr)| Some((t, tr, tr.tc()?)))
        .collect();
    close.sort_by(|a, b| a.2.total_cmp(&b.2).then_with(|| a.0.name.cmp(&b.0.name)));
    if !close.is_empty() {
        s.push_str("\n### Worst cases\n\nCorrect transcripts with the lowest TC (the first to fail when the agent regresses):\n\n");
        s.push_str("| trial | TC | pass at | margin | findings |\n|---|---:|---:|---:|---|\n");
        for (t, tr, tc) in close.into_iter().take(WORST) {
            let codes: BTreeSet<&str> = tr.findings.iter().map(|f| f.code.as_str()).collect();
            let _ = writeln!(
                s,
                "| `{}` | {tc:.3} | {:.3} | {:+.3} | {} |",
                t.name,
                tr.pass_threshold,
                tc - tr.pass_threshold,
                if codes.is_empty() {
                    "–".to_owned()
                } else {
                    codes.into_iter().collect::<Vec<_>>().join(", ")
                }
            );
        }
    }

    let harnesses: Vec<_> = report
        .trials
        .iter()
        .filter(|t| t.kind == TrialKind::Harness)
        .filter_map(|t| Some((t, t.harness.as_ref()?)))
        .collect();
    if !harnesses.is_empty() {
        s.push_str("\n### Coverage\n\n");
        s.push_str("| suite | scenarios with a transcript | tools called by an oracle | tools no oracle calls |\n|---|---:|---:|---|\n");
        for (t, h) in harnesses {
            let exercised: BTreeSet<&str> = report
                .suite_trials(&t.suite)
                .filter_map(|x| x.transcript.as_ref()?.scenario.as_deref())
                .collect();
            let covered = h
                .scenarios
                .iter()
                .filter(|id| exercised.contains(id.as_str()))
                .count();
            let _ = writeln!(
                s,
                "| {} | {covered}/{} | {}/{} | {} |",
                t.suite,
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
    s
}

/// Escapes what Markdown would read as markup in a table cell or summary line.
fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('|', "\\|")
}
