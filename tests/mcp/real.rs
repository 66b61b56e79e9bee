//! Real servers from npm (`@modelcontextprotocol/server-everything`, `server-filesystem`),
//! installed by `.ci/run` and started inside a loopback-only namespace with telemetry off
//! (`.ci/mcp-e2e.sh` sets `AGENT_SEER_NPM`). `inspect` must save exactly what the server's own
//! `tools/list` says, which an independent raw JSON-RPC exchange checks.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

use super::*;

fn server(name: &str) -> (String, Vec<String>) {
    let npm = std::env::var("AGENT_SEER_NPM").expect("AGENT_SEER_NPM: run through .ci/run");
    let script = format!("{npm}/node_modules/@modelcontextprotocol/{name}/dist/index.js");
    match name {
        "server-everything" => ("node".into(), vec![script, "stdio".into()]),
        _ => {
            let root = std::env::temp_dir().join("agent-seer-fs-root");
            std::fs::create_dir_all(&root).unwrap();
            ("node".into(), vec![script, root.display().to_string()])
        }
    }
}

/// tools/list without our client: three lines in, the third answer out.
fn raw_tools(program: &str, a: &[String]) -> Value {
    let mut child = Command::new(program)
        .args(a)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    writeln!(stdin, r#"{{"jsonrpc":"2.0","id":1,"method":"initialize","params":{{"protocolVersion":"2025-06-18","capabilities":{{}},"clientInfo":{{"name":"raw","version":"0"}}}}}}"#).unwrap();
    let _ = lines.next();
    writeln!(
        stdin,
        r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#
    )
    .unwrap();
    writeln!(
        stdin,
        r#"{{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{{}}}}"#
    )
    .unwrap();
    let answer = lines.find_map(|l| {
        let v: Value = serde_json::from_str(&l.ok()?).ok()?;
        (v["id"] == 2).then_some(v)
    });
    let _ = child.kill();
    let _ = child.wait();
    answer.unwrap()["result"]["tools"].clone()
}

fn check(name: &str, count: usize, some: &[&str]) {
    let (program, a) = server(name);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("tools.json");
    let mut full = vec![
        "inspect".to_owned(),
        "-o".into(),
        out.display().to_string(),
        "--timeout".into(),
        "60".into(),
        "--".into(),
        program.clone(),
    ];
    full.extend(a.iter().cloned());
    let o = Command::new(bin()).args(&full).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let saved: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let names: Vec<&str> = saved
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names.len(), count, "{names:?}");
    for n in some {
        assert!(names.contains(n), "{n} in {names:?}");
    }
    assert_eq!(
        saved,
        raw_tools(&program, &a),
        "inspect saved exactly the server's tools/list"
    );
}

#[test]
#[ignore = "needs the npm servers that .ci/run installs (AGENT_SEER_NPM)"]
fn real_server_everything() {
    check(
        "server-everything",
        13,
        &["echo", "get-sum", "get-tiny-image"],
    );
}

#[test]
#[ignore = "needs the npm servers that .ci/run installs (AGENT_SEER_NPM)"]
fn real_server_filesystem() {
    check(
        "server-filesystem",
        14,
        &["read_text_file", "write_file", "list_directory"],
    );
}

/// `inspect --url` against server-everything's streamable HTTP mode captures what its stdio
/// mode gives, byte for byte (the same server, both transports; `--protocol auto` falls back
/// to the handshake, as the server speaks the session-based revision), and `serve --proxy`
/// over the stdio server records a session that replays.
#[test]
#[ignore = "needs the npm servers that .ci/run installs (AGENT_SEER_NPM)"]
fn real_server_everything_over_http_equals_stdio() {
    let (program, a) = server("server-everything");
    let dir = tempfile::tempdir().unwrap();
    let inspect = |name: &str, args: &[String]| {
        let out = dir.path().join(format!("{name}.tools.json"));
        let o = Command::new(bin())
            .args(["inspect", "-o", out.to_str().unwrap()])
            .args(args)
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        (
            std::fs::read_to_string(&out).unwrap(),
            String::from_utf8_lossy(&o.stdout).into_owned(),
        )
    };
    let mut stdio_args = vec!["--".to_owned(), program.clone()];
    stdio_args.extend(a.iter().cloned());
    let stdio = inspect("stdio", &stdio_args);
    // The HTTP mode on a port of its own.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut http = Command::new(&program)
        .args([a[0].as_str(), "streamableHttp"])
        .env("PORT", port.to_string())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let url = format!("http://127.0.0.1:{port}/mcp");
    for _ in 0..100 {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let over_http = inspect("http", &["--url".to_owned(), url.clone()]);
    let legacy = inspect(
        "legacy",
        &[
            "--url".to_owned(),
            url,
            "--protocol".to_owned(),
            "2025-11-25".to_owned(),
        ],
    );
    let _ = http.kill();
    let _ = http.wait();
    assert_eq!(
        over_http.0, stdio.0,
        "the HTTP capture is the stdio capture"
    );
    assert_eq!(legacy.0, stdio.0);
    assert!(over_http.1.contains("legacy)"), "{}", over_http.1);
    // The capture is what the server said: the raw exchange's tools, in any order of keys.
    let saved: Value = serde_json::from_str(&stdio.0).unwrap();
    assert_eq!(saved, raw_tools(&program, &a));
}
