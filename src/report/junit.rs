//! JUnit XML: one `<testsuite>` per agent suite, one `<testcase>` per trial, findings and the
//! call diff in the failure body, scores as properties. No timestamps or durations: the same
//! run renders the same bytes.
//!
//! The XML is written here by hand, byte for byte as quick-junit 0.8 wrote it (the
//! `junit_awkward` snapshot pins it): the attribute order, four-space indentation with text
//! right after its start tag, childless elements self-closed, `&<>"'` escaped in text and
//! attributes alike, and every string first reduced to what a terminal would print
//! (`printable`). quick-junit brought an XML stack, chrono, uuid and a terminal parser
//! into every build for this one document shape.

use std::fmt::Write;
use std::io;

use super::{Report, SuiteCounts, TrialRecord, View, in_memory};
use crate::check::Status;

/// The report as JUnit XML.
pub fn junit(report: &Report) -> String {
    let summary = report.summary();
    in_memory(|out| write_junit(report.view(&summary), out))
}

/// The report as JUnit XML ([`junit`]), written a test case at a time: one walk over each
/// suite's trials.
pub fn write_junit(view: View<'_>, out: &mut dyn io::Write) -> io::Result<()> {
    let summary = view.summary;
    let mut x = Xml::default();
    x.tag("<?xml version=\"1.0\" encoding=\"UTF-8\"?>");
    let [tests, skipped, failures] = counts(&summary.totals);
    x.open(
        "testsuites",
        &[
            ("name", &format!("agent-seer {}", summary.run_id)),
            ("tests", &tests),
            ("skipped", &skipped),
            ("failures", &failures),
            ("errors", "0"),
        ],
    );
    for (suite, c) in &summary.suites {
        let [tests, skipped, failures] = counts(c);
        let attrs = [
            ("name", suite.as_str()),
            ("tests", &tests),
            ("skipped", &skipped),
            ("errors", "0"),
            ("failures", &failures),
        ];
        if c.trials == 0 {
            x.empty("testsuite", &attrs);
            continue;
        }
        x.open("testsuite", &attrs);
        for t in view.trials.suite(suite) {
            let t = t?;
            case(&mut x, &t);
            out.write_all(x.out.as_bytes())?;
            x.out.clear();
        }
        x.close("testsuite");
    }
    x.close("testsuites");
    x.out.push('\n');
    out.write_all(x.out.as_bytes())
}

/// The `tests`, `skipped` and `failures` counts of some trials (none is an `error`).
fn counts(c: &SuiteCounts) -> [String; 3] {
    [c.trials, c.xfailed + c.ignored, c.failed].map(|n: usize| n.to_string())
}

/// One trial's `<testcase>`: properties, then the failure or skip, then `<system-out>`.
fn case(x: &mut Xml, t: &TrialRecord) {
    let first_line = |m: &str| m.lines().next().unwrap_or("").to_owned();
    let properties = properties(t);
    let system_out = system_out(t);
    let attrs = [("name", t.name.as_str()), ("classname", t.suite.as_str())];
    if properties.is_empty() && system_out.is_none() && t.status == Status::Passed {
        x.empty("testcase", &attrs);
        return;
    }
    x.open("testcase", &attrs);
    if !properties.is_empty() {
        x.open("properties", &[]);
        for (name, value) in &properties {
            x.empty("property", &[("name", name), ("value", value)]);
        }
        x.close("properties");
    }
    match t.status {
        Status::Passed => {}
        Status::Failed => {
            let message = t.message.as_deref().unwrap_or("failed");
            let kind = format!("{:?}", t.kind).to_lowercase();
            x.open(
                "failure",
                &[("message", &first_line(message)), ("type", &kind)],
            );
            x.text(&strip_ansi(message));
            x.close("failure");
        }
        Status::Xfailed | Status::Ignored => match &t.message {
            Some(m) => x.empty("skipped", &[("message", &first_line(m))]),
            None => x.empty("skipped", &[]),
        },
    }
    if let Some(s) = system_out {
        x.open("system-out", &[]);
        x.text(&s);
        x.close("system-out");
    }
    x.close("testcase");
}

/// The trial's scores and provenance, as `(name, value)` properties.
fn properties(t: &TrialRecord) -> Vec<(&'static str, String)> {
    let mut p = Vec::new();
    if let Some(tr) = &t.transcript {
        p.push(("transcript", tr.path.clone()));
        if let Some(sc) = &tr.scenario {
            p.push(("scenario", sc.clone()));
        }
        p.push(("expect", format!("{:?}", tr.expects()).to_lowercase()));
        p.push(("verdict", format!("{:?}", tr.verdict).to_lowercase()));
        if let Some(s) = &tr.score {
            p.push(("tc", format!("{:.3}", s.tc)));
        }
        p.push(("pass_threshold", format!("{:.3}", tr.pass_threshold)));
    }
    if let Some(j) = &t.judge {
        p.push(("judge", j.judge.clone()));
        p.push(("judge_tc", format!("{:.3}", j.score.tc)));
        p.push(("combined_tc", format!("{:.3}", j.combined_tc)));
    }
    if let Some(d) = &t.discrimination {
        if let Some(g) = d.gap {
            p.push(("gap", format!("{g:.3}")));
        }
        p.push(("min_gap", format!("{:.3}", d.min_gap)));
    }
    p
}

/// A gate's table, else the transcript's findings, one per line.
fn system_out(t: &TrialRecord) -> Option<String> {
    if let Some(d) = &t.discrimination {
        return Some(d.table());
    }
    let tr = t.transcript.as_ref().filter(|tr| !tr.findings.is_empty())?;
    let lines: Vec<String> = tr
        .findings
        .iter()
        .map(|f| {
            let at = f
                .location
                .as_deref()
                .map_or(String::new(), |l| format!(" ({l})"));
            format!("{}[{}]: {}{at}", f.severity, f.code, f.message)
        })
        .collect();
    Some(lines.join("\n"))
}

/// An XML document being written with quick-xml's layout: each tag on its own line at its
/// depth, except that text and the end tag after it follow on the same line.
#[derive(Default)]
struct Xml {
    out: String,
    depth: usize,
    /// False right after text (and at the start of the document).
    line_break: bool,
}

impl Xml {
    fn tag(&mut self, tag: &str) {
        if self.line_break {
            self.out.push('\n');
            self.out.extend(std::iter::repeat_n(' ', 4 * self.depth));
        }
        self.out.push_str(tag);
        self.line_break = true;
    }

    fn start(name: &str, attrs: &[(&str, &str)]) -> String {
        let mut s = format!("<{name}");
        for (key, value) in attrs {
            let _ = write!(s, " {key}=\"");
            escape(&printable(value), &mut s);
            s.push('"');
        }
        s
    }

    fn open(&mut self, name: &str, attrs: &[(&str, &str)]) {
        self.tag(&(Self::start(name, attrs) + ">"));
        self.depth += 1;
    }

    fn empty(&mut self, name: &str, attrs: &[(&str, &str)]) {
        self.tag(&(Self::start(name, attrs) + "/>"));
    }

    fn close(&mut self, name: &str) {
        self.depth -= 1;
        self.tag(&format!("</{name}>"));
    }

    fn text(&mut self, text: &str) {
        escape(&printable(text), &mut self.out);
        self.line_break = false;
    }
}

/// The five characters XML markup could mistake, as entities (text and attributes alike).
fn escape(s: &str, out: &mut String) {
    for c in s.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '\'' => out.push_str("&apos;"),
            '"' => out.push_str("&quot;"),
            c => out.push(c),
        }
    }
}

/// What a VT500 terminal would print of `s`: every escape sequence (CSI, OSC, DCS, SOS/PM/APC
/// and two-byte ones) and every C0 or C1 control but the newline dropped, the rest kept. XML 1.0
/// allows no C0 control but tab, newline and carriage return, and a JUnit reader shows
/// captured terminal output.
///
/// This is the parser quick-junit used (vte 0.14, through strip-ansi-escapes), state for
/// state, so a report renders as it did with quick-junit, odd corners included: a newline
/// inside a CSI or ESC sequence is kept, a DCS string ends on a C1 ST byte even in the middle
/// of a character, and the bytes left of that character print as U+FFFD when past 0x9F.
fn printable(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut state = Vt::Ground;
    let bytes = s.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if state != Vt::Ground {
            state = state.next(b, &mut out);
            i += 1;
        } else if b == 0x1b {
            state = Vt::Esc;
            i += 1;
        } else if let Some(c) = s.get(i..).and_then(|rest| rest.chars().next()) {
            if c == '\n' || !matches!(c, '\0'..='\x1f' | '\u{80}'..='\u{9f}') {
                out.push(c);
            }
            i += c.len_utf8();
        } else {
            // A continuation byte left by a DCS string's end (vte: invalid UTF-8).
            if b > 0x9f {
                out.push(char::REPLACEMENT_CHARACTER);
            }
            i += 1;
        }
    }
    out
}

/// Where vte's parser is: the states of Paul Williams' VT500 machine that decide what is
/// printed (parameters and intermediates are dropped alike, so not kept).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Vt {
    Ground,
    /// After ESC, and after ESC and intermediates.
    Esc,
    EscIntermediate,
    Csi(Part),
    /// DCS up to its final byte; then its string.
    Dcs(Part),
    DcsString,
    Osc,
    /// SOS, PM and APC strings.
    Sos,
}

/// How far into a CSI or DCS sequence's parameters and intermediates.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Part {
    Entry,
    Param,
    Intermediate,
    Ignore,
}

impl Vt {
    /// The state after byte `b`, printing the newline a sequence executes on the way.
    fn next(self, b: u8, out: &mut String) -> Vt {
        let c0 = matches!(b, 0x00..=0x17 | 0x19 | 0x1c..=0x1f);
        match (self, b) {
            // CAN and SUB abort any sequence, ESC starts a new one.
            (_, 0x18 | 0x1a) => Vt::Ground,
            (_, 0x1b) => Vt::Esc,
            (Vt::Esc | Vt::EscIntermediate | Vt::Csi(_), _) if c0 => {
                if b == b'\n' {
                    out.push('\n');
                }
                self
            }
            (Vt::Esc | Vt::EscIntermediate, 0x20..=0x2f) => Vt::EscIntermediate,
            (Vt::Esc, b'P') => Vt::Dcs(Part::Entry),
            (Vt::Esc, b'[') => Vt::Csi(Part::Entry),
            (Vt::Esc, b']') => Vt::Osc,
            (Vt::Esc, b'X' | b'^' | b'_') => Vt::Sos,
            (Vt::Esc | Vt::EscIntermediate, 0x30..=0x7e) => Vt::Ground,
            (Vt::Csi(p), _) => p.next(b).map_or(Vt::Ground, Vt::Csi),
            (Vt::Dcs(Part::Ignore), _) => self,
            (Vt::Dcs(p), _) => p.next(b).map_or(Vt::DcsString, Vt::Dcs),
            (Vt::DcsString, 0x9c) | (Vt::Osc, 0x07) => Vt::Ground,
            _ => self,
        }
    }
}

impl Part {
    /// The part after byte `b`; `None` on the final byte.
    fn next(self, b: u8) -> Option<Part> {
        match (self, b) {
            (_, 0x40..=0x7e) => None,
            (Part::Ignore, _) => Some(Part::Ignore),
            (_, 0x20..=0x2f) => Some(Part::Intermediate),
            (Part::Entry, 0x30..=0x3f) | (Part::Param, 0x30..=0x3b) => Some(Part::Param),
            (Part::Param | Part::Intermediate, 0x30..=0x3f) => Some(Part::Ignore),
            // DEL and bytes past ASCII change nothing.
            (p, _) => Some(p),
        }
    }
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
    use crate::check::{Discrimination, Row, Verdict};
    use crate::harness::{Expect, TrialKind};
    use crate::report::{FindingRecord, JudgeRecord, ScoreRecord, TranscriptRecord};

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
            trajectory: None,
            findings: Vec::new(),
            diff: None,
            trace: None,
        }
    }

    /// Every kind of trial, with text that XML, terminals and JUnit readers all trip on.
    fn awkward() -> Report {
        // Names no discovery would make, so the record is filled in by hand; the kind is the
        // one its name's shape says.
        let bare = |name: &str, suite: &str, status, message: Option<&str>| {
            let kind = if name.starts_with("judge::") {
                TrialKind::Judge
            } else if name.starts_with("run::") {
                TrialKind::Live
            } else if name.ends_with("::harness") {
                TrialKind::Harness
            } else if name.ends_with("::discrimination") {
                TrialKind::Discrimination
            } else if name.ends_with("::mutation") {
                TrialKind::Mutation
            } else {
                TrialKind::Transcript
            };
            let mut r = TrialRecord::new(
                &crate::harness::TrialId::transcript("s", "t"),
                status,
                message.map(str::to_owned),
            );
            r.name = name.to_owned();
            r.suite = suite.to_owned();
            r.kind = kind;
            r
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
            by_error: false,
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
            gap_on_tc: Some(0.5),
            by_fault: Vec::new(),
            named: 2,
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
            gap_on_tc: None,
            by_fault: Vec::new(),
            named: 0,
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

    #[rstest::rstest]
    #[case::plain("café ✓ <&> ]]>", "café ✓ <&> ]]>")]
    #[case::sgr("\x1b[1;31mred\x1b[0m", "red")]
    #[case::controls(
        "0 \0 7 \x07 t \t r \r n \n del \x7f c1 \u{85}",
        "0  7  t  r  n \n del \x7f c1 "
    )]
    #[case::newline_inside_csi("a\x1b[1\n2mb", "a\nb")]
    #[case::osc_link("\x1b]8;;http://x\x07link\x1b]8;;\x1b\\", "link")]
    #[case::dcs("\x1bP1$rĜx", "x")]
    #[case::dcs_ends_inside_a_character("\x1bPq✨z", "\u{fffd}z")]
    #[case::sos("\x1bXhidden\x1b\\shown", "shown")]
    #[case::can_aborts("\x1b[12\x18x", "x")]
    #[case::charset("\x1b(Bx", "x")]
    #[case::lone_esc("x\x1b", "x")]
    fn printable_is_what_a_terminal_prints(#[case] s: &str, #[case] printed: &str) {
        assert_eq!(printable(s), printed);
    }

    #[test]
    fn awkward_report() {
        let xml = junit(&awkward());
        // insta trims the end of a snapshot: the final newline is checked here.
        assert!(xml.ends_with("</testsuites>\n"), "{xml:?}");
        insta::assert_snapshot!("junit_awkward", xml);
    }
}
