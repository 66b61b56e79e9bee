//! `serve --proxy`: sits between an agent (on stdio) and the real server (a command or a
//! streamable HTTP endpoint), forwards every message, and turns the session into a suite a
//! team can replay: the capture (`tools.json` + `server.json`), a harness whose one scenario's
//! workflow is the calls the agent made with the real outputs as mock outputs (grounding
//! `high`), and the transcript of what the agent did. Graded, the transcript equals its oracle;
//! served, the harness answers the same calls with the same outputs.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, BufReader};

use super::server::{Recorded, sidecar_of};
use super::{
    Client, LEGACY_VERSION, MODERN_VERSION, McpError, SUPPORTED_VERSIONS, ServerInfo, meta,
};
use crate::harness::{
    CallDoc, Grounding, HarnessDoc, LabelDoc, ScenarioDoc, StepCall, StepDoc, TranscriptBody,
    TranscriptDoc, TurnDoc, sent_arguments,
};

/// What a proxied session wrote.
#[derive(Debug)]
pub struct Recording {
    /// The suite's name.
    pub suite: String,
    /// The calls the agent made.
    pub calls: usize,
    /// The files written, in order.
    pub files: Vec<PathBuf>,
}

/// Why a proxied session could not be recorded.
#[derive(Debug, thiserror::Error)]
pub enum ProxyError {
    /// The real server failed before the session began (nothing answered, nothing written).
    #[error(transparent)]
    Server(#[from] McpError),
    /// The session ended early (the real server failed, or the agent's side did): what was
    /// answered before is saved (issue 32, item 7).
    #[error("{cause}\nthe session so far ({calls} call(s) answered) is saved:{}", files.iter().map(|f| format!("\n  {}", f.display())).collect::<String>())]
    Interrupted {
        /// Why it ended.
        cause: Box<ProxyError>,
        /// The calls answered and saved.
        calls: usize,
        /// The files written.
        files: Vec<PathBuf>,
    },
    /// A file could not be written, or would overwrite one.
    #[error("{0}")]
    Write(String),
    /// Our side of stdio failed.
    #[error("the agent's side: {0}")]
    Io(#[from] std::io::Error),
}

/// The files a session's suite goes to under `root`.
pub fn suite_files(root: &Path, suite: &str) -> [PathBuf; 4] {
    let h = root.join("harnesses");
    [
        h.join(format!("{suite}.tools.json")),
        sidecar_of(&h.join(format!("{suite}.tools.json"))),
        h.join(format!("{suite}.yaml")),
        root.join("transcripts").join(suite).join("session.yaml"),
    ]
}

/// The suite name a server's name gives: lower-case letters, digits and dashes.
pub fn suite_name(server: &str) -> String {
    let mut s: String = server
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect();
    while s.contains("--") {
        s = s.replace("--", "-");
    }
    let s = s.trim_matches('-').to_owned();
    if s.is_empty() { "server".into() } else { s }
}

/// Proxies the agent on `input`/`output` to `client` until the agent closes its side, then
/// writes the suite `suite` under `root` (refusing to overwrite any of its files).
pub async fn proxy<R, W>(
    mut client: Client,
    input: R,
    mut output: W,
    root: &Path,
    suite: &str,
    prompt: &str,
) -> Result<Recording, ProxyError>
where
    R: tokio::io::AsyncRead + Unpin,
    W: std::io::Write,
{
    let files = suite_files(root, suite);
    // Refused now, before the agent is served; checked again when written.
    outdir(root, &files)
        .check()
        .map_err(|e| ProxyError::Write(e.to_string()))?;
    let info = client.info.clone().unwrap_or_else(|| ServerInfo {
        name: suite.into(),
        version: String::new(),
        protocol_version: String::new(),
        capabilities: json!({"tools": {}}),
        instructions: None,
        era: "legacy",
        raw: "{}".into(),
    });
    let (_, texts) = client.list_tools_text().await?;
    let mut session = Session {
        calls: Vec::new(),
        agent: "an MCP client".to_owned(),
    };
    let served = serve_agent(&mut client, &info, &texts, input, &mut output, &mut session).await;
    client.close().await;
    let Session { calls, agent } = session;
    // What was answered is saved however the session ended.
    let written = write_suite(root, &files, suite, &info, &texts, &calls, &agent, prompt)?;
    match served {
        Ok(()) => Ok(Recording {
            suite: suite.into(),
            calls: calls.len(),
            files: written,
        }),
        Err(cause) => Err(ProxyError::Interrupted {
            cause: Box::new(cause),
            calls: calls.len(),
            files: written,
        }),
    }
}

/// What a session collects as it goes.
struct Session {
    calls: Vec<Recorded>,
    agent: String,
}

/// Answers the agent until it closes its side; every answered call is in `session`, whatever
/// the outcome.
async fn serve_agent<R, W>(
    client: &mut Client,
    info: &ServerInfo,
    texts: &[String],
    input: R,
    output: &mut W,
    session: &mut Session,
) -> Result<(), ProxyError>
where
    R: tokio::io::AsyncRead + Unpin,
    W: std::io::Write,
{
    let mut input = BufReader::new(input);
    let mut bytes = Vec::new();
    loop {
        bytes.clear();
        // Bounded like `serve`'s own reader: a longer line is answered with a parse error.
        let cap = super::MAX_LINE as u64 + 1;
        if (&mut input).take(cap).read_until(b'\n', &mut bytes).await? == 0 {
            return Ok(());
        }
        if bytes.len() > super::MAX_LINE {
            while !bytes.ends_with(b"\n") {
                bytes.clear();
                if (&mut input)
                    .take(64 * 1024)
                    .read_until(b'\n', &mut bytes)
                    .await?
                    == 0
                {
                    break;
                }
            }
            send(output, &parse_error())?;
            continue;
        }
        // A line that is not UTF-8 is one bad message, not the end of the session.
        let Ok(line) = std::str::from_utf8(&bytes) else {
            send(output, &parse_error())?;
            continue;
        };
        if line.trim().is_empty() {
            continue;
        }
        let Ok(msg) = serde_json::from_str::<Value>(line) else {
            send(output, &parse_error())?;
            continue;
        };
        let (Some(method), Some(id)) = (
            msg.get("method").and_then(Value::as_str),
            msg.get("id").cloned(),
        ) else {
            continue; // notifications and responses: our client keeps its own session
        };
        let params = msg.get("params").cloned().unwrap_or(Value::Null);
        let modern = params
            .get("_meta")
            .and_then(|m| m.get(meta::VERSION))
            .is_some();
        if let Some(n) = params
            .pointer("/clientInfo/name")
            .or_else(|| {
                params.pointer(&format!(
                    "/_meta/{}/name",
                    meta::CLIENT_INFO.replace('/', "~1")
                ))
            })
            .and_then(Value::as_str)
        {
            session.agent = n.to_owned();
        }
        let answer: Result<String, Value> = match method {
            "initialize" => Ok(initialize_result(info, &params)),
            "server/discover" => Ok(discover_result(info)),
            "ping" => Ok("{}".into()),
            "tools/list" => Ok(format!("{{\"tools\":[{}]}}", texts.join(","))),
            "tools/call" => {
                let tool = params
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned();
                let args = params.get("arguments").cloned().unwrap_or(json!({}));
                let got = client
                    .request_reply("tools/call", json!({"name": tool, "arguments": args}))
                    .await?;
                let output = match &got {
                    Ok(r) => r.clone(),
                    Err(e) => {
                        json!({"content": [{"type": "text", "text": e.get("message").and_then(Value::as_str).unwrap_or("error")}], "isError": true})
                    }
                };
                session.calls.push(Recorded {
                    tool,
                    arguments: args,
                    output,
                    step: None,
                });
                got.map(|r| r.to_string())
            }
            other => {
                let mut p = params.clone();
                if let Some(m) = p.as_object_mut() {
                    m.remove("_meta");
                }
                client.request_reply(other, p).await?.map(|r| r.to_string())
            }
        };
        let reply = match answer {
            Ok(result) => {
                let result = if modern {
                    with_result_type(&result)
                } else {
                    result
                };
                format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{result}}}")
            }
            Err(e) => json!({"jsonrpc": "2.0", "id": id, "error": e}).to_string(),
        };
        send(output, &reply)?;
    }
}

fn parse_error() -> String {
    json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": "Parse error"}})
        .to_string()
}

/// The suite's files as one [`OutDir`](crate::source::OutDir): nothing replaced, no link out of
/// `root` followed.
fn outdir(root: &Path, files: &[PathBuf; 4]) -> crate::source::OutDir {
    let mut d = crate::source::OutDir::new(root, false);
    for f in files {
        // The four paths are `root` joined with checked names: `add` cannot refuse them.
        let _ = d.add(f.clone(), Vec::new());
    }
    d
}

// Written synchronously: the agent waits for each answer anyway.
fn send<W: std::io::Write>(out: &mut W, line: &str) -> std::io::Result<()> {
    writeln!(out, "{line}")?;
    out.flush()
}

fn with_result_type(result: &str) -> String {
    if result.contains("\"resultType\"") {
        return result.to_owned();
    }
    match result.strip_suffix('}') {
        Some(inner) if inner.ends_with('{') => format!("{inner}\"resultType\":\"complete\"}}"),
        Some(inner) => format!("{inner},\"resultType\":\"complete\"}}"),
        None => result.to_owned(),
    }
}

/// The real server's `initialize` result, or one made from its `server/discover` result.
fn initialize_result(info: &ServerInfo, params: &Value) -> String {
    if info.era == "legacy" {
        return info.raw.clone();
    }
    let asked = params.get("protocolVersion").and_then(Value::as_str);
    let version = asked
        .filter(|v| *v != MODERN_VERSION && SUPPORTED_VERSIONS.contains(v))
        .unwrap_or(LEGACY_VERSION);
    let mut r = json!({
        "protocolVersion": version,
        "capabilities": info.capabilities,
        "serverInfo": {"name": info.name, "version": info.version},
    });
    if let Some(i) = &info.instructions {
        r["instructions"] = i.clone().into();
    }
    r.to_string()
}

fn discover_result(info: &ServerInfo) -> String {
    if info.era == "modern" {
        return info.raw.clone();
    }
    let mut r = json!({
        "supportedVersions": SUPPORTED_VERSIONS,
        "capabilities": info.capabilities,
        "_meta": {(meta::SERVER_INFO): {"name": info.name, "version": info.version}},
    });
    if let Some(i) = &info.instructions {
        r["instructions"] = i.clone().into();
    }
    r.to_string()
}

/// Writes the session's suite through one [`OutDir`](crate::source::OutDir) (nothing replaced,
/// no link out of `root` followed, all staged first); gives the files written. A session
/// without calls is a capture, not a scenario: two files.
#[allow(clippy::too_many_arguments)]
fn write_suite(
    root: &Path,
    files: &[PathBuf; 4],
    suite: &str,
    info: &ServerInfo,
    texts: &[String],
    calls: &[Recorded],
    agent: &str,
    prompt: &str,
) -> Result<Vec<PathBuf>, ProxyError> {
    let mut dir = crate::source::OutDir::new(root, false);
    let mut write = |path: &Path, text: String| -> Result<(), ProxyError> {
        dir.add(path.to_path_buf(), text)
            .map_err(|e| ProxyError::Write(e.to_string()))
    };
    let (tools, sidecar) = capture_texts(texts, info);
    write(&files[0], tools)?;
    write(&files[1], sidecar)?;
    if calls.is_empty() {
        return dir.commit().map_err(|e| ProxyError::Write(e.to_string()));
    }
    let steps = calls
        .iter()
        .map(|c| StepDoc {
            call: StepCall::Mcp {
                tool: c.tool.clone(),
                arguments: sent_arguments(&c.arguments),
            },
            quick_explanation: None,
            match_policies: Default::default(),
            mock_output: Some(c.output.clone()),
            grounding: Some(Grounding::High),
        })
        .collect();
    let harness = HarnessDoc {
        suite: Some(suite.into()),
        description: Some(format!(
            "Recorded from a real session with {} {} by agent-seer serve --proxy.",
            info.name, info.version
        )),
        server: Some(info.name.clone()),
        tools: Some(vec![format!("{suite}.tools.json")]),
        capabilities: Vec::new(),
        thresholds: None,
        scenarios: vec![ScenarioDoc {
            id: "session".into(),
            turns: vec![TurnDoc {
                prompt: prompt.into(),
                workflow: steps,
                ..TurnDoc::default()
            }],
            ..ScenarioDoc::default()
        }],
    };
    let text = harness
        .to_yaml()
        .map_err(|e| ProxyError::Write(e.to_string()))?;
    write(&files[2], text)?;
    let transcript = TranscriptDoc {
        scenario: Some("session".into()),
        prompt: None,
        agent: Some(format!("{agent} (recorded by agent-seer serve --proxy)")),
        note: None,
        label: LabelDoc::default(),
        body: TranscriptBody::Calls {
            calls: calls
                .iter()
                .map(|c| CallDoc {
                    tool: c.tool.clone(),
                    arguments: sent_arguments(&c.arguments),
                    id: None,
                    output: Some(c.output.clone()),
                })
                .collect(),
            reply: None,
        },
    }
    .to_yaml()
    .map_err(|e| ProxyError::Write(e.to_string()))?;
    write(&files[3], transcript)?;
    dir.commit().map_err(|e| ProxyError::Write(e.to_string()))
}

/// The capture's two files' text: the tools as the server wrote them (laid out two spaces
/// deep, its member order kept), and the sidecar with its own description of itself.
pub fn capture_texts(texts: &[String], info: &ServerInfo) -> (String, String) {
    let tools = format!("[{}]", texts.join(","));
    let tools = crate::source::json::reformat(&tools, Some("  ")) + "\n";
    let key = if info.era == "modern" {
        "discover"
    } else {
        "initialize"
    };
    let side = format!("{{\"{key}\":{}}}", info.raw);
    let side = crate::source::json::reformat(&side, Some("  ")) + "\n";
    (tools, side)
}
