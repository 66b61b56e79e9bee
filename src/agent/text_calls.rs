//! Tool calls a model wrote as text. Local models served without a tool-call parser (or whose
//! template the server does not know) write their calls into `content`: Qwen and Hermes as
//! `<tool_call>{"name": …, "arguments": …}</tool_call>`, others as a fenced JSON block. Such a
//! text is a call when it names a tool offered and carries its arguments as an object (or as
//! JSON text of one); anything else stays text, so a reply that only quotes JSON is not taken
//! for a call.

use serde_json::Value;

use crate::llm::{ToolCall, ToolDecl};

/// The calls in `text` and what remains of the text around them; `None` when it has none.
pub(crate) fn parse(text: &str, tools: &[ToolDecl]) -> Option<(Vec<ToolCall>, Option<String>)> {
    let mut calls = Vec::new();
    let mut rest = String::new();
    let mut at = 0;
    // `<tool_call>` blocks, the closing tag optional at the end (a model cut at its limit).
    while let Some(open) = text[at..].find("<tool_call>") {
        let start = at + open;
        let body_start = start + "<tool_call>".len();
        let (body_end, next) = match text[body_start..].find("</tool_call>") {
            Some(close) => (
                body_start + close,
                body_start + close + "</tool_call>".len(),
            ),
            None => (text.len(), text.len()),
        };
        let found = calls_in(&text[body_start..body_end], tools, calls.len());
        if found.is_empty() {
            rest.push_str(&text[at..next]);
        } else {
            rest.push_str(&text[at..start]);
            calls.extend(found);
        }
        at = next;
    }
    let tail = &text[at..];
    if calls.is_empty() {
        // Fenced blocks: ```json, ```tool_call, or bare ```.
        let mut out = String::new();
        let mut pos = 0;
        while let Some(open) = tail[pos..].find("```") {
            let start = pos + open;
            let info_end = tail[start + 3..].find('\n').map(|i| start + 3 + i);
            let Some(info_end) = info_end else { break };
            let info = tail[start + 3..info_end].trim();
            let Some(close) = tail[info_end..].find("```") else {
                break;
            };
            let body = &tail[info_end + 1..info_end + close];
            let end = info_end + close + 3;
            let found = if matches!(info, "" | "json" | "tool_call" | "tool_code") {
                calls_in(body, tools, calls.len())
            } else {
                Vec::new()
            };
            if found.is_empty() {
                out.push_str(&tail[pos..end]);
            } else {
                out.push_str(&tail[pos..start]);
                calls.extend(found);
            }
            pos = end;
        }
        out.push_str(&tail[pos..]);
        if calls.is_empty() {
            // The whole reply one call object, as some models answer.
            calls = calls_in(text, tools, 0);
            if calls.is_empty() {
                return None;
            }
            return Some((calls, None));
        }
        rest.push_str(&out);
    } else {
        rest.push_str(tail);
    }
    let rest = rest.trim();
    Some((calls, (!rest.is_empty()).then(|| rest.to_owned())))
}

/// The calls one JSON text holds: an object or an array of objects, each naming an offered
/// tool.
fn calls_in(body: &str, tools: &[ToolDecl], first: usize) -> Vec<ToolCall> {
    let Ok(v) = serde_json::from_str::<Value>(body.trim()) else {
        return Vec::new();
    };
    let items = match v {
        Value::Array(a) => a,
        one => vec![one],
    };
    let mut out = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let Some(name) = item.get("name").and_then(Value::as_str) else {
            return Vec::new();
        };
        if !tools.iter().any(|t| t.name == name) {
            return Vec::new();
        }
        let args = item.get("arguments").or_else(|| item.get("parameters"));
        let arguments = match args {
            None => Value::Object(Default::default()),
            Some(Value::Object(o)) => Value::Object(o.clone()),
            Some(Value::String(s)) => match serde_json::from_str::<Value>(s) {
                Ok(o @ Value::Object(_)) => o,
                _ => return Vec::new(),
            },
            Some(_) => return Vec::new(),
        };
        out.push(ToolCall {
            id: format!("call_{}", first + i),
            name: name.to_owned(),
            arguments,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn tools() -> Vec<ToolDecl> {
        ["get_current_time", "convert_time"]
            .map(|n| ToolDecl {
                name: n.into(),
                description: String::new(),
                parameters: json!({"type": "object"}),
            })
            .to_vec()
    }

    /// The calls found (name, arguments) and the text left.
    type Found = (Vec<(String, Value)>, Option<String>);

    fn names(text: &str) -> Option<Found> {
        parse(text, &tools())
            .map(|(c, rest)| (c.into_iter().map(|c| (c.name, c.arguments)).collect(), rest))
    }

    #[test]
    fn qwen_tool_call_tags_are_calls() {
        let t = "<tool_call>\n{\"name\": \"get_current_time\", \"arguments\": {\"timezone\": \"Asia/Tokyo\"}}\n</tool_call>";
        assert_eq!(
            names(t),
            Some((
                vec![("get_current_time".into(), json!({"timezone": "Asia/Tokyo"}))],
                None
            ))
        );
        // Two calls, text around them, and a last tag cut off by the token limit.
        let t = "Let me check.\n<tool_call>{\"name\": \"get_current_time\", \"arguments\": \"{\\\"timezone\\\": \\\"UTC\\\"}\"}</tool_call>\n<tool_call>{\"name\": \"convert_time\", \"arguments\": {}}";
        let (calls, rest) = names(t).unwrap();
        assert_eq!(calls.len(), 2);
        assert_eq!(calls[0].1, json!({"timezone": "UTC"}));
        assert_eq!(rest.as_deref(), Some("Let me check."));
    }

    #[test]
    fn fenced_blocks_and_bare_objects_are_calls() {
        let t = "I'll call it:\n```json\n{\"name\": \"convert_time\", \"parameters\": {\"time\": \"09:00\"}}\n```\n";
        let (calls, rest) = names(t).unwrap();
        assert_eq!(
            calls,
            vec![("convert_time".into(), json!({"time": "09:00"}))]
        );
        assert_eq!(rest.as_deref(), Some("I'll call it:"));
        let bare = "[{\"name\": \"get_current_time\", \"arguments\": {\"timezone\": \"UTC\"}}]";
        assert_eq!(names(bare).unwrap().0.len(), 1);
    }

    /// JSON that does not name an offered tool with object arguments stays text.
    #[test]
    fn other_json_stays_text() {
        for t in [
            "The time is 09:00.",
            "```json\n{\"timezone\": \"UTC\"}\n```",
            "```json\n{\"name\": \"get_weather\", \"arguments\": {}}\n```",
            "<tool_call>{\"name\": \"convert_time\", \"arguments\": [1]}</tool_call>",
            "```python\n{\"name\": \"convert_time\", \"arguments\": {}}\n```",
        ] {
            assert_eq!(names(t), None, "{t}");
        }
    }
}
