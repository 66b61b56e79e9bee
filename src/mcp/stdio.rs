//! The stdio transport: a child process we started, newline-delimited JSON-RPC on its stdin
//! and stdout, the tail of its stderr kept for errors.
//!
//! What is held is bounded: a stdout line (one message) at [`MAX_LINE`], the stderr tail at 20
//! lines and [`STDERR_QUOTED`] bytes. A reply whose id is not the request's is named at once (a
//! server that mixes up ids would otherwise look like one that hangs); a late answer to a
//! request that timed out is skipped.

use std::collections::{BTreeSet, VecDeque};
use std::process::Stdio as Piped;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

use super::{MAX_LINE, McpError, Reply, STDERR_LINE, STDERR_QUOTED, answer_server_request, shown};

/// A running server and our side of its stdio.
pub(crate) struct Stdio {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    // The stdout line being read (kept across a cancelled read).
    line: Vec<u8>,
    stderr: Arc<Mutex<VecDeque<String>>>,
    // Requests that timed out: a late answer to one is skipped, not taken for a wrong id.
    abandoned: BTreeSet<u64>,
}

impl Stdio {
    /// Starts `program args…` with piped stdio.
    pub(crate) fn spawn(
        program: &str,
        args: &[String],
        envs: &[(String, String)],
    ) -> Result<Self, McpError> {
        let mut cmd = Command::new(program);
        cmd.args(args)
            .stdin(Piped::piped())
            .stdout(Piped::piped())
            .stderr(Piped::piped())
            .kill_on_drop(true);
        for (k, v) in envs {
            cmd.env(k, v);
        }
        let mut child = cmd
            .spawn()
            .map_err(|e| McpError::new(format!("cannot start `{program}`: {e}")))?;
        let (Some(stdin), Some(stdout), Some(stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            return Err(McpError::new("the child's stdio was not piped"));
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
        Ok(Stdio {
            child,
            stdin,
            stdout: BufReader::new(stdout),
            line: Vec::new(),
            stderr: ring,
            abandoned: BTreeSet::new(),
        })
    }

    /// An error carrying the newest stderr lines that fit in [`STDERR_QUOTED`].
    pub(crate) fn error(&self, message: impl Into<String>) -> McpError {
        let ring = self.stderr.lock().unwrap_or_else(|p| p.into_inner());
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

    pub(crate) async fn send(&mut self, msg: &Value) -> Result<(), McpError> {
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

    /// Whether the child has exited.
    pub(crate) fn has_exited(&mut self) -> bool {
        !matches!(self.child.try_wait(), Ok(None))
    }

    /// Sends request `msg` (whose id is `id`) and waits for its response (server requests and
    /// notifications that arrive meanwhile are answered or skipped). A JSON-RPC error response
    /// is a [`Reply`] too; a response with another id (a string, a float, null, none) is an
    /// error at once; at the timeout, the error quotes the last message that was neither an
    /// answer nor a notification.
    pub(crate) async fn exchange(
        &mut self,
        msg: &Value,
        id: u64,
        timeout: Duration,
    ) -> Result<Reply, McpError> {
        let method = msg
            .get("method")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        self.send(msg).await?;
        // `--timeout 18446744073709551615` does not fit in an instant: no deadline then.
        let deadline = tokio::time::Instant::now().checked_add(timeout);
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
                    return Err(
                        self.error(format!("`{method}` got no answer within {timeout:?}{last}"))
                    );
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
                if crate::source::json_too_deep(&e) {
                    return self.error(format!(
                        "the server wrote a message nested deeper than {} levels of arrays and \
                         objects, the most agent-seer reads: {:?}",
                        crate::source::MAX_JSON_DEPTH,
                        shown(&line)
                    ));
                }
                self.error(format!(
                    "the server wrote something that is not JSON-RPC to stdout ({e}): {:?}",
                    shown(&line)
                ))
            })?;
            let rid = msg.get("id");
            match msg.get("method") {
                // A request from the server (ping, roots/list, …): answer ping, refuse the rest.
                Some(m) if rid.is_some() => {
                    let reply = answer_server_request(m, rid);
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
                        return Ok(Reply { msg, text: line });
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

    /// Closes stdin (the polite way to end a stdio server), then stops the child if it has not
    /// exited within a second. Only this child is touched.
    pub(crate) async fn close(mut self) {
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

/// How a [`read_line`] ended.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum LineEnd {
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
pub(crate) async fn read_line<R: AsyncBufRead + Unpin>(
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
pub(crate) async fn skip_line<R: AsyncBufRead + Unpin>(r: &mut R) -> std::io::Result<()> {
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
