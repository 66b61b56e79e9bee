//! MCP: a client that reads a real server's tools (over stdio or streamable HTTP, in the
//! session-based 2025-11-25 revision or the stateless 2026-07-28 one), and a mock server that
//! answers from a harness as the real server would.
//!
//! The client speaks JSON-RPC 2.0 itself rather than through an SDK, so `tools/list` comes back
//! exactly as the server sent it: every field, in the server's order and spelling (a typed SDK
//! drops or re-spells what it does not know, and `inspect` must save what the server says).
//! [`Client::connect`] starts the child or reaches the URL and settles the revision: `initialize`
//! for the legacy one, per-request `_meta` for the modern one, or — with [`Protocol::Auto`] —
//! the spec's probe (`server/discover` first, the handshake when the server does not know it).
//! Every request has a timeout; a server that hangs, exits or answers something other than
//! JSON-RPC ends in an [`McpError`] carrying the tail of its stderr.
//!
//! The mock is [`server`]: one I/O-free [`server::Session`], served over stdio
//! ([`server::serve`]) or HTTP ([`server::serve_http`]).

mod http;
pub mod proxy;
pub mod server;
mod stdio;

use std::collections::HashMap;
use std::time::Duration;

use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

use crate::redact::Secrets;

/// The session-based revision we ask for in `initialize`.
pub const LEGACY_VERSION: &str = "2025-11-25";

/// The stateless revision: no handshake, version and client in every request's `_meta`.
pub const MODERN_VERSION: &str = "2026-07-28";

/// Every revision the mock serves, newest first (the modern one statelessly, the others
/// through `initialize`).
pub const SUPPORTED_VERSIONS: &[&str] = &[
    MODERN_VERSION,
    LEGACY_VERSION,
    "2025-06-18",
    "2025-03-26",
    "2024-11-05",
];

/// The `_meta` keys of the 2026-07-28 revision.
pub(crate) mod meta {
    pub const VERSION: &str = "io.modelcontextprotocol/protocolVersion";
    pub const CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
    pub const CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
    pub const SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";
}

/// The JSON-RPC error codes the 2026-07-28 revision defines (its reserved range).
pub(crate) mod code {
    pub const HEADER_MISMATCH: i64 = -32020;
    pub const MISSING_CAPABILITY: i64 = -32021;
    pub const UNSUPPORTED_VERSION: i64 = -32022;
}

/// The longest line (one JSON-RPC message) read from a peer, 16 MiB: a longer one is an error
/// rather than memory without bound (a server once wrote 3 GB without a newline).
pub const MAX_LINE: usize = 16 << 20;

/// At most this much of the server's stderr is quoted in an error (the newest lines first);
/// a single line is cut at [`STDERR_LINE`] bytes.
pub const STDERR_QUOTED: usize = 4 << 10;

/// Where one stderr line is cut for quoting.
pub const STDERR_LINE: usize = 1 << 10;

/// How many characters of an unexpected message an error quotes.
const SHOWN: usize = 200;

/// The longest wait for the `server/discover` probe before a stdio server is taken for a
/// legacy one (the spec: legacy servers may not answer an unknown request at all).
const PROBE: Duration = Duration::from_secs(3);

/// Why talking to a server failed, with what it printed on stderr last.
#[derive(Debug, thiserror::Error)]
#[error("{message}{}", tail(.stderr))]
pub struct McpError {
    /// What went wrong, e.g. the server could not start, exited, did not answer in time,
    /// answered with a JSON-RPC error, or wrote something that is not JSON-RPC.
    pub message: String,
    /// The server's last stderr lines, oldest first: up to 20 lines and [`STDERR_QUOTED`]
    /// bytes, a long line cut at [`STDERR_LINE`] bytes. Empty over HTTP.
    pub stderr: Vec<String>,
}

impl McpError {
    fn new(message: impl Into<String>) -> Self {
        McpError {
            message: message.into(),
            stderr: Vec::new(),
        }
    }
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

/// Our answer to a request the server sends us (stdio, or a legacy server's SSE stream):
/// `ping` is answered, anything else (roots, sampling, elicitation) refused as unsupported.
fn answer_server_request(method: &Value, id: Option<&Value>) -> Value {
    if method == "ping" {
        json!({"jsonrpc": "2.0", "id": id, "result": {}})
    } else {
        json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "not supported by agent-seer"}})
    }
}

/// The first [`SHOWN`] characters of a message, for an error.
fn shown(line: &[u8]) -> String {
    String::from_utf8_lossy(line).chars().take(SHOWN).collect()
}

/// Which protocol revision the client speaks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Protocol {
    /// Probe as the 2026-07-28 spec says: `server/discover` with the modern version; a
    /// `DiscoverResult` or a modern error means modern, anything else legacy.
    #[default]
    Auto,
    /// The session-based revision ([`LEGACY_VERSION`]): `initialize`, then requests.
    Legacy,
    /// The stateless revision ([`MODERN_VERSION`]): every request carries its `_meta`.
    Modern,
}

/// Where the server is.
#[derive(Clone, Debug)]
pub enum Endpoint {
    /// A command to start, speaking MCP on its stdio.
    Command {
        /// The program.
        program: String,
        /// Its arguments.
        args: Vec<String>,
        /// Extra environment variables.
        envs: Vec<(String, String)>,
    },
    /// A streamable HTTP endpoint.
    Url {
        /// The MCP endpoint (`http://127.0.0.1:8080/mcp`).
        url: String,
        /// Headers sent on every request (`Authorization`, API keys).
        headers: Vec<(String, String)>,
    },
}

/// What the server said about itself: the `initialize` result (legacy) or the
/// `server/discover` result (modern).
#[derive(Clone, Debug, serde::Serialize)]
pub struct ServerInfo {
    /// `serverInfo.name` (empty when missing).
    pub name: String,
    /// `serverInfo.version` (empty when missing).
    pub version: String,
    /// The protocol version in use (empty when the server named none).
    pub protocol_version: String,
    /// The server's `capabilities` object, as sent (null when missing).
    pub capabilities: Value,
    /// The server's `instructions`, if it sent any.
    pub instructions: Option<String>,
    /// `"legacy"` or `"modern"`.
    pub era: &'static str,
    /// The whole result as the server wrote it (member order and spelling kept): what
    /// `inspect` saves beside the tools for `serve` to present.
    #[serde(skip)]
    pub raw: String,
}

/// One JSON-RPC response (or error response) as the server sent it.
pub(crate) struct Reply {
    /// It, parsed.
    pub msg: Value,
    /// Its text.
    pub text: Vec<u8>,
}

enum Link {
    Stdio(stdio::Stdio),
    Http(http::Http),
}

/// A connection to a server, its revision settled.
pub struct Client {
    link: Link,
    endpoint: Endpoint,
    next_id: u64,
    timeout: Duration,
    modern: bool,
    // The version the legacy handshake settled on (the HTTP `MCP-Protocol-Version`).
    negotiated: String,
    // `x-mcp-header` parameters per tool.
    param_headers: HashMap<String, ParamHeaders>,
    /// What the server said about itself; always set once [`Client::connect`] succeeds.
    pub info: Option<ServerInfo>,
    // The header values the user gave (and the environment's keys): no error or answer this
    // client hands on quotes them (issue 32, item 1).
    secrets: Secrets,
}

/// `e` with every secret value in its message and stderr lines replaced by `[redacted]`.
fn redact_error(secrets: &Secrets, mut e: McpError) -> McpError {
    secrets.redact_in_place(&mut e.message);
    e.stderr.iter_mut().for_each(|l| secrets.redact_in_place(l));
    e
}

impl Client {
    /// Starts `program args…` and runs the legacy handshake (what every stdio server speaks).
    pub async fn start(
        program: &str,
        args: &[String],
        envs: &[(String, String)],
        timeout: Duration,
    ) -> Result<Self, McpError> {
        let endpoint = Endpoint::Command {
            program: program.to_owned(),
            args: args.to_vec(),
            envs: envs.to_vec(),
        };
        Self::connect(endpoint, Protocol::Legacy, timeout).await
    }

    /// Starts or reaches the server and settles the revision.
    pub async fn connect(
        endpoint: Endpoint,
        protocol: Protocol,
        timeout: Duration,
    ) -> Result<Self, McpError> {
        let secrets = match &endpoint {
            Endpoint::Url { headers, .. } => Secrets::of_headers(headers),
            Endpoint::Command { .. } => Secrets::of_headers(&[]),
        };
        Self::connect_inner(endpoint, protocol, timeout, secrets.clone())
            .await
            .map_err(|e| redact_error(&secrets, e))
    }

    async fn connect_inner(
        endpoint: Endpoint,
        protocol: Protocol,
        timeout: Duration,
        secrets: Secrets,
    ) -> Result<Self, McpError> {
        let link = open(&endpoint)?;
        let mut client = Client {
            link,
            endpoint,
            next_id: 1,
            timeout,
            modern: false,
            negotiated: LEGACY_VERSION.to_owned(),
            param_headers: HashMap::new(),
            info: None,
            secrets,
        };
        match protocol {
            Protocol::Legacy => client.initialize().await?,
            Protocol::Modern => {
                client.modern = true;
                match client.discover(timeout).await? {
                    Ok(()) => {}
                    Err(err) => {
                        return Err(client.error(format!(
                            "`server/discover` failed: the server does not speak the \
                             {MODERN_VERSION} revision: {err}"
                        )));
                    }
                }
            }
            Protocol::Auto => {
                client.modern = true;
                let probe = client.discover(PROBE.min(timeout)).await;
                match probe {
                    Ok(Ok(())) => {}
                    Ok(Err(_)) | Err(_) => {
                        client.modern = false;
                        // A legacy server may die of a request before `initialize`.
                        if client.gone() {
                            client.link = open(&client.endpoint)?;
                        }
                        client.initialize_after_probe().await?;
                    }
                }
            }
        }
        Ok(client)
    }

    /// Whether the revision in use is the stateless one.
    pub fn is_modern(&self) -> bool {
        self.modern
    }

    fn gone(&mut self) -> bool {
        match &mut self.link {
            Link::Stdio(s) => s.has_exited(),
            Link::Http(_) => false,
        }
    }

    fn error(&self, message: impl Into<String>) -> McpError {
        match &self.link {
            Link::Stdio(s) => s.error(message),
            Link::Http(_) => McpError::new(message),
        }
    }

    async fn initialize(&mut self) -> Result<(), McpError> {
        let reply = self.initialize_request().await?;
        self.initialized(reply).await
    }

    /// The handshake after a `server/discover` probe that got no modern answer in time. A
    /// modern server that was only slow to start (a Python server importing its SDK under
    /// load) took the probe late and now refuses the handshake with the versions it speaks:
    /// then it is asked `server/discover` again, with the whole timeout.
    async fn initialize_after_probe(&mut self) -> Result<(), McpError> {
        let reply = self.initialize_request().await?;
        let err = reply.msg.get("error");
        let modern_refusal = err.and_then(|e| e.get("code")).and_then(Value::as_i64)
            == Some(code::UNSUPPORTED_VERSION)
            && err
                .and_then(|e| e.pointer("/data/supported"))
                .and_then(Value::as_array)
                .is_some_and(|v| v.iter().any(|v| v == MODERN_VERSION));
        if !modern_refusal {
            return self.initialized(reply).await;
        }
        self.modern = true;
        match self.discover(self.timeout).await? {
            Ok(()) => Ok(()),
            Err(why) => Err(self.error(format!(
                "the server refused the handshake for the {MODERN_VERSION} revision, but \
                 `server/discover` failed: {why}"
            ))),
        }
    }

    async fn initialize_request(&mut self) -> Result<Reply, McpError> {
        self.request_raw(
            "initialize",
            json!({"protocolVersion": LEGACY_VERSION, "capabilities": {}, "clientInfo": client_info()}),
            self.timeout,
        )
        .await
    }

    async fn initialized(&mut self, reply: Reply) -> Result<(), McpError> {
        let (result, raw) = self.result_of("initialize", reply)?;
        let s = |p: &str| {
            result
                .pointer(p)
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned()
        };
        let version = s("/protocolVersion");
        if !version.is_empty() {
            self.negotiated = version.clone();
        }
        self.info = Some(ServerInfo {
            name: s("/serverInfo/name"),
            version: s("/serverInfo/version"),
            protocol_version: version,
            capabilities: result.get("capabilities").cloned().unwrap_or(Value::Null),
            instructions: result
                .get("instructions")
                .and_then(Value::as_str)
                .map(str::to_owned),
            era: "legacy",
            raw,
        });
        self.notify("notifications/initialized", json!({})).await
    }

    /// `server/discover` in the modern revision: `Ok(Err(error))` when the server answered
    /// with something that says it is not modern (or not in our version).
    async fn discover(&mut self, timeout: Duration) -> Result<Result<(), String>, McpError> {
        let reply = self
            .request_raw("server/discover", json!({}), timeout)
            .await?;
        if let Some(err) = reply.msg.get("error") {
            let code = err.get("code").and_then(Value::as_i64);
            let supported = err.pointer("/data/supported").cloned();
            return Ok(Err(match (code, supported) {
                (Some(code::UNSUPPORTED_VERSION), Some(s)) => {
                    format!("it supports {s}, not {MODERN_VERSION}")
                }
                _ => err.to_string(),
            }));
        }
        let (result, raw) = self.result_of("server/discover", reply)?;
        let Some(versions) = result.get("supportedVersions").and_then(Value::as_array) else {
            return Ok(Err("its answer has no `supportedVersions`".into()));
        };
        if !versions.iter().any(|v| v == MODERN_VERSION) {
            return Ok(Err(format!(
                "it supports {}, not {MODERN_VERSION}",
                Value::Array(versions.clone())
            )));
        }
        let info = result
            .pointer(&format!("/_meta/{}", meta::SERVER_INFO.replace('/', "~1")))
            .cloned()
            .unwrap_or(Value::Null);
        let s = |k: &str| info.get(k).and_then(Value::as_str).unwrap_or("").to_owned();
        self.info = Some(ServerInfo {
            name: s("name"),
            version: s("version"),
            protocol_version: MODERN_VERSION.to_owned(),
            capabilities: result.get("capabilities").cloned().unwrap_or(Value::Null),
            instructions: result
                .get("instructions")
                .and_then(Value::as_str)
                .map(str::to_owned),
            era: "modern",
            raw,
        });
        Ok(Ok(()))
    }

    /// The result of a reply (its text too), or the JSON-RPC error as an [`McpError`].
    fn result_of(&self, method: &str, reply: Reply) -> Result<(Value, String), McpError> {
        if let Some(err) = reply.msg.get("error") {
            // Redacted as a value first: its text escapes what a value's text would not.
            let mut err = err.clone();
            self.secrets.redact_json(&mut err);
            return Err(self.error(format!("`{method}` failed: {err}")));
        }
        #[derive(serde::Deserialize)]
        struct Raw<'a> {
            #[serde(borrow)]
            result: Option<&'a RawValue>,
        }
        let raw = serde_json::from_slice::<Raw>(&reply.text)
            .ok()
            .and_then(|r| r.result.map(|r| r.get().to_owned()))
            .unwrap_or_else(|| "null".to_owned());
        Ok((reply.msg.get("result").cloned().unwrap_or(Value::Null), raw))
    }

    /// The request's params with the modern `_meta` added (an object's own `_meta` kept).
    fn params(&self, params: Value) -> Value {
        if !self.modern {
            return params;
        }
        let mut obj = match params {
            Value::Object(o) => o,
            _ => Map::new(),
        };
        let m = obj
            .entry("_meta")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(m) = m {
            m.insert(meta::VERSION.into(), MODERN_VERSION.into());
            m.insert(meta::CLIENT_INFO.into(), client_info());
            m.insert(meta::CLIENT_CAPABILITIES.into(), json!({}));
        }
        Value::Object(obj)
    }

    /// The HTTP headers a request carries: the version, and in the modern revision the
    /// method, the name and the tool's `x-mcp-header` parameters.
    fn headers(&self, method: &str, params: &Value) -> Vec<(String, String)> {
        let mut h = Vec::new();
        if self.modern {
            h.push(("mcp-protocol-version".into(), MODERN_VERSION.into()));
            h.push(("mcp-method".into(), method.into()));
            let name = params.get("name").or_else(|| params.get("uri"));
            if let Some(n) = name.and_then(Value::as_str) {
                h.push(("mcp-name".into(), header_value(n)));
            }
            if method == "tools/call"
                && let Some(n) = params.get("name").and_then(Value::as_str)
                && let Some(paths) = self.param_headers.get(n)
            {
                for (path, header) in paths {
                    let mut v = params.get("arguments");
                    for p in path {
                        v = v.and_then(|v| v.get(p));
                    }
                    let text = match v {
                        Some(Value::String(s)) => Some(s.clone()),
                        Some(Value::Bool(b)) => Some(b.to_string()),
                        Some(Value::Number(n)) => Some(n.to_string()),
                        _ => None,
                    };
                    if let Some(t) = text {
                        h.push((format!("mcp-param-{header}"), header_value(&t)));
                    }
                }
            }
        } else if self.info.is_some() {
            h.push(("mcp-protocol-version".into(), self.negotiated.clone()));
        }
        h
    }

    async fn request_raw(
        &mut self,
        method: &str,
        params: Value,
        timeout: Duration,
    ) -> Result<Reply, McpError> {
        let id = self.next_id;
        self.next_id += 1;
        let params = self.params(params);
        let headers = self.headers(method, &params);
        let msg = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        match &mut self.link {
            Link::Stdio(s) => s.exchange(&msg, id, timeout).await,
            Link::Http(h) => match h.post(&msg, Some(id), &headers, timeout).await? {
                Some(r) => Ok(r),
                None => Err(McpError::new(format!("`{method}` got no answer"))),
            },
        }
    }

    /// Sends a JSON-RPC notification (no id, no answer awaited).
    pub(crate) async fn notify(&mut self, method: &str, params: Value) -> Result<(), McpError> {
        let msg = json!({"jsonrpc": "2.0", "method": method, "params": params});
        let headers = self.headers(method, &msg["params"]);
        let timeout = self.timeout;
        let sent = match &mut self.link {
            Link::Stdio(s) => s.send(&msg).await,
            Link::Http(h) => h.post(&msg, None, &headers, timeout).await.map(|_| ()),
        };
        sent.map_err(|e| redact_error(&self.secrets, e))
    }

    /// Sends a request and waits for its result; a JSON-RPC error is an [`McpError`].
    pub async fn request(&mut self, method: &str, params: Value) -> Result<Value, McpError> {
        let reply = self.request_raw(method, params, self.timeout).await;
        reply
            .and_then(|r| self.result_of(method, r))
            .map(|(v, _)| v)
            .map_err(|e| redact_error(&self.secrets, e))
    }

    /// Sends a request: its result, or the JSON-RPC error object the server answered with (to
    /// forward as it is); a transport failure is an [`McpError`].
    pub async fn request_reply(
        &mut self,
        method: &str,
        params: Value,
    ) -> Result<Result<Value, Value>, McpError> {
        // Both the result and the error are handed on (to an agent, into a recorded suite):
        // redacted, like the client's own errors.
        let reply = self
            .request_raw(method, params, self.timeout)
            .await
            .map_err(|e| redact_error(&self.secrets, e))?;
        let (mut v, ok) = match reply.msg.get("error") {
            Some(err) => (err.clone(), false),
            None => (
                reply.msg.get("result").cloned().unwrap_or(Value::Null),
                true,
            ),
        };
        self.secrets.redact_json(&mut v);
        Ok(if ok { Ok(v) } else { Err(v) })
    }

    /// Every tool, following `nextCursor`, exactly as the server sent them.
    pub async fn list_tools(&mut self) -> Result<Vec<Value>, McpError> {
        Ok(self.list_tools_text().await?.0)
    }

    /// Every tool, parsed and as the server wrote it (member order, number spelling kept).
    pub async fn list_tools_text(&mut self) -> Result<(Vec<Value>, Vec<String>), McpError> {
        let got = self.list_tools_inner().await;
        got.map_err(|e| redact_error(&self.secrets, e))
    }

    async fn list_tools_inner(&mut self) -> Result<(Vec<Value>, Vec<String>), McpError> {
        #[derive(serde::Deserialize)]
        struct Page<'a> {
            #[serde(borrow)]
            tools: Vec<&'a RawValue>,
        }
        let mut tools = Vec::new();
        let mut texts = Vec::new();
        let mut cursor: Option<String> = None;
        for _ in 0..1000 {
            let params = match &cursor {
                Some(c) => json!({"cursor": c}),
                None => json!({}),
            };
            let reply = self.request_raw("tools/list", params, self.timeout).await?;
            let (page, raw) = self.result_of("tools/list", reply)?;
            let items = page
                .get("tools")
                .and_then(Value::as_array)
                .ok_or_else(|| self.error("tools/list answered without a `tools` array"))?;
            tools.extend(items.iter().cloned());
            match serde_json::from_str::<Page>(&raw) {
                Ok(p) => texts.extend(p.tools.iter().map(|t| t.get().to_owned())),
                Err(_) => texts.extend(items.iter().map(Value::to_string)),
            }
            match page.get("nextCursor").and_then(Value::as_str) {
                Some(c) if !c.is_empty() => cursor = Some(c.to_owned()),
                _ => {
                    self.learn_param_headers(&tools);
                    return Ok((tools, texts));
                }
            }
        }
        Err(self.error("tools/list kept paging past 1000 pages"))
    }

    fn learn_param_headers(&mut self, tools: &[Value]) {
        for t in tools {
            let Some(name) = t.get("name").and_then(Value::as_str) else {
                continue;
            };
            let mut found = Vec::new();
            if let Some(schema) = t.get("inputSchema") {
                param_headers(schema, &mut Vec::new(), &mut found);
            }
            if !found.is_empty() {
                self.param_headers.insert(name.to_owned(), found);
            }
        }
    }

    /// Calls a tool; the result is the server's `CallToolResult`.
    pub async fn call_tool(&mut self, name: &str, arguments: &Value) -> Result<Value, McpError> {
        self.request("tools/call", json!({"name": name, "arguments": arguments}))
            .await
    }

    /// Ends the connection: a stdio child is asked to stop (stdin closed) and killed after a
    /// second; a legacy HTTP session is ended with DELETE. Only what we started is touched.
    pub async fn close(self) {
        match self.link {
            Link::Stdio(s) => s.close().await,
            Link::Http(h) => h.close().await,
        }
    }
}

fn open(endpoint: &Endpoint) -> Result<Link, McpError> {
    Ok(match endpoint {
        Endpoint::Command {
            program,
            args,
            envs,
        } => Link::Stdio(stdio::Stdio::spawn(program, args, envs)?),
        Endpoint::Url { url, headers } => Link::Http(http::Http::new(url, headers)?),
    })
}

fn client_info() -> Value {
    json!({"name": "agent-seer", "version": env!("CARGO_PKG_VERSION")})
}

/// A tool's `x-mcp-header` parameters: (property path, header name).
pub(crate) type ParamHeaders = Vec<(Vec<String>, String)>;

/// The `x-mcp-header` annotations of a schema's properties.
fn param_headers(schema: &Value, path: &mut Vec<String>, out: &mut ParamHeaders) {
    let Some(props) = schema.get("properties").and_then(Value::as_object) else {
        return;
    };
    for (k, v) in props {
        path.push(k.clone());
        if let Some(h) = v.get("x-mcp-header").and_then(Value::as_str) {
            out.push((path.clone(), h.to_owned()));
        }
        param_headers(v, path, out);
        path.pop();
    }
}

/// A header value as the 2026-07-28 transport writes it: plain when it is visible ASCII
/// without edge whitespace, else `=?base64?…?=` of its UTF-8.
pub(crate) fn header_value(v: &str) -> String {
    let plain = v.bytes().all(|b| (0x20..=0x7e).contains(&b) || b == b'\t')
        && v.trim() == v
        && !(v.starts_with("=?base64?") && v.ends_with("?="));
    if plain {
        v.to_owned()
    } else {
        format!("=?base64?{}?=", base64(v.as_bytes()))
    }
}

/// Standard Base64 with padding.
pub(crate) fn base64(bytes: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for c in bytes.chunks(3) {
        let n = (u32::from(c[0]) << 16)
            | (u32::from(*c.get(1).unwrap_or(&0)) << 8)
            | u32::from(*c.get(2).unwrap_or(&0));
        for i in 0..4 {
            if i <= c.len() {
                out.push(A[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// Decodes [`base64`]'s output (and the sentinel form's payload): standard Base64 with its
/// padding; `None` for anything else (unpadded, stray `=`, bits left over).
pub(crate) fn unbase64(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(4) {
        return None;
    }
    let body = text.trim_end_matches('=');
    if text.len() - body.len() > 2 {
        return None;
    }
    let mut out = Vec::new();
    let mut acc = 0u32;
    let mut bits = 0;
    for b in body.bytes() {
        let v = match b {
            b'A'..=b'Z' => b - b'A',
            b'a'..=b'z' => b - b'a' + 26,
            b'0'..=b'9' => b - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        };
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    // The bits past the last byte are zero in canonical Base64.
    (acc == 0).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The spec's own examples of the header encoding.
    #[test]
    fn header_values_as_the_spec_encodes_them() {
        for (plain, encoded) in [
            ("us-west1", "us-west1"),
            ("Hello, 世界", "=?base64?SGVsbG8sIOS4lueVjA==?="),
            (" padded ", "=?base64?IHBhZGRlZCA=?="),
            ("line1\nline2", "=?base64?bGluZTEKbGluZTI=?="),
            ("=?base64?literal?=", "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="),
        ] {
            assert_eq!(header_value(plain), encoded);
            if let Some(b) = encoded
                .strip_prefix("=?base64?")
                .and_then(|e| e.strip_suffix("?="))
            {
                assert_eq!(unbase64(b).unwrap(), plain.as_bytes());
            }
        }
        // The conformance suite's refusals: unpadded, and bits left over.
        for bad in ["SGVsbG8", "SGVsbG9=", "S===", "SGV$bG8="] {
            assert_eq!(unbase64(bad), None, "{bad}");
        }
    }
}
