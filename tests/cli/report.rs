//! Run reports: the four formats for a failing project and for the shipped suites, the JSON
//! against its published schema, JUnit through a parser, and `agent-seer report` rebuilding a
//! saved run.

use std::path::Path;

use super::*;

/// A project with a correct transcript, a caught broken one, and one that fails its label.
pub fn mixed() -> tempfile::TempDir {
    project(&[
        ("harnesses/tiny.tools.json", TINY_TOOLS),
        ("capabilities/tiny.yaml", TINY_CAPS),
        ("harnesses/tiny.yaml", TINY_HARNESS),
        (
            "transcripts/tiny/t0-correct.yaml",
            "scenario: square\nexpect: pass\ncalls:\n  - tool: paint\n    arguments: {prompt: a cat, model: m1, ratio: \"1:1\"}\n",
        ),
        (
            "transcripts/tiny/t1-wide.yaml",
            "scenario: square\ncalls:\n  - tool: paint\n    arguments:\n      prompt: a cat\n      model: m1\n      ratio: \"16:9\"\n",
        ),
        (
            "transcripts/tiny/t2-broken.yaml",
            "scenario: square\nexpect: fail\nfaults: [cap.unsupported_value]\ncalls:\n  - tool: paint\n    arguments: {prompt: a cat, model: m1, ratio: \"4:3\"}\n",
        ),
    ])
}

/// The report's JSON Schema, compiled.
fn report_schema() -> jsonschema::Validator {
    let text = std::fs::read_to_string(repo().join("schemas/report.schema.json")).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    jsonschema::draft202012::options().build(&v).unwrap()
}

fn assert_valid_report(json: &str) -> serde_json::Value {
    let v: serde_json::Value = serde_json::from_str(json).expect("report is JSON");
    let errors: Vec<String> = report_schema()
        .iter_errors(&v)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "report does not match its schema:\n{}",
        errors.join("\n")
    );
    v
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// Run ids hold the time and the pid.
fn settings() -> insta::Settings {
    let mut s = insta::Settings::clone_current();
    s.add_filter(r"\d{8}T\d{6}Z-\d+", "[run-id]");
    s
}

#[test]
fn a_failing_project_in_every_format() {
    let dir = mixed();
    let out = dir.path().join("out");
    let o = run_in(
        dir.path(),
        &[
            "check",
            "--quiet",
            "--json",
            "out/report.json",
            "--junit",
            "out/junit.xml",
            "--markdown",
            "out/summary.md",
            "--html",
            "out/report.html",
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));

    // JSON: schema-valid, every score and finding there.
    let v = assert_valid_report(&read(&out.join("report.json")));
    assert_eq!(v["passed"], false);
    assert_eq!(v["totals"]["failed"], 1);
    assert_eq!(v["suites"]["tiny"]["broken_caught"], 1);
    let t1 = v["trials"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "tiny::t1-wide")
        .unwrap();
    assert_eq!(t1["status"], "failed");
    assert_eq!(
        t1["transcript"]["findings"][0]["code"],
        "cap.unsupported_value"
    );
    assert_eq!(
        t1["transcript"]["findings"][0]["location"],
        "transcripts/tiny/t1-wide.yaml:7:14"
    );
    assert_eq!(t1["transcript"]["score"]["sub"]["argument_value"], 0.0);
    // The trajectory metrics beside the score: the one call has the wrong ratio, so it matches
    // its step under neither rule; the correct transcript matches under both.
    let traj = &t1["transcript"]["trajectory"];
    assert_eq!(traj["policy"]["any_order_match"], 0.0);
    assert_eq!(traj["literal"]["exact_match"], 0.0);
    assert_eq!(traj["turns"][0]["steps"], 1);
    assert_eq!(traj["turns"][0]["calls"], 1);
    let t0 = v["trials"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "tiny::t0-correct")
        .unwrap();
    assert_eq!(
        t0["transcript"]["trajectory"]["literal"]["exact_match"],
        1.0
    );
    assert_eq!(t0["transcript"]["trajectory"]["policy"]["f1"], 1.0);
    assert!(
        t1["transcript"]["diff"]
            .as_str()
            .unwrap()
            .contains("+     ratio: \"16:9\"")
    );

    // JUnit: parses, one testcase per trial, the finding and the diff in the failure body.
    let xml = read(&out.join("junit.xml"));
    let junit = quick_junit::Report::deserialize_from_str(&xml).expect("JUnit parses");
    assert_eq!(junit.tests, 5, "{xml}");
    assert_eq!(junit.failures, 1, "{xml}");
    let suite = &junit.test_suites[0];
    assert_eq!(suite.name.as_str(), "tiny");
    let failed = suite
        .test_cases
        .iter()
        .find(|c| c.name.as_str() == "tiny::t1-wide")
        .unwrap();
    match &failed.status {
        quick_junit::TestCaseStatus::NonSuccess { description, .. } => {
            let body = description.as_ref().unwrap().as_str();
            assert!(
                body.contains("--> transcripts/tiny/t1-wide.yaml:7:14"),
                "{body}"
            );
            assert!(body.contains("expected (-) vs actual (+) calls"), "{body}");
        }
        other => panic!("not a failure: {other:?}"),
    }

    // Markdown and HTML: what a reviewer reads.
    settings().bind(|| {
        insta::assert_snapshot!("report_failing_markdown", read(&out.join("summary.md")));
        insta::assert_snapshot!("report_failing_html", read(&out.join("report.html")));
    });
    // The quiet terminal output: the failure in full, then the totals.
    settings().bind(|| insta::assert_snapshot!("report_failing_quiet", stdout(&o)));
}

#[test]
fn the_shipped_suites_in_every_format() {
    let dir = tempfile::tempdir().unwrap();
    let p = |name: &str| dir.path().join(name).display().to_string();
    let o = run(
        &[
            "check",
            "--no-save",
            "--format",
            "markdown",
            "--json",
            &p("r.json"),
            "--junit",
            &p("j.xml"),
            "--html",
            &p("r.html"),
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    settings().bind(|| insta::assert_snapshot!("report_shipped_markdown", stdout(&o)));
    let v = assert_valid_report(&read(&dir.path().join("r.json")));
    assert_eq!(v["totals"]["trials"], 256);
    let junit =
        quick_junit::Report::deserialize_from_str(&read(&dir.path().join("j.xml"))).unwrap();
    assert_eq!((junit.tests, junit.failures, junit.errors), (256, 0, 0));
    assert_eq!(junit.test_suites.len(), 12);
    let html = read(&dir.path().join("r.html"));
    assert_eq!(html.matches(r#"data-chart="histogram""#).count(), 12);
    assert_eq!(html.matches(r#"data-chart="discrimination""#).count(), 12);
    assert_eq!(html.matches(r#"data-chart="heatmap""#).count(), 1);
    // 226 transcripts (212 YAML, 14 recorded runs), one dot each; 12 suites × 14 sub-dimensions.
    assert_eq!(html.matches(r#"data-mark="case""#).count(), 226);
    assert_eq!(html.matches(r#"data-mark="cell""#).count(), 12 * 14);
    // Self-contained: nothing to fetch.
    for needle in ["<script", "<link", "src=\"http", "@import", "url("] {
        assert!(!html.contains(needle), "the HTML report contains {needle}");
    }
}

#[test]
fn report_rebuilds_a_saved_run() {
    let dir = mixed();
    let check = run_in(dir.path(), &["check", "--format", "json"], None);
    assert_eq!(check.status.code(), Some(1));
    let rebuilt = run_in(dir.path(), &["report", "--format", "json"], None);
    assert_eq!(rebuilt.status.code(), Some(1), "{}", stderr(&rebuilt));
    assert_eq!(stdout(&check), stdout(&rebuilt));
    // A record that is not one names its file, line and column.
    let latest = read(&dir.path().join("target/agent-seer/latest"));
    let run_dir = dir.path().join("target/agent-seer").join(latest.trim());
    std::fs::write(run_dir.join("zz.json"), "{\"name\": \"x\",\n \"suite\": 7}").unwrap();
    let o = run_in(dir.path(), &["report"], None);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("zz.json:2:"), "{}", stderr(&o));
}

#[test]
fn report_without_a_run_says_how_to_make_one() {
    let dir = tempfile::tempdir().unwrap();
    let o = run_in(dir.path(), &["report"], None);
    assert_eq!(o.status.code(), Some(2));
    insta::assert_snapshot!("report_no_run", stderr(&o));
}

/// A run a killed process left behind: before, `report` on it said `ok` (the records it had
/// all passed). Now each record file without its end marker, or with a cut-off last line,
/// is named and the run does not pass.
#[test]
fn a_run_left_by_a_killed_process_is_incomplete() {
    let dir = project(&[
        ("harnesses/tiny.tools.json", TINY_TOOLS),
        ("capabilities/tiny.yaml", TINY_CAPS),
        ("harnesses/tiny.yaml", TINY_HARNESS),
        (
            "transcripts/tiny/t0-correct.yaml",
            "scenario: square\nexpect: pass\ncalls:\n  - tool: paint\n    arguments: {prompt: a cat, model: m1, ratio: \"1:1\"}\n",
        ),
    ]);
    let check = run_in(dir.path(), &["check", "--quiet"], None);
    assert_eq!(check.status.code(), Some(0), "{}", stdout(&check));
    let latest = read(&dir.path().join("target/agent-seer/latest"));
    let run_dir = dir.path().join("target/agent-seer").join(latest.trim());
    let ok = run_in(dir.path(), &["report", "--quiet"], None);
    assert_eq!(ok.status.code(), Some(0), "{}", stdout(&ok));
    // The process of a second file was killed: no end marker, a torn last line.
    let records: Vec<_> = std::fs::read_dir(&run_dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    let first = std::fs::read_to_string(&records[0]).unwrap();
    let line = first.lines().next().unwrap();
    std::fs::write(
        run_dir.join("records-999999.jsonl"),
        format!("{line}\n{{\"na"),
    )
    .unwrap();
    let o = run_in(dir.path(), &["report", "--quiet"], None);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    assert!(
        stdout(&o).contains("incomplete run: records-999999.jsonl: its last record was cut off"),
        "{}",
        stdout(&o)
    );
    // Whole lines, but the process never finished.
    std::fs::write(run_dir.join("records-999999.jsonl"), format!("{line}\n")).unwrap();
    let o = run_in(dir.path(), &["report", "--format", "json"], None);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    let v = assert_valid_report(&stdout(&o));
    assert_eq!(v["passed"], false);
    assert_eq!(
        v["incomplete"][0],
        "records-999999.jsonl: the process writing it did not finish (killed, or still running)"
    );
}

/// `check` writes each record to its run's file as the trial ends and renders every report
/// from that file, a record at a time (memory bounded whatever the corpus, issue 31); `report`
/// renders the same saved run from its records held in memory. Both say the same, byte for
/// byte, in every format: on the shipped suites (recorded runs, gates, mutation trials) and on
/// a project with a failure.
#[test]
fn check_renders_from_its_run_file_as_report_does_from_memory() {
    let mixed = mixed();
    // The events' time is when each report was made.
    let time = regex::Regex::new(r#"[tT]imeUnixNano":"\d+""#).unwrap();
    for project in [repo(), mixed.path().to_path_buf()] {
        let target = tempfile::tempdir().unwrap();
        let out = tempfile::tempdir().unwrap();
        let run = |verb: &str, format: &str, prefix: &str| {
            let file = |ext: &str| {
                out.path()
                    .join(format!("{prefix}.{ext}"))
                    .display()
                    .to_string()
            };
            let o = std::process::Command::new(env!("CARGO_BIN_EXE_agent-seer"))
                .args([verb, "--verbose", "--format", format])
                .args(["--json", &file("json"), "--junit", &file("xml")])
                .args(["--markdown", &file("md"), "--html", &file("html")])
                .args(["--sarif", &file("sarif"), "--otlp", &file("otlp")])
                .current_dir(&project)
                .env("CARGO_TARGET_DIR", target.path())
                .env_remove("AGENT_SEER_ROOT")
                .env_remove("GITHUB_STEP_SUMMARY")
                .env_remove("GITHUB_WORKSPACE")
                .env("NO_COLOR", "1")
                .output()
                .unwrap();
            assert!(o.status.code().is_some_and(|c| c <= 1), "{}", stderr(&o));
            o
        };
        for format in ["human", "github"] {
            let check = run("check", format, "check");
            let report = run("report", format, "report");
            let what = format!("{} --format {format}", project.display());
            assert_eq!(stdout(&check), stdout(&report), "{what}");
            assert_eq!(check.status.code(), report.status.code(), "{what}");
            for ext in ["json", "xml", "md", "html", "sarif", "otlp"] {
                let read = |p: &str| read(&out.path().join(format!("{p}.{ext}")));
                let (c, r) = (read("check"), read("report"));
                let (c, r) = (time.replace_all(&c, ""), time.replace_all(&r, ""));
                assert!(c == r, "{what}: the .{ext} files differ");
            }
        }
    }
}
