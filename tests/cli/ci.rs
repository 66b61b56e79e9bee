//! The CI recipe (issue 34, item 3): `--format github` annotations read back with the GitHub
//! runner's own parsing rules, SARIF validated against the OASIS SARIF 2.1.0 schema (vendored in
//! `tests/data/sarif/`), and the job summary appended to `$GITHUB_STEP_SUMMARY`.

use std::collections::BTreeMap;

use super::*;

/// A workflow command as the runner reads it: a port of `ActionCommand.TryParseV2` and its
/// unescaping (github.com/actions/runner, `src/Runner.Common/ActionCommand.cs`): the line
/// starts with `::`, the next `::` ends the command and its properties, properties are
/// `,`-separated `key=value` pairs with `%0D %0A %3A %2C %25` unescaped, and the data has
/// `%0D %0A %25` unescaped. `None` for a line that is no command.
fn parse_command(line: &str) -> Option<(String, BTreeMap<String, String>, String)> {
    let line = line.trim_start();
    let rest = line.strip_prefix("::")?;
    let end = rest.find("::")?;
    let (info, data) = (&rest[..end], &rest[end + 2..]);
    let (name, props) = match info.find(' ') {
        Some(i) => (&info[..i], Some(info[i + 1..].trim())),
        None => (info, None),
    };
    let unescape = |s: &str, property: bool| {
        let mut s = s.replace("%0D", "\r").replace("%0A", "\n");
        if property {
            s = s.replace("%3A", ":").replace("%2C", ",");
        }
        s.replace("%25", "%")
    };
    let mut map = BTreeMap::new();
    for p in props.unwrap_or("").split(',').filter(|p| !p.is_empty()) {
        if let Some((k, v)) = p.split_once('=')
            && !k.is_empty()
            && !v.is_empty()
        {
            map.insert(k.to_owned(), unescape(v, true));
        }
    }
    Some((name.to_owned(), map, unescape(data, false)))
}

/// A project whose findings carry what the escaping must survive: a `%`, a `:` and a `,` in
/// the path and the message, and a failure without a finding (a TC below the threshold).
fn awkward() -> tempfile::TempDir {
    let dir = super::report::mixed();
    std::fs::write(
        dir.path().join("transcripts/tiny/t3-50%, odd name.yaml"),
        "scenario: square\nexpect: pass\ncalls:\n  - tool: paint\n    arguments: {prompt: \"100%, a: cat\", model: m1, ratio: \"3:2\", extra: 1}\n",
    )
    .unwrap();
    dir
}

#[test]
fn github_annotations_follow_the_runners_syntax() {
    let dir = awkward();
    let o = run_in(
        dir.path(),
        &["check", "--format", "github", "--json", "report.json"],
        None,
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let out = stdout(&o);
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("report.json")).unwrap())
            .unwrap();

    let commands: Vec<_> = out
        .lines()
        .filter(|l| l.starts_with("::"))
        .map(|l| parse_command(l).unwrap_or_else(|| panic!("not a workflow command: {l}")))
        .collect();
    assert!(!commands.is_empty(), "{out}");
    let allowed = ["file", "line", "endLine", "col", "endColumn", "title"];
    for (name, props, data) in &commands {
        assert!(
            ["error", "warning", "notice"].contains(&name.as_str()),
            "{name}"
        );
        for k in props.keys() {
            assert!(allowed.contains(&k.as_str()), "unknown property {k}");
        }
        for k in ["line", "col"] {
            if let Some(v) = props.get(k) {
                assert!(v.parse::<u32>().is_ok_and(|n| n >= 1), "{k}={v}");
            }
        }
        // Every file named exists, relative to the project (GitHub resolves it from the
        // repository root, where the command ran).
        let file = props.get("file").expect("every annotation names a file");
        assert!(dir.path().join(file).is_file(), "{file}");
        assert!(!data.is_empty());
    }

    // Each finding of a failing, correct transcript is one annotation at its YAML place,
    // its message read back intact.
    let trial = report["trials"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "tiny::t3-50%, odd name")
        .expect("the awkward trial");
    let findings = trial["transcript"]["findings"].as_array().unwrap();
    assert!(!findings.is_empty());
    for f in findings {
        let loc = f["location"].as_str().unwrap();
        let (rest, col) = loc.rsplit_once(':').unwrap();
        let (file, line) = rest.rsplit_once(':').unwrap();
        let hit = commands.iter().find(|(name, p, data)| {
            name == f["severity"].as_str().unwrap()
                && p.get("file").map(String::as_str) == Some(file)
                && p.get("line").map(String::as_str) == Some(line)
                && p.get("col").map(String::as_str) == Some(col)
                && data == f["message"].as_str().unwrap()
        });
        assert!(
            hit.is_some(),
            "no annotation for {f}:\n{out}\n{commands:#?}"
        );
        let title = &hit.unwrap().1["title"];
        assert_eq!(
            title,
            &format!("tiny::t3-50%, odd name {}", f["code"].as_str().unwrap())
        );
    }
    // A caught broken transcript is not annotated; the failing unlabelled one is.
    assert!(!out.contains("title=tiny%3A%3At2-broken"), "{out}");
    assert!(out.contains("title=tiny%3A%3At1-wide"), "{out}");
    // The table follows, as plain log lines.
    assert!(out.contains("result: FAILED."), "{out}");
}

#[test]
fn sarif_is_valid_against_the_sarif_2_1_0_schema() {
    let dir = awkward();
    let o = run_in(
        dir.path(),
        &["check", "--quiet", "--sarif", "out.sarif"],
        None,
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let log: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("out.sarif")).unwrap())
            .unwrap();
    let schema: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(repo().join("tests/data/sarif/sarif-schema-2.1.0.json")).unwrap(),
    )
    .unwrap();
    let validator = jsonschema::options()
        .should_validate_formats(true)
        .build(&schema)
        .expect("the SARIF schema compiles");
    // The validator does reject what the schema forbids (a run's tool needs its driver).
    assert!(!validator.is_valid(&serde_json::json!({"version": "2.1.0", "runs": [{"tool": {}}]})));
    let errors: Vec<String> = validator
        .iter_errors(&log)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{}", errors.join("\n"));

    let run = &log["runs"][0];
    assert_eq!(log["runs"].as_array().unwrap().len(), 1);
    let rules = run["tool"]["driver"]["rules"].as_array().unwrap();
    let ids: Vec<&str> = rules.iter().map(|r| r["id"].as_str().unwrap()).collect();
    assert!(ids.contains(&"lint.unknown_param") && ids.contains(&"trial.failed"));
    let results = run["results"].as_array().unwrap();
    assert!(!results.is_empty());
    for r in results {
        // ruleIndex points at the rule ruleId names; GitHub needs a location for each.
        let i = r["ruleIndex"].as_u64().unwrap() as usize;
        assert_eq!(rules[i]["id"], r["ruleId"]);
        let loc = &r["locations"][0]["physicalLocation"];
        let uri = loc["artifactLocation"]["uri"].as_str().expect("a location");
        assert!(!uri.contains(' ') && !uri.starts_with('/'), "{uri}");
        assert!(["error", "warning", "note"].contains(&r["level"].as_str().unwrap()));
    }
    // The unknown parameter, on its line and column, in the file whose name needs escaping.
    let extra = results
        .iter()
        .find(|r| r["ruleId"] == "lint.unknown_param")
        .expect("the unknown parameter");
    let loc = &extra["locations"][0]["physicalLocation"];
    assert_eq!(
        loc["artifactLocation"]["uri"],
        "transcripts/tiny/t3-50%25%2C%20odd%20name.yaml"
    );
    assert_eq!(loc["region"]["startLine"], 5);
    assert!(loc["region"]["startColumn"].as_u64().unwrap() > 1);
    assert_eq!(extra["level"], "error");
}

#[test]
fn the_job_summary_gets_the_markdown_report_appended() {
    let dir = super::report::mixed();
    let summary = dir.path().join("summary.md");
    std::fs::write(&summary, "earlier step output\n").unwrap();
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_agent-seer"))
        .args(["check", "--quiet"])
        .current_dir(dir.path())
        .env_remove("AGENT_SEER_ROOT")
        .env("GITHUB_STEP_SUMMARY", &summary)
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let text = std::fs::read_to_string(&summary).unwrap();
    assert!(
        text.starts_with("earlier step output\n## agent-seer: ❌ failed"),
        "{text}"
    );
    assert!(text.contains("| **total** |"), "{text}");
    // Without the variable, nothing is written anywhere but stdout.
    let o = run_in(dir.path(), &["check", "--quiet"], None);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(std::fs::read_to_string(&summary).unwrap(), text);
}

/// The documented workflow's report step (`examples/github-actions/agents.yml`), run as written
/// on a saved run: annotations, the job summary, SARIF and HTML (issue 34).
#[test]
fn the_documented_workflows_report_step_works() {
    let workflow =
        std::fs::read_to_string(repo().join("examples/github-actions/agents.yml")).unwrap();
    // The workflow is YAML, with the partitioned suites job and the report job after it.
    let w: serde_json::Value = serde_saphyr::from_str(&workflow).expect("the workflow is YAML");
    let parts = w["jobs"]["suites"]["strategy"]["matrix"]["partition"]
        .as_array()
        .expect("a partition matrix")
        .len();
    let steps = |job: &str| -> Vec<String> {
        w["jobs"][job]["steps"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|s| Some(s["run"].as_str()?.to_owned()))
            .collect()
    };
    assert!(
        steps("suites")
            .iter()
            .any(|r| r.starts_with("cargo nextest run --test agents")
                && r.contains(&format!(
                    "--partition count:${{{{ matrix.partition }}}}/{parts}"
                ))),
        "{:?}",
        steps("suites")
    );
    assert_eq!(w["jobs"]["report"]["needs"], "suites");
    assert_eq!(
        w["jobs"]["report"]["permissions"]["security-events"],
        "write"
    );
    let line = workflow
        .lines()
        .find_map(|l| l.trim().strip_prefix("run: agent-seer report "))
        .expect("the report step");
    let dir = super::report::mixed();
    // The suites job's records, as `check` saves them.
    let o = run_in(dir.path(), &["check", "--quiet"], None);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let runs = dir.path().join("target/agent-seer");
    let run = std::fs::read_dir(&runs)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.is_dir())
        .expect("a saved run");
    let args: Vec<String> = std::iter::once("report".to_owned())
        .chain(line.split_whitespace().map(|w| {
            if w == "target/agent-seer/run" {
                run.to_string_lossy().into_owned()
            } else {
                w.to_owned()
            }
        }))
        .collect();
    let summary = dir.path().join("summary.md");
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_agent-seer"))
        .args(&args)
        .current_dir(dir.path())
        .env("GITHUB_STEP_SUMMARY", &summary)
        .env("GITHUB_WORKSPACE", dir.path())
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{args:?}: {}", stderr(&o));
    assert!(
        stdout(&o).contains("::error file=transcripts/tiny/t1-wide.yaml,line=7,col=14,"),
        "{}",
        stdout(&o)
    );
    assert!(
        std::fs::read_to_string(&summary)
            .unwrap()
            .contains("## agent-seer")
    );
    assert!(dir.path().join("agent-seer.sarif").is_file());
    assert!(dir.path().join("agent-seer.html").is_file());
}
