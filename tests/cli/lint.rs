use super::*;

const CALLS: &str = r#"{"tool": "veo_t2v", "arguments": {"prompt": "a tiger", "model": "veo-3.1-fast-generate-001", "duration": 6}}
{"function_name": "veo_t2v", "parameters": {"prompt": "a tiger", "model": "veo-2.0-generate-001", "generate_audio": true}}

{"name": "veo_t2v", "arguments": {"prompt": "a tiger"}}
{"id": "call_1", "type": "function", "function": {"name": "veo_t2vv", "arguments": "{\"prompt\": \"x\"}"}}
{"tool": "veo_t2v", "arguments": {"text_prompt": "a tiger", "model": "Veo 3.1", "num_videos": 9, "duration": 6.5}}
"#;

fn lint(format: &str, stdin: &str) -> Output {
    run(
        &[
            "lint",
            "--spec",
            "harnesses/veo.tools.json",
            "--caps",
            "capabilities/mcp-veo-go.yaml",
            "--format",
            format,
            "-",
        ],
        Some(stdin),
    )
}

#[test]
fn human_output_names_each_line() {
    let o = lint("human", CALLS);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    insta::assert_snapshot!("lint_human", stdout(&o));
}

#[test]
fn json_lines_one_result_per_call() {
    let o = lint("json", CALLS);
    assert_eq!(o.status.code(), Some(1));
    let lines: Vec<serde_json::Value> = stdout(&o)
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON line"))
        .collect();
    assert_eq!(lines.len(), 5, "blank lines are skipped");
    let oks: Vec<bool> = lines.iter().map(|l| l["ok"].as_bool().unwrap()).collect();
    assert_eq!(oks, [true, false, false, false, false]);
    assert_eq!(lines[1]["line"], 2);
    assert_eq!(lines[1]["findings"][0]["code"], "cap.unsupported_value");
    assert_eq!(lines[1]["findings"][0]["rule"], "V2");
    assert_eq!(lines[1]["findings"][0]["sub_dimension"], "argument_value");
    assert_eq!(lines[1]["findings"][0]["pointer"], "/generate_audio");
    assert_eq!(lines[3]["findings"][0]["code"], "lint.unknown_tool");
    insta::assert_snapshot!("lint_json", stdout(&o));
}

#[test]
fn clean_calls_exit_zero() {
    let o = lint("human", CALLS.lines().next().unwrap());
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
}

#[test]
fn malformed_line_is_an_input_error() {
    let o = lint(
        "human",
        "{\"tool\": \"veo_t2v\", \"arguments\": {\"prompt\": \"p\", \"model\": \"Veo 3.1\"}}\n{not json\n",
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stdout(&o).contains("<stdin>:2:2: not JSON: key must be a string\n"),
        "{}",
        stdout(&o)
    );
    assert!(
        stdout(&o).contains("<stdin>:1: veo_t2v: ok"),
        "the good line is still reported: {}",
        stdout(&o)
    );
}

#[test]
fn missing_spec_is_a_clear_error() {
    let o = run(&["lint", "--spec", "nope.json", "-"], Some(""));
    assert_eq!(o.status.code(), Some(2));
    insta::assert_snapshot!("lint_missing_spec", stderr(&o));
}

#[test]
fn broken_matrix_names_file_line_column() {
    let dir = project(&[
        ("tools.json", TINY_TOOLS),
        ("caps.yaml", &TINY_CAPS.replace("one_of", "oen_of")),
    ]);
    let o = run_in(
        dir.path(),
        &["lint", "--spec", "tools.json", "--caps", "caps.yaml", "-"],
        Some(""),
    );
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(err.contains("--> caps.yaml:11:"), "{err}");
    assert!(err.contains("unknown field `oen_of`"), "{err}");
}

#[test]
fn matrix_naming_an_unknown_tool() {
    let dir = project(&[
        ("tools.json", TINY_TOOLS),
        ("caps.yaml", &TINY_CAPS.replace("paint", "pain")),
    ]);
    let o = run_in(
        dir.path(),
        &["lint", "--spec", "tools.json", "--caps", "caps.yaml", "-"],
        Some(""),
    );
    assert_eq!(o.status.code(), Some(2));
    insta::assert_snapshot!("lint_unknown_tool_in_matrix", stderr(&o));
}

#[test]
fn malformed_spec_json() {
    let dir = project(&[("tools.json", "{\"tools\": [\n  {\"name\": \"a\",, }\n]}\n")]);
    let o = run_in(dir.path(), &["lint", "--spec", "tools.json", "-"], Some(""));
    assert_eq!(o.status.code(), Some(2));
    insta::assert_snapshot!("lint_malformed_spec", stderr(&o));
}

/// `agent-seer lint … | head -1`: when the reader goes away the process ends quietly, as a
/// Unix filter does, instead of printing "Broken pipe" (issue 18, item 13).
#[test]
fn a_closed_pipe_ends_lint_quietly() {
    use std::io::{BufRead, Write};
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_agent-seer"))
        .args([
            "lint",
            "--spec",
            "harnesses/veo.tools.json",
            "--caps",
            "capabilities/mcp-veo-go.yaml",
            "-",
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        // Far more output than a pipe buffers, so lint is still writing when the reader goes.
        for _ in 0..20_000 {
            if stdin.write_all(CALLS.as_bytes()).is_err() {
                break;
            }
        }
    });
    let mut first = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    assert!(first.starts_with("<stdin>:1"), "{first}");
    let o = child.wait_with_output().unwrap();
    writer.join().unwrap();
    assert_eq!(stderr(&o), "");
    assert_eq!(o.status.code(), Some(0));
}

/// The call shapes recorded runs write (issue 19): an Anthropic `tool_use` block (its `input`
/// was ignored: "missing required parameter"), a Responses `function_call` item, a Gemini
/// `functionCall` part and an MCP `tools/call` request, each linted on its arguments.
#[test]
fn lint_reads_the_call_shapes_of_every_log_format() {
    let calls = [
        r#"{"type": "tool_use", "id": "toolu_1", "name": "get_current_time", "input": {"timezone": "Asia/Tokyo"}}"#,
        r#"{"type": "function_call", "call_id": "call_1", "name": "get_current_time", "arguments": "{\"timezone\": \"Asia/Tokyo\"}"}"#,
        r#"{"functionCall": {"name": "get_current_time", "args": {"timezone": "Asia/Tokyo"}}}"#,
        r#"{"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "get_current_time", "arguments": {"timezone": "Asia/Tokyo"}}}"#,
        r#"{"type": "tool_use", "id": "toolu_2", "name": "get_current_time", "input": {"zone": "Asia/Tokyo"}}"#,
    ];
    let o = run(
        &["lint", "--spec", "harnesses/time.tools.json", "-"],
        Some(&(calls.join("\n") + "\n")),
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    insta::assert_snapshot!(stdout(&o), @r"
    <stdin>:1: get_current_time: ok
    <stdin>:2: get_current_time: ok
    <stdin>:3: get_current_time: ok
    <stdin>:4: get_current_time: ok
    <stdin>:5: get_current_time: 2 errors, 0 warnings
      error[lint.unknown_param] at /zone: unknown parameter `zone` (did you mean `timezone`?); the server drops it unseen
      error[lint.missing_required] at /timezone: missing required parameter `timezone` (`zone` was given instead?)
    ");
}
