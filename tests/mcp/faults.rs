//! Hostile servers and clients (issue 18, item 11): `serve` answers a line that is not UTF-8
//! and goes on; the client names a reply with the wrong id at once, bounds what it buffers
//! from stdout and quotes from stderr, survives a huge `--timeout`, and `inspect` flags a tool
//! whose schema does not compile.

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::Instant;

use super::*;

/// A server that answers `initialize` with `reply` (`ID` replaced by the request's id, as
/// JSON), then waits.
fn answering(reply: &str) -> String {
    format!(
        r#"
import json, sys, time
m = json.loads(sys.stdin.readline())
sys.stdout.write({reply:?}.replace("ID", json.dumps(m["id"])) + "\n")
sys.stdout.flush()
time.sleep(30)
"#
    )
}

#[test]
fn serve_answers_a_line_that_is_not_utf8_and_goes_on() {
    let harness = repo().join("harnesses/lyria.yaml");
    let mut child = Command::new(bin())
        .args(["serve", harness.to_str().unwrap()])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin
        .write_all(b"{\"id\": \"\xff\xfe\"}\n\xc3\x28\n")
        .unwrap();
    stdin
        .write_all(b"{\"jsonrpc\": \"2.0\", \"id\": 7, \"method\": \"ping\"}\n")
        .unwrap();
    drop(stdin);
    let o = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout);
    let replies: Vec<Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(replies.len(), 3, "{stdout}");
    for r in &replies[..2] {
        assert_eq!(r["id"], Value::Null, "{r}");
        assert_eq!(r["error"]["code"], -32700, "{r}");
    }
    assert_eq!(replies[2], json!({"jsonrpc": "2.0", "id": 7, "result": {}}));
}

#[test]
fn a_reply_with_the_wrong_id_is_named_at_once() {
    let cases = [
        (
            r#"{"jsonrpc": "2.0", "id": "x", "result": {}}"#,
            r#"id "x""#,
        ),
        (r#"{"jsonrpc": "2.0", "id": 7, "result": {}}"#, "id 7"),
        (r#"{"jsonrpc": "2.0", "id": 1.5, "result": {}}"#, "id 1.5"),
        (r#"{"jsonrpc": "2.0", "id": null, "result": {}}"#, "id null"),
        (r#"{"jsonrpc": "2.0", "result": {}}"#, "no id"),
        (
            r#"{"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": "Parse error"}}"#,
            "Parse error",
        ),
    ];
    for (reply, said) in cases {
        let t = Instant::now();
        let err = rt()
            .block_on(start(
                "python3",
                &["-c", &answering(reply)],
                Duration::from_secs(3),
            ))
            .err()
            .unwrap()
            .to_string();
        assert!(
            err.contains(said) && !err.contains("no answer within"),
            "{reply}: {err}"
        );
        if !said.contains("Parse") {
            assert!(err.contains("expected 1"), "{reply}: {err}");
        }
        assert!(t.elapsed() < Duration::from_secs(2), "{reply}: waited");
    }
}

#[test]
fn a_timeout_quotes_the_last_message_that_answered_nothing() {
    let err = rt()
        .block_on(start(
            "python3",
            &["-c", &answering(r#"{"status": "warming up"}"#)],
            Duration::from_millis(800),
        ))
        .err()
        .unwrap()
        .to_string();
    assert!(err.contains("got no answer within 800ms"), "{err}");
    assert!(
        err.contains(r#"the last message that answered nothing: {"status": "warming up"}"#),
        "{err}"
    );
}

#[test]
fn an_endless_stdout_line_is_cut_at_16_mib() {
    let t = Instant::now();
    let err = rt()
        .block_on(start(
            "sh",
            &["-c", "head -c 17000000 /dev/zero | tr '\\0' a; sleep 30"],
            Duration::from_secs(20),
        ))
        .err()
        .unwrap()
        .to_string();
    assert!(err.contains("longer than 16 MiB"), "{err}");
    assert!(
        t.elapsed() < Duration::from_secs(10),
        "waited for the timeout"
    );
}

#[test]
fn a_huge_stderr_line_is_quoted_in_part() {
    let err = rt()
        .block_on(start(
            "sh",
            &[
                "-c",
                "head -c 1000000 /dev/zero | tr '\\0' e >&2; echo >&2; echo 'last words' >&2; exit 3",
            ],
            Duration::from_secs(10),
        ))
        .err()
        .unwrap()
        .to_string();
    assert!(
        err.contains("exit status: 3") && err.contains("last words"),
        "{}",
        &err[..200]
    );
    assert!(err.len() < 8 * 1024, "{} bytes quoted", err.len());
    assert!(
        err.contains("line cut at 1024 bytes"),
        "the cut is said: {}",
        &err[..200]
    );
}

#[test]
fn inspect_takes_the_largest_timeout() {
    let o = Command::new(bin())
        .args([
            "inspect",
            "--timeout",
            "18446744073709551615",
            "--",
            &bin(),
            "serve",
            repo().join("harnesses/lyria.yaml").to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stdout).contains("tools     lyria_generate_music"));
}

/// Two tools, the second with a schema that does not compile.
const BROKEN: &str = r#"
import json, sys
tools = [
    {"name": "fine", "inputSchema": {"type": "object", "properties": {"q": {"type": "string"}}}},
    {"name": "broken", "inputSchema": {"type": "object", "properties": {"q": {"type": "string", "pattern": "(unclosed"}}}},
]
for line in sys.stdin:
    m = json.loads(line)
    if "id" not in m: continue
    if m["method"] == "initialize":
        r = {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}}, "serverInfo": {"name": "broken", "version": "1"}}
    else:
        r = {"tools": tools}
    print(json.dumps({"jsonrpc": "2.0", "id": m["id"], "result": r}), flush=True)
"#;

#[test]
fn inspect_flags_a_schema_that_does_not_compile() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("tools.json");
    let o = Command::new(bin())
        .args([
            "inspect",
            "-o",
            out.to_str().unwrap(),
            "--",
            "python3",
            "-c",
            BROKEN,
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("`broken`")
            && stderr.contains("does not compile")
            && !stderr.contains("`fine`"),
        "{stderr}"
    );
    // Saved all the same, exactly as sent, to be fixed by hand.
    let saved: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(saved.as_array().unwrap().len(), 2);
}

/// A server that exits before it answers is a server failure: exit 3, the code every verb
/// gives when a provider or a server fails (issue 18, item 12), not an input error.
#[test]
fn a_server_that_dies_is_exit_3() {
    let o = Command::new(bin())
        .args([
            "inspect",
            "--",
            "python3",
            "-c",
            "import sys; print('no tools today', file=sys.stderr); sys.exit(4)",
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains("no tools today"), "{stderr}");
}
