//! Trial messages: findings with their YAML line quoted, and a diff of the calls the scenario
//! expected against the calls the agent made.

use std::fmt::Write;

use serde_json::Value;

use super::evaluate::Evaluation;
use crate::diff;
use crate::finding::Finding;
use crate::harness::{Call, Scenario, Transcript};
use crate::score::Score;
use crate::source::{SourceFile, snippet};

/// The full explanation of a trial that did not go as labelled. `harness` is the suite's
/// harness file, for findings that point into it (a missing workflow step).
pub fn failure(
    ev: &Evaluation,
    why: &str,
    t: &Transcript,
    scenario: Option<&Scenario>,
    harness: &SourceFile,
) -> String {
    let mut s = format!(
        "{}::{}: {why}\n{} error{}, {} warning{}",
        ev.suite,
        ev.transcript,
        ev.errors(),
        if ev.errors() == 1 { "" } else { "s" },
        ev.warnings(),
        if ev.warnings() == 1 { "" } else { "s" },
    );
    if let Some(score) = &ev.score {
        let _ = write!(s, "; {}", dimensions(score));
    }
    s.push('\n');
    for f in &ev.findings {
        s.push('\n');
        s.push_str(&finding(f, t, harness));
    }
    if let Some(sc) = scenario {
        let d = call_diff(t, sc);
        if !d.is_empty() {
            s.push('\n');
            s.push_str(&d);
        }
    }
    s
}

/// `TC 0.667 (usage 1.000, selection 0.667, ordering n/a, arguments 0.333)`.
pub fn dimensions(score: &Score) -> String {
    super::record::ScoreRecord::from(score).line()
}

/// One finding: the headline, where it is, and the quoted line.
pub fn finding(f: &Finding, t: &Transcript, harness: &SourceFile) -> String {
    let mut s = format!("{}[{}]", f.severity, f.code);
    if let Some(rule) = &f.rule {
        let _ = write!(s, " ({rule})");
    }
    let _ = writeln!(s, ": {}", f.message);
    if let Some(loc) = &f.location {
        let call = f.call.and_then(|i| t.calls().nth(i)).map(|(_, c)| c);
        let what = match (f.call, call) {
            (Some(i), Some(c)) if f.pointer.is_empty() => format!(" (call {} `{}`)", i + 1, c.tool),
            (Some(i), Some(c)) => format!(" (call {} `{}`, {})", i + 1, c.tool, f.pointer),
            _ => String::new(),
        };
        let _ = writeln!(s, "  --> {loc}{what}");
        let text = if *loc.file == *harness.path {
            &harness.text
        } else {
            &t.source.text
        };
        if let Some(snip) = snippet(text, loc.line, loc.column) {
            for line in snip.lines() {
                let _ = writeln!(s, "  {line}");
            }
        }
    }
    s
}

/// A unified diff of the oracle workflow against the agent's calls, per turn.
pub fn call_diff(t: &Transcript, sc: &Scenario) -> String {
    let mut out = String::new();
    for (i, (turn, oracle)) in t.turns.iter().zip(&sc.turns).enumerate() {
        let expected: String = oracle
            .workflow
            .iter()
            .map(|o| render_call(&o.call))
            .collect();
        let actual: String = turn.calls.iter().map(render_call).collect();
        if expected == actual {
            continue;
        }
        let _ = writeln!(out, "expected (-) vs actual (+) calls, turn {}:", i + 1);
        for change in diff::changes(&expected, &actual) {
            let _ = write!(out, "{} {}", change.tag.sign(), change.line);
            if change.missing_newline() {
                out.push('\n');
            }
        }
    }
    out
}

/// A call as diffable lines: the tool, then one sorted `name: value` line per argument.
pub fn render_call(c: &Call) -> String {
    let mut s = format!("{}\n", c.tool);
    if let Value::Object(args) = c.arguments() {
        let mut keys: Vec<&String> = args.keys().collect();
        keys.sort();
        for k in keys {
            let _ = writeln!(
                s,
                "    {k}: {}",
                serde_json::to_string(&args[k]).unwrap_or_default()
            );
        }
    }
    s
}
