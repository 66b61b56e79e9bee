//! JUnit XML: one `<testsuite>` per agent suite, one `<testcase>` per trial, findings and the
//! call diff in the failure body, scores as properties. No timestamps or durations: the same
//! run renders the same bytes.

use quick_junit::{NonSuccessKind, Property, TestCase, TestCaseStatus, TestSuite};

use super::{Report, TrialRecord};
use crate::check::Status;

/// The report as JUnit XML.
pub fn junit(report: &Report) -> String {
    let mut out = quick_junit::Report::new(format!("agent-seer {}", report.run_id));
    for suite in report.suites.keys() {
        let mut ts = TestSuite::new(suite.as_str());
        for t in report.suite_trials(suite) {
            ts.add_test_case(case(t));
        }
        out.add_test_suite(ts);
    }
    out.to_string().unwrap_or_else(|e| {
        format!("<!-- agent-seer could not serialise the JUnit report: {e} -->")
    })
}

fn case(t: &TrialRecord) -> TestCase {
    let first_line = |m: &str| m.lines().next().unwrap_or("").to_owned();
    let status = match t.status {
        Status::Passed => TestCaseStatus::success(),
        Status::Failed => {
            let mut s = TestCaseStatus::non_success(NonSuccessKind::Failure);
            let message = t.message.as_deref().unwrap_or("failed");
            s.set_message(first_line(message));
            s.set_type(format!("{:?}", t.kind).to_lowercase());
            s.set_description(strip_ansi(message));
            s
        }
        Status::Xfailed | Status::Ignored => {
            let mut s = TestCaseStatus::skipped();
            if let Some(m) = &t.message {
                s.set_message(first_line(m));
            }
            s
        }
    };
    let mut c = TestCase::new(t.name.as_str(), status);
    c.set_classname(t.suite.as_str());
    if let Some(tr) = &t.transcript {
        c.add_property(Property::new("transcript", tr.path.as_str()));
        if let Some(sc) = &tr.scenario {
            c.add_property(Property::new("scenario", sc.as_str()));
        }
        c.add_property(Property::new(
            "expect",
            format!("{:?}", tr.expects()).to_lowercase(),
        ));
        c.add_property(Property::new(
            "verdict",
            format!("{:?}", tr.verdict).to_lowercase(),
        ));
        if let Some(s) = &tr.score {
            c.add_property(Property::new("tc", format!("{:.3}", s.tc)));
        }
        c.add_property(Property::new(
            "pass_threshold",
            format!("{:.3}", tr.pass_threshold),
        ));
        if !tr.findings.is_empty() {
            let lines: Vec<String> = tr
                .findings
                .iter()
                .map(|f| {
                    format!(
                        "{}[{}]: {}{}",
                        f.severity,
                        f.code,
                        f.message,
                        f.location
                            .as_deref()
                            .map_or(String::new(), |l| format!(" ({l})"))
                    )
                })
                .collect();
            c.set_system_out(lines.join("\n"));
        }
    }
    if let Some(j) = &t.judge {
        c.add_property(Property::new("judge", j.judge.as_str()));
        c.add_property(Property::new("judge_tc", format!("{:.3}", j.score.tc)));
        c.add_property(Property::new(
            "combined_tc",
            format!("{:.3}", j.combined_tc),
        ));
    }
    if let Some(d) = &t.discrimination {
        if let Some(g) = d.gap {
            c.add_property(Property::new("gap", format!("{g:.3}")));
        }
        c.add_property(Property::new("min_gap", format!("{:.3}", d.min_gap)));
        c.set_system_out(d.table());
    }
    c
}

/// Removes ANSI escape sequences (CSI … final byte).
pub fn strip_ansi(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            if chars.peek() == Some(&'[') {
                chars.next();
                for c in chars.by_ref() {
                    if ('@'..='~').contains(&c) {
                        break;
                    }
                }
            }
            continue;
        }
        out.push(c);
    }
    out
}
