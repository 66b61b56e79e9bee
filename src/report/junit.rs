//! JUnit XML: one `<testsuite>` per agent suite, one `<testcase>` per trial, findings and the
//! call diff in the failure body, scores as properties. No timestamps or durations: the same
//! run renders the same bytes.

use quick_junit::{NonSuccessKind, Property, TestCase, TestCaseStatus, TestSuite};

use super::{Report, TrialRecord};
use crate::runner::Status;

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

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::harness::Expect;
    use crate::report::{FindingRecord, JudgeRecord, ScoreRecord, TranscriptRecord};
    use crate::runner::{Discrimination, Row, Verdict};

    fn score(tc: f64) -> ScoreRecord {
        ScoreRecord {
            tc,
            tc_harmonic: tc,
            tc_min: tc,
            usage: 1.0,
            selection: 1.0,
            ordering: None,
            arguments: tc,
            sub: BTreeMap::new(),
        }
    }

    fn finding(message: &str, location: Option<&str>) -> FindingRecord {
        FindingRecord {
            code: "cap.unsupported_value".to_owned(),
            severity: "error".to_owned(),
            sub_dimension: "argument_value".to_owned(),
            message: message.to_owned(),
            pointer: "/ratio".to_owned(),
            rule: None,
            call: Some(0),
            location: location.map(str::to_owned),
        }
    }

    fn transcript(path: &str, scenario: Option<&str>, tc: Option<f64>) -> TranscriptRecord {
        TranscriptRecord {
            path: path.to_owned(),
            scenario: scenario.map(str::to_owned),
            expect: None,
            faults: Vec::new(),
            missed_faults: Vec::new(),
            xfail: None,
            verdict: Verdict::Pass,
            pass_threshold: 0.8,
            score: tc.map(score),
            turn_scores: Vec::new(),
            findings: Vec::new(),
            diff: None,
        }
    }

    /// Every kind of trial, with text that XML, terminals and JUnit readers all trip on.
    fn awkward() -> Report {
        let bare = |name: &str, suite: &str, status, message: Option<&str>| {
            TrialRecord::bare(name, suite, status, message.map(str::to_owned))
        };
        let mut failed = bare(
            "odd::t<1> & \"two\"",
            "odd <suite> & 'co'",
            Status::Failed,
            Some(
                "odd::t1: \x1b[31mTC 0.250 < 0.800\x1b[0m & \"quoted\" 'single' ]]> café ✓\n\
                 1 error, 0 warnings\n\
                 \n\
                 error[cap.unsupported_value]: ratio \"16:9\" <not> in [\"1:1\"] & more ]]>\n\
                 \x20 --> transcripts/odd/t1.yaml:7:14\n\
                 nul \0 bell \x07 vt \x0b ff \x0c tab \t cr \r\n\
                 c1 \u{85} del \x7f esc-paren \x1b(B osc \x1b]8;;http://x\x07link\x1b]8;;\x07\n\
                 dcs \x1bPq✨z Ĝ lone esc \x1b\n\
                 expected (-) vs actual (+) calls, turn 1:\n\
                 - ratio: \"1:1\"\n\
                 + ratio: \"16:9\"\n",
            ),
        );
        let mut tr = transcript("transcripts/odd/t1 <&>.yaml", Some("sq\"uare"), Some(0.25));
        tr.expect = Some(Expect::Fail);
        tr.verdict = Verdict::Fail;
        tr.findings = vec![
            finding(
                "ratio \"16:9\" <not> in ['1:1'] & 日本 \x1b[1mbold\x1b[0m",
                Some("t1.yaml:7:14"),
            ),
            finding("no location ]]> \u{1}\u{1f}", None),
            // Raw in `<system-out>`: escapes the message's own stripping never sees.
            finding(
                "dcs \x1bPq✨z \x1bP1$rĜx osc \x1b]8;;http://x\x07link\x1b]8;;\x1b\\ \
                 charset \x1b(B csi \x1b[?25h\x1b[1;31m in-csi \x1b[1\n2m sos \x1bXhidden\x1b\\ \
                 c1 \u{9c}\u{80} tab\tcr\r del\x7f",
                Some("t1.yaml:9:1"),
            ),
        ];
        tr.diff = Some("- a\n+ b\n".to_owned());
        failed.transcript = Some(tr);

        let mut passed = bare("tiny::ok", "tiny", Status::Passed, None);
        let mut tr = transcript("transcripts/tiny/ok.yaml", None, Some(1.0));
        tr.findings = vec![finding("a warning & nothing else", Some("ok.yaml:3:1"))];
        passed.transcript = Some(tr);

        let mut unscored = bare("tiny::unscored", "tiny", Status::Passed, None);
        unscored.transcript = Some(transcript("transcripts/tiny/unscored.yaml", None, None));

        let mut judged = bare("judge::tiny::ok", "tiny", Status::Passed, None);
        judged.judge = Some(JudgeRecord {
            judge: "ollama:qwen <3b>".to_owned(),
            mode: "enriched".to_owned(),
            score: score(0.9),
            coherence: 1.0,
            rationale: "fine".to_owned(),
            oracle_tc: Some(1.0),
            combined_tc: 0.9,
            verdict: Verdict::Pass,
        });

        let row = |transcript: &str, expect, tc, agrees, xfail| Row {
            transcript: transcript.to_owned(),
            expect,
            tc,
            verdict: Verdict::Pass,
            faults: vec!["argument_name".to_owned(), "x<y>".to_owned()],
            missed: vec!["x<y>".to_owned()],
            xfail,
            agrees,
        };
        let mut gate = bare("tiny::discrimination", "tiny", Status::Passed, None);
        gate.discrimination = Some(Discrimination {
            suite: "tiny".to_owned(),
            pass_threshold: 0.8,
            min_gap: 0.3,
            rows: vec![
                row("ok", Expect::Pass, Some(1.0), true, false),
                row("broken & <bad>", Expect::Fail, Some(0.5), false, false),
                row("flaky", Expect::Fail, None, false, true),
            ],
            mean_correct: Some(1.0),
            mean_broken: Some(0.5),
            gap: Some(0.5),
            hits: 0,
            broken: 2,
            errors: Vec::new(),
        });
        let mut no_gap = bare(
            "odd::discrimination",
            "odd <suite> & 'co'",
            Status::Ignored,
            None,
        );
        no_gap.discrimination = Some(Discrimination {
            suite: "odd".to_owned(),
            pass_threshold: 0.8,
            min_gap: 0.3,
            rows: Vec::new(),
            mean_correct: None,
            mean_broken: None,
            gap: None,
            hits: 0,
            broken: 0,
            errors: vec!["t2.yaml: not YAML".to_owned()],
        });

        let mut report = Report::new(
            "20250101T000000Z-1 <&\"'>",
            vec![
                failed,
                passed,
                unscored,
                judged,
                gate,
                no_gap,
                bare("tiny::harness", "tiny", Status::Passed, None),
                bare("tiny::tab\tand\x1b[1mbold", "tiny", Status::Passed, None),
                bare("odd::harness", "odd <suite> & 'co'", Status::Failed, None),
                bare(
                    "odd::empty-message",
                    "odd <suite> & 'co'",
                    Status::Failed,
                    Some(""),
                ),
                bare(
                    "odd::newline-first",
                    "odd <suite> & 'co'",
                    Status::Failed,
                    Some("\nsecond"),
                ),
                bare(
                    "tiny::xfail",
                    "tiny",
                    Status::Xfailed,
                    Some("known <bug> & \"issue\" #12\nsecond line"),
                ),
                bare(
                    "tiny::xfail-ansi",
                    "tiny",
                    Status::Xfailed,
                    Some("\x1b[33m\x1b[0m"),
                ),
                bare("tiny::ignored", "tiny", Status::Ignored, None),
                bare(
                    "tiny::ignored-why",
                    "tiny",
                    Status::Ignored,
                    Some("no judge configured"),
                ),
            ],
        );
        report.suites.insert("empty".to_owned(), Default::default());
        report
    }

    #[test]
    fn awkward_report() {
        let xml = junit(&awkward());
        // insta trims the end of a snapshot: the final newline is checked here.
        assert!(xml.ends_with("</testsuites>\n"), "{xml:?}");
        insta::assert_snapshot!("junit_awkward", xml);
    }
}
