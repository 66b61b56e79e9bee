//! MCP JSON-RPC message logs: one message a line, requests and responses of either direction
//! as a proxy or client captured them (raw, or wrapped as `{"dir": "c2s"|"s2c", "msg": …}`).
//! `tools/call` requests are the calls; their responses the outputs (a JSON-RPC error is an
//! output with `isError: true`, as the agent saw a refusal). MCP carries no chat: the user's
//! prompt and the agent's reply are not in it.

use std::collections::HashMap;

use serde_json::Value;

use super::{Docs, Event, Place, Refusal, text_result};

pub(super) fn events(docs: &Docs) -> Result<Vec<Event>, Refusal> {
    let lines: Vec<(usize, &Value)> = match docs {
        Docs::One(v) => vec![(0, v)],
        Docs::Lines(lines) => lines.iter().map(|(i, v)| (*i, v)).collect(),
    };
    let mut events = Vec::new();
    // Request ids of every method, so a response is told apart from an orphan.
    let mut methods: HashMap<String, String> = HashMap::new();
    for (i, raw) in lines {
        let (msg, base, dir) = match raw.get("msg") {
            Some(m) if raw.get("jsonrpc").is_none() => (
                m,
                "/msg",
                raw.get("dir").and_then(Value::as_str).unwrap_or(""),
            ),
            _ => (raw, "", ""),
        };
        // Client and server number their requests apart: with a direction, a request's id is
        // its direction's, and the response comes the other way. Raw logs have one space.
        let reverse = match dir {
            "c2s" => "s2c",
            "s2c" => "c2s",
            other => other,
        };
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
