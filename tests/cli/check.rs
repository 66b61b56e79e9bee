use super::*;

#[test]
fn shipped_suites_table() {
    let o = run(&["check"], None);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    insta::assert_snapshot!("check_shipped", stdout(&o));
}

#[test]
fn json_has_every_trial_and_finding() {
    let o = run(&["check", "--format", "json", "transcripts/veo"], None);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["passed"], true);
    assert_eq!(v["suites"]["veo"]["broken"], 9);
    let a1 = v["trials"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "veo::a1-wrong-model-audio")
        .unwrap();
    let f = &a1["transcript"]["findings"][0];
    assert_eq!(f["code"], "cap.unsupported_value");
    assert_eq!(
        f["location"],
        "transcripts/veo/a1-wrong-model-audio.yaml:14:23"
    );
}

#[test]
fn a_path_selects_a_subset() {
    let o = run(
        &[
            "check",
            "transcripts/lyria/ly0-correct.yaml",
            "harnesses/omni.yaml",
        ],
        None,
    );
    let out = stdout(&o);
    assert!(
        out.contains("lyria::ly0-correct") && out.contains("omni::om7-top-p-range"),
        "{out}"
    );
    assert!(
        !out.contains("lyria::ly1") && !out.contains("veo::"),
        "{out}"
    );
}

fn tiny(transcript: &str) -> tempfile::TempDir {
    project(&[
        ("harnesses/tiny.tools.json", TINY_TOOLS),
        ("capabilities/tiny.yaml", TINY_CAPS),
        ("harnesses/tiny.yaml", TINY_HARNESS),
        ("transcripts/tiny/t1.yaml", transcript),
    ])
}

#[test]
fn failing_trial_shows_snippet_and_diff() {
    let dir = tiny(
        "scenario: square\ncalls:\n  - tool: paint\n    arguments:\n      prompt: a cat\n      model: m1\n      ratio: \"16:9\"\n",
    );
    let o = run_in(dir.path(), &["check"], None);
    assert_eq!(o.status.code(), Some(1));
    insta::assert_snapshot!("check_failing_trial", stdout(&o));
}

#[test]
fn xpass_is_a_failure() {
    let dir = tiny(
        "scenario: square\nxfail: the engine cannot see this yet\ncalls:\n  - tool: paint\n    arguments: {prompt: a cat, model: m1, ratio: \"1:1\"}\n",
    );
    let o = run_in(dir.path(), &["check"], None);
    assert_eq!(o.status.code(), Some(1));
    assert!(stdout(&o).contains("XPASS (strict)"), "{}", stdout(&o));
}

#[test]
fn expected_failure_without_the_named_fault_fails() {
    let dir = tiny(
        "scenario: square\nexpect: fail\nfaults: [argument_name]\ncalls:\n  - tool: paint\n    arguments: {prompt: a cat, model: m1, ratio: \"16:9\"}\n",
    );
    let o = run_in(dir.path(), &["check"], None);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stdout(&o).contains("no finding names argument_name"),
        "{}",
        stdout(&o)
    );
}

#[rstest::rstest]
#[case::malformed_yaml(
    "scenario: square\ncalls: [\n",
    "transcripts/tiny/t1.yaml:2:8",
    "unclosed bracket",
    2
)]
#[case::unknown_scenario(
    "scenario: sqaure\ncalls: []\n",
    "transcripts/tiny/t1.yaml:1:11",
    "unknown scenario `sqaure` in harnesses/tiny.yaml (did you mean `square`?)",
    2
)]
#[case::unknown_tool(
    "scenario: square\ncalls:\n  - tool: pain\n",
    "transcripts/tiny/t1.yaml:3:5",
    "unknown tool `pain` (did you mean `paint`?)",
    1
)]
fn bad_transcripts_are_failing_trials_with_locations(
    #[case] text: &str,
    #[case] place: &str,
    #[case] message: &str,
    #[case] code: i32,
) {
    // A file that does not load is bad input (2); one that loads and fails, a failed trial (1).
    let dir = tiny(text);
    let o = run_in(dir.path(), &["check"], None);
    assert_eq!(o.status.code(), Some(code), "{}", stdout(&o));
    let out = stdout(&o);
    assert!(out.contains(place), "{out}");
    assert!(out.contains(message), "{out}");
}

#[test]
fn missing_referenced_file_points_at_the_reference() {
    let dir = project(&[
        ("harnesses/tiny.yaml", TINY_HARNESS),
        ("transcripts/tiny/t1.yaml", "scenario: square\ncalls: []\n"),
    ]);
    let o = run_in(dir.path(), &["check"], None);
    assert_eq!(o.status.code(), Some(2));
    let out = stdout(&o);
    assert!(out.contains("--> harnesses/tiny.yaml:1:9"), "{out}");
    assert!(
        out.contains("harnesses/tiny.tools.json: no such file"),
        "{out}"
    );
}

#[test]
fn transcripts_without_a_harness_fail_loudly() {
    let dir = project(&[("transcripts/orphan/t.yaml", "prompt: hi\ncalls: []\n")]);
    let o = run_in(dir.path(), &["check"], None);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stdout(&o).contains(
            "suite `orphan` has transcripts but no harness (expected harnesses/orphan.yaml)"
        ),
        "{}",
        stdout(&o)
    );
}

#[test]
fn an_empty_project_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let o = run_in(dir.path(), &["check"], None);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("no suite found"), "{}", stderr(&o));
}

#[test]
fn missing_step_points_into_the_harness() {
    let harness = "tools: [tiny.tools.json]\nscenarios:\n  - id: two\n    turns:\n      - prompt: paint a cat, then a dog\n        workflow:\n          - tool: paint\n            arguments: {prompt: a cat}\n          - tool: paint\n            arguments: {prompt: a dog}\n";
    let dir = project(&[
        ("harnesses/tiny.tools.json", TINY_TOOLS),
        ("harnesses/tiny.yaml", harness),
        (
            "transcripts/tiny/t1.yaml",
            "scenario: two\ncalls:\n  - tool: paint\n    arguments: {prompt: a cat}\n",
        ),
    ]);
    let o = run_in(dir.path(), &["check", "transcripts/tiny/t1.yaml"], None);
    assert_eq!(o.status.code(), Some(1));
    insta::assert_snapshot!("check_missing_step", stdout(&o));
}

#[test]
fn colors_only_when_asked_and_never_with_no_color() {
    let colored = |envs: &[(&str, &str)]| {
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_agent-seer"));
        cmd.args(["check", "--no-save", "transcripts/lyria"])
            .current_dir(repo())
            .env_remove("NO_COLOR")
            .env_remove("CLICOLOR_FORCE")
            .envs(envs.iter().copied());
        let o = cmd.output().unwrap();
        assert_eq!(o.status.code(), Some(0));
        String::from_utf8_lossy(&o.stdout).contains('\u{1b}')
    };
    assert!(!colored(&[]), "a pipe gets no color");
    assert!(
        colored(&[("CLICOLOR_FORCE", "1")]),
        "forced color is honoured"
    );
    assert!(
        !colored(&[("CLICOLOR_FORCE", "1"), ("NO_COLOR", "1")]),
        "NO_COLOR wins"
    );
}

#[test]
fn quiet_prints_only_failures_and_totals() {
    let o = run(
        &["check", "--no-save", "--quiet", "transcripts/lyria"],
        None,
    );
    assert_eq!(o.status.code(), Some(0));
    let out = stdout(&o);
    assert!(out.starts_with("suite "), "{out}");
    assert!(!out.contains("PASS"), "{out}");
}

/// A transcript named like a suite trial: before, `check` skipped it without a word.
#[test]
fn a_transcript_named_harness_is_an_input_error() {
    let dir = project(&[
        ("harnesses/tiny.tools.json", TINY_TOOLS),
        ("capabilities/tiny.yaml", TINY_CAPS),
        ("harnesses/tiny.yaml", TINY_HARNESS),
        (
            "transcripts/tiny/harness.yaml",
            "scenario: square\ncalls: []\n",
        ),
    ]);
    let o = run_in(dir.path(), &["check", "--no-save"], None);
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    assert!(
        stderr(&o).contains(
            "transcripts/tiny/harness.yaml: transcript name: `harness` is reserved for the suite's own trial; rename the file"
        ),
        "{}",
        stderr(&o)
    );
}

/// `[package.metadata.agent-seer]` moves the suites; a manifest that is not TOML is an error
/// at its line.
#[test]
fn cargo_metadata_moves_the_suites() {
    let dir = project(&[
        (
            "Cargo.toml",
            "[package]\nname = \"user\"\nversion = \"0.1.0\"\n\n[package.metadata.agent-seer]\nharnesses = \"agents/h\"\ntranscripts = 'agents/t'\n",
        ),
        ("agents/h/tiny.tools.json", TINY_TOOLS),
        ("capabilities/tiny.yaml", TINY_CAPS),
        (
            "agents/h/tiny.yaml",
            &TINY_HARNESS.replace("../capabilities", "../../capabilities"),
        ),
        (
            "agents/t/tiny/t0.yaml",
            "scenario: square\ncalls:\n  - tool: paint\n    arguments: {prompt: a cat, model: m1, ratio: \"1:1\"}\n",
        ),
    ]);
    let o = run_in(dir.path(), &["check", "--no-save"], None);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    assert!(stdout(&o).contains("tiny::t0"), "{}", stdout(&o));
    std::fs::write(
        dir.path().join("Cargo.toml"),
        "[package]\nname = \"user\n[package.metadata.agent-seer]\n",
    )
    .unwrap();
    let o = run_in(dir.path(), &["check", "--no-save"], None);
    assert_eq!(o.status.code(), Some(2));
    insta::assert_snapshot!("check_bad_manifest", stderr(&o));
}

/// A harness may reference only files inside its project: an absolute path, a `..` out of the
/// project and a symlink leading out are each a harness error at the reference, naming the
/// file, and the file is never read (its first line was quoted into reports; issue 18,
/// item 5).
#[cfg(unix)]
#[test]
fn references_outside_the_project_are_refused_unread() {
    let dir = tempfile::tempdir().unwrap();
    let secret = dir.path().join("outside/secret.json");
    std::fs::create_dir_all(secret.parent().unwrap()).unwrap();
    std::fs::write(&secret, "SECRET-FIRST-LINE\n").unwrap();
    let proj = dir.path().join("proj");
    std::fs::create_dir_all(proj.join("harnesses")).unwrap();
    std::fs::create_dir_all(proj.join("capabilities")).unwrap();
    std::fs::write(proj.join("harnesses/tiny.tools.json"), TINY_TOOLS).unwrap();
    std::fs::write(proj.join("capabilities/tiny.yaml"), TINY_CAPS).unwrap();
    std::os::unix::fs::symlink(&secret, proj.join("capabilities/link.yaml")).unwrap();
    std::fs::create_dir_all(proj.join("transcripts/tiny")).unwrap();
    std::fs::write(
        proj.join("transcripts/tiny/t0.yaml"),
        "scenario: square\ncalls:\n  - tool: paint\n    arguments: {prompt: a cat, model: m1, ratio: \"1:1\"}\n",
    )
    .unwrap();
    let mut rendered = Vec::new();
    for (tools, caps) in [
        (secret.to_str().unwrap(), "../capabilities/tiny.yaml"),
        ("../../outside/secret.json", "../capabilities/tiny.yaml"),
        ("tiny.tools.json", "../capabilities/link.yaml"),
    ] {
        std::fs::write(
            proj.join("harnesses/tiny.yaml"),
            TINY_HARNESS
                .replace("[tiny.tools.json]", &format!("[{tools}]"))
                .replace("[../capabilities/tiny.yaml]", &format!("[{caps}]")),
        )
        .unwrap();
        let o = run_in(&proj, &["check", "--no-save"], None);
        let all = format!("{}{}", stdout(&o), stderr(&o));
        assert_eq!(o.status.code(), Some(2), "{all}");
        assert!(!all.contains("SECRET"), "{all}");
        let harness = all
            .split("---- tiny::harness ----\n")
            .nth(1)
            .and_then(|rest| rest.split("\n\n").next())
            .unwrap_or_else(|| panic!("no tiny::harness failure: {all}"));
        rendered.push(harness.replace(dir.path().to_str().unwrap(), "[dir]") + "\n");
    }
    insta::assert_snapshot!(rendered.join("---\n"));
    // Inside the project, `..` is fine: the shipped layout references `../capabilities/`.
    std::fs::write(proj.join("harnesses/tiny.yaml"), TINY_HARNESS).unwrap();
    let o = run_in(&proj, &["check", "--no-save"], None);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
}

/// An effect `agent-seer init` proposed is a guess: the suite's harness trial fails, naming the
/// tool and why it was proposed, until someone deletes the `proposed:`.
#[test]
fn proposed_effects_fail_the_harness_trial_until_reviewed() {
    let caps = TINY_CAPS.replace(
        "  paint: {}\n",
        "  paint:\n    effects: [{ read_only: false, destructive: false, idempotent: false, proposed: \"the name says `paint`\" }]\n",
    );
    let dir = project(&[
        ("harnesses/tiny.tools.json", TINY_TOOLS),
        ("capabilities/tiny.yaml", &caps),
        ("harnesses/tiny.yaml", TINY_HARNESS),
    ]);
    let o = run_in(dir.path(), &["check"], None);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    let out = stdout(&o);
    assert!(out.contains("tiny::harness"), "{out}");
    assert!(
        out.contains(
            "the effects of 1 tool are proposals nobody has reviewed: paint (the name says `paint`)"
        ),
        "{out}"
    );
    let reviewed = caps.replace(", proposed: \"the name says `paint`\"", "");
    std::fs::write(dir.path().join("capabilities/tiny.yaml"), reviewed).unwrap();
    let o = run_in(dir.path(), &["check"], None);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
}

/// `thresholds.mutation` adds a `<suite>::mutation` trial. The shipped SQL suite passes it;
/// the same suite with `semantic` where its regexes were (what a newcomer writes for a SQL
/// parameter) fails it, naming each survivor and the policy that let it through: an UPDATE
/// without its WHERE passes at TC 1.000.
#[test]
fn the_mutation_gate_names_its_survivors() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    for sub in ["harnesses", "capabilities", "transcripts/sqlite"] {
        std::fs::create_dir_all(root.join(sub)).unwrap();
    }
    for f in [
        "harnesses/sqlite.yaml",
        "harnesses/sqlite.tools.json",
        "harnesses/sqlite.server.json",
        "capabilities/mcp-server-sqlite.yaml",
    ] {
        std::fs::copy(repo().join(f), root.join(f)).unwrap();
    }
    for e in std::fs::read_dir(repo().join("transcripts/sqlite")).unwrap() {
        let p = e.unwrap().path();
        if p.is_file() {
            std::fs::copy(
                &p,
                root.join("transcripts/sqlite").join(p.file_name().unwrap()),
            )
            .unwrap();
        }
    }
    let o = run_in(root, &["check", "harnesses/sqlite.yaml"], None);
    assert!(
        stdout(&o).contains("PASS  sqlite::mutation"),
        "{}",
        stdout(&o)
    );
    let harness = root.join("harnesses/sqlite.yaml");
    let text = std::fs::read_to_string(&harness).unwrap();
    let regexes =
        regex::Regex::new(r"query: \{ regex: '(?:[^']|'')*'(?:, not: '(?:[^']|'')*')? \}").unwrap();
    assert!(regexes.find_iter(&text).count() >= 8);
    let semantic = regexes.replace_all(&text, "query: semantic");
    std::fs::write(&harness, semantic.replace("mutation: 0.9", "mutation: 1.0")).unwrap();
    let o = run_in(root, &["check", "harnesses/sqlite.yaml"], None);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(out.contains("FAIL  sqlite::mutation"), "{out}");
    let failure = out.split("---- sqlite::mutation ----").nth(1).unwrap();
    let failure = failure.split("\n---- ").next().unwrap();
    insta::assert_snapshot!(failure.trim(), @r#"
    mutation score 0.987 (156/158 killed) is below thresholds.mutation 1; the survivors:
      s08-return-correct [sql_drop_where] call 3 (`write_query`): `query` without its WHERE: "UPDATE loans SET returned_on = '2026-06-01'"
        why: `semantic` on `/query` accepts it: the statement is not compared (`sql` would compare it) (TC 1.000)
      s09-return-guarded-update [sql_drop_where] call 2 (`write_query`): `query` without its WHERE: "update loans set returned_on = '2026-06-01'"
        why: `semantic` on `/query` accepts it: the statement is not compared (`sql` would compare it) (TC 1.000)
    (`agent-seer mutate --write DIR` writes them out for review)
    "#);
}

/// The mutation gate grades a run whose calls it has mutated before once (its mutants are the
/// earlier run's, renamed), and takes from each transcript's trial what it is as a source
/// rather than reading it again (issue 31: a corpus of 30,000 copies). Its count and its
/// survivors stay those of `mutate`, which mutates every run afresh: here on the SQL suite
/// with its regexes made `semantic` and a copy of every transcript, named to sort after the
/// gates (`check` runs a suite's gates after its transcripts whatever their names).
#[test]
fn the_mutation_gate_grades_repeated_runs_as_mutate_does() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    for sub in ["harnesses", "capabilities", "transcripts/sqlite"] {
        std::fs::create_dir_all(root.join(sub)).unwrap();
    }
    for f in [
        "harnesses/sqlite.tools.json",
        "harnesses/sqlite.server.json",
        "capabilities/mcp-server-sqlite.yaml",
    ] {
        std::fs::copy(repo().join(f), root.join(f)).unwrap();
    }
    let text = std::fs::read_to_string(repo().join("harnesses/sqlite.yaml")).unwrap();
    let regexes = regex::Regex::new(r"query: \{ regex: '(?:[^']|'')*' \}").unwrap();
    let semantic = regexes.replace_all(&text, "query: semantic");
    std::fs::write(
        root.join("harnesses/sqlite.yaml"),
        semantic.replace("mutation: 0.9", "mutation: 1.0"),
    )
    .unwrap();
    for e in std::fs::read_dir(repo().join("transcripts/sqlite")).unwrap() {
        let p = e.unwrap().path();
        if p.is_file() {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            for copy in [name.clone(), format!("zz-{name}")] {
                std::fs::copy(&p, root.join("transcripts/sqlite").join(copy)).unwrap();
            }
        }
    }
    let o = run_in(root, &["check", "--no-save"], None);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(1), "{out}");
    let failure = out.split("---- sqlite::mutation ----").nth(1).unwrap();
    let failure = failure.split("\n---- ").next().unwrap().trim();
    let m = run_in(root, &["mutate", "--format", "json"], None);
    let v: serde_json::Value = serde_json::from_str(&stdout(&m)).unwrap();
    let outcomes = v[0]["outcomes"].as_array().unwrap();
    let killed = outcomes.iter().filter(|o| o["killed"] == true).count();
    let mut want = format!(
        "mutation score {:.3} ({killed}/{} killed) is below thresholds.mutation 1; the survivors:\n",
        killed as f64 / outcomes.len() as f64,
        outcomes.len()
    );
    for o in outcomes.iter().filter(|o| o["killed"] == false) {
        want += &format!(
            "  {} [{}] {}\n    why: {}\n",
            o["source"].as_str().unwrap(),
            o["operator"].as_str().unwrap(),
            o["what"].as_str().unwrap(),
            o["why"].as_str().unwrap()
        );
    }
    want += "(`agent-seer mutate --write DIR` writes them out for review)";
    assert_eq!(failure, want);
    // The copies made mutants too: twice the survivors of the suite alone.
    assert_eq!(failure.matches("    why: ").count(), 4, "{failure}");
}

/// A harness whose `tools:` file is missing: exit 2, the quoted error once (in the harness
/// trial), each other trial of the suite (three transcripts, the gate) a one-line pointer to it
/// (issue 34).
#[test]
fn a_harness_that_does_not_load_exits_2_and_quotes_its_error_once() {
    let dir = project(&[
        ("harnesses/tiny.yaml", TINY_HARNESS),
        ("transcripts/tiny/t1.yaml", "scenario: square\ncalls: []\n"),
        ("transcripts/tiny/t2.yaml", "scenario: square\ncalls: []\n"),
        (
            "transcripts/tiny/t3.yaml",
            "scenario: square\nexpect: fail\ncalls: []\n",
        ),
    ]);
    let o = run_in(dir.path(), &["check", "--no-save"], None);
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    let out = stdout(&o);
    assert_eq!(
        out.matches("--> harnesses/tiny.yaml:1:9").count(),
        1,
        "{out}"
    );
    assert_eq!(
        out.matches("not run: the suite's harness does not load")
            .count(),
        4,
        "{out}"
    );
    // `report` on the saved run says the same, with the same code.
    let o = run_in(dir.path(), &["check", "--quiet"], None);
    assert_eq!(o.status.code(), Some(2));
    let o = run_in(dir.path(), &["report", "--quiet"], None);
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
}

/// `check` from a folder inside the project walks up to the directory with `harnesses/`, as
/// cargo finds its manifest (issue 34); paths in the report stay relative to where it ran.
#[test]
fn check_from_a_subfolder_finds_the_project_root() {
    let dir = super::report::mixed();
    let sub = dir.path().join("transcripts/tiny");
    let o = run_in(&sub, &["check", "--no-save"], None);
    assert_eq!(o.status.code(), Some(1), "{}{}", stdout(&o), stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("tiny::t0-correct"), "{out}");
    assert!(
        out.contains("--> ../../transcripts/tiny/t1-wide.yaml:"),
        "{out}"
    );
    // Annotations name the file from the repository root (GitHub's workspace, the project
    // here), not `../../`.
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_agent-seer"))
        .args(["check", "--no-save", "--format", "github"])
        .current_dir(&sub)
        .env_remove("AGENT_SEER_ROOT")
        .env_remove("GITHUB_STEP_SUMMARY")
        .env("GITHUB_WORKSPACE", dir.path())
        .output()
        .unwrap();
    assert!(
        stdout(&o).contains("::error file=transcripts/tiny/t1-wide.yaml,line=7,col=14,"),
        "{}",
        stdout(&o)
    );
    // A path given from there selects as it reads.
    let o = run_in(&sub, &["check", "--no-save", "t0-correct.yaml"], None);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    assert!(!stdout(&o).contains("t1-wide"), "{}", stdout(&o));
}

/// An unlabelled transcript (a recorded run dropped in) is graded, but counted apart from
/// the transcripts labelled correct (issue 34).
#[test]
fn unlabelled_transcripts_are_not_counted_as_correct() {
    let dir = super::report::mixed();
    let o = run_in(dir.path(), &["check", "--no-save", "--quiet"], None);
    let out = stdout(&o);
    let header = out.lines().find(|l| l.starts_with("suite ")).unwrap();
    assert!(
        header.ends_with("broken caught  unlabelled passed"),
        "{out}"
    );
    let tiny = out.lines().find(|l| l.starts_with("tiny ")).unwrap();
    let cells: Vec<&str> = tiny.split_whitespace().collect();
    // correct passed 1/1 (t0), broken caught 1/1 (t2), unlabelled passed 0/1 (t1-wide).
    assert_eq!(&cells[5..], ["1/1", "1/1", "0/1"], "{out}");
    let o = run_in(
        dir.path(),
        &["check", "--no-save", "--format", "json"],
        None,
    );
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["totals"]["correct"], 1);
    assert_eq!(v["totals"]["unlabelled"], 1);
    // Counts of 0 are left out of the JSON, as the schema says.
    assert_eq!(v["totals"].get("unlabelled_passed"), None);
}
