//! The HTML report: one self-contained file (inline CSS and SVG, no script, a
//! Content-Security-Policy that forbids every fetch), readable offline and attachable to a CI
//! run. Per suite: the TC histogram and the per-case discrimination chart; across suites: the
//! sub-dimension heat map; the judge-agreement scatter when a judge ran; then every failing
//! trial, and every broken transcript the engines caught, with findings and the call diff.

use std::fmt::Write;
use std::io;

use super::svg::{self, Case, esc};
use super::{Report, TrialKind, TrialRecord, View, in_memory};
use crate::check::Status;
use crate::finding::SubDimension;
use crate::harness::Expect;

const CSS: &str = r#"
body { font: 14px/1.45 system-ui, sans-serif; margin: 24px auto; max-width: 1180px; color: #222; padding: 0 16px; }
h1 { font-size: 22px; margin-bottom: 4px; } h2 { font-size: 18px; margin-top: 32px; border-bottom: 1px solid #ddd; }
h3 { font-size: 15px; margin: 18px 0 6px; }
.verdict { display: inline-block; padding: 2px 10px; border-radius: 4px; color: #fff; font-weight: 600; }
.ok { background: #2e7d32; } .bad { background: #c62828; } .muted { color: #666; }
table { border-collapse: collapse; margin: 8px 0; } th, td { border: 1px solid #ddd; padding: 3px 8px; text-align: left; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
.charts { display: flex; flex-wrap: wrap; gap: 18px; align-items: flex-start; }
.chart { border: 1px solid #eee; padding: 6px; overflow-x: auto; max-width: 100%; }
.legend span { margin-right: 14px; } .sw { display: inline-block; width: 10px; height: 10px; margin-right: 4px; }
.ln { display: inline-block; width: 18px; height: 0; border-top: 2px solid #555; opacity: 0.6; vertical-align: middle; margin-right: 4px; } .ln.dash { border-top-style: dashed; opacity: 1; }
pre { background: #f7f7f7; padding: 8px; overflow-x: auto; font-size: 12px; }
.diff .del { color: #b71c1c; background: #fdecea; display: block; } .diff .ins { color: #1b5e20; background: #e8f5e9; display: block; }
.case { border-left: 4px solid #c62828; padding-left: 10px; margin: 16px 0; }
.case.caught { border-color: #2e7d32; }
.error { color: #b71c1c; font-weight: 600; } .warning { color: #e65100; font-weight: 600; }
"#;

/// The report as one HTML page.
pub fn html(report: &Report) -> String {
    let summary = report.summary();
    in_memory(|out| write_html(report.view(&summary), out))
}

/// The report as one HTML page ([`html`]), written as it is made: the charts from the
/// summary's aggregates and one walk over each suite's cases, then one walk over the trials
/// for each of the lists.
pub fn write_html(view: View<'_>, out: &mut dyn io::Write) -> io::Result<()> {
    let report = view.summary;
    let mut s = String::new();
    let t = &report.totals;
    let _ = writeln!(
        s,
        r#"<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>agent-seer report {}</title><style>{CSS}</style></head><body>
<h1>agent-seer report <span class="verdict {}" id="verdict">{}</span></h1>
<p class="muted">Run <code>{}</code> · {} trials: {} passed, {} failed, {} xfailed, {} ignored</p>"#,
        esc(&report.run_id),
        if report.passed { "ok" } else { "bad" },
        if report.passed { "passed" } else { "failed" },
        esc(&report.run_id),
        t.trials,
        t.passed,
        t.failed,
        t.xfailed,
        t.ignored
    );

    let unlabelled = report.has_unlabelled();
    let _ = writeln!(
        s,
        "<h2>Suites</h2><table id=\"suites\"><tr><th>suite</th><th>trials</th><th>passed</th><th>failed</th><th>xfailed</th><th>correct passed</th><th>broken caught</th>{}<th>gap</th></tr>",
        if unlabelled {
            "<th>unlabelled passed</th>"
        } else {
            ""
        }
    );
    for (name, c) in &report.suites {
        let gap = report
            .stats
            .get(name)
            .and_then(|st| st.gap)
            .map_or("–".to_owned(), |g| format!("{g:.3}"));
        let cells: String = c
            .cells(unlabelled)
            .iter()
            .map(|v| format!(r#"<td class="n">{v}</td>"#))
            .collect();
        let _ = writeln!(
            s,
            r##"<tr><td><a href="#suite-{0}">{0}</a></td>{cells}<td class="n">{gap}</td></tr>"##,
            esc(name)
        );
    }
    s.push_str("</table>\n");

    let _ = writeln!(
        s,
        r#"<h2>Scores by suite</h2><p class="legend" id="legend"><span><i class="sw" style="background:{0}"></i>correct transcripts</span><span><i class="sw" style="background:{1}"></i>broken transcripts</span><span><i class="ln" style="border-color:{0}"></i>mean TC of the correct</span><span><i class="ln" style="border-color:{1}"></i>mean TC of the broken</span><span><i class="ln dash"></i>pass threshold</span><span>hollow dot: decided wrong</span><span><b>×</b> on a dot: failed by an error finding although its TC is above the pass line</span></p>"#,
        svg::CORRECT,
        svg::BROKEN
    );
    out.write_all(s.as_bytes())?;
    s.clear();
    for suite in report.suites.keys() {
        let Some(st) = report.stats.get(suite).filter(|st| st.graded > 0) else {
            continue;
        };
        let threshold = st.threshold.unwrap_or_default();
        let n = st.cases[0] + st.cases[1];
        let _ = write!(
            s,
            r#"<section id="suite-{0}"><h3>{0}</h3><div class="charts"><div class="chart">{1}</div><div class="chart">{2}"#,
            esc(suite),
            svg::histogram(
                &format!("{suite}: TC distribution"),
                &st.bins[0],
                &st.bins[1],
                threshold
            ),
            svg::discrimination_head(
                &format!("{suite}: TC per case"),
                n,
                st.longest,
                threshold,
                [st.case_mean(true), st.case_mean(false)]
            )
        );
        out.write_all(s.as_bytes())?;
        s.clear();
        // The correct cases, then the broken ones, each in name order.
        let mut i = 0;
        for correct in [true, false] {
            for t in view.trials.suite(suite) {
                let t = t?;
                let Some(case) = case_of(&t).filter(|c| c.correct == correct) else {
                    continue;
                };
                out.write_all(svg::discrimination_case(i, &case, threshold).as_bytes())?;
                i += 1;
            }
        }
        out.write_all(b"</svg></div></div></section>\n")?;
    }

    let rows: Vec<(String, Vec<Option<f64>>)> = super::heat_map(report).into_iter().collect();
    if rows.iter().any(|(_, r)| r.iter().any(Option::is_some)) {
        let cols: Vec<&str> = SubDimension::ALL.iter().map(|d| d.as_str()).collect();
        let _ = writeln!(
            s,
            r#"<h2>Sub-dimensions</h2><p class="muted">Mean score of each of the 14 sub-dimensions over a suite's correct transcripts (and unlabelled ones): how well the agent does. Broken fixtures are left out, so a suite's colour does not depend on how many it has.</p><div class="chart">{}</div>"#,
            svg::heat_map("sub-dimension means by suite", &cols, &rows)
        );
    }

    if let Some(a) = &report.agreement {
        let _ = writeln!(
            s,
            r#"<h2>Judge agreement</h2><p class="muted">{} vs {} over {} transcripts: Pearson {}, mean absolute error {:.3}.</p><div class="chart">{}</div>"#,
            esc(&a.x),
            esc(&a.y),
            a.points.len(),
            a.pearson.map_or("n/a".to_owned(), |p| format!("{p:.3}")),
            a.mae,
            svg::scatter("judge agreement", &a.x, &a.y, &a.points)
        );
    }

    let _ = writeln!(
        s,
        r#"<h2 id="failures">Failing trials ({})</h2>"#,
        report.failed()
    );
    if report.failed() == 0 {
        s.push_str("<p>None.</p>\n");
    }
    out.write_all(s.as_bytes())?;
    s.clear();
    if report.failed() > 0 {
        for t in view.trials.iter() {
            let t = t?;
            if t.status == Status::Failed {
                case(&mut s, &t, "case failure");
                out.write_all(s.as_bytes())?;
                s.clear();
            }
        }
    }
    if report.caught > 0 {
        let _ = writeln!(
            s,
            r#"<h2 id="caught">Broken transcripts caught ({})</h2><p class="muted">Labelled broken, failed by the engines with the named faults: what the checks found, and how the calls differ from the oracle.</p><details><summary>show all</summary>"#,
            report.caught
        );
        for t in view.trials.iter() {
            let t = t?;
            let caught = matches!(t.kind, TrialKind::Transcript | TrialKind::Live)
                && t.status == Status::Passed
                && t.transcript
                    .as_ref()
                    .is_some_and(|tr| tr.expects() == Expect::Fail);
            if caught {
                case(&mut s, &t, "case caught");
                out.write_all(s.as_bytes())?;
                s.clear();
            }
        }
        s.push_str("</details>\n");
    }

    s.push_str("<h2>All trials</h2><details><summary>show all</summary><table id=\"trials\"><tr><th>trial</th><th>kind</th><th>status</th><th>TC</th></tr>\n");
    for t in view.trials.iter() {
        let t = t?;
        let _ = writeln!(
            s,
            "<tr><td><code>{}</code></td><td>{}</td><td>{}</td><td class=\"n\">{}</td></tr>",
            esc(&t.name),
            kind(t.kind),
            status(t.status),
            t.tc().map_or("–".to_owned(), |v| format!("{v:.3}"))
        );
        out.write_all(s.as_bytes())?;
        s.clear();
    }
    s.push_str("</table></details>\n</body></html>\n");
    out.write_all(s.as_bytes())
}

/// A graded transcript's dot on its suite's per-case chart, when it has a TC.
fn case_of(t: &TrialRecord) -> Option<Case<'_>> {
    let (TrialKind::Transcript | TrialKind::Live, Some(tr)) = (t.kind, &t.transcript) else {
        return None;
    };
    Some(Case {
        name: t.name.rsplit("::").next().unwrap_or(&t.name),
        correct: tr.expects() == Expect::Pass,
        tc: tr.tc()?,
        agrees: t.status != Status::Failed,
        failed_by: (tr.verdict == crate::check::Verdict::Fail)
            .then(|| tr.findings.iter().find(|f| f.severity == "error"))
            .flatten()
            .map(|f| f.code.as_str()),
    })
}

fn kind(k: TrialKind) -> &'static str {
    match k {
        TrialKind::Harness => "harness",
        TrialKind::Transcript => "transcript",
        TrialKind::Discrimination => "gate",
        TrialKind::Mutation => "mutation gate",
        TrialKind::Judge => "judge",
        TrialKind::Live => "live run",
        TrialKind::Setup => "setup",
    }
}

fn status(s: Status) -> &'static str {
    match s {
        Status::Passed => "passed",
        Status::Failed => "failed",
        Status::Xfailed => "xfailed",
        Status::Ignored => "ignored",
    }
}

/// One trial in full: why, the findings, the call diff.
fn case(s: &mut String, t: &TrialRecord, class: &str) {
    let _ = write!(
        s,
        r#"<div class="{class}" data-trial="{0}"><h3><code>{0}</code></h3>"#,
        esc(&t.name)
    );
    if let Some(tr) = &t.transcript {
        let _ = write!(
            s,
            "<p>Transcript <code>{}</code>{}, labelled <b>{}</b>, verdict <b>{}</b>{}.</p>",
            esc(&tr.path),
            tr.scenario.as_deref().map_or(String::new(), |sc| format!(
                " (scenario <code>{}</code>)",
                esc(sc)
            )),
            if tr.expects() == Expect::Pass {
                "correct"
            } else {
                "broken"
            },
            match tr.verdict {
                crate::check::Verdict::Pass => "pass",
                crate::check::Verdict::Fail => "fail",
            },
            tr.score.as_ref().map_or(String::new(), |sc| format!(
                ", {}",
                esc(&super::dimensions(sc))
            ))
        );
        if !tr.findings.is_empty() {
            s.push_str("<table class=\"findings\"><tr><th>severity</th><th>code</th><th>message</th><th>where</th></tr>");
            for f in &tr.findings {
                let _ = write!(
                    s,
                    r#"<tr><td class="{0}">{0}</td><td><code>{1}</code>{2}</td><td>{3}</td><td><code>{4}</code></td></tr>"#,
                    esc(&f.severity),
                    esc(&f.code),
                    f.rule
                        .as_deref()
                        .map_or(String::new(), |r| format!(" ({})", esc(r))),
                    prose(&f.message),
                    esc(f.location.as_deref().unwrap_or(""))
                );
            }
            s.push_str("</table>");
        }
        if let Some(d) = &tr.diff {
            s.push_str("<pre class=\"diff\">");
            for line in d.lines() {
                let cls = match line.chars().next() {
                    Some('-') => " class=\"del\"",
                    Some('+') => " class=\"ins\"",
                    _ => "",
                };
                if cls.is_empty() {
                    let _ = writeln!(s, "{}", esc(line));
                } else {
                    let _ = write!(s, "<span{cls}>{}</span>", esc(line));
                }
            }
            s.push_str("</pre>");
        }
    }
    if let Some(m) = t.message.as_deref().filter(|_| t.status == Status::Failed) {
        let _ = write!(
            s,
            "<details><summary>full message</summary><pre>{}</pre></details>",
            esc(&super::junit::strip_ansi(m))
        );
    }
    s.push_str("</div>\n");
}

/// Escaped text whose `backtick` spans become `<code>` (messages are written with Markdown's
/// code spans; shown literally they read as stray backticks).
fn prose(text: &str) -> String {
    let parts: Vec<&str> = text.split('`').collect();
    // An odd count of backticks leaves the last one as it is.
    let pairs = (parts.len() - 1) / 2;
    let mut s = String::with_capacity(text.len() + 16);
    for (i, part) in parts.iter().enumerate() {
        if i > 0 {
            if i <= pairs * 2 {
                s.push_str(if i % 2 == 1 { "<code>" } else { "</code>" });
            } else {
                s.push('`');
            }
        }
        s.push_str(&esc(part));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::prose;

    #[test]
    fn code_spans_become_code() {
        assert_eq!(
            prose("unknown parameter `promt` (did you mean `prompt`?) <b>"),
            "unknown parameter <code>promt</code> (did you mean <code>prompt</code>?) &lt;b&gt;"
        );
        assert_eq!(prose("a ` b"), "a ` b");
    }
}
