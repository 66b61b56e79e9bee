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

/// `serve --http` on a free port under `sh -c PREFIX`; its child and `host:port`.
fn http_serve(prefix: &str) -> (std::process::Child, String) {
    use std::io::BufRead;
    let harness = repo().join("harnesses/time.yaml");
    let mut child = Command::new("sh")
        .args([
            "-c",
            &format!("{prefix} exec \"$0\" \"$@\""),
            &bin(),
            "serve",
        ])
        .arg(&harness)
        .args(["--http", "127.0.0.1:0"])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = std::io::BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    err.read_line(&mut line).unwrap();
    let addr = line
        .split("http://")
        .nth(1)
        .and_then(|r| r.split('/').next())
        .unwrap_or_else(|| panic!("no address in {line:?}"))
        .to_owned();
    std::thread::spawn(move || {
        let mut rest = String::new();
        while err.read_line(&mut rest).is_ok_and(|n| n > 0) {}
    });
    (child, addr)
}

/// Sends raw HTTP/1.1 `head` + `body` and gives the status line's code (0 when the
/// connection closed without one).
fn raw(addr: &str, head: &str, body: &[u8]) -> u16 {
    use std::io::{Read, Write};
    let Ok(mut s) = std::net::TcpStream::connect(addr) else {
        return 0;
    };
    s.set_read_timeout(Some(std::time::Duration::from_secs(20)))
        .unwrap();
    let _ = s.write_all(head.as_bytes());
    let _ = s.write_all(body);
    let mut got = Vec::new();
    let mut buf = [0; 4096];
    while let Ok(n) = s.read(&mut buf) {
        if n == 0 {
            break;
        }
        got.extend_from_slice(&buf[..n]);
        if got.windows(4).any(|w| w == b"\r\n\r\n") {
            break;
        }
    }
    String::from_utf8_lossy(&got)
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0)
}

fn post(addr: &str, extra: &str, body: &str) -> u16 {
    raw(
        addr,
        &format!(
            "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nConnection: close\r\n{extra}Content-Length: {}\r\n\r\n",
            body.len()
        ),
        body.as_bytes(),
    )
}

const INIT: &str = r#"{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}}"#;

#[test]
fn serve_http_refuses_foreign_origins_and_names_a_bad_chunked_body() {
    let (mut child, addr) = http_serve("");
    for origin in [
        "http://[::ffff:8.8.8.8]",
        "http://[::ffff:808:808]",
        "http://",
        "file://",
        "http://:80",
        "http://[::1].evil.example",
        "null",
    ] {
        let code = post(&addr, &format!("Origin: {origin}\r\n"), INIT);
        assert_eq!(code, 403, "{origin}");
    }
    for origin in [
        "http://localhost:5173",
        "http://[::1]:8080",
        "http://127.0.0.1",
    ] {
        assert_eq!(
            post(&addr, &format!("Origin: {origin}\r\n"), INIT),
            200,
            "{origin}"
        );
    }
    // A chunk size that is not hex: a malformed request, not one too large.
    let code = raw(
        &addr,
        &format!(
            "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
        ),
        b"zz\r\n{}\r\n0\r\n\r\n",
    );
    assert!(code == 400 || code == 0, "{code}");
    assert_ne!(code, 413);
    let _ = child.kill();
    let _ = child.wait();
}

/// Issue 32, item 5: more idle connections than descriptors do not end the server; those over
/// its cap are refused, and once they go it answers again.
#[test]
fn serve_http_outlives_more_connections_than_descriptors() {
    let (mut child, addr) = http_serve("ulimit -n 64 &&");
    let idle: Vec<std::net::TcpStream> = (0..150)
        .filter_map(|_| std::net::TcpStream::connect(&addr).ok())
        .collect();
    // Give the server time to take them all (and to fail, before the fix).
    std::thread::sleep(std::time::Duration::from_millis(1500));
    assert!(
        child.try_wait().unwrap().is_none(),
        "the server exited with {} idle connections",
        idle.len()
    );
    drop(idle);
    // Once they are gone, a request is answered (the server may take a moment to see them go).
    let mut code = 0;
    for _ in 0..100 {
        code = post(&addr, "", INIT);
        if code == 200 {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    assert_eq!(code, 200);
    assert!(child.try_wait().unwrap().is_none());
    let _ = child.kill();
    let _ = child.wait();
}

/// Issue 32, item 14: a server whose answer is nested deeper than the JSON reader's limit is
/// told so, with the limit, not called "not JSON-RPC".
#[test]
fn a_message_nested_too_deep_names_the_limit() {
    let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
    let reply = format!(
        r#"{{"jsonrpc": "2.0", "id": ID, "result": {{"protocolVersion": "2025-11-25", "capabilities": {{}}, "serverInfo": {{"name": "deep", "version": "1"}}, "x": {deep}}}}}"#
    );
    let server = format!(
        r#"
import json, sys, time
m = json.loads(sys.stdin.readline())
sys.stdout.write({reply:?}.replace("ID", json.dumps(m["id"])) + "\n")
sys.stdout.flush()
time.sleep(30)
"#
    );
    let err = rt()
        .block_on(start("python3", &["-c", &server], Duration::from_secs(10)))
        .err()
        .expect("refused")
        .to_string();
    assert!(err.contains("nested deeper than 128 levels"), "{err}");
    assert!(!err.contains("not JSON-RPC"), "{err}");
}
