//! The README's and the book's commands run: every `$ agent-seer …` line of a `console` block
//! (README.md, then `docs/src/` in SUMMARY order) is executed from the repository root and
//! must not be a usage or input error (exit 2). A `sh` block is shown, not run: commands that
//! need a server, a provider or a file the reader makes go there.

use super::*;

/// A README command: its environment assignments and its arguments.
type Command = (Vec<(String, String)>, Vec<String>);

/// Every `$ [VAR=value …] agent-seer …` line in a console block of `doc` (relative to the
/// repository root).
pub fn commands_in(doc: &str) -> Vec<Command> {
    let readme = std::fs::read_to_string(repo().join(doc)).unwrap();
    let mut out = Vec::new();
    let mut in_console = false;
    for line in readme.lines() {
        if line.starts_with("```") {
            in_console = line == "```console";
            continue;
        }
        let Some(cmd) = line.strip_prefix("$ ").filter(|_| in_console) else {
            continue;
        };
        let words: Vec<&str> = cmd.split_whitespace().collect();
        let Some(at) = words.iter().position(|w| *w == "agent-seer") else {
            continue;
        };
        if !words[..at].iter().all(|w| w.contains('=')) {
            continue;
        }
        let env = words[..at]
            .iter()
            .filter_map(|w| w.split_once('='))
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .collect();
        out.push((
            env,
            words[at + 1..].iter().map(|w| (*w).to_owned()).collect(),
        ));
    }
    out
}

#[test]
fn readme_commands_work() {
    let cmds: Vec<Command> = super::docs::documented_files()
        .iter()
        .flat_map(|doc| commands_in(doc))
        .collect();
    assert!(cmds.len() >= 20, "found {cmds:?}");
    run_documented(cmds);
}

/// Runs documented commands from the repository root: none may be a usage or input error
/// (exit 2), and each must print something.
pub fn run_documented(cmds: Vec<Command>) {
    for (env, args) in cmds {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_agent-seer"));
        // The README assumes `agent-seer` is on PATH (commands may start it themselves).
        let bin_dir = Path::new(env!("CARGO_BIN_EXE_agent-seer"))
            .parent()
            .unwrap()
            .to_path_buf();
        let path = std::env::join_paths(std::iter::once(bin_dir).chain(std::env::split_paths(
            &std::env::var_os("PATH").unwrap_or_default(),
        )))
        .unwrap();
        cmd.args(&args)
            .current_dir(repo())
            .env_remove("AGENT_SEER_JUDGE")
            .env_remove("GITHUB_STEP_SUMMARY")
            .env("PATH", path)
            .envs(env);
        let o = cmd.output().unwrap();
        assert!(
            matches!(o.status.code(), Some(0 | 1)),
            "`agent-seer {}` failed:\n{}{}",
            args.join(" "),
            stdout(&o),
            stderr(&o)
        );
        assert!(
            !stdout(&o).is_empty(),
            "`agent-seer {}` printed nothing",
            args.join(" ")
        );
    }
}

#[test]
fn readme_snippet_matches_the_real_failure_output() {
    // The introduction quotes a failing trial; the quoted finding and location must be real.
    let readme = std::fs::read_to_string(repo().join("docs/src/introduction.md")).unwrap();
    let o = run(
        &[
            "lint",
            "--spec",
            "harnesses/veo.tools.json",
            "--caps",
            "capabilities/mcp-veo-go.yaml",
            "-",
        ],
        Some(
            r#"{"tool": "veo_t2v", "arguments": {"prompt": "p", "model": "veo-2.0-generate-001", "generate_audio": true}}"#,
        ),
    );
    let message = stdout(&o)
        .lines()
        .nth(1)
        .unwrap()
        .trim()
        .split_once(": ")
        .unwrap()
        .1
        .to_owned();
    assert!(
        readme.contains(&message),
        "docs/src/introduction.md does not quote the current message: {message}"
    );
    let check = run(
        &[
            "check",
            "--format",
            "json",
            "transcripts/veo/a1-wrong-model-audio.yaml",
        ],
        None,
    );
    let v: serde_json::Value = serde_json::from_str(&stdout(&check)).unwrap();
    let trial = v["trials"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "veo::a1-wrong-model-audio")
        .unwrap();
    let place = trial["transcript"]["findings"][0]["location"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        readme.contains(&place),
        "docs/src/introduction.md does not quote the current location {place}"
    );
}

#[test]
fn readme_discrimination_table_is_real() {
    let readme = std::fs::read_to_string(repo().join("docs/src/reference/score.md")).unwrap();
    let start = readme
        .find("veo: discrimination")
        .expect("docs/src/reference/score.md shows the veo table");
    let block: Vec<&str> = readme[start..]
        .lines()
        .take_while(|l| !l.starts_with("```"))
        .filter(|l| l.trim() != "…")
        .collect();
    assert!(block.len() >= 6);
    let out = stdout(&run(&["check", "transcripts/veo"], None));
    for line in block {
        assert!(
            out.contains(line),
            "docs/src/reference/score.md line not in `agent-seer check transcripts/veo`:\n{line}\n---\n{out}"
        );
    }
}

/// BENCHMARKS.md's generated tables name a subset of files once, above the table, not in
/// every row's command (`bench/llm_quality.py compact`; issue 34).
#[test]
fn benchmark_tables_do_not_repeat_file_lists() {
    let text = std::fs::read_to_string(repo().join("BENCHMARKS.md")).unwrap();
    for (i, line) in text.lines().enumerate().filter(|(_, l)| l.starts_with('|')) {
        let files = line.matches("transcripts/").count() + line.matches("harnesses/").count();
        assert!(
            files <= 2,
            "BENCHMARKS.md:{}: a table row naming {files} files",
            i + 1
        );
    }
}
