//! `serve --http ADDR`: the twin over streamable HTTP, one endpoint (`/mcp`), both revisions.
//!
//! A request with the 2026-07-28 `_meta` is served statelessly: its `MCP-Protocol-Version`,
//! `Mcp-Method`, `Mcp-Name` and `Mcp-Param-*` headers must match the body (`400`, `-32020`
//! otherwise), an unsupported version is `400` with `-32022`, an unknown method `404`. A
//! request without it is the session-based revision: `initialize` mints an `Mcp-Session-Id`
//! every later request carries (`400` without one, `404` for one we never gave), and `DELETE`
//! ends it. Every answer is one JSON body; notifications and responses get `202`; `GET` (a
//! server-to-client stream, which the mock never needs) is `405`. An `Origin` that is not this
//! machine is `403` (DNS rebinding): parsed whole, scheme, loopback host and port, nothing else
//! ([`local_origin`]). A body that is too long is `413`; one that cannot be read (a malformed
//! chunk) `400`.
//!
//! Connections are bounded: at most [`max_connections`] at once (the descriptor limit less a
//! reserve; more are closed as they arrive), each closed after [`IDLE`] without a request, and
//! running out of descriptors waits for some to close instead of ending the server.

use std::collections::HashSet;
use std::convert::Infallible;
use std::hash::{BuildHasher, Hasher};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use http_body_util::{BodyExt, Full, Limited};
use hyper::body::{Bytes, Incoming};
use hyper::{Request, Response, StatusCode};
use serde_json::Value;

use super::{Answer, Recording, RpcError, Session, error_answer, lock};
use crate::mcp::{MAX_LINE, ParamHeaders, code, meta, unbase64};

struct State {
    session: Mutex<Session<'static>>,
    // Legacy sessions handed out and not yet ended.
    sessions: Mutex<HashSet<String>>,
    record: Option<PathBuf>,
    // Each tool's `x-mcp-header` parameters.
    param_headers: Vec<(String, ParamHeaders)>,
    // The first recording that could not be written: the session ends with it.
    failed: Mutex<Option<std::io::Error>>,
    // How many calls the recording on disk holds; held while one is written.
    on_disk: Mutex<usize>,
}

impl State {
    /// The recording of `s` (the session, under its lock), counted written
    /// ([`Session::written`]: the calls that come while it is written do not ask for
    /// another), when there is one to make and `due` says so.
    fn take(
        &self,
        s: &mut Session<'static>,
        due: impl Fn(&Session<'static>) -> bool,
    ) -> Option<std::io::Result<Recording>> {
        self.record.as_ref()?;
        due(s).then(|| {
            let r = s.snapshot()?;
            s.written(r.calls);
            Ok(r)
        })
    }

    /// Writes `r` to the recording's path, on a blocking thread: the file is written and synced
    /// there, off the async threads, with neither the session's lock held nor a worker stalled.
    /// Writes finish out of order: one older than the file on disk is dropped.
    async fn write(self: &Arc<Self>, r: std::io::Result<Recording>) -> std::io::Result<()> {
        let state = self.clone();
        tokio::task::spawn_blocking(move || state.write_now(&r?))
            .await
            .unwrap_or_else(|e| Err(std::io::Error::other(e)))
    }

    fn write_now(&self, r: &Recording) -> std::io::Result<()> {
        let Some(path) = &self.record else {
            return Ok(());
        };
        let mut on_disk = lock(&self.on_disk);
        if r.calls <= *on_disk {
            return Ok(());
        }
        r.write(path)?;
        *on_disk = r.calls;
        Ok(())
    }

    /// Keeps the first error a write met: the session ends with it.
    fn fail(&self, e: std::io::Error) {
        lock(&self.failed).get_or_insert(e);
    }
}

/// Serves `session` on `listener` until `shutdown` resolves, then gives the session back (for
/// its attribution and findings). Calls are recorded in `record` as they come
/// ([`Session::record_due`]), those left unwritten a second later, and at the end.
pub async fn serve_http(
    session: Session<'static>,
    listener: tokio::net::TcpListener,
    record: Option<PathBuf>,
    shutdown: impl std::future::Future<Output = ()>,
) -> std::io::Result<Session<'static>> {
    let mut param_headers = Vec::new();
    for t in &session.twin.tools {
        let Ok(v) = serde_json::from_str::<Value>(t) else {
            continue;
        };
        let mut found = Vec::new();
        if let Some(schema) = v.get("inputSchema") {
            crate::mcp::param_headers(schema, &mut Vec::new(), &mut found);
        }
        if let (Some(name), false) = (v.get("name").and_then(Value::as_str), found.is_empty()) {
            param_headers.push((name.to_owned(), found));
        }
    }
    let state = Arc::new(State {
        session: Mutex::new(session),
        sessions: Mutex::default(),
        record,
        param_headers,
        failed: Mutex::default(),
        on_disk: Mutex::default(),
    });
    tokio::pin!(shutdown);
    let open = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let cap = max_connections();
    // Calls a batch left unwritten are written a second on, though no call follows.
    let mut tick = tokio::time::interval(std::time::Duration::from_secs(1));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            () = &mut shutdown => break,
            _ = tick.tick() => {
                let due = state.take(&mut lock(&state.session), Session::record_stale);
                if let Some(due) = due {
                    let state = state.clone();
                    tokio::spawn(async move {
                        if let Err(e) = state.write(due).await {
                            state.fail(e);
                        }
                    });
                }
                continue;
            }
        };
        let stream = match accepted {
            Ok((stream, _)) => stream,
            // Out of descriptors (or a connection reset before it was taken): not the end of
            // the server. Wait for connections to close, then accept again (issue 32, item 5:
            // ~1,060 idle connections under a 1,024 limit made it exit).
            Err(_) => {
                tokio::time::sleep(ACCEPT_BACKOFF).await;
                continue;
            }
        };
        // Over the cap: refused (closed at once), so the descriptors left stay enough for the
        // recording and the connections being served.
        if open.load(std::sync::atomic::Ordering::Relaxed) >= cap {
            drop(stream);
            continue;
        }
        open.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let state = state.clone();
        let open = open.clone();
        tokio::spawn(async move {
            let io = hyper_util::rt::TokioIo::new(stream);
            let service = hyper::service::service_fn(move |req| handle(req, state.clone()));
            // A connection that sends no request for IDLE is closed.
            let _ = hyper::server::conn::http1::Builder::new()
                .timer(hyper_util::rt::TokioTimer::new())
                .header_read_timeout(IDLE)
                .serve_connection(io, service)
                .await;
            open.fetch_sub(1, std::sync::atomic::Ordering::Relaxed);
        });
    }
    if let Some(e) = lock(&state.failed).take() {
        return Err(e);
    }
    // Connections still open keep a clone; the session is taken out from under them.
    let mut session = {
        let mut guard = lock(&state.session);
        let empty = Session::with(guard.suite, guard.twin.clone(), guard.options.clone());
        std::mem::replace(&mut *guard, empty)
    };
    // The calls not yet on disk: those a batch left ([`Session::record_due`]), and those of a
    // write still under way, which this one waits for.
    if state.record.is_some() && session.calls() > *lock(&state.on_disk) {
        let r = session.snapshot()?;
        state.write(Ok(r)).await?;
        session.written(session.calls());
    }
    Ok(session)
}

/// How long a connection may wait before (or between) requests.
const IDLE: std::time::Duration = std::time::Duration::from_secs(30);

/// How long to wait before accepting again after `accept` failed (out of descriptors).
const ACCEPT_BACKOFF: std::time::Duration = std::time::Duration::from_millis(50);

/// How many connections are served at once: the process's descriptor limit less a reserve
/// for everything else it opens (the recording, the runtime), at least 16; 1,024 where the
/// limit cannot be read.
fn max_connections() -> usize {
    const RESERVE: usize = 64;
    let soft = std::fs::read_to_string("/proc/self/limits")
        .ok()
        .and_then(|t| {
            t.lines()
                .find(|l| l.starts_with("Max open files"))
                .and_then(|l| l.split_whitespace().nth(3))
                .and_then(|n| n.parse::<usize>().ok())
        });
    soft.map_or(1024, |n| n.saturating_sub(RESERVE).max(16))
}

type Reply = Response<Full<Bytes>>;

fn respond(status: StatusCode, body: Option<String>, session: Option<&str>) -> Reply {
    let mut b = Response::builder().status(status);
    if body.is_some() {
        b = b.header("content-type", "application/json");
    }
    if let Some(s) = session {
        b = b.header("mcp-session-id", s);
    }
    b.body(Full::new(Bytes::from(body.unwrap_or_default())))
        .unwrap_or_else(|_| Response::new(Full::new(Bytes::new())))
}

fn rpc_error(status: StatusCode, id: &Value, code: i64, message: impl Into<String>) -> Reply {
    let a = error_answer(id, RpcError::new(code, message));
    respond(status, a.reply, None)
}

/// The status an answer goes back with: the 2026-07-28 transport's for its errors, 200 else.
fn status_of(a: &Answer) -> StatusCode {
    match a.error {
        Some(code::UNSUPPORTED_VERSION | code::HEADER_MISMATCH | code::MISSING_CAPABILITY) => {
            StatusCode::BAD_REQUEST
        }
        Some(-32700 | -32600) => StatusCode::BAD_REQUEST,
        _ => StatusCode::OK,
    }
}

async fn handle(req: Request<Incoming>, state: Arc<State>) -> Result<Reply, Infallible> {
    if req.uri().path() != "/mcp" {
        return Ok(respond(StatusCode::NOT_FOUND, None, None));
    }
    if let Some(origin) = req.headers().get("origin")
        && !origin.to_str().is_ok_and(local_origin)
    {
        return Ok(rpc_error(
            StatusCode::FORBIDDEN,
            &Value::Null,
            -32000,
            "Forbidden: the Origin is not this machine",
        ));
    }
    let session_id = req
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    match *req.method() {
        hyper::Method::POST => {}
        hyper::Method::DELETE => {
            let mut sessions = lock(&state.sessions);
            return Ok(match session_id {
                Some(s) if sessions.remove(&s) => respond(StatusCode::OK, None, None),
                Some(_) => respond(StatusCode::NOT_FOUND, None, None),
                None => respond(StatusCode::METHOD_NOT_ALLOWED, None, None),
            });
        }
        _ => {
            let mut r = respond(StatusCode::METHOD_NOT_ALLOWED, None, None);
            r.headers_mut().insert(
                "allow",
                hyper::header::HeaderValue::from_static("POST, DELETE"),
            );
            return Ok(r);
        }
    }
    let headers = req.headers().clone();
    let body = match Limited::new(req.into_body(), MAX_LINE).collect().await {
        Ok(b) => b.to_bytes(),
        Err(e) if e.is::<http_body_util::LengthLimitError>() => {
            return Ok(rpc_error(
                StatusCode::PAYLOAD_TOO_LARGE,
                &Value::Null,
                -32700,
                format!("Parse error: a body longer than {} MiB", MAX_LINE >> 20),
            ));
        }
        // A malformed chunked body (issue 32, item 15) is the client's error, not a size.
        Err(e) => {
            return Ok(rpc_error(
                StatusCode::BAD_REQUEST,
                &Value::Null,
                -32700,
                format!("Parse error: the body could not be read: {e}"),
            ));
        }
    };
    let get = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    };
    let msg: Value = match serde_json::from_slice(&body) {
        Ok(v) => v,
        Err(e) => {
            return Ok(rpc_error(
                StatusCode::BAD_REQUEST,
                &Value::Null,
                -32700,
                format!("Parse error: {e}"),
            ));
        }
    };
    let id = msg.get("id").cloned().unwrap_or(Value::Null);
    let method = msg.get("method").and_then(Value::as_str).map(str::to_owned);
    // Notifications and responses: accepted, nothing to answer.
    let has = |k: &str| msg.get(k).is_some();
    if msg.is_object()
        && ((has("method") && !has("id")) || (!has("method") && (has("result") || has("error"))))
    {
        return Ok(respond(StatusCode::ACCEPTED, None, None));
    }
    let params = msg.get("params").cloned().unwrap_or(Value::Null);
    // Stateless when the body's `_meta` or the version header says 2026-07-28.
    let header_modern = get("mcp-protocol-version").as_deref() == Some(crate::mcp::MODERN_VERSION);
    let modern = params
        .get("_meta")
        .and_then(|m| m.get(meta::VERSION))
        .cloned()
        .or_else(|| header_modern.then(|| Value::from(crate::mcp::MODERN_VERSION)));
    let mut minted = None;
    if let Some(version) = &modern {
        if let Err(why) = check_headers(&get, &msg, version, &state.param_headers) {
            return Ok(rpc_error(
                StatusCode::BAD_REQUEST,
                &id,
                code::HEADER_MISMATCH,
                format!("Header mismatch: {why}"),
            ));
        }
    } else if method.as_deref() != Some("initialize") && msg.is_object() {
        let known = {
            let sessions = lock(&state.sessions);
            session_id.as_ref().map(|s| sessions.contains(s))
        };
        match known {
            None => {
                return Ok(rpc_error(
                    StatusCode::BAD_REQUEST,
                    &id,
                    -32000,
                    "Bad Request: no Mcp-Session-Id header (send `initialize` first, or the \
                     2026-07-28 `_meta` for a stateless request)",
                ));
            }
            Some(false) => {
                return Ok(rpc_error(
                    StatusCode::NOT_FOUND,
                    &id,
                    -32001,
                    "Session not found",
                ));
            }
            Some(true) => {}
        }
    }
    // The answer, and the recording when this call makes it due, under one lock: no other
    // call's write comes between them.
    let (mut answer, due) = {
        let mut s = lock(&state.session);
        let before = s.calls();
        s.stateless = modern.is_some();
        let a = s.answer_message(&msg);
        s.stateless = false;
        let due = state.take(&mut s, |s| s.calls() > before && s.record_due());
        (a, due)
    };
    // The recording is written before the answer goes: a client whose call could not be
    // recorded is told so.
    if let Some(due) = due
        && let Err(e) = state.write(due).await
    {
        answer = error_answer(&id, RpcError::new(-32603, format!("Internal error: {e}")));
        state.fail(e);
    }
    if answer.initialized && modern.is_none() {
        let s = new_session_id();
        lock(&state.sessions).insert(s.clone());
        minted = Some(s);
    }
    if !answer.delay.is_zero() {
        tokio::time::sleep(answer.delay).await;
    }
    let status = match (modern.is_some(), answer.error) {
        _ if answer.malformed => StatusCode::BAD_REQUEST,
        (true, Some(-32601)) => StatusCode::NOT_FOUND,
        _ => status_of(&answer),
    };
    Ok(respond(status, answer.reply, minted.as_deref()))
}

/// Whether an `Origin` is this machine: `http` or `https`, then exactly a loopback host —
/// `localhost`, an IPv4 address in 127.0.0.0/8, `[::1]` or an IPv4-mapped loopback
/// (`[::ffff:127.0.0.1]`) — and an optional port, nothing else. Anything else, `null` and
/// `file://` included, is another site (the DNS-rebinding protection the MCP spec asks for;
/// issue 32, item 4: `http://[::ffff:8.8.8.8]`, `http://`, `http://:80` and
/// `http://[::1].evil.example` were let through).
fn local_origin(origin: &str) -> bool {
    let Some(rest) = origin
        .strip_prefix("http://")
        .or_else(|| origin.strip_prefix("https://"))
    else {
        return false;
    };
    let (host, port, bracketed) = match rest.strip_prefix('[') {
        Some(r) => {
            let Some((host, after)) = r.split_once(']') else {
                return false;
            };
            let port = match after {
                "" => None,
                a => match a.strip_prefix(':') {
                    Some(p) => Some(p),
                    None => return false,
                },
            };
            (host, port, true)
        }
        None => match rest.split_once(':') {
            Some((h, p)) => (h, Some(p), false),
            None => (rest, None, false),
        },
    };
    let port_ok = port.is_none_or(|p| {
        !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()) && p.parse::<u16>().is_ok()
    });
    let host_ok = if bracketed {
        host.parse::<std::net::Ipv6Addr>().is_ok_and(|ip| {
            ip.is_loopback() || ip.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback())
        })
    } else {
        host.eq_ignore_ascii_case("localhost")
            || host
                .parse::<std::net::Ipv4Addr>()
                .is_ok_and(|ip| ip.is_loopback())
    };
    port_ok && host_ok
}

/// Whether the 2026-07-28 request headers match the body.
fn check_headers(
    get: &dyn Fn(&str) -> Option<String>,
    msg: &Value,
    version: &Value,
    param_headers: &[(String, ParamHeaders)],
) -> Result<(), String> {
    let decoded = |v: String| -> Result<String, String> {
        match v
            .strip_prefix("=?base64?")
            .and_then(|r| r.strip_suffix("?="))
        {
            Some(b) => unbase64(b)
                .and_then(|b| String::from_utf8(b).ok())
                .ok_or_else(|| format!("`{v}` is not valid Base64 of UTF-8")),
            None => Ok(v),
        }
    };
    let want = |name: &str, body: &str| -> Result<(), String> {
        match get(name) {
            None => Err(format!("the {name} header is required")),
            Some(h) => {
                let h = decoded(h)?;
                if h == body {
                    Ok(())
                } else {
                    Err(format!(
                        "{name} header value '{h}' does not match body value '{body}'"
                    ))
                }
            }
        }
    };
    want("mcp-protocol-version", version.as_str().unwrap_or_default())?;
    let method = msg
        .get("method")
        .and_then(Value::as_str)
        .unwrap_or_default();
    want("mcp-method", method)?;
    let params = msg.get("params").cloned().unwrap_or(Value::Null);
    if matches!(method, "tools/call" | "prompts/get" | "resources/read") {
        let name = params
            .get("name")
            .or_else(|| params.get("uri"))
            .and_then(Value::as_str)
            .unwrap_or_default();
        want("mcp-name", name)?;
    }
    if method == "tools/call" {
        let tool = params
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let args = params.get("arguments");
        for (t, paths) in param_headers {
            if t != tool {
                continue;
            }
            for (path, header) in paths {
                let mut v = args;
                for p in path {
                    v = v.and_then(|v| v.get(p));
                }
                let name = format!("mcp-param-{}", header.to_ascii_lowercase());
                let body = match v {
                    None | Some(Value::Null) => None,
                    Some(Value::String(s)) => Some(s.clone()),
                    Some(other) => Some(other.to_string()),
                };
                match (get(&name), body) {
                    (None, None) => {}
                    (Some(_), None) => {
                        return Err(format!("{name} is sent but the argument is absent"));
                    }
                    (None, Some(_)) => return Err(format!("the {name} header is required")),
                    (Some(h), Some(b)) => {
                        let h = decoded(h)?;
                        let same = h == b
                            || matches!((h.parse::<f64>(), b.parse::<f64>()), (Ok(x), Ok(y)) if x == y);
                        if !same {
                            return Err(format!(
                                "{name} header value '{h}' does not match body value '{b}'"
                            ));
                        }
                    }
                }
            }
        }
    }
    Ok(())
}

/// A session id nobody can guess from the last: 128 bits from the standard library's random
/// hasher keys, as hex.
fn new_session_id() -> String {
    let mut out = String::new();
    for _ in 0..2 {
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u128(
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or_default(),
        );
        out.push_str(&format!("{:016x}", h.finish()));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[rstest::rstest]
    #[case("http://localhost", true)]
    #[case("http://localhost:8080", true)]
    #[case("https://LOCALHOST:443", true)]
    #[case("http://127.0.0.1:3000", true)]
    #[case("http://127.1.2.3", true)]
    #[case("http://[::1]", true)]
    #[case("http://[::1]:8080", true)]
    #[case("http://[::ffff:127.0.0.1]", true)]
    #[case("http://[::ffff:8.8.8.8]", false)]
    #[case("http://[::ffff:808:808]", false)]
    #[case("http://", false)]
    #[case("file://", false)]
    #[case("null", false)]
    #[case("http://:80", false)]
    #[case("http://[::1].evil.example", false)]
    #[case("http://[::1]evil", false)]
    #[case("http://localhost.evil.example", false)]
    #[case("http://127.0.0.1.evil.example", false)]
    #[case("http://evil.example", false)]
    #[case("http://localhost:", false)]
    #[case("http://localhost:99999", false)]
    #[case("http://localhost/path", false)]
    #[case("http://user@localhost", false)]
    #[case("http://[", false)]
    #[case("ftp://localhost", false)]
    fn only_this_machine_is_a_local_origin(#[case] origin: &str, #[case] local: bool) {
        assert_eq!(local_origin(origin), local, "{origin}");
    }

    /// Each recording write runs on a blocking thread, so two can finish in either order: the
    /// one older than the file on disk is dropped, never written over the later one.
    #[test]
    fn an_older_recording_never_overwrites_a_later_one() {
        use super::super::tests::{load, memory, read_graph_lines};
        let suite: &'static crate::check::Suite = Box::leak(Box::new(memory()));
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("rec.yaml");
        let mut session = Session::new(suite);
        // The recording after each of two calls (the first line initializes).
        let mut snapshots = Vec::new();
        for line in read_graph_lines(2)
            .split(|b| *b == b'\n')
            .filter(|l| !l.is_empty())
        {
            session.handle(line);
            snapshots.push(session.snapshot().unwrap());
        }
        let state = State {
            session: Mutex::new(Session::new(suite)),
            sessions: Mutex::default(),
            record: Some(path.clone()),
            param_headers: Vec::new(),
            failed: Mutex::default(),
            on_disk: Mutex::default(),
        };
        let written = || {
            load(std::fs::read_to_string(&path).unwrap())
                .calls()
                .count()
        };
        state.write_now(&snapshots[2]).unwrap();
        assert_eq!(written(), 2);
        state.write_now(&snapshots[1]).unwrap();
        assert_eq!(written(), 2);
    }
}
