//! MCP over stdio: a client that starts a real server and reads its tools, and a mock server
//! that answers from a harness.
//!
//! The client speaks newline-delimited JSON-RPC 2.0 itself rather than through an SDK, so
//! `tools/list` comes back exactly as the server sent it (a typed SDK drops fields it does not
//! know, and `inspect` must save what the server says). It starts the child, `initialize`s,
//! sends `notifications/initialized`, pages through `tools/list` (`nextCursor`), and stops
//! only the child it started. Every request has a timeout; a server that hangs, exits or
//! writes something other than JSON-RPC to stdout ends in an [`McpError`] carrying the tail of
//! its stderr. The main types are [`Client`] (built with [`Client::start`]) and the mock
//! [`server::serve`].

pub mod server;

use std::collections::VecDeque;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

/// The MCP protocol version we ask for.
pub(crate) const PROTOCOL_VERSION: &str = "2025-06-18";

/// Why talking to a server failed, with what it printed on stderr last.
#[derive(Debug, thiserror::Error)]
#[error("{message}{}", tail(.stderr))]
pub struct McpError {
    /// What went wrong, e.g. the server could not start, exited, did not answer in time,
    /// answered with a JSON-RPC error, or wrote something that is not JSON-RPC.
    pub message: String,
    /// The server's last stderr lines (up to 20), oldest first.
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
    stdout: Lines<BufReader<ChildStdout>>,
    stderr: Arc<Mutex<VecDeque<String>>>,
    next_id: u64,
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
            let mut lines = BufReader::new(stderr).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                let mut r = sink.lock().unwrap_or_else(|p| p.into_inner());
                if r.len() == 20 {
                    r.pop_front();
                }
                r.push_back(line);
            }
        });
        let mut client = Client {
            child,
            stdin,
            stdout: BufReader::new(stdout).lines(),
            stderr: ring,
            next_id: 1,
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
        let stderr = self
            .stderr
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .cloned()
            .collect();
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
    /// arrive meanwhile are answered or skipped).
    pub async fn request(&mut self, method: &str, params: Value) -> Result<Value, McpError> {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await?;
        let deadline = tokio::time::Instant::now() + self.timeout;
        loop {
            let line = match tokio::time::timeout_at(deadline, self.stdout.next_line()).await {
                Err(_) => {
                    return Err(self.error(format!(
                        "`{method}` got no answer within {:?}",
                        self.timeout
                    )));
                }
                Ok(Err(e)) => {
                    return Err(self.error(format!("cannot read the server's stdout: {e}")));
                }
                Ok(Ok(None)) => return Err(self.exited(&format!("no answer to `{method}`")).await),
                Ok(Ok(Some(line))) => line,
            };
            if line.trim().is_empty() {
                continue;
            }
            let msg: Value = serde_json::from_str(&line).map_err(|e| {
                let shown: String = line.chars().take(120).collect();
                self.error(format!(
                    "the server wrote something that is not JSON-RPC to stdout ({e}): {shown:?}"
                ))
            })?;
            if msg.get("id").and_then(Value::as_u64) == Some(id) && msg.get("method").is_none() {
                if let Some(err) = msg.get("error") {
                    return Err(self.error(format!("`{method}` failed: {}", err)));
                }
                return Ok(msg.get("result").cloned().unwrap_or(Value::Null));
            }
            // A request from the server (ping, roots/list, …): answer ping, refuse the rest.
            if let (Some(rid), Some(m)) = (msg.get("id"), msg.get("method").and_then(Value::as_str))
            {
                let reply = if m == "ping" {
                    json!({"jsonrpc": "2.0", "id": rid, "result": {}})
                } else {
                    json!({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "not supported by agent-seer"}})
                };
                self.send(&reply).await?;
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
