//! Issue 32: the surfaces added since the first hardening pass, each defect with its test.

use std::process::Command;

use super::*;

const TOKEN: &str = "s3cr3t-t0ken-value";

/// A server that answers every request with a JSON-RPC error quoting the request's
/// `Authorization` header, as a careless server's "invalid credentials" does.
struct Echo;

impl wiremock::Respond for Echo {
    fn respond(&self, req: &wiremock::Request) -> wiremock::ResponseTemplate {
        let id = serde_json::from_slice::<Value>(&req.body)
            .ok()
            .and_then(|m| m.get("id").cloned())
            .unwrap_or(Value::Null);
        let auth = req
            .headers
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("none")
            .to_owned();
        wiremock::ResponseTemplate::new(200).set_body_json(json!({
            "jsonrpc": "2.0",
            "id": id,
            "error": {"code": -32001, "message": format!("rejected credentials `{auth}` (\"{auth}\")")},
        }))
    }
}

#[test]
fn a_header_the_server_quotes_back_is_redacted_by_inspect_and_the_proxy() {
    let rt = rt();
    let server = rt.block_on(async {
        let s = wiremock::MockServer::start().await;
        wiremock::Mock::given(wiremock::matchers::any())
            .respond_with(Echo)
            .mount(&s)
            .await;
        s
    });
    let url = format!("{}/mcp", server.uri());
    let header = format!("Authorization: Bearer {TOKEN}");
    let dir = tempfile::tempdir().unwrap();
    let runs = [
        vec![
            "inspect".to_owned(),
            "--url".into(),
            url.clone(),
            "--header".into(),
            header.clone(),
            "--timeout".into(),
            "5".into(),
        ],
        vec![
            "serve".to_owned(),
            "--proxy".into(),
            "--proxy-url".into(),
            url.clone(),
            "--header".into(),
            header.clone(),
            "--timeout".into(),
            "5".into(),
            "-o".into(),
            dir.path().join("out").display().to_string(),
        ],
    ];
    for a in runs {
        let o = Command::new(bin())
            .args(&a)
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        let all = format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        assert_eq!(o.status.code(), Some(3), "{}: {all}", a[0]);
        assert!(all.contains("rejected credentials"), "{}: {all}", a[0]);
        assert!(!all.contains(TOKEN), "{}: {all}", a[0]);
        assert!(all.contains("[redacted]"), "{}: {all}", a[0]);
    }
}

/// A real server for the proxy: answers the handshake and `tools/list` (one tool, `echo`),
/// answers `tools/call` until the `die_at`-th, then either exits (`exit`) or sends a line
/// longer than the client's 16 MiB bound (`huge`).
fn dying_server(die_at: usize, how: &str) -> String {
    format!(
        r#"
import json, sys
calls = 0
for line in sys.stdin:
    m = json.loads(line)
    if "id" not in m:
        continue
    method, i = m.get("method"), m["id"]
    if method == "initialize":
        r = {{"protocolVersion": "2025-11-25", "capabilities": {{"tools": {{}}}}, "serverInfo": {{"name": "echo", "version": "1"}}}}
    elif method == "tools/list":
        r = {{"tools": [{{"name": "echo", "inputSchema": {{"type": "object"}}}}]}}
    elif method == "tools/call":
        calls += 1
        if calls == {die_at}:
            if "{how}" == "exit":
                sys.exit(0)
            sys.stdout.write('{{"jsonrpc": "2.0", "id": %d, "result": {{"content": [{{"type": "text", "text": "' % i + "x" * (17 << 20) + '"}}]}}}}\n')
            sys.stdout.flush()
            continue
        r = {{"content": [{{"type": "text", "text": "call %d" % calls}}]}}
    else:
        sys.stdout.write(json.dumps({{"jsonrpc": "2.0", "id": i, "error": {{"code": -32601, "message": "no"}}}}) + "\n")
        sys.stdout.flush()
        continue
    sys.stdout.write(json.dumps({{"jsonrpc": "2.0", "id": i, "result": r}}) + "\n")
    sys.stdout.flush()
"#
    )
}

fn request(id: u64, method: &str, params: Value) -> Vec<u8> {
    let mut l = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
        .to_string()
        .into_bytes();
    l.push(b'\n');
    l
}

fn call(id: u64) -> Vec<u8> {
    request(
        id,
        "tools/call",
        json!({"name": "echo", "arguments": {"n": id}}),
    )
}

/// Runs `serve --proxy -o <out>` in front of `server` (Python source), feeding `agent`.
fn proxied(out: &std::path::Path, server: &str, agent: &[u8]) -> std::process::Output {
    use std::io::Write;
    let mut child = Command::new(bin())
        .args(["serve", "--proxy", "--timeout", "20", "-o"])
        .arg(out)
        .args(["--", "python3", "-c", server])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    // The proxy may end before reading it all (a dead server): that is its answer.
    let _ = stdin.write_all(agent);
    drop(stdin);
    child.wait_with_output().unwrap()
}

fn session_calls(out: &std::path::Path) -> usize {
    let t = Transcript::load(&out.join("transcripts/echo/session.yaml")).unwrap();
    t.turns.iter().map(|t| t.calls.len()).sum()
}

#[test]
fn the_proxy_answers_a_line_that_is_not_utf8_and_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("o");
    let mut agent = request(
        0,
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "a", "version": "1"}}),
    );
    agent.extend(call(1));
    agent.extend(b"{\"id\": \"\xff\xfe\"}\n\xc3\x28\n");
    agent.extend(call(2));
    let o = proxied(&out, &dying_server(99, "exit"), &agent);
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let replies: Vec<Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(replies.len(), 5, "{stdout}");
    assert_eq!(replies[2]["error"]["code"], -32700);
    assert_eq!(replies[3]["error"]["code"], -32700);
    assert_eq!(replies[4]["result"]["content"][0]["text"], "call 2");
    assert_eq!(session_calls(&out), 2);
}

#[test]
fn the_proxy_saves_what_it_answered_when_the_server_exits_or_floods() {
    for how in ["exit", "huge"] {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("o");
        let mut agent = Vec::new();
        for id in 1..=3 {
            agent.extend(call(id));
        }
        let o = proxied(&out, &dying_server(3, how), &agent);
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(3), "{how}: {stderr}");
        assert!(stderr.contains("2 call(s) answered"), "{how}: {stderr}");
        assert_eq!(session_calls(&out), 2, "{how}");
        let stdout = String::from_utf8_lossy(&o.stdout);
        assert_eq!(stdout.lines().count(), 2, "{how}: {stdout}");
    }
}

#[cfg(unix)]
#[test]
fn the_proxy_never_writes_through_a_link_out_of_its_folder() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("o");
    let outside = dir.path().join("outside.json");
    std::fs::create_dir_all(out.join("harnesses")).unwrap();
    std::os::unix::fs::symlink(&outside, out.join("harnesses/echo.tools.json")).unwrap();
    let o = proxied(&out, &dying_server(99, "exit"), &call(1));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("outside the output folder"), "{stderr}");
    assert!(!outside.exists());
    assert!(!out.join("transcripts").exists());
}
