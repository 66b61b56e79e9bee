use serde_json::json;

use super::*;
use crate::harness::{Transcript, UNPARSABLE};
use crate::source::SourceFile;

pub(super) fn load(text: String) -> Transcript {
    Transcript::from_source(SourceFile::from_text("t.yaml", text), "t".into()).unwrap()
}

/// A shipped suite, by its harness's name.
fn shipped(name: &str) -> Suite {
    let harnesses = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("harnesses");
    Suite::load(&harnesses.join(format!("{name}.yaml"))).unwrap()
}

fn lyria() -> Suite {
    shipped("lyria")
}

/// Every bad line gets its JSON-RPC error and the session answers the next one.
#[test]
fn one_line_one_reply() {
    let suite = lyria();
    let mut s = Session::new(&suite);
    let code = |r: Option<Value>| r.map(|r| (r["id"].clone(), r["error"]["code"].clone()));
    let bad: [(&[u8], Value, i64); 7] = [
        (b"\xff\xfe", Value::Null, -32700),
        (b"{\"id\": \"\xc3\x28\"}", Value::Null, -32700),
        (b"{\"jsonrpc\": \"2.0\", \"id\": 1,", Value::Null, -32700),
        (
            b"[{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \"ping\"}]",
            Value::Null,
            -32600,
        ),
        (b"{\"jsonrpc\": \"2.0\", \"id\": 2}", json!(2), -32600),
        (
            b"{\"jsonrpc\": \"2.0\", \"id\": 3, \"method\": \"nope\"}",
            json!(3),
            -32601,
        ),
        (
            b"{\"jsonrpc\": \"2.0\", \"id\": 4, \"method\": \"tools/call\", \"params\": []}",
            json!(4),
            -32602,
        ),
    ];
    for (line, id, want) in bad {
        assert_eq!(
            code(s.handle(line)),
            Some((id, json!(want))),
            "{}",
            String::from_utf8_lossy(line)
        );
    }
    // Nothing is due for a blank line, a notification or a response.
    for quiet in [
        &b" \r"[..],
        br#"{"jsonrpc": "2.0", "method": "notifications/initialized"}"#,
        br#"{"jsonrpc": "2.0", "id": 9, "result": {}}"#,
    ] {
        assert_eq!(s.handle(quiet), None);
    }
    let ping = s.handle(br#"{"jsonrpc": "2.0", "id": "p", "method": "ping"}"#);
    assert_eq!(
        ping,
        Some(json!({"jsonrpc": "2.0", "id": "p", "result": {}}))
    );
    assert_eq!(s.calls(), 0, "no call was made");
}

#[test]
fn a_line_over_the_cap_is_refused_without_being_held() {
    let suite = lyria();
    let mut input = vec![b'x'; super::super::MAX_LINE + 10];
    input.extend_from_slice(b"\n{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \"ping\"}\n");
    let mut out = Vec::new();
    let twin = Twin::load(&suite).unwrap();
    serve(&suite, twin, Options::default(), &input[..], &mut out, None).unwrap();
    let replies: Vec<Value> = String::from_utf8(out)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(replies.len(), 2);
    assert_eq!(replies[0]["error"]["code"], -32700);
    assert!(
        replies[0]["error"]["message"]
            .as_str()
            .unwrap()
            .contains("16 MiB")
    );
    assert_eq!(replies[1]["result"], json!({}));
}

#[test]
fn a_recording_loads_whatever_the_client_sent() {
    let suite = lyria();
    let options = Options {
        scenario: Some(suite.harness.scenarios[0].id.clone()),
        ..Options::default()
    };
    let mut s = Session::with(&suite, Twin::load(&suite).unwrap(), options);
    for args in [json!({"ratio": "1:1"}), Value::Null, json!(["1:1"])] {
        let mut call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "lyria_generate_music"}});
        if !args.is_null() {
            call["params"]["arguments"] = args;
        }
        assert!(s.handle(call.to_string().as_bytes()).is_some());
    }
    let t = load(s.recording().unwrap());
    assert_eq!(
        t.agent.as_deref(),
        Some("an MCP client (recorded by agent-seer serve)")
    );
    let args: Vec<Value> = t.calls().map(|(_, c)| c.arguments().clone()).collect();
    assert_eq!(
        args,
        [
            json!({"ratio": "1:1"}),
            json!({}),
            // Not MCP: arguments are an object. Kept, so grading can say so.
            json!({(UNPARSABLE): "[\"1:1\"]"})
        ]
    );
}

/// Issue 32, item 6: a session's work per call does not grow with the calls so far. Calls
/// without references run no engine at all; a repeated call with references is checked
/// against the distinct calls only (400 `read_graph` calls took 288 s when every call ran
/// the whole engine over every call before it).
#[test]
fn work_per_call_does_not_grow_with_the_calls_so_far() {
    let suite = memory();
    let mut s = Session::new(&suite);
    let call = |s: &mut Session, id: usize, tool: &str, args: Value| {
        let line = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": tool, "arguments": args}})
        .to_string();
        s.handle(line.as_bytes()).unwrap()
    };
    PROBED.with(|n| n.set(0));
    for i in 0..300 {
        call(&mut s, i, "read_graph", json!({}));
    }
    assert_eq!(PROBED.with(std::cell::Cell::get), 0);
    assert_eq!(s.calls(), 300);
    let mut s = Session::new(&suite);
    call(
        &mut s,
        1000,
        "search_nodes",
        json!({"query": "first published algorithm"}),
    );
    for i in 0..300 {
        let r = call(
            &mut s,
            2000 + i,
            "open_nodes",
            json!({"names": ["Ada Lovelace"]}),
        );
        assert!(r["result"]["isError"] != json!(true), "{r}");
    }
    // Each probe sees at most the distinct calls (search_nodes, open_nodes) and the call
    // itself: linear in the calls, not quadratic.
    let probed = PROBED.with(std::cell::Cell::get);
    assert!((300..=3 * 300).contains(&probed), "{probed}");
    assert_eq!(s.calls(), 301);
}

pub(super) fn read_graph_lines(n: usize) -> Vec<u8> {
    let mut lines = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"}}})
    .to_string()
        + "\n";
    for i in 1..=n {
        lines += &json!({"jsonrpc": "2.0", "id": i, "method": "tools/call",
            "params": {"name": "read_graph", "arguments": {}}})
        .to_string();
        lines.push('\n');
    }
    lines.into_bytes()
}

pub(super) fn memory() -> Suite {
    shipped("memory")
}

/// `--record` rewrites the file whole; written after every call, a session's writes grew with
/// the square of its length (4,000 calls: 296 s). Now each of the first calls is written as it
/// comes, later ones in batches (or after a second), and the end writes whatever is left: the
/// file holds every call, and the calls written add up to a few times the session's.
#[test]
fn a_long_recording_is_written_in_time_linear_in_its_calls() {
    let suite = memory();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rec.yaml");
    let n = 2000;
    let mut out = Vec::new();
    let s = serve(
        &suite,
        Twin::load(&suite).unwrap(),
        Options::default(),
        &read_graph_lines(n)[..],
        &mut out,
        Some(&path),
    )
    .unwrap();
    assert_eq!(s.calls(), n);
    let t = load(std::fs::read_to_string(&path).unwrap());
    assert_eq!(t.calls().count(), n);
    let written = s.written_in_all;
    // Every one of the first 64 written as it came (2,080), then batches of an eighth (about
    // 9 × n), and a write a second besides: far from n² / 2 (2,000,000).
    assert!(
        (n..16 * n).contains(&written),
        "{written} calls written for {n}"
    );
}

/// Over stdio too: calls a batch left unwritten are written a second on, though no call
/// follows and the client keeps its side open (the loop is blocked reading it).
#[test]
fn serve_writes_a_batch_left_unwritten_a_second_on() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rec.yaml");
    // Each of the first 64 calls written as it comes, then batches at 72, 81 and 92: the last
    // eight wait for the second.
    let (client, server) = serve_100_recorded(&path);
    let start = std::time::Instant::now();
    while calls_on_file(&path) < 100 && start.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(
        calls_on_file(&path),
        100,
        "the calls on file before the client closed its side"
    );
    drop(client);
    assert_eq!(server.join().unwrap().unwrap(), 100);
}

/// A write the idle thread cannot make (a file where the recording's folder was, for a while)
/// ends the session with an error that names the file when the client closes its side: the
/// end's write, which the folder would take again, is not made over it.
#[test]
fn an_idle_write_that_fails_ends_the_session_with_its_error() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("gone");
    std::fs::create_dir(&folder).unwrap();
    let path = folder.join("rec.yaml");
    // Written at calls 64, 72, 81 and 92 by the loop; the last eight are the idle thread's.
    let (client, server) = serve_100_recorded(&path);
    let start = std::time::Instant::now();
    while calls_on_file(&path) < 92 && start.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(5));
    }
    // A file where the folder was: no write can make the folder again.
    std::fs::remove_dir_all(&folder).unwrap();
    std::fs::write(&folder, "").unwrap();
    // The idle thread looks once a second and writes a second after the last write: within
    // two seconds, the rest a margin for a busy machine.
    std::thread::sleep(Duration::from_millis(4000));
    std::fs::remove_file(&folder).unwrap();
    drop(client);
    let e = server.join().unwrap().unwrap_err();
    assert!(
        e.to_string()
            .starts_with(&format!("cannot write the recording {}: ", path.display())),
        "{e}"
    );
}

/// A stdio session of the memory suite recording to `path`, on a thread of its own, sent 100
/// `read_graph` calls through a pipe whose writing end the test keeps (and closes by dropping
/// it); the thread gives back the calls received.
fn serve_100_recorded(
    path: &std::path::Path,
) -> (
    std::io::PipeWriter,
    std::thread::JoinHandle<std::io::Result<usize>>,
) {
    let suite: &'static Suite = Box::leak(Box::new(memory()));
    let (input, mut client) = std::io::pipe().unwrap();
    let path = path.to_owned();
    let server = std::thread::spawn(move || {
        let input = std::io::BufReader::new(input);
        let twin = Twin::load(suite).unwrap();
        serve(
            suite,
            twin,
            Options::default(),
            input,
            std::io::sink(),
            Some(&path),
        )
        .map(|s| s.calls())
    });
    client.write_all(&read_graph_lines(100)).unwrap();
    (client, server)
}

/// The calls the recording at `path` holds (none while there is none).
fn calls_on_file(path: &std::path::Path) -> usize {
    std::fs::read_to_string(path)
        .ok()
        .map_or(0, |text| load(text).calls().count())
}

/// A session that ends at an error (the client gone, its output closed) still leaves every
/// call it received in the recording.
#[test]
fn a_session_ended_by_an_error_records_every_call() {
    struct Closes(usize);
    impl Write for Closes {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            if b.contains(&b'\n') {
                if self.0 == 0 {
                    return Err(std::io::ErrorKind::BrokenPipe.into());
                }
                self.0 -= 1;
            }
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let suite = memory();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rec.yaml");
    // The initialize reply and 99 calls' go out; the 100th call's reply fails.
    let e = serve(
        &suite,
        Twin::load(&suite).unwrap(),
        Options::default(),
        &read_graph_lines(300)[..],
        Closes(100),
        Some(&path),
    )
    .err()
    .unwrap();
    assert_eq!(e.kind(), std::io::ErrorKind::BrokenPipe);
    let t = load(std::fs::read_to_string(&path).unwrap());
    assert_eq!(t.calls().count(), 100);
}

/// The memory suite served over HTTP with `--record`, `wait` the longest calls wait unwritten,
/// and 100 stateless (2026-07-28) `read_graph` calls sent to it, a connection each.
struct Recorded100 {
    rt: tokio::runtime::Runtime,
    _dir: tempfile::TempDir,
    path: std::path::PathBuf,
    stop: tokio::sync::oneshot::Sender<()>,
    server: tokio::task::JoinHandle<std::io::Result<Session<'static>>>,
}

impl Recorded100 {
    fn run(wait: Duration) -> Self {
        use std::io::Read;
        let suite: &'static Suite = Box::leak(Box::new(memory()));
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("rec.yaml");
        let rt = tokio::runtime::Runtime::new().unwrap();
        let listener = rt
            .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
            .unwrap();
        let addr = listener.local_addr().unwrap();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let mut session = Session::new(suite);
        session.record_wait = wait;
        let server = rt.spawn(serve_http(session, listener, Some(path.clone()), async {
            let _ = stopped.await;
        }));
        for id in 1..=100 {
            let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
                "name": "read_graph", "arguments": {}, "_meta": {
                    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                    "io.modelcontextprotocol/clientCapabilities": {}}}})
            .to_string();
            let mut c = std::net::TcpStream::connect(addr).unwrap();
            write!(
                c,
                "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
                 Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n\
                 Mcp-Method: tools/call\r\nMcp-Name: read_graph\r\nConnection: close\r\n\
                 Content-Length: {}\r\n\r\n{body}",
                body.len()
            )
            .unwrap();
            let mut got = String::new();
            c.read_to_string(&mut got).unwrap();
            assert!(got.starts_with("HTTP/1.1 200"), "{got}");
        }
        Self {
            rt,
            _dir: dir,
            path,
            stop,
            server,
        }
    }

    /// The calls the recording holds now.
    fn written(&self) -> usize {
        calls_on_file(&self.path)
    }

    /// Stops the server: the calls it received, and those the recording then holds.
    fn stop(self) -> (usize, usize) {
        self.stop.send(()).unwrap();
        let received = self.rt.block_on(self.server).unwrap().unwrap().calls();
        (received, calls_on_file(&self.path))
    }
}

/// Over HTTP too: the calls a batch has not written yet are written when the server stops.
#[test]
fn serve_http_writes_the_calls_left_when_it_stops() {
    // No write for the time gone by: each of the first 64 calls written, then batches of an
    // eighth (at calls 72, 81 and 92), whatever this machine's speed.
    let r = Recorded100::run(Duration::from_secs(3600));
    assert_eq!(r.written(), 92);
    assert_eq!(r.stop(), (100, 100));
}

/// Over HTTP, calls a batch left unwritten are written a second on, though no call follows
/// and the server goes on.
#[test]
fn serve_http_writes_a_batch_left_unwritten_a_second_on() {
    let r = Recorded100::run(RECORD_WAIT);
    let waited = std::time::Instant::now();
    while r.written() < 100 && waited.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(r.written(), 100);
    assert_eq!(r.stop(), (100, 100));
}
