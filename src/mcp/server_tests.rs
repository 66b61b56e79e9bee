use serde_json::json;

use super::*;
use crate::harness::{Transcript, UNPARSABLE};
use crate::source::SourceFile;

fn load(text: String) -> Transcript {
    Transcript::from_source(SourceFile::from_text("t.yaml", text), "t".into()).unwrap()
}

fn lyria() -> Suite {
    Suite::load(&std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("harnesses/lyria.yaml"))
        .unwrap()
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
    let args: Vec<Value> = t.calls().map(|(_, c)| c.arguments.clone()).collect();
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
    let suite = Suite::load(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("harnesses/memory.yaml"),
    )
    .unwrap();
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
