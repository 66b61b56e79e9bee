//! End-to-end tests of the `agent-seer` binary: one module per verb. Each runs the built
//! binary on the repository's own files or on a throwaway project written into a temp dir,
//! and snapshots what a person would read.

mod adk;
mod audit;
mod bless;
mod check;
mod chromium;
mod ci;
mod diff_spec;
mod docs;
mod faults;
mod format_agreement;
mod hardening;
mod import;
mod ingest;
mod inspect_spec;
mod judge;
mod lint;
mod messages;
mod mutate;
mod readme;
mod report;
mod schema;
mod skill;
mod spec_mutants;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Runs the binary in `dir` with `args`, feeding `stdin`.
pub fn run_in(dir: &Path, args: &[&str], stdin: Option<&str>) -> Output {
    use std::io::Write;
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_agent-seer"));
    cmd.args(args)
        .current_dir(dir)
        .env_remove("AGENT_SEER_ROOT")
        // A test run inside a GitHub Actions step must not write into its job summary.
        .env_remove("GITHUB_STEP_SUMMARY")
        .env_remove("GITHUB_WORKSPACE")
        .env("NO_COLOR", "1");
    cmd.stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = cmd.spawn().expect("the binary starts");
    {
        let mut pipe = child.stdin.take().expect("stdin");
        if let Some(s) = stdin {
            // A program that fails before reading its input (a bad `--spec`) closes the pipe
            // first: that is its answer, not the test's failure.
            match pipe.write_all(s.as_bytes()) {
                Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
                other => other.expect("write stdin"),
            }
        }
    }
    child.wait_with_output().expect("the binary finishes")
}

pub fn run(args: &[&str], stdin: Option<&str>) -> Output {
    run_in(&repo(), args, stdin)
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A project written into a temp dir: `files` are (relative path, contents).
pub fn project(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    for (path, text) in files {
        let p = dir.path().join(path);
        std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        std::fs::write(p, text).expect("write");
    }
    dir
}

/// A one-tool spec used by the throwaway projects.
pub const TINY_TOOLS: &str = r#"{"tools": [{"name": "paint", "inputSchema": {"type": "object",
  "properties": {"prompt": {"type": "string"}, "model": {"type": "string"}, "ratio": {"type": "string"}},
  "required": ["prompt"]}}]}"#;

pub const TINY_CAPS: &str = "server: tiny\ntools:\n  paint: {}\nfamilies:\n  main:\n    tools: [paint]\n    selector: model\n    models:\n      m1:\n        parameters:\n          ratio: [{ one_of: [\"1:1\"], rule: R1 }]\n";

pub const TINY_HARNESS: &str = "tools: [tiny.tools.json]\ncapabilities: [../capabilities/tiny.yaml]\nscenarios:\n  - id: square\n    turns:\n      - prompt: paint a square cat\n        workflow:\n          - tool: paint\n            arguments: {prompt: a cat, model: m1, ratio: \"1:1\"}\n";
