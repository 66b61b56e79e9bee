//! Any bytes as the lines a client sends `agent-seer serve`: one reply per line that needs
//! one, each a JSON-RPC 2.0 response (a result or an error, with the request's id or null),
//! never a panic, and the session goes on after a bad line.
#![no_main]
use std::sync::OnceLock;

use agent_seer::check::Suite;
use agent_seer::mcp::server::Session;
use libfuzzer_sys::fuzz_target;

fn suite() -> &'static Suite {
    static SUITE: OnceLock<Suite> = OnceLock::new();
    SUITE.get_or_init(|| {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../harnesses/lyria.yaml");
        Suite::load(std::path::Path::new(path)).expect("the lyria suite")
    })
}

fuzz_target!(|data: &[u8]| {
    let mut session = Session::new(suite());
    for line in data.split(|&b| b == b'\n') {
        let Some(reply) = session.handle(line) else { continue };
        let obj = reply.as_object().expect("a reply is an object");
        assert_eq!(obj["jsonrpc"], "2.0");
        assert!(obj.contains_key("id"), "{reply}");
        assert!(
            obj.contains_key("result") != obj.contains_key("error"),
            "one of result and error: {reply}"
        );
        if let Some(e) = obj.get("error") {
            assert!(e["code"].is_i64() && e["message"].is_string(), "{reply}");
        }
    }
    // Still answering after whatever came before.
    let ping = session.handle(br#"{"jsonrpc": "2.0", "id": 1, "method": "ping"}"#);
    assert_eq!(ping.expect("a ping reply")["result"], serde_json::json!({}));
});
