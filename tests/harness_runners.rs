//! The dogfood harness (`tests/agents.rs`) under both runners users have: `cargo test` and
//! `cargo nextest run` (one process per trial, `--exact` fast path, `--partition slice:m/n`).

use std::collections::BTreeSet;
use std::process::{Command, Output};

fn cargo(args: &[&str], envs: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(env!("CARGO"));
    cmd.args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("NO_COLOR", "1")
        .env("CARGO_TERM_COLOR", "never");
    for (k, v) in envs {
        cmd.env(k, v);
    }
    cmd.output().expect("cargo runs")
}

/// Whether cargo-nextest is installed. Without it the nextest tests are skipped, saying why
/// and how to install it (`cargo install cargo-nextest --locked`); on CI (`CI` set) its
/// absence fails them, since `.ci/run` installs it.
fn has_nextest(test: &str) -> bool {
    let ok = Command::new(env!("CARGO"))
        .args(["nextest", "--version"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        assert!(
            std::env::var_os("CI").is_none(),
            "cargo-nextest is not installed; .ci/run installs it"
        );
        eprintln!(
            "skipped {test}: cargo-nextest is not installed (cargo install cargo-nextest --locked)"
        );
    }
    ok
}

/// `agent-seer report --format json` on a run directory.
fn recorded(dir: &std::path::Path) -> serde_json::Value {
    let report = Command::new(env!("CARGO_BIN_EXE_agent-seer"))
        .args(["report", "--format", "json"])
        .arg(dir)
        .output()
        .unwrap();
    assert!(report.status.success(), "{}", text(&report));
    serde_json::from_slice(&report.stdout).unwrap()
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// `cargo test --test agents -- --list`: the trial names, in order.
fn listed() -> Vec<String> {
    let o = cargo(
        &[
            "test", "-q", "--test", "agents", "--", "--list", "--format", "terse",
        ],
        &[],
    );
    assert!(o.status.success(), "{}", text(&o));
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .filter_map(|l| l.strip_suffix(": test"))
        .map(str::to_owned)
        .collect()
}

/// How many shipped transcripts are marked `xfail:`: each a trial reported as expected not to
/// agree yet (under nextest a process that passes), and its judge trial ignored.
fn xfails() -> usize {
    fn walk(dir: &std::path::Path, n: &mut usize) {
        for e in std::fs::read_dir(dir).unwrap() {
            let path = e.unwrap().path();
            if path.is_dir() {
                walk(&path, n);
            } else if path.extension().is_some_and(|x| x == "yaml") {
                let text = std::fs::read_to_string(&path).unwrap();
                *n += usize::from(text.lines().any(|l| l.starts_with("xfail:")));
            }
        }
    }
    let mut n = 0;
    walk(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("transcripts"),
        &mut n,
    );
    n
}

#[test]
fn listing_is_sorted_stable_and_complete() {
    let a = listed();
    let b = listed();
    assert_eq!(a, b, "two listings differ");
    let mut sorted = a.clone();
    sorted.sort();
    assert_eq!(a, sorted);
    for name in [
        "veo::harness",
        "veo::a1-wrong-model-audio",
        "narrative::np3-mux-before-inputs",
        "omni::om0-correct-t2v",
    ] {
        assert!(a.iter().any(|n| n == name), "{name} not listed");
    }
    // `suite::id`, `suite::dir::id` for a transcript in a subdirectory (the recorded runs in
    // `transcripts/time/recorded/`), and `judge::` before either.
    let parts = |n: &str| n.trim_start_matches("judge::").split("::").count();
    assert!(a.iter().all(|n| (2..=3).contains(&parts(n))), "{a:?}");
    assert!(
        a.iter().any(|n| n == "time::recorded::otel-correct"),
        "{a:?}"
    );
}

#[test]
fn cargo_test_runs_and_filters() {
    let run_dir = tempfile::tempdir().unwrap();
    let o = cargo(
        &["test", "--test", "agents", "--", "veo::"],
        &[("AGENT_SEER_REPORT_DIR", run_dir.path().to_str().unwrap())],
    );
    assert!(o.status.success(), "{}", text(&o));
    let out = text(&o);
    assert!(
        out.contains("veo::a0-correct")
            && out.contains("veo::discrimination")
            && !out.contains("lyria::"),
        "{out}"
    );
    // The filtered trials, and only they, left records.
    let names: Vec<String> = recorded(run_dir.path())["trials"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(names.len(), 13, "{names:?}");
    assert!(names.iter().all(|n| n.starts_with("veo::")), "{names:?}");
    assert!(names.contains(&"veo::a1-wrong-model-audio".to_owned()));
}

/// A throwaway project: `files` (relative path, contents) written into a temp dir.
fn throwaway(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (p, text) in files {
        let p = dir.path().join(p);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    dir
}

/// A throwaway project run through the real `agents` binary (`AGENT_SEER_ROOT`): an xfail
/// that still fails is reported as ignored with its reason; one that passes fails the run.
#[test]
fn xfail_is_reported_and_strict() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let write = |p: &str, text: &str| {
        let p = root.join(p);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    };
    write(
        "harnesses/tiny.tools.json",
        r#"[{"name": "paint", "inputSchema": {"type": "object", "properties": {"prompt": {"type": "string"}}, "required": ["prompt"]}}]"#,
    );
    write(
        "harnesses/tiny.yaml",
        "scenarios:\n  - id: cat\n    turns:\n      - prompt: paint a cat\n        workflow:\n          - {tool: paint, arguments: {prompt: a cat}, match: {prompt: semantic}}\n",
    );
    write(
        "transcripts/tiny/still-broken.yaml",
        "scenario: cat\nxfail: waiting for a fix\ncalls:\n  - {tool: paint, arguments: {}}\n",
    );
    let root_str = root.to_str().unwrap();
    let o = cargo(
        &["test", "--test", "agents"],
        &[("AGENT_SEER_ROOT", root_str)],
    );
    assert!(o.status.success(), "{}", text(&o));
    let line = text(&o)
        .lines()
        .find(|l| l.starts_with("test tiny::still-broken"))
        .map(str::to_owned)
        .unwrap_or_default();
    assert!(
        line.ends_with("ignored (xfail: waiting for a fix)"),
        "{}",
        text(&o)
    );
    write(
        "transcripts/tiny/fixed.yaml",
        "scenario: cat\nxfail: waiting for a fix\ncalls:\n  - {tool: paint, arguments: {prompt: a cat}}\n",
    );
    let o = cargo(
        &["test", "--test", "agents"],
        &[("AGENT_SEER_ROOT", root_str)],
    );
    assert!(
        !o.status.success(),
        "an XPASS must fail the run: {}",
        text(&o)
    );
    assert!(text(&o).contains("XPASS (strict)"), "{}", text(&o));
}

#[test]
fn nextest_runs_every_trial_through_the_exact_fast_path() {
    if !has_nextest("nextest_runs_every_trial_through_the_exact_fast_path") {
        return;
    }
    // Each trial is its own process started with `--exact NAME`; a full scan there fails.
    let run_dir = tempfile::tempdir().unwrap();
    let o = cargo(
        &[
            "nextest",
            "run",
            "--test",
            "agents",
            "--no-fail-fast",
            "--color",
            "never",
        ],
        &[
            ("AGENT_SEER_FULL_SCAN_FORBIDDEN", "1"),
            ("AGENT_SEER_REPORT_DIR", run_dir.path().to_str().unwrap()),
        ],
    );
    let out = text(&o);
    assert!(o.status.success(), "{out}");
    let n = listed()
        .iter()
        .filter(|n| !n.starts_with("judge::"))
        .count();
    assert!(
        out.contains(&format!("{n} tests run: {n} passed"))
            || out.contains(&format!("tests run: {n} passed")),
        "{out}"
    );
    // Every trial process wrote its record and closed its file; `agent-seer report`
    // assembles the run.
    let names: Vec<String> = std::fs::read_dir(run_dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    let records: Vec<&String> = names.iter().filter(|f| f.ends_with(".jsonl")).collect();
    assert_eq!(records.len(), n, "one record file per trial process");
    for r in records {
        let text = std::fs::read_to_string(run_dir.path().join(r)).unwrap();
        let last = text.trim_end().rsplit('\n').next().unwrap_or_default();
        assert!(
            last.starts_with("{\"end\":"),
            "{r} has no end marker: {text}"
        );
    }
    let v = recorded(run_dir.path());
    let x = xfails();
    assert!(x > 0, "the shipped suites hold xfail transcripts");
    assert_eq!(v["totals"]["trials"], n);
    assert_eq!(v["totals"]["passed"], n - x);
    assert_eq!(v["totals"]["xfailed"], x);
    assert_eq!(v["suites"]["veo"]["broken_caught"], 9);
}

#[test]
fn nextest_slices_partition_the_suite() {
    if !has_nextest("nextest_slices_partition_the_suite") {
        return;
    }
    let mut seen = BTreeSet::new();
    let mut total = 0;
    for slice in ["slice:1/2", "slice:2/2"] {
        let o = cargo(
            &[
                "nextest",
                "list",
                "--test",
                "agents",
                "--partition",
                slice,
                "--message-format",
                "oneline",
                "--color",
                "never",
            ],
            &[],
        );
        assert!(o.status.success(), "{}", text(&o));
        for line in String::from_utf8_lossy(&o.stdout).lines() {
            let name = line
                .split_whitespace()
                .last()
                .unwrap_or_default()
                .to_owned();
            total += 1;
            assert!(seen.insert(name.clone()), "{name} in two slices");
        }
    }
    // Ignored trials (the judge's, with no judge configured) are partitioned separately.
    let all: BTreeSet<String> = listed()
        .into_iter()
        .filter(|n| !n.starts_with("judge::"))
        .collect();
    // nextest partitions non-ignored tests; our xfail trials are run-time ignores, so all count.
    assert_eq!(seen, all, "the slices together are the whole suite");
    assert_eq!(total, all.len());
}

#[test]
fn exact_name_of_a_missing_file_runs_nothing() {
    let o = cargo(
        &[
            "test",
            "-q",
            "--test",
            "agents",
            "--",
            "--exact",
            "veo::no-such-transcript",
        ],
        &[("AGENT_SEER_FULL_SCAN_FORBIDDEN", "1")],
    );
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("0 passed; 0 failed"), "{}", text(&o));
}

/// The judge trials replay offline from the committed cache (`.agent-seer/llm-cache`, written
/// by `agent-seer judge --write-fixtures` and marked hand-written in each file).
#[test]
fn judge_trials_replay_offline() {
    let o = cargo(
        &["test", "--test", "agents", "--", "judge::"],
        &[
            ("AGENT_SEER_JUDGE", "openai:fixture-judge"),
            ("AGENT_SEER_LLM", "replay"),
            ("OPENAI_API_KEY", ""),
        ],
    );
    let out = text(&o);
    assert!(o.status.success(), "{out}");
    let n = listed().iter().filter(|n| n.starts_with("judge::")).count();
    // An xfail transcript's judge trial is ignored with it.
    let x = xfails();
    assert!(
        out.contains(&format!(
            "test result: ok. {} passed; 0 failed; {x} ignored",
            n - x
        )),
        "{out}"
    );
}

#[test]
fn judge_trials_are_ignored_without_a_judge() {
    let o = cargo(
        &[
            "test",
            "-q",
            "--test",
            "agents",
            "--",
            "judge::veo::",
            "--list",
            "--ignored",
        ],
        &[],
    );
    assert!(o.status.success(), "{}", text(&o));
    let ignored: Vec<String> = String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(str::to_owned)
        .collect();
    assert_eq!(ignored.len(), 11, "{ignored:?}");
    assert!(ignored.iter().all(|l| l.starts_with("judge::veo::")));
}

/// `AGENT_SEER_BLESS=1 cargo test --test agents`: the failing trial shows its diff, rewrites
/// the oracle and passes; the next plain run passes too.
#[test]
fn bless_round_trips_under_cargo_test() {
    let dir = throwaway(&[
        (
            "harnesses/tiny.tools.json",
            r#"[{"name": "paint", "inputSchema": {"type": "object", "properties": {"prompt": {"type": "string"}, "size": {"type": "integer"}}, "required": ["prompt"]}}]"#,
        ),
        (
            "harnesses/tiny.yaml",
            "# kept\nthresholds: {pass: 0.99, min_gap: 0.3}\nscenarios:\n  - id: cat\n    turns:\n      - prompt: paint a cat\n        workflow:\n          - tool: paint\n            arguments: {prompt: a cat, size: 512}\n",
        ),
        (
            "transcripts/tiny/bigger.yaml",
            "scenario: cat\ncalls:\n  - {tool: paint, arguments: {prompt: a cat, size: 1024}}\n",
        ),
    ]);
    let root = dir.path();
    let root_str = root.to_str().unwrap();
    let plain = cargo(
        &["test", "--test", "agents"],
        &[("AGENT_SEER_ROOT", root_str)],
    );
    assert!(!plain.status.success(), "the trial fails before blessing");
    let blessed = cargo(
        &["test", "--test", "agents"],
        &[("AGENT_SEER_ROOT", root_str), ("AGENT_SEER_BLESS", "1")],
    );
    let out = text(&blessed);
    assert!(blessed.status.success(), "{out}");
    assert!(
        out.contains("blessed tiny::bigger: oracle of scenario `cat`"),
        "{out}"
    );
    assert!(out.contains("+              size: 1024"), "{out}");
    let harness = std::fs::read_to_string(root.join("harnesses/tiny.yaml")).unwrap();
    assert!(harness.starts_with("# kept\n"), "{harness}");
    let after = cargo(
        &["test", "--test", "agents"],
        &[("AGENT_SEER_ROOT", root_str)],
    );
    assert!(after.status.success(), "{}", text(&after));
}

const TINY_TOOLS: &str = r#"[{"name": "paint", "inputSchema": {"type": "object", "properties": {"prompt": {"type": "string"}}, "required": ["prompt"]}}]"#;
const TINY_HARNESS: &str = "scenarios:\n  - id: cat\n    turns:\n      - prompt: paint a cat\n        workflow:\n          - {tool: paint, arguments: {prompt: a cat}}\n";
const TINY_OK: &str = "scenario: cat\ncalls:\n  - {tool: paint, arguments: {prompt: a cat}}\n";

/// `cargo test --test agents [-- extra…]` on a throwaway project.
fn agents_in(dir: &std::path::Path, extra: &[&str]) -> Output {
    let mut args = vec!["test", "-q", "--test", "agents", "--"];
    args.extend_from_slice(extra);
    cargo(
        &args,
        &[
            ("AGENT_SEER_ROOT", dir.to_str().unwrap()),
            ("AGENT_SEER_REPORT", "off"),
        ],
    )
}

/// Names that would give a trial two readings, or two files one trial name: before, each
/// was silently misread (a suite `judge` listed trials `--exact` could not find, a suite
/// `run` was recorded as a live run, `harness.yaml` was skipped by `check`, `a0.yaml` beside
/// `a0.yml` made two trials of one name). Now the listing holds one failing trial that names
/// every offending file.
#[test]
fn names_that_cannot_be_trial_names_fail_discovery() {
    type Files<'a> = &'a [(&'a str, &'a str)];
    let cases: &[(&str, Files, &str)] = &[
        (
            "a suite named judge",
            &[
                ("harnesses/judge.yaml", TINY_HARNESS),
                ("transcripts/judge/ly0-correct.yaml", TINY_OK),
            ],
            "harnesses/judge.yaml: suite name: `judge` is reserved",
        ),
        (
            "a suite named run",
            &[
                ("harnesses/run.yaml", TINY_HARNESS),
                ("transcripts/run/t.yaml", TINY_OK),
            ],
            "harnesses/run.yaml: suite name: `run` is reserved",
        ),
        (
            "a transcript named harness",
            &[("transcripts/tiny/harness.yaml", TINY_OK)],
            "transcripts/tiny/harness.yaml: transcript name: `harness` is reserved",
        ),
        (
            "a0.yaml beside a0.yml",
            &[
                ("transcripts/tiny/a0.yaml", TINY_OK),
                ("transcripts/tiny/a0.yml", TINY_OK),
            ],
            "two transcript files for `a0`",
        ),
        (
            "sub/x.yaml beside sub::x.yaml",
            &[
                ("transcripts/tiny/sub/x.yaml", TINY_OK),
                ("transcripts/tiny/sub::x.yaml", TINY_OK),
            ],
            "sub::x.yaml: transcript name: a `:` in a name (trial names join their parts with `::`)",
        ),
        (
            "a suite ending in a colon",
            &[
                ("harnesses/veo:.yaml", TINY_HARNESS),
                ("transcripts/veo:/x.yaml", TINY_OK),
            ],
            "harnesses/veo:.yaml: suite name: a `:` in a name",
        ),
    ];
    for (what, files, message) in cases {
        let all_files = [
            ("harnesses/tiny.tools.json", TINY_TOOLS),
            ("harnesses/tiny.yaml", TINY_HARNESS),
        ];
        let all: Vec<(&str, &str)> = all_files.iter().chain(files.iter()).copied().collect();
        let dir = throwaway(&all);
        let listed = agents_in(dir.path(), &["--list", "--format", "terse"]);
        assert_eq!(
            String::from_utf8_lossy(&listed.stdout).trim(),
            "agent-seer::discovery: test",
            "{what}: {}",
            text(&listed)
        );
        let o = agents_in(dir.path(), &[]);
        assert!(!o.status.success(), "{what}: {}", text(&o));
        assert!(text(&o).contains(message), "{what}: {}", text(&o));
    }
    // `--exact` of a name with two files fails, rather than running 0 tests.
    let dir = throwaway(&[
        ("harnesses/tiny.tools.json", TINY_TOOLS),
        ("harnesses/tiny.yaml", TINY_HARNESS),
        ("transcripts/tiny/a0.yaml", TINY_OK),
        ("transcripts/tiny/a0.yml", TINY_OK),
    ]);
    let o = agents_in(dir.path(), &["--exact", "tiny::a0"]);
    assert!(!o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains("two files for one trial name"),
        "{}",
        text(&o)
    );
    // So does `--exact` of any name in a project discovery refuses.
    let dir = throwaway(&[
        ("harnesses/tiny.tools.json", TINY_TOOLS),
        ("harnesses/tiny.yaml", TINY_HARNESS),
        ("transcripts/tiny/discrimination.yaml", TINY_OK),
    ]);
    let o = agents_in(dir.path(), &["--exact", "tiny::discrimination"]);
    assert!(!o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("is reserved"), "{}", text(&o));
}

/// A moved or misspelt directory must not turn the gate off: before, a root without suites
/// ran 0 tests and exited 0.
#[test]
fn a_project_without_suites_fails() {
    let dir = tempfile::tempdir().unwrap();
    let o = agents_in(dir.path(), &[]);
    assert!(!o.status.success(), "{}", text(&o));
    let out = text(&o);
    assert!(out.contains("agent-seer::discovery"), "{out}");
    assert!(out.contains("no suite found"), "{out}");
    assert!(out.contains("harnesses does not exist"), "{out}");
}

/// `--include-ignored` without a judge: the judge trials end as ignored, saying why, and
/// the run passes (before, each failed with "AGENT_SEER_JUDGE is not set").
#[test]
fn include_ignored_without_a_judge_skips_judge_trials() {
    let dir = throwaway(&[
        ("harnesses/tiny.tools.json", TINY_TOOLS),
        ("harnesses/tiny.yaml", TINY_HARNESS),
        ("transcripts/tiny/ok.yaml", TINY_OK),
    ]);
    let mut cmd = Command::new(env!("CARGO"));
    cmd.args(["test", "-q", "--test", "agents", "--", "--include-ignored"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("AGENT_SEER_ROOT", dir.path())
        .env("AGENT_SEER_REPORT", "off")
        .env_remove("AGENT_SEER_JUDGE");
    let o = cmd.output().unwrap();
    let out = text(&o);
    assert!(o.status.success(), "{out}");
    assert!(
        out.contains("test judge::tiny::ok      ... ignored (AGENT_SEER_JUDGE is not set)"),
        "{out}"
    );
}

/// Trials ignored at discovery say why: libtest prints a bare `ignored`, so the harness names
/// the reason on stderr once per reason (a lean build's `judge::` trials looked broken, issue
/// 34). Listing stays clean for nextest.
#[test]
fn ignored_trials_say_why_on_stderr() {
    let o = Command::new(env!("CARGO"))
        .args(["test", "-q", "--test", "agents", "--", "judge::veo::"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env_remove("AGENT_SEER_JUDGE")
        .env("AGENT_SEER_REPORT", "off")
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    let note = err
        .lines()
        .find(|l| l.starts_with("agent-seer: judge::veo::"))
        .unwrap_or_else(|| panic!("no reason given:\n{err}"));
    assert!(
        note.ends_with("ignored: AGENT_SEER_JUDGE is not set"),
        "{note}"
    );
    let listed = Command::new(env!("CARGO"))
        .args(["test", "-q", "--test", "agents", "--", "--list"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env_remove("AGENT_SEER_JUDGE")
        .output()
        .unwrap();
    assert!(!String::from_utf8_lossy(&listed.stderr).contains("agent-seer: "));
}

/// The README's quickstart under `cargo test`, as a user's project runs it: the broken run's
/// trial fails with the block the README quotes, the others pass.
#[test]
fn the_readme_quickstart_fails_under_cargo_test_as_shown() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/quickstart");
    let o = cargo(
        &["test", "--test", "agents"],
        &[("AGENT_SEER_ROOT", root), ("AGENT_SEER_REPORT", "off")],
    );
    assert!(!o.status.success(), "{}", text(&o));
    // Paths are shown relative to the working directory, the repository here; in a user's
    // project, whose root is its own manifest directory, they start at `transcripts/`.
    let out = text(&o).replace("examples/quickstart/", "");
    for trial in [
        "notes::correct ... ok",
        "notes::harness ... ok",
        "notes::broken ... FAILED",
    ] {
        assert!(
            out.lines().any(|l| l.starts_with("test ")
                && l.split_whitespace()
                    .collect::<Vec<_>>()
                    .join(" ")
                    .ends_with(trial)),
            "no `{trial}` in:\n{out}"
        );
    }
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let start = readme
        .find("---- notes::broken ----")
        .expect("the README's failure");
    for line in readme[start..]
        .lines()
        .take_while(|l| !l.starts_with("```"))
    {
        assert!(
            out.contains(line),
            "README line not in `cargo test`'s output:\n{line}\n---\n{out}"
        );
    }
}
