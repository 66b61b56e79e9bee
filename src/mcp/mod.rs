//! MCP over stdio: a client that starts a real server and reads its tools, and a mock server
//! that answers from a harness.
//!
//! The client speaks newline-delimited JSON-RPC 2.0 itself rather than through an SDK, so
//! `tools/list` comes back exactly as the server sent it (a typed SDK drops fields it does not
//! know, and `inspect` must save what the server says). It starts the child, `initialize`s,
//! sends `notifications/initialized`, pages through `tools/list` (`nextCursor`), and stops
//! only the child it started. Every request has a timeout; a server that hangs, exits or
//! writes something other than JSON-RPC to stdout ends in an [`McpError`] carrying the tail of
//! its stderr. A reply whose id is not the request's is named at once (a server that mixes up
//! ids would otherwise look like one that hangs). What is held is bounded: a stdout line (one
//! message) at [`MAX_LINE`], the stderr tail at 20 lines and [`STDERR_QUOTED`] bytes. The main
//! types are [`Client`] (built with [`Client::start`]) and the mock [`server::serve`].

pub mod server;

use std::collections::{BTreeSet, VecDeque};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

/// The MCP protocol version we ask for.
pub(crate) const PROTOCOL_VERSION: &str = "2025-06-18";

/// The longest line (one JSON-RPC message) read from a peer's stdio, 16 MiB: a longer one is an
/// error rather than memory without bound (a server once wrote 3 GB without a newline).
pub const MAX_LINE: usize = 16 << 20;

/// At most this much of the server's stderr is quoted in an error (the newest lines first);
/// a single line is cut at [`STDERR_LINE`] bytes.
pub const STDERR_QUOTED: usize = 4 << 10;

/// Where one stderr line is cut for quoting.
pub const STDERR_LINE: usize = 1 << 10;

/// How many characters of an unexpected stdout message an error quotes.
const SHOWN: usize = 200;

/// Why talking to a server failed, with what it printed on stderr last.
#[derive(Debug, thiserror::Error)]
#[error("{message}{}", tail(.stderr))]
pub struct McpError {
    /// What went wrong, e.g. the server could not start, exited, did not answer in time,
    /// answered with a JSON-RPC error, or wrote something that is not JSON-RPC.
    pub message: String,
    /// The server's last stderr lines, oldest first: up to 20 lines and [`STDERR_QUOTED`]
    /// bytes, a long line cut at [`STDERR_LINE`] bytes.
    pub stderr: Vec<String>,
}

fn tail(lines: &[String]) -> String {
    if lines.is_empty() {
        String::new()
    } else {
        format!(
            "\nthe server's stderr ended with:\n  {}",
            lines.join("\n  ")
        )
    }
}

/// What `initialize` told us.
#[derive(Clone, Debug, serde::Serialize)]
pub struct ServerInfo {
    /// `serverInfo.name` (empty when missing).
    pub name: String,
    /// `serverInfo.version` (empty when missing).
    pub version: String,
    /// The protocol version the server chose (empty when missing).
    pub protocol_version: String,
    /// The server's `capabilities` object, as sent (null when missing).
    pub capabilities: Value,
    /// The server's `instructions`, if it sent any.
    pub instructions: Option<String>,
}

/// A running server and our side of its stdio.
pub struct Client {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    // The stdout line being read (kept across a cancelled read).
    line: Vec<u8>,
    stderr: Arc<Mutex<VecDeque<String>>>,
    next_id: u64,
    // Requests that timed out: a late answer to one is skipped, not taken for a wrong id.
    abandoned: BTreeSet<u64>,
    timeout: Duration,
    /// What `initialize` returned; always set once [`Client::start`] succeeds.
    pub info: Option<ServerInfo>,
}

impl Client {
    /// Starts `program args…` with piped stdio and runs the `initialize` handshake.
    pub async fn start(
        program: &str,
        args: &[String],
        envs: &[(String, String)],
        timeout: Duration,
    ) -> Result<Self, McpError> {
        let mut cmd = Command::new(program);
        cmd.args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        for (k, v) in envs {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().map_err(|e| McpError {
            message: format!("cannot start `{program}`: {e}"),
            stderr: Vec::new(),
        })?;
        let (Some(stdin), Some(stdout), Some(stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            return Err(McpError {
                message: "the child's stdio was not piped".into(),
                stderr: Vec::new(),
            });
        };
        let ring: Arc<Mutex<VecDeque<String>>> = Arc::default();
        let sink = ring.clone();
        tokio::spawn(async move {
            let mut stderr = BufReader::new(stderr);
            let mut buf = Vec::new();
            loop {
                buf.clear();
                let end = match read_line(&mut stderr, &mut buf, STDERR_LINE).await {
                    Ok(LineEnd::Eof) | Err(_) => break,
                    Ok(end) => end,
                };
                let mut line = String::from_utf8_lossy(&buf).into_owned();
                if end == LineEnd::TooLong {
                    line.push_str(&format!("… [line cut at {STDERR_LINE} bytes]"));
                }
                {
                    let mut r = sink.lock().unwrap_or_else(|p| p.into_inner());
                    if r.len() == 20 {
                        r.pop_front();
                    }
                    r.push_back(line);
                }
                if end == LineEnd::TooLong && skip_line(&mut stderr).await.is_err() {
                    break;
                }
            }
        });
        let mut client = Client {
            child,
            stdin,
            stdout: BufReader::new(stdout),
            line: Vec::new(),
            stderr: ring,
            next_id: 1,
            abandoned: BTreeSet::new(),
            timeout,
            info: None,
        };
        let result = client
            .request(
                "initialize",
                json!({"protocolVersion": PROTOCOL_VERSION, "capabilities": {}, "clientInfo": {"name": "agent-seer", "version": env!("CARGO_PKG_VERSION")}}),
            )
            .await?;
        let s = |p: &str| {
            result
                .pointer(p)
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned()
        };
        client.info = Some(ServerInfo {
            name: s("/serverInfo/name"),
            version: s("/serverInfo/version"),
            protocol_version: s("/protocolVersion"),
            capabilities: result.get("capabilities").cloned().unwrap_or(Value::Null),
            instructions: result
                .get("instructions")
                .and_then(Value::as_str)
                .map(str::to_owned),
        });
        client
            .notify("notifications/initialized", json!({}))
            .await?;
        Ok(client)
    }

    fn error(&self, message: impl Into<String>) -> McpError {
        let ring = self.stderr.lock().unwrap_or_else(|p| p.into_inner());
        // The newest lines that fit in the budget.
        let mut budget = STDERR_QUOTED;
        let mut stderr: Vec<String> = ring
            .iter()
            .rev()
            .take_while(|l| match budget.checked_sub(l.len()) {
                Some(left) => {
                    budget = left;
                    true
                }
                None => false,
            })
            .cloned()
            .collect();
        stderr.reverse();
        McpError {
            message: message.into(),
            stderr,
        }
    }

    async fn send(&mut self, msg: &Value) -> Result<(), McpError> {
        let mut line = serde_json::to_string(msg).unwrap_or_default();
        line.push('\n');
        let r = self.stdin.write_all(line.as_bytes()).await;
        let r = match r {
            Ok(()) => self.stdin.flush().await,
            Err(e) => Err(e),
        };
        match r {
            Ok(()) => Ok(()),
            Err(e) => {
                let what = msg
                    .get("method")
                    .and_then(Value::as_str)
                    .unwrap_or("a message")
                    .to_owned();
                Err(self
                    .exited(&format!("`{what}` could not be sent ({e})"))
                    .await)
            }
        }
    }

    /// The error for a server that went away: waits briefly so its last stderr lines are read,
    /// and names its exit status.
    async fn exited(&mut self, what: &str) -> McpError {
        let status = tokio::time::timeout(Duration::from_millis(500), self.child.wait()).await;
        tokio::time::sleep(Duration::from_millis(50)).await;
        let status = match status {
            Ok(Ok(s)) => format!(" ({s})"),
            _ => String::new(),
        };
        self.error(format!("the server exited{status}: {what}"))
    }

    /// Sends a JSON-RPC notification (no id, no answer awaited).
    pub(crate) async fn notify(&mut self, method: &str, params: Value) -> Result<(), McpError> {
        self.send(&json!({"jsonrpc": "2.0", "method": method, "params": params}))
            .await
    }

    /// Sends a request and waits for its response (server requests and notifications that
    /// arrive meanwhile are answered or skipped). A response with another id (a string, a
    /// float, null, none) is an error at once; at the timeout, the error quotes the last
    /// message that was neither an answer nor a notification.
    pub async fn request(&mut self, method: &str, params: Value) -> Result<Value, McpError> {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await?;
        // `--timeout 18446744073709551615` does not fit in an instant: no deadline then.
        let deadline = tokio::time::Instant::now().checked_add(self.timeout);
        let mut unmatched: Option<String> = None;
        loop {
            let read = read_line(&mut self.stdout, &mut self.line, MAX_LINE);
            let read = match deadline {
                Some(d) => tokio::time::timeout_at(d, read).await,
                None => Ok(read.await),
            };
            match read {
                Err(_) => {
                    self.abandoned.insert(id);
                    let last = unmatched
                        .map(|m| format!("; the last message that answered nothing: {m}"))
                        .unwrap_or_default();
                    return Err(self.error(format!(
                        "`{method}` got no answer within {:?}{last}",
                        self.timeout
                    )));
                }
                Ok(Err(e)) => {
                    return Err(self.error(format!("cannot read the server's stdout: {e}")));
                }
                Ok(Ok(LineEnd::Eof)) => {
                    return Err(self.exited(&format!("no answer to `{method}`")).await);
                }
                Ok(Ok(LineEnd::TooLong)) => {
                    return Err(self.error(format!(
                        "the server wrote a stdout line longer than {} MiB (the most one JSON-RPC \
                         message may take) while `{method}` waited for its answer: {}…",
                        MAX_LINE >> 20,
                        shown(&self.line)
                    )));
                }
                Ok(Ok(LineEnd::Line)) => {}
            }
            let line = std::mem::take(&mut self.line);
            if line.trim_ascii().is_empty() {
                continue;
            }
            let msg: Value = serde_json::from_slice(&line).map_err(|e| {
                self.error(format!(
                    "the server wrote something that is not JSON-RPC to stdout ({e}): {:?}",
                    shown(&line)
                ))
            })?;
            let rid = msg.get("id");
            match msg.get("method") {
                // A request from the server (ping, roots/list, …): answer ping, refuse the rest.
                Some(m) if rid.is_some() => {
                    let reply = if m == "ping" {
                        json!({"jsonrpc": "2.0", "id": rid, "result": {}})
                    } else {
                        json!({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "not supported by agent-seer"}})
                    };
                    self.send(&reply).await?;
                }
                // A notification.
                Some(_) => {}
                None if rid.is_none()
                    && msg.get("result").is_none()
                    && msg.get("error").is_none() =>
                {
                    unmatched = Some(shown(&line));
                }
                None => {
                    let got = rid.and_then(Value::as_u64);
                    if got == Some(id) {
                        if let Some(err) = msg.get("error") {
                            return Err(self.error(format!("`{method}` failed: {err}")));
                        }
                        return Ok(msg.get("result").cloned().unwrap_or(Value::Null));
                    }
                    if got.is_some_and(|g| self.abandoned.contains(&g)) {
                        continue; // a late answer to a request that timed out
                    }
                    let with = match rid {
                        Some(v) => format!("id {v}"),
                        None => "no id".to_owned(),
                    };
                    let message = match msg.get("error") {
                        Some(err) => format!(
                            "`{method}` failed: the server answered with an error and {with} \
                             (expected {id}): {err}"
                        ),
                        None => format!(
                            "the server answered `{method}` with {with}, expected {id}: {}",
                            shown(&line)
                        ),
                    };
                    return Err(self.error(message));
                }
            }
        }
    }

    /// Every tool, following `nextCursor`, exactly as the server sent them.
    pub async fn list_tools(&mut self) -> Result<Vec<Value>, McpError> {
        let mut tools = Vec::new();
        let mut cursor: Option<String> = None;
        for _ in 0..1000 {
            let params = match &cursor {
                Some(c) => json!({"cursor": c}),
                None => json!({}),
            };
            let page = self.request("tools/list", params).await?;
            let items = page
                .get("tools")
                .and_then(Value::as_array)
                .ok_or_else(|| self.error("tools/list answered without a `tools` array"))?;
            tools.extend(items.iter().cloned());
            match page.get("nextCursor").and_then(Value::as_str) {
                Some(c) if !c.is_empty() => cursor = Some(c.to_owned()),
                _ => return Ok(tools),
            }
        }
        Err(self.error("tools/list kept paging past 1000 pages"))
    }

    /// Calls a tool; the result is the server's `CallToolResult`.
    pub async fn call_tool(&mut self, name: &str, arguments: &Value) -> Result<Value, McpError> {
        self.request("tools/call", json!({"name": name, "arguments": arguments}))
            .await
    }

    /// Closes stdin (the polite way to end a stdio server), then stops the child if it has not
    /// exited within a second. Only this child is touched.
    pub async fn close(mut self) {
        let _ = self.stdin.shutdown().await;
        drop(self.stdin);
        if tokio::time::timeout(Duration::from_secs(1), self.child.wait())
            .await
            .is_err()
        {
            let _ = self.child.kill().await;
        }
    }
}

/// The first [`SHOWN`] characters of a line, for an error.
fn shown(line: &[u8]) -> String {
    String::from_utf8_lossy(line).chars().take(SHOWN).collect()
}

/// How a [`read_line`] ended.
#[derive(Debug, PartialEq, Eq)]
enum LineEnd {
    /// A whole line is in the buffer (its `\n` consumed, not stored), or the last line before
    /// the end of the stream.
    Line,
    /// The stream ended and the buffer is empty.
    Eof,
    /// The line reached the cap before its end; the buffer holds its first `cap` bytes and the
    /// rest is unread.
    TooLong,
}

/// Appends the next line of `r` (without its `\n`) to `buf`, storing at most `cap` bytes in
/// all, so a peer that never ends a line cannot make us buffer without bound. Cancel-safe:
/// what was read stays in `buf`, and a later call goes on from there.
async fn read_line<R: AsyncBufRead + Unpin>(
    r: &mut R,
    buf: &mut Vec<u8>,
    cap: usize,
) -> std::io::Result<LineEnd> {
    loop {
        let avail = r.fill_buf().await?;
        if avail.is_empty() {
            return Ok(if buf.is_empty() {
                LineEnd::Eof
            } else {
                LineEnd::Line
            });
        }
        let newline = avail.iter().position(|&b| b == b'\n');
        let take = newline.unwrap_or(avail.len());
        let room = cap.saturating_sub(buf.len());
        if take > room {
            buf.extend_from_slice(&avail[..room]);
            r.consume(room);
            return Ok(LineEnd::TooLong);
        }
        buf.extend_from_slice(&avail[..take]);
        r.consume(take + usize::from(newline.is_some()));
        if newline.is_some() {
            return Ok(LineEnd::Line);
        }
    }
}

/// Consumes the rest of a line without storing it.
async fn skip_line<R: AsyncBufRead + Unpin>(r: &mut R) -> std::io::Result<()> {
    loop {
        let avail = r.fill_buf().await?;
        if avail.is_empty() {
            return Ok(());
        }
        match avail.iter().position(|&b| b == b'\n') {
            Some(i) => {
                r.consume(i + 1);
                return Ok(());
            }
            None => {
                let n = avail.len();
                r.consume(n);
            }
        }
    }
}
