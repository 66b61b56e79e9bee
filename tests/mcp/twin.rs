//! `serve` as a twin of the captured server: what it presents, how it answers a call that
//! matches no step, how it attributes a recording, the faults it injects, the stateless
//! revision, and streamable HTTP.

use std::path::{Path, PathBuf};
use std::time::Duration;

use agent_seer::check::{Suite, Verdict, evaluate};
use agent_seer::harness::Transcript;
use agent_seer::mcp::server::{Faults, Options, Session, Twin};
use agent_seer::mcp::{Client, Endpoint, Protocol};
use serde_json::{Value, json};

use super::{bin, repo, rt};

fn suite(name: &str) -> Suite {
    Suite::load(&repo().join(format!("harnesses/{name}.yaml"))).unwrap()
}

fn session<'a>(suite: &'a Suite, options: Options) -> Session<'a> {
    Session::with(suite, Twin::load(suite).unwrap(), options)
}

fn request(s: &mut Session, id: u64, method: &str, params: Value) -> Value {
    let line = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
    serde_json::from_str(&s.reply(line.to_string().as_bytes()).unwrap()).unwrap()
}

fn call(s: &mut Session, id: u64, tool: &str, args: Value) -> Value {
    request(
        s,
        id,
        "tools/call",
        json!({"name": tool, "arguments": args}),
    )
}

/// The 2026-07-28 `_meta` a modern client sends on every request.
fn modern_meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {}
    })
}

/// `tools/list` carries every tool as the capture wrote it: every field (`title`,
/// `annotations`, `execution`, ones no spec names), in the capture's order. It used to be
/// rebuilt from name, description and schemas alone.
#[test]
fn tools_list_is_the_capture_byte_for_byte() {
    for name in ["memory", "filesystem", "git", "time", "veo"] {
        let suite = suite(name);
        let mut s = session(&suite, Options::default());
        let reply = s
            .reply(br#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#)
            .unwrap();
        let capture =
            std::fs::read_to_string(repo().join(format!("harnesses/{name}.tools.json"))).unwrap();
        let want = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{{\"tools\":{}}}}}",
            agent_seer::source::json::reformat(&capture, None)
        );
        assert_eq!(reply, want, "{name}");
    }
    // The captures do carry fields the old mock dropped.
    let memory = std::fs::read_to_string(repo().join("harnesses/memory.tools.json")).unwrap();
    assert!(memory.contains("\"annotations\"") && memory.contains("\"title\""));
}

/// The handshake presents the captured server — its name, version, capabilities and
/// instructions — and nothing that says it is a test (it used to rename the server
/// `agent-seer-mock/…` and tell the agent every call is recorded for grading).
#[test]
fn the_handshake_presents_the_captured_server_and_reveals_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    for d in ["harnesses", "capabilities"] {
        std::fs::create_dir(root.join(d)).unwrap();
    }
    for f in [
        "harnesses/time.yaml",
        "harnesses/time.tools.json",
        "capabilities/mcp-server-time.yaml",
    ] {
        std::fs::copy(repo().join(f), root.join(f)).unwrap();
    }
    let sidecar = json!({"initialize": {
        "protocolVersion": "2025-06-18",
        "capabilities": {"tools": {"listChanged": true}, "experimental": {"x": {}}},
        "serverInfo": {"name": "mcp-time", "version": "1.9.4"},
        "instructions": "Times and zones."
    }});
    std::fs::write(root.join("harnesses/time.server.json"), sidecar.to_string()).unwrap();
    let suite = Suite::load(&root.join("harnesses/time.yaml")).unwrap();
    let mut s = session(&suite, Options::default());
    let init = request(
        &mut s,
        1,
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}),
    );
    assert_eq!(
        init["result"],
        json!({
            "protocolVersion": "2025-11-25",
            "capabilities": {"tools": {"listChanged": true}, "experimental": {"x": {}}},
            "serverInfo": {"name": "mcp-time", "version": "1.9.4"},
            "instructions": "Times and zones."
        })
    );
    // Without a sidecar: the suite's name, and no instructions at all.
    let plain = suite_named("time");
    let mut s = session(&plain, Options::default());
    let init = request(
        &mut s,
        1,
        "initialize",
        json!({"protocolVersion": "2025-11-25"}),
    );
    let text = init.to_string().to_lowercase();
    for tell in ["mock", "agent-seer", "record", "grad", "harness", "test"] {
        assert!(!text.contains(tell), "`{tell}` in {text}");
    }
    assert_eq!(init["result"]["serverInfo"]["name"], "time");
    assert!(init["result"].get("instructions").is_none());
}

fn suite_named(name: &str) -> Suite {
    suite(name)
}

/// A call that names an entity no output produced (a misspelt name) is not found — the
/// mock used to answer it with the nearest step's data, Ada Lovelace's whole node.
#[test]
fn a_hallucinated_name_is_not_found_never_another_steps_data() {
    let suite = suite("memory");
    let options = Options {
        scenario: Some("open-searched".into()),
        ..Options::default()
    };
    let mut s = session(&suite, options);
    let found = call(
        &mut s,
        1,
        "search_nodes",
        json!({"query": "first published algorithm"}),
    );
    assert!(found["result"].to_string().contains("Ada Lovelace"));
    let r = call(&mut s, 2, "open_nodes", json!({"names": ["Ada Lovelance"]}));
    // What server-memory itself answers for a name it does not hold (the matrix's
    // `not_found:`, seen on the real server): an empty graph.
    assert_eq!(
        r["result"],
        json!({"content": [{"type": "text", "text": "{\n  \"entities\": [],\n  \"relations\": []\n}"}], "structuredContent": {"entities": [], "relations": []}}),
        "another step's data: {r}"
    );
    assert_eq!(s.findings().len(), 1, "{:?}", s.findings());
    assert!(s.findings()[0].contains("open_nodes"), "{:?}", s.findings());
    // The name the search gave is found, with its step's output.
    let r = call(&mut s, 3, "open_nodes", json!({"names": ["Ada Lovelace"]}));
    assert!(r["result"].to_string().contains("Mathematician"), "{r}");
}

/// Without a matrix `not_found:`, a thing no output produced is an `isError` naming it; with
/// one, the server's own words, the name filled in (server-filesystem's ENOENT, as the real
/// server says it).
#[test]
fn not_found_speaks_as_the_server_does() {
    let fs = suite("filesystem");
    let id = fs.harness.scenarios[0].id.clone();
    let mut s = session(
        &fs,
        Options {
            scenario: Some(id),
            ..Options::default()
        },
    );
    let r = call(
        &mut s,
        1,
        "read_text_file",
        json!({"path": "/nowhere/at-all.txt"}),
    );
    assert_eq!(
        r["result"],
        json!({"content": [{"type": "text", "text": "ENOENT: no such file or directory, open '/nowhere/at-all.txt'"}], "isError": true})
    );
    let git = suite("git");
    let id = git.harness.scenarios[0].id.clone();
    let tool = git.harness.scenarios[0].turns[0].workflow[0]
        .call
        .tool
        .clone();
    let mut s = session(
        &git,
        Options {
            scenario: Some(id),
            ..Options::default()
        },
    );
    let r = call(&mut s, 1, &tool, json!({"repo_path": "/no/such/repo"}));
    assert_eq!(r["result"]["isError"], true, "{r}");
}

/// A tool the server does not have is the spec's `-32602` error, as real servers answer;
/// the recording keeps the call so grading names it.
#[test]
fn an_unknown_tool_is_the_servers_invalid_params_error() {
    let suite = suite("time");
    let mut s = session(&suite, Options::default());
    let r = call(&mut s, 1, "get_weather", json!({"city": "Paris"}));
    assert_eq!(
        r["error"],
        json!({"code": -32602, "message": "Unknown tool: get_weather"})
    );
    assert_eq!(s.calls(), 1);
}

fn project_with_twins() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let h = dir.path().join("harnesses");
    std::fs::create_dir(&h).unwrap();
    std::fs::copy(
        repo().join("harnesses/time.tools.json"),
        h.join("time.tools.json"),
    )
    .unwrap();
    let step = |args: &str, out: &str| {
        format!(
            "    - tool: {args}\n      mock_output:\n        content: [{{type: text, text: '{out}'}}]\n"
        )
    };
    let first = step(
        "get_current_time\n      arguments: {timezone: Europe/London}",
        "{\"timezone\": \"Europe/London\", \"datetime\": \"2026-12-01T09:00:00+00:00\"}",
    );
    let yaml = format!(
        "suite: twins\ntools: [time.tools.json]\nscenarios:\n\
         - id: to-tokyo\n  turns:\n  - prompt: What time is it in London, and in Tokyo then?\n    workflow:\n{first}{}\
         - id: to-lima\n  turns:\n  - prompt: What time is it in London, and in Lima then?\n    workflow:\n{first}{}",
        step(
            "convert_time\n      arguments: {source_timezone: Europe/London, time: '09:00', target_timezone: Asia/Tokyo}",
            "{\"target\": {\"timezone\": \"Asia/Tokyo\", \"datetime\": \"2026-12-01T18:00:00+09:00\"}}"
        ),
        step(
            "convert_time\n      arguments: {source_timezone: Europe/London, time: '09:00', target_timezone: America/Lima}",
            "{\"target\": {\"timezone\": \"America/Lima\", \"datetime\": \"2026-12-01T04:00:00-05:00\"}}"
        ),
    );
    let path = h.join("twins.yaml");
    std::fs::write(&path, yaml).unwrap();
    (dir, path)
}

/// Two scenarios share their first step: the scenario stays open until a later call tells
/// which, and a recording no call settles is an error, not an oracle-less pass (with
/// `--record` it used to lose the scenario and pass).
#[test]
fn a_shared_first_step_is_settled_by_later_calls_or_is_an_error() {
    let (_dir, harness) = project_with_twins();
    let suite = Suite::load(&harness).unwrap();
    let mut s = session(&suite, Options::default());
    call(
        &mut s,
        1,
        "get_current_time",
        json!({"timezone": "Europe/London"}),
    );
    let open = s.attribution().unwrap_err();
    assert!(open.contains("`to-tokyo`, `to-lima`"), "{open}");
    // The recording so far does not load as a transcript of no scenario.
    let text = s.recording().unwrap();
    let t = Transcript::from_source(
        agent_seer::source::SourceFile::from_text("r.yaml", text.clone()),
        "r".into(),
    );
    assert!(t.is_err(), "{text}");
    assert!(text.contains("the scenario could not be told"), "{text}");
    let r = call(
        &mut s,
        2,
        "convert_time",
        json!({"source_timezone": "Europe/London", "time": "09:00", "target_timezone": "America/Lima"}),
    );
    assert!(r["result"].to_string().contains("America/Lima"), "{r}");
    assert_eq!(s.attribution().unwrap(), "to-lima");
    let t = Transcript::from_source(
        agent_seer::source::SourceFile::from_text("r.yaml", s.recording().unwrap()),
        "r".into(),
    )
    .unwrap();
    assert_eq!(t.scenario.as_deref(), Some("to-lima"));
    assert_eq!(evaluate(&suite, &t).unwrap().verdict, Verdict::Pass);
}

/// Through the binary: a session that ends unattributed exits 1 and says why; `--scenario`
/// pins it.
#[test]
fn serve_exits_1_for_a_recording_no_scenario_fits() {
    let (dir, harness) = project_with_twins();
    let record = dir.path().join("r.yaml");
    let run = |extra: &[&str]| {
        let mut cmd = std::process::Command::new(bin());
        cmd.args([
            "serve",
            harness.to_str().unwrap(),
            "--record",
            record.to_str().unwrap(),
        ])
        .args(extra)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
        let mut child = cmd.spawn().unwrap();
        use std::io::Write;
        let mut stdin = child.stdin.take().unwrap();
        writeln!(stdin, r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"get_current_time","arguments":{{"timezone":"Europe/London"}}}}}}"#).unwrap();
        drop(stdin);
        child.wait_with_output().unwrap()
    };
    let o = run(&[]);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains(
            "error: the recording cannot be graded against a scenario: the calls fit 2 scenarios"
        ),
        "{err}"
    );
    let o = run(&["--scenario", "to-tokyo"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let t = Transcript::load(&record).unwrap();
    assert_eq!(t.scenario.as_deref(), Some("to-tokyo"));
    let o = run(&["--scenario", "nope"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--scenario nope: no such scenario"));
}

/// Injected faults: the calls named fail, a rate fails the same calls for the same seed, and
/// the recording says what was injected.
#[test]
fn faults_are_seeded_and_recorded() {
    let suite = suite("time");
    let first = &suite.harness.scenarios[0].turns[0].workflow[0].call;
    let (tool, args) = (first.tool.clone(), first.arguments().clone());
    let failed = |faults: Faults| {
        let options = Options {
            scenario: Some(suite.harness.scenarios[0].id.clone()),
            faults,
        };
        let mut s = session(&suite, options);
        let out: Vec<bool> = (1..=20)
            .map(|i| call(&mut s, i, &tool, args.clone())["result"]["isError"] == true)
            .collect();
        (out, s.recording().unwrap())
    };
    let (named, text) = failed(Faults {
        fail_calls: [2, 5].into(),
        ..Faults::default()
    });
    let which: Vec<usize> = (1..=20).filter(|i| named[i - 1]).collect();
    assert_eq!(which, [2, 5]);
    assert!(
        text.contains("faults injected: failed calls 2,5 (seed 0)"),
        "{text}"
    );
    let rate = |seed| {
        failed(Faults {
            fail_rate: 0.5,
            seed,
            ..Faults::default()
        })
        .0
    };
    assert_eq!(rate(7), rate(7));
    assert_ne!(rate(7), rate(8));
    let n = rate(7).iter().filter(|f| **f).count();
    assert!((4..=16).contains(&n), "{n} of 20 at a rate of 0.5");
}

/// The 2026-07-28 revision over the same session: `server/discover`, `resultType` and the
/// server's identity on every result, the cache hints on lists, `-32022` for a version it
/// does not speak.
#[test]
fn the_stateless_revision_is_served_per_request() {
    let suite = suite("time");
    let mut s = session(&suite, Options::default());
    let d = request(
        &mut s,
        1,
        "server/discover",
        json!({"_meta": modern_meta()}),
    );
    let r = &d["result"];
    assert_eq!(r["resultType"], "complete");
    assert_eq!(r["supportedVersions"][0], "2026-07-28");
    assert_eq!(
        r["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        "time"
    );
    assert_eq!(
        (r["ttlMs"].as_u64().is_some(), &r["cacheScope"]),
        (true, &json!("public"))
    );
    let l = request(&mut s, 2, "tools/list", json!({"_meta": modern_meta()}));
    assert_eq!(l["result"]["resultType"], "complete");
    assert_eq!(l["result"]["tools"].as_array().unwrap().len(), 2);
    let c = request(
        &mut s,
        3,
        "tools/call",
        json!({"name": "get_current_time", "arguments": {"timezone": "Europe/London"}, "_meta": modern_meta()}),
    );
    assert_eq!(c["result"]["resultType"], "complete", "{c}");
    let mut old = modern_meta();
    old["io.modelcontextprotocol/protocolVersion"] = json!("1900-01-01");
    let e = request(&mut s, 4, "tools/list", json!({"_meta": old}));
    assert_eq!(e["error"]["code"], -32022);
    assert_eq!(e["error"]["data"]["requested"], "1900-01-01");
    assert!(
        e["error"]["data"]["supported"]
            .as_array()
            .unwrap()
            .contains(&json!("2026-07-28"))
    );
    // A `_meta` without its required members is malformed (-32602), not served.
    let mut partial = modern_meta();
    partial
        .as_object_mut()
        .unwrap()
        .remove("io.modelcontextprotocol/clientCapabilities");
    let e = request(&mut s, 6, "server/discover", json!({"_meta": partial}));
    assert_eq!(e["error"]["code"], -32602, "{e}");
    assert!(
        e["error"]["message"]
            .as_str()
            .unwrap()
            .contains("clientCapabilities"),
        "{e}"
    );
    // `ping` is gone from the stateless revision.
    let p = request(&mut s, 5, "ping", json!({"_meta": modern_meta()}));
    assert_eq!(p["error"]["code"], -32601);
}

/// A `serve --http` child on a free loopback port, and its endpoint.
pub(crate) struct HttpServe {
    child: std::process::Child,
    pub url: String,
}

impl HttpServe {
    pub(crate) fn start(harness: &Path, extra: &[&str]) -> Self {
        use std::io::BufRead;
        let mut child = std::process::Command::new(bin())
            .args(["serve", harness.to_str().unwrap(), "--http", "127.0.0.1:0"])
            .args(extra)
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut err = std::io::BufReader::new(child.stderr.take().unwrap());
        let mut line = String::new();
        err.read_line(&mut line).unwrap();
        let url = line
            .split(" on ")
            .nth(1)
            .unwrap_or_else(|| panic!("no address in {line:?}"))
            .trim()
            .to_owned();
        // Keep reading stderr so the child never blocks on a full pipe.
        std::thread::spawn(move || {
            let mut rest = String::new();
            while err.read_line(&mut rest).is_ok_and(|n| n > 0) {}
        });
        HttpServe { child, url }
    }
}

impl Drop for HttpServe {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `inspect --url` in both revisions captures exactly what the stdio capture does, and `serve
/// --http` speaks both: the session-based one with its `Mcp-Session-Id`, the stateless one
/// with `server/discover`.
#[test]
fn http_in_both_revisions_equals_stdio() {
    let harness = repo().join("harnesses/memory.yaml");
    let server = HttpServe::start(&harness, &[]);
    let dir = tempfile::tempdir().unwrap();
    let capture = |name: &str, args: &[&str]| {
        let out = dir.path().join(format!("{name}.tools.json"));
        let o = std::process::Command::new(bin())
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
    let stdio = capture("stdio", &["--", &bin(), "serve", harness.to_str().unwrap()]);
    let legacy = capture(
        "legacy",
        &["--url", &server.url, "--protocol", "2025-11-25"],
    );
    let modern = capture(
        "modern",
        &["--url", &server.url, "--protocol", "2026-07-28"],
    );
    let auto = capture("auto", &["--url", &server.url]);
    let shipped = std::fs::read_to_string(repo().join("harnesses/memory.tools.json")).unwrap();
    for (name, (tools, _)) in [
        ("stdio", &stdio),
        ("legacy", &legacy),
        ("modern", &modern),
        ("auto", &auto),
    ] {
        assert_eq!(
            tools, &shipped,
            "{name}: the capture is the shipped file, byte for byte"
        );
    }
    assert!(
        legacy.1.contains("(protocol 2025-11-25, legacy)"),
        "{}",
        legacy.1
    );
    assert!(
        modern.1.contains("(protocol 2026-07-28, modern)"),
        "{}",
        modern.1
    );
    assert!(
        auto.1.contains("modern"),
        "auto settles on the stateless revision: {}",
        auto.1
    );
    // The sidecars name the same server.
    let side = |n: &str| -> Value {
        serde_json::from_str(
            &std::fs::read_to_string(dir.path().join(format!("{n}.server.json"))).unwrap(),
        )
        .unwrap()
    };
    assert_eq!(side("legacy")["initialize"]["serverInfo"]["name"], "memory");
    assert_eq!(
        side("modern")["discover"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        "memory"
    );
}

/// The transport's refusals: headers that do not match the body, a legacy request without
/// its session, a GET, a foreign Origin.
#[test]
fn http_refuses_what_the_transport_forbids() {
    let harness = repo().join("harnesses/time.yaml");
    let server = HttpServe::start(&harness, &[]);
    rt().block_on(async {
        let http = reqwest::Client::new();
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "get_current_time", "arguments": {"timezone": "Europe/London"}, "_meta": modern_meta()}});
        let post = |headers: &[(&str, &str)]| {
            let mut r = http
                .post(&server.url)
                .header("content-type", "application/json")
                .header("accept", "application/json, text/event-stream");
            for (k, v) in headers {
                r = r.header(*k, *v);
            }
            r
        };
        let full = [
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "tools/call"),
            ("mcp-name", "get_current_time"),
        ];
        let ok = post(&full).json(&body).send().await.unwrap();
        assert_eq!(ok.status(), 200);
        let v: Value = ok.json().await.unwrap();
        assert_eq!(v["result"]["resultType"], "complete");
        let wrong = post(&[full[0], full[1], ("mcp-name", "convert_time")])
            .json(&body)
            .send()
            .await
            .unwrap();
        assert_eq!(wrong.status(), 400);
        let v: Value = wrong.json().await.unwrap();
        assert_eq!(v["error"]["code"], -32020, "{v}");
        let missing = post(&full[..2]).json(&body).send().await.unwrap();
        assert_eq!(missing.status(), 400);
        // Base64-encoded names decode before the comparison.
        let b64 = post(&[full[0], full[1], ("mcp-name", "=?base64?Z2V0X2N1cnJlbnRfdGltZQ==?=")])
            .json(&body)
            .send()
            .await
            .unwrap();
        assert_eq!(b64.status(), 200);
        let legacy = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
        let r = post(&[]).json(&legacy).send().await.unwrap();
        assert_eq!(r.status(), 400, "a legacy request needs its session");
        let r = post(&[("mcp-session-id", "nope")]).json(&legacy).send().await.unwrap();
        assert_eq!(r.status(), 404);
        let init = json!({"jsonrpc": "2.0", "id": 3, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}});
        let r = post(&[]).json(&init).send().await.unwrap();
        let sid = r.headers()["mcp-session-id"].to_str().unwrap().to_owned();
        let r = post(&[("mcp-session-id", &sid)]).json(&legacy).send().await.unwrap();
        assert_eq!(r.status(), 200);
        let r = http.delete(&server.url).header("mcp-session-id", &sid).send().await.unwrap();
        assert_eq!(r.status(), 200);
        let r = post(&[("mcp-session-id", &sid)]).json(&legacy).send().await.unwrap();
        assert_eq!(r.status(), 404, "an ended session is gone");
        assert_eq!(http.get(&server.url).send().await.unwrap().status(), 405);
        let r = post(&full).header("origin", "https://evil.example").json(&body).send().await.unwrap();
        assert_eq!(r.status(), 403);
        let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        assert_eq!(post(&[]).json(&note).send().await.unwrap().status(), 202);
    });
}

/// A proxied session becomes a suite: the capture, a harness whose mock outputs are the real
/// server's, the transcript of what the agent did. The transcript passes against its oracle,
/// and replaying the calls on the recorded harness's twin gives the same outputs.
#[test]
fn a_proxied_session_becomes_a_replayable_suite() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("recorded");
    let real = repo().join("harnesses/memory.yaml");
    let calls = [
        (
            "search_nodes",
            json!({"query": "first published algorithm"}),
        ),
        ("open_nodes", json!({"names": ["Ada Lovelace"]})),
    ];
    let outputs = rt().block_on(async {
        let endpoint = Endpoint::Command {
            program: bin(),
            args: [
                "serve",
                "--proxy",
                "-o",
                root.to_str().unwrap(),
                "--prompt",
                "Open the node of the first programmer.",
                "--",
                &bin(),
                "serve",
                real.to_str().unwrap(),
                "--scenario",
                "open-searched",
            ]
            .map(String::from)
            .to_vec(),
            envs: Vec::new(),
        };
        let mut c = Client::connect(endpoint, Protocol::Legacy, Duration::from_secs(20))
            .await
            .unwrap();
        assert_eq!(c.info.as_ref().unwrap().name, "memory");
        let mut outs = Vec::new();
        for (tool, args) in &calls {
            outs.push(c.call_tool(tool, args).await.unwrap());
        }
        c.close().await;
        outs
    });
    // The proxy writes once the agent has gone; wait for the files.
    let transcript = root.join("transcripts/memory/session.yaml");
    for _ in 0..100 {
        if transcript.exists() {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let harness = root.join("harnesses/memory.yaml");
    let suite = Suite::load(&harness).unwrap();
    let t = Transcript::load(&transcript).unwrap();
    let ev = evaluate(&suite, &t).unwrap();
    assert_eq!(ev.verdict, Verdict::Pass, "{:?}", ev.findings);
    assert!((ev.score.unwrap().tc - 1.0).abs() < 1e-9);
    // The recorded capture is the real server's, byte for byte.
    assert_eq!(
        std::fs::read_to_string(root.join("harnesses/memory.tools.json")).unwrap(),
        std::fs::read_to_string(repo().join("harnesses/memory.tools.json")).unwrap()
    );
    // The twin of the recording answers the same calls with the same outputs.
    let mut s = session(&suite, Options::default());
    for (i, ((tool, args), out)) in calls.iter().zip(&outputs).enumerate() {
        let r = call(&mut s, i as u64 + 1, tool, args.clone());
        assert_eq!(&r["result"], out, "{tool}");
    }
    assert_eq!(s.attribution().unwrap(), "session");
}
