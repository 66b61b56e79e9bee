//! The report for CI services: GitHub workflow-command annotations ([`github`]) and SARIF 2.1.0
//! for code scanning ([`sarif`]), both made from one list of [`Annotation`]s.
//!
//! What is annotated: every finding of a trial that failed (at its severity, on its YAML line),
//! the warnings of correct transcripts that passed (a silent coercion is worth a look), and one
//! error per failed trial no error finding explains (a TC below the threshold, a broken
//! transcript that passed, a file that does not load — placed at the `file:line:column` its
//! message names, when it names one). A broken transcript the engines caught is not annotated:
//! its findings are what its label asked for.
//!
//! GitHub's syntax (docs.github.com, "Workflow commands for GitHub Actions"; the runner's
//! `ActionCommand.TryParseV2`): `::error file=F,line=L,col=C,title=T::MESSAGE`, with `%`, `\r`
//! and `\n` escaped in the message, and `:` and `,` as well in property values.

use std::fmt::Write;
use std::io;
use std::sync::OnceLock;

use serde_json::{Value, json};

use super::{Report, Status, TrialKind, TrialRecord, View, in_memory};
use crate::finding::{Code, Severity};
use crate::harness::Expect;

/// The rule of an annotation no finding code names: a trial that failed without an error
/// finding to say why (its message does).
pub const TRIAL_FAILED: &str = "trial.failed";

/// One thing to show on a pull request.
#[derive(Clone, Debug, PartialEq)]
pub struct Annotation {
    /// `error`, `warning` or `notice` (an info finding).
    pub level: Severity,
    /// The finding code, or [`TRIAL_FAILED`].
    pub rule: String,
    /// A one-line title: the trial and the code.
    pub title: String,
    /// The finding's message, or the trial's (whole, several lines).
    pub message: String,
    /// Where, relative to the directory the report was made in, when known.
    pub file: Option<String>,
    /// 1-based line, when known.
    pub line: Option<u32>,
    /// 1-based column, when known.
    pub col: Option<u32>,
}

/// How a report's paths are shown: GitHub wants them relative to the repository root, and a
/// report's paths are relative to where it was made (or absolute, under nextest). The CLI
/// supplies one that resolves them; [`as_written`] leaves them alone.
pub type Place<'a> = &'a dyn Fn(&str) -> String;

/// A [`Place`] that keeps each path as the report has it.
pub fn as_written(p: &str) -> String {
    p.to_owned()
}

/// The annotations of a report, in trial order, their paths shown by `place` (with `/`).
pub fn annotations(report: &Report, place: Place<'_>) -> Vec<Annotation> {
    let summary = report.summary();
    let mut out = Vec::new();
    let _ = each_annotation(report.view(&summary), place, &mut |a| {
        out.push(a);
        Ok(())
    });
    out
}

/// [`annotations`], each handed to `each` as its trial is read.
pub fn each_annotation(
    view: View<'_>,
    place: Place<'_>,
    each: &mut dyn FnMut(Annotation) -> io::Result<()>,
) -> io::Result<()> {
    // A gate's failure is placed on its suite's harness.
    let harnesses: std::collections::BTreeMap<&str, &str> = view
        .summary
        .harnesses
        .iter()
        .map(|(suite, h)| (suite.as_str(), h.path.as_str()))
        .collect();
    let mut out = Vec::new();
    for t in view.trials.iter() {
        let t = t?;
        trial(&mut out, &t, harnesses.get(t.suite.as_str()).copied());
        for mut a in out.drain(..) {
            if let Some(f) = a.file.as_mut() {
                *f = place(f);
                if std::path::MAIN_SEPARATOR != '/' {
                    *f = f.replace(std::path::MAIN_SEPARATOR, "/");
                }
            }
            each(a)?;
        }
    }
    Ok(())
}

fn trial(out: &mut Vec<Annotation>, t: &TrialRecord, harness: Option<&str>) {
    let graded = matches!(t.kind, TrialKind::Transcript | TrialKind::Live);
    let mut explained = false;
    if let (true, Some(tr)) = (graded, &t.transcript) {
        let show = |sev: &str| match t.status {
            Status::Failed => true,
            Status::Passed => tr.expects() == Expect::Pass && sev != "error",
            _ => false,
        };
        for f in tr.findings.iter().filter(|f| show(&f.severity)) {
            let level = match f.severity.as_str() {
                "error" => Severity::Error,
                "warning" => Severity::Warning,
                _ => Severity::Info,
            };
            explained |= level == Severity::Error && tr.expects() == Expect::Pass;
            let (file, line, col) = split_location(f.location.as_deref(), &tr.path);
            out.push(Annotation {
                level,
                rule: f.code.clone(),
                title: format!("{} {}", t.name, f.code),
                message: f.message.clone(),
                file,
                line,
                col,
            });
        }
    }
    if t.status != Status::Failed || explained {
        return;
    }
    let message = super::junit::strip_ansi(t.message.as_deref().unwrap_or("failed"));
    let message = message.trim_end();
    let (mut file, mut line, mut col) = place_in(message);
    if file.is_none() {
        file = t
            .transcript
            .as_ref()
            .map(|tr| tr.path.clone())
            .or_else(|| t.harness.as_ref().map(|h| h.path.clone()))
            .or_else(|| harness.map(str::to_owned));
        line = file.as_ref().map(|_| 1);
        col = None;
    }
    // The first line names the trial already; the title does too.
    let body = message
        .strip_prefix(&format!("{}: ", t.name))
        .unwrap_or(message);
    out.push(Annotation {
        level: Severity::Error,
        rule: TRIAL_FAILED.to_owned(),
        title: format!("{} failed", t.name),
        message: body.to_owned(),
        file,
        line,
        col,
    });
}

/// `file:line:column` as a finding record writes it (the file may hold `:`); a finding without
/// one points at its transcript.
fn split_location(
    loc: Option<&str>,
    transcript: &str,
) -> (Option<String>, Option<u32>, Option<u32>) {
    if let Some(loc) = loc {
        let mut parts = loc.rsplitn(3, ':');
        let (c, l, f) = (parts.next(), parts.next(), parts.next());
        if let (Some(f), Some(Ok(l)), Some(Ok(c))) = (f, l.map(str::parse), c.map(str::parse)) {
            return (Some(f.to_owned()), Some(l), Some(c));
        }
    }
    (Some(transcript.to_owned()), None, None)
}

/// The first `file:line:column` a message names (`--> harnesses/a.yaml:3:7`, or a line that
/// starts with one), for a failure without a finding.
fn place_in(message: &str) -> (Option<String>, Option<u32>, Option<u32>) {
    static PLACE: OnceLock<regex::Regex> = OnceLock::new();
    let re = PLACE.get_or_init(|| {
        regex::Regex::new(r"(?m)(?:^|-->\s*|\()([^\s:(][^\s]*?\.(?:ya?ml|json|jsonl)):(\d+):(\d+)")
            .expect("a valid pattern")
    });
    match re.captures(message) {
        Some(c) => (Some(c[1].to_owned()), c[2].parse().ok(), c[3].parse().ok()),
        None => (None, None, None),
    }
}

/// Escapes a workflow command's message (GitHub's `escapeData`).
pub fn escape_data(s: &str) -> String {
    s.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// Escapes a workflow command's property value (GitHub's `escapeProperty`).
pub fn escape_property(s: &str) -> String {
    escape_data(s).replace(':', "%3A").replace(',', "%2C")
}

/// The report as GitHub workflow commands, one line per annotation, then the per-suite table
/// (plain log lines). Each annotation shows on the pull request's diff at its YAML line.
pub fn github(report: &Report, place: Place<'_>) -> String {
    let summary = report.summary();
    in_memory(|out| write_github(report.view(&summary), place, out))
}

/// [`github`], written an annotation at a time.
pub fn write_github(view: View<'_>, place: Place<'_>, out: &mut dyn io::Write) -> io::Result<()> {
    each_annotation(view, place, &mut |a| {
        let command = match a.level {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Info => "notice",
        };
        let mut props = Vec::new();
        if let Some(f) = &a.file {
            props.push(format!("file={}", escape_property(f)));
        }
        if let Some(l) = a.line {
            props.push(format!("line={l}"));
        }
        if let Some(c) = a.col {
            props.push(format!("col={c}"));
        }
        props.push(format!("title={}", escape_property(&a.title)));
        writeln!(
            out,
            "::{command} {}::{}",
            props.join(","),
            escape_data(&a.message)
        )
    })?;
    out.write_all(super::junit::strip_ansi(&super::table(view.summary)).as_bytes())
}

/// The `$schema` a SARIF log names: the OASIS schema (vendored in `tests/data/sarif/`).
pub const SARIF_SCHEMA: &str =
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json";

/// The report as a SARIF 2.1.0 log for code scanning: one run, the finding codes as the
/// driver's rules (with [`TRIAL_FAILED`] last), one result per annotation. No
/// `automationDetails`: code scanning matches alerts across runs by category and tool, so the
/// category is the uploader's (`upload-sarif`'s `category:`), never this run's id.
pub fn sarif(report: &Report, place: Place<'_>) -> String {
    let summary = report.summary();
    in_memory(|out| write_sarif(report.view(&summary), place, out))
}

/// [`sarif`], written a result at a time (the same bytes as the log made whole: its keys in
/// the sorted order a `serde_json` map keeps).
pub fn write_sarif(view: View<'_>, place: Place<'_>, out: &mut dyn io::Write) -> io::Result<()> {
    let mut rules: Vec<Value> = Code::ALL
        .iter()
        .map(|c| {
            rule(
                c.as_str(),
                c.doc().trim(),
                c.severity(),
                &[
                    c.as_str().split('.').next().unwrap_or(""),
                    c.sub_dimension().as_str(),
                ],
            )
        })
        .collect();
    rules.push(rule(
        TRIAL_FAILED,
        "A trial failed without an error finding to say why: a TC below the suite's pass \
         threshold, a broken transcript the engines passed, or a file that does not load.",
        Severity::Error,
        &["trial"],
    ));
    #[derive(serde::Serialize)]
    struct Log<'a> {
        #[serde(rename = "$schema")]
        schema: &'a str,
        runs: [Run<'a>; 1],
        version: &'a str,
    }
    #[derive(serde::Serialize)]
    struct Run<'a> {
        results: Results<'a>,
        tool: Value,
    }
    let log = Log {
        schema: SARIF_SCHEMA,
        runs: [Run {
            results: Results { view, place },
            tool: json!({ "driver": {
                "name": "agent-seer",
                "version": env!("CARGO_PKG_VERSION"),
                "informationUri": env!("CARGO_PKG_REPOSITORY"),
                "rules": rules,
            }}),
        }],
        version: "2.1.0",
    };
    let mut ser =
        serde_json::Serializer::with_formatter(out, serde_json::ser::PrettyFormatter::new());
    serde::Serialize::serialize(&log, &mut ser).map_err(io::Error::from)
}

/// A report's annotations as SARIF results, made as the array is written.
struct Results<'a> {
    view: View<'a>,
    place: Place<'a>,
}

impl serde::Serialize for Results<'_> {
    fn serialize<S: serde::Serializer>(&self, ser: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{Error, SerializeSeq};
        let index = |id: &str| {
            Code::parse(id)
                .and_then(|c| Code::ALL.iter().position(|x| *x == c))
                .unwrap_or(Code::ALL.len())
        };
        let mut seq = ser.serialize_seq(None)?;
        let mut failed = None;
        let read = each_annotation(self.view, self.place, &mut |a| {
            let mut r = json!({
                "ruleId": a.rule,
                "ruleIndex": index(&a.rule),
                "level": level(a.level),
                "message": { "text": format!("{}: {}", a.title, a.message) },
            });
            if let Some(file) = &a.file {
                let mut region = serde_json::Map::new();
                if let Some(l) = a.line {
                    region.insert("startLine".into(), l.into());
                }
                if let Some(c) = a.col {
                    region.insert("startColumn".into(), c.into());
                }
                let mut physical = json!({ "artifactLocation": { "uri": uri(file) } });
                if !region.is_empty() {
                    physical["region"] = Value::Object(region);
                }
                r["locations"] = json!([{ "physicalLocation": physical }]);
            }
            seq.serialize_element(&r).map_err(|e| {
                let msg = e.to_string();
                failed = Some(e);
                io::Error::other(msg)
            })
        });
        if let Some(e) = failed {
            return Err(e);
        }
        read.map_err(S::Error::custom)?;
        seq.end()
    }
}

fn level(s: Severity) -> &'static str {
    match s {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Info => "note",
    }
}

fn rule(id: &str, doc: &str, severity: Severity, tags: &[&str]) -> Value {
    json!({
        "id": id,
        "shortDescription": { "text": doc },
        "fullDescription": { "text": doc },
        "defaultConfiguration": { "level": level(severity) },
        "properties": { "tags": tags },
    })
}

/// A relative path as a URI reference: `/` kept, anything outside RFC 3986's unreserved set
/// percent-encoded (a space in a file name would make the URI invalid).
fn uri(path: &str) -> String {
    let mut o = String::with_capacity(path.len());
    for b in path.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' | b'/' => {
                o.push(b as char)
            }
            _ => {
                let _ = write!(o, "%{b:02X}");
            }
        }
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn properties_escape_what_ends_a_property() {
        assert_eq!(escape_data("50%\r\nnext"), "50%25%0D%0Anext");
        assert_eq!(escape_property("veo::a1, 50%\n"), "veo%3A%3Aa1%2C 50%25%0A");
    }

    #[test]
    fn locations_split_from_the_right() {
        assert_eq!(
            split_location(Some("C:/x/t.yaml:3:7"), "t.yaml"),
            (Some("C:/x/t.yaml".into()), Some(3), Some(7))
        );
        assert_eq!(
            split_location(None, "t.yaml"),
            (Some("t.yaml".into()), None, None)
        );
        assert_eq!(
            place_in("x failed\n  --> harnesses/a.yaml:3:7\n"),
            (Some("harnesses/a.yaml".into()), Some(3), Some(7))
        );
    }

    #[test]
    fn uris_encode_spaces() {
        assert_eq!(
            uri("transcripts/my run/a.yaml"),
            "transcripts/my%20run/a.yaml"
        );
    }
}
