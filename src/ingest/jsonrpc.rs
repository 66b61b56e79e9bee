//! MCP JSON-RPC message logs: one message a line, requests and responses of either direction
//! as a proxy or client captured them: raw, or wrapped with the direction beside the message
//! (`{"dir": "c2s"|"s2c", "msg": …}`, `{"seq", "direction", "message"}`, a timestamp, the
//! message as an object or as a JSON string — see [`unwrap`]), told by content, not by name.
//! `tools/call` requests are the calls; their responses the outputs (a JSON-RPC error is an
//! output with `isError: true`, as the agent saw a refusal). MCP carries no chat: the user's
//! prompt and the agent's reply are not in it.

use std::borrow::Cow;
use std::collections::HashMap;

use serde_json::Value;

use super::{Docs, Event, Place, Refusal, text_result};

/// The keys loggers put the JSON-RPC message under.
const MESSAGE_KEYS: &[&str] = &["msg", "message", "payload", "data", "body", "json"];
/// The keys they put its direction under.
const DIRECTION_KEYS: &[&str] = &["dir", "direction", "from", "source"];
/// Directions named in pairs; any other two names a log uses are each other's opposite.
const OPPOSITES: &[(&str, &str)] = &[
    ("c2s", "s2c"),
    ("client_to_server", "server_to_client"),
    ("client-to-server", "server-to-client"),
    ("client->server", "server->client"),
    ("to_server", "to_client"),
    ("outgoing", "incoming"),
    ("out", "in"),
    ("send", "receive"),
    ("send", "recv"),
    ("sent", "received"),
    ("client", "server"),
    ("request", "response"),
    (">", "<"),
    ("->", "<-"),
];

/// A line's JSON-RPC message, the pointer to it, and its direction (`""` when the line is the
/// bare message or names none): the line itself when it has `"jsonrpc"`, else the first of
/// [`MESSAGE_KEYS`] that holds a JSON-RPC message (an object, or a string of one).
pub(super) fn unwrap(line: &Value) -> Option<(Cow<'_, Value>, String, String)> {
    if line.get("jsonrpc").is_some() {
        return Some((Cow::Borrowed(line), String::new(), String::new()));
    }
    let o = line.as_object()?;
    let dir = DIRECTION_KEYS
        .iter()
        .find_map(|k| o.get(*k).and_then(Value::as_str))
        .unwrap_or("")
        .to_ascii_lowercase();
    MESSAGE_KEYS.iter().find_map(|k| {
        let msg = match o.get(*k)? {
            m @ Value::Object(_) if m.get("jsonrpc").is_some() => Cow::Borrowed(m),
            Value::String(s) => {
                let m: Value = serde_json::from_str(s).ok()?;
                m.get("jsonrpc")?;
                Cow::Owned(m)
            }
            _ => return None,
        };
        Some((msg, format!("/{k}"), dir.clone()))
    })
}

/// The direction opposite to `dir`, given the directions the log uses.
fn opposite(dir: &str, used: &[String]) -> String {
    if dir.is_empty() {
        return String::new();
    }
    for (a, b) in OPPOSITES {
        if dir == *a {
            return (*b).to_owned();
        }
        if dir == *b {
            return (*a).to_owned();
        }
    }
    match used {
        [a, b] if a == dir => b.clone(),
        [a, b] if b == dir => a.clone(),
        // One id space, as in a raw log.
        _ => dir.to_owned(),
    }
}

pub(super) fn events(docs: &Docs) -> Result<Vec<Event>, Refusal> {
    let lines: Vec<(usize, &Value)> = match docs {
        Docs::One(v) => vec![(0, v)],
        Docs::Lines(lines) => lines.iter().map(|(i, v)| (*i, v)).collect(),
    };
    let mut events = Vec::new();
    // Request ids of every method, so a response is told apart from an orphan.
    let mut methods: HashMap<String, String> = HashMap::new();
    let mut used: Vec<String> = Vec::new();
    for (_, raw) in &lines {
        if let Some((_, _, dir)) = unwrap(raw)
            && !dir.is_empty()
            && !used.contains(&dir)
        {
            used.push(dir);
            if used.len() > 2 {
                break;
            }
        }
    }
    // A log whose directions are not one pair has one id space, as a raw log does.
    let paired = used.len() <= 2;
    for (i, raw) in lines {
        let Some((msg, base, dir)) = unwrap(raw) else {
            return Err(Refusal::at(
                &Place::on_line(i, ""),
                "a line that is no JSON-RPC 2.0 message (`\"jsonrpc\": \"2.0\"`) and holds none under `msg`, `message`, `payload`, `data`, `body` or `json`",
            ));
        };
        let msg: &Value = &msg;
        let dir = if paired { dir } else { String::new() };
        // Client and server number their requests apart: with a direction, a request's id is
        // its direction's, and the response comes the other way. Raw logs have one space.
        let reverse = opposite(&dir, &used);
        let dir = dir.as_str();
        let reverse = reverse.as_str();
        let at = Place::on_line(i, base);
        if msg.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
            return Err(Refusal::at(
                &at,
                "a line that is no JSON-RPC 2.0 message (`\"jsonrpc\": \"2.0\"`)",
            ));
        }
        let id = msg
            .get("id")
            .filter(|v| !v.is_null())
            .map(|v| v.to_string());
        let is_request = msg.get("method").is_some();
        let key = id
            .as_ref()
            .map(|id| format!("{}:{id}", if is_request { dir } else { reverse }));
        match (msg.get("method").and_then(Value::as_str), id) {
            (Some(method), Some(id)) => {
                if method == "tools/call" {
                    let params = msg.get("params").ok_or_else(|| {
                        Refusal::at(&at, "a `tools/call` request without `params`")
                    })?;
                    let tool = params.get("name").and_then(Value::as_str).ok_or_else(|| {
                        Refusal::at(
                            &at.join("params"),
                            "a `tools/call` request without `params.name`",
                        )
                    })?;
                    events.push(Event::Call {
                        id: Some(id.clone()),
                        tool: tool.to_owned(),
                        arguments: params
                            .get("arguments")
                            .cloned()
                            .unwrap_or_else(|| Value::Object(Default::default())),
                        output: None,
                        at: at.join("params"),
                    });
                }
                methods.insert(key.clone().unwrap_or_default(), method.to_owned());
            }
            (Some(_), None) => {} // a notification
            (None, Some(id)) => match methods
                .get(key.as_deref().unwrap_or(""))
                .map(String::as_str)
            {
                Some("tools/call") => {
                    let output = match (msg.get("result"), msg.get("error")) {
                        (Some(r), _) => r.clone(),
                        (None, Some(e)) => text_result(
                            &format!(
                                "MCP error {}: {}",
                                e.get("code").map(Value::to_string).unwrap_or_default(),
                                e.get("message").and_then(Value::as_str).unwrap_or("")
                            ),
                            Some(true),
                        ),
                        (None, None) => {
                            return Err(Refusal::at(
                                &at,
                                "a response with neither `result` nor `error`",
                            ));
                        }
                    };
                    events.push(Event::Output {
                        id: Some(id),
                        tool: None,
                        output,
                        at,
                    });
                }
                Some(_) => {}
                None => {
                    return Err(Refusal::at(
                        &at.join("id"),
                        format!(
                            "a response to the request id {id}, which the log does not have (was it cut at the start?)"
                        ),
                    ));
                }
            },
            (None, None) => {
                return Err(Refusal::at(
                    &at,
                    "a JSON-RPC message with neither `method` nor `id`",
                ));
            }
        }
    }
    Ok(events)
}
