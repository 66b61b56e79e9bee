//! Any bytes as what one client sends `serve --http` on a connection (request lines, headers,
//! bodies, chunked or not, several requests kept alive): an HTTP/1.1 answer (HTTP/1.0 to a
//! request that says 1.0) or a closed connection, never a panic or a hang, and the server still
//! answers the next client.
#![no_main]
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::OnceLock;
use std::time::Duration;

use agent_seer::check::Suite;
use agent_seer::mcp::server::{Session, serve_http};
use libfuzzer_sys::fuzz_target;

/// The time suite's twin on a loopback port, served for the whole run.
fn server() -> SocketAddr {
    static SERVER: OnceLock<(tokio::runtime::Runtime, SocketAddr)> = OnceLock::new();
    SERVER
        .get_or_init(|| {
            let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../harnesses/time.yaml");
            let suite: &'static Suite =
                Box::leak(Box::new(Suite::load(std::path::Path::new(path)).expect("time suite")));
            let rt = tokio::runtime::Runtime::new().expect("a runtime");
            let listener = rt
                .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
                .expect("a loopback port");
            let addr = listener.local_addr().expect("its address");
            rt.spawn(serve_http(
                Session::new(suite),
                listener,
                None,
                std::future::pending(),
            ));
            (rt, addr)
        })
        .1
}

/// Sends `bytes`, closes our side when `half_close` (the server then may close without an
/// answer, as HTTP/1.1 servers do), and reads whatever comes back until the server closes.
fn exchange(addr: SocketAddr, bytes: &[u8], half_close: bool) -> Vec<u8> {
    let mut s = TcpStream::connect(addr).expect("the server accepts");
    s.set_read_timeout(Some(Duration::from_secs(15))).expect("a timeout");
    // The server may answer and close before it has read everything: not a failure.
    let _ = s.write_all(bytes);
    if half_close {
        let _ = s.shutdown(std::net::Shutdown::Write);
    }
    let mut got = Vec::new();
    match s.read_to_end(&mut got) {
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => {}
        Err(e) => panic!("the server did not answer or close ({e}) after {got:?}"),
    }
    got
}

const PING: &[u8] = b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nConnection: close\r\nContent-Length: 118\r\n\r\n{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \"initialize\", \"params\": {\"protocolVersion\": \"2025-11-25\", \"capabilities\": {}}}  ";

fuzz_target!(|data: &[u8]| {
    let addr = server();
    let got = exchange(addr, data, true);
    if !got.is_empty() {
        // hyper answers a 1.0 client in 1.0, as it should; whether the answer comes at all races
        // with our half-close.
        assert!(
            got.starts_with(b"HTTP/1.1 ") || got.starts_with(b"HTTP/1.0 "),
            "not an HTTP answer: {:?}",
            String::from_utf8_lossy(&got)
        );
    }
    // Still answering after whatever came before.
    let ok = exchange(addr, PING, false);
    assert!(ok.starts_with(b"HTTP/1.1 200"), "{:?}", String::from_utf8_lossy(&ok));
});
