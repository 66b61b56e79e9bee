//! Tool-using chat, the agent under test's side, in each provider's wire format:
//! OpenAI-compatible chat completions, the OpenAI Responses API, Anthropic Messages and
//! Gemini / Vertex `generateContent`. One request body and one answer parser per format; the
//! transport (headers, retries, redaction) is [`Provider::post`]'s.
//!
//! The tools go out as the harness captured them: the name, the description (left out when
//! the spec has none) and the input schema, unchanged. No format needs a conversion: OpenAI's
//! `parameters`, Anthropic's `input_schema` and the Responses API's `parameters` take JSON
//! Schema as it is, and Gemini gets `parametersJsonSchema`, which takes JSON Schema too (its
//! older `parameters` field would want the OpenAPI subset, which drops keywords). Responses
//! tools are sent with `strict: false`: strict mode would need every property required and
//! `additionalProperties: false`, i.e. a different schema.
//!
//! The model's turn is replayed as the provider sent it where the API needs that
//! ([`ChatTurn::raw`]): Anthropic's content blocks, the Responses API's output items
//! (reasoning items with their ids and encrypted content; `store` is left at the API's
//! default, so ids resolve), Gemini's parts (thought signatures, which Gemini 3 requires
//! back). Chat completions rebuild the assistant message from its text and calls.
//!
//! Sampling settings ([`Sampling`]) are sent only when given, each in the format's spelling.

use std::time::Duration;

use serde_json::{Map, Value, json};

use super::providers::{ResponsesOutput, malformed, responses_output};
use super::{
    ChatMessage as M, ChatTurn, LlmError, Provider, Sampling, Secrets, ToolCall, ToolDecl, Usage,
};

impl Provider {
    /// One step of the conversation: the request in this provider's format, its answer read.
    #[allow(clippy::too_many_arguments)]
    pub(super) async fn chat(
        &self,
        http: &reqwest::Client,
        model: &str,
        messages: &[M],
        tools: &[ToolDecl],
        sampling: &Sampling,
        timeout: Duration,
        secrets: &Secrets,
    ) -> Result<ChatTurn, LlmError> {
        let body = self.chat_body(model, messages, tools, sampling);
        let v = self.post(http, model, &body, timeout, secrets).await?;
        match self {
            Provider::OpenAi { .. } => openai_turn(&v),
            Provider::OpenAiResponses { .. } => responses_turn(&v),
            Provider::Anthropic { .. } => anthropic_turn(&v),
            Provider::Gemini { .. } | Provider::Vertex { .. } => gemini_turn(self.name(), &v),
        }
    }

    /// The request body of one step.
    fn chat_body(
        &self,
        model: &str,
        messages: &[M],
        tools: &[ToolDecl],
        sampling: &Sampling,
    ) -> Value {
        match self {
            Provider::OpenAi { base_url, .. } => {
                openai_body(model, official_openai(base_url), messages, tools, sampling)
            }
            Provider::OpenAiResponses { .. } => responses_body(model, messages, tools, sampling),
            Provider::Anthropic { .. } => anthropic_body(model, messages, tools, sampling),
            Provider::Gemini { .. } | Provider::Vertex { .. } => {
                gemini_body(messages, tools, sampling)
            }
        }
    }
}

/// OpenAI's own hosts (`api.openai.com`, Azure OpenAI's `*.openai.azure.com`), where
/// `max_tokens` is deprecated and refused by reasoning models; the OpenAI-compatible servers
/// (llama.cpp, vLLM, Ollama) all read `max_tokens`.
fn official_openai(base_url: &str) -> bool {
    let host = base_url
        .split_once("://")
        .map_or(base_url, |(_, rest)| rest)
        .split(['/', ':'])
        .next()
        .unwrap_or("")
        .to_ascii_lowercase();
    host == "api.openai.com" || host.ends_with(".openai.azure.com")
}

/// A tool's name and description as captured (no description when the spec has none), and
/// its input schema under `schema_key`.
fn declaration(t: &ToolDecl, schema_key: &str) -> Map<String, Value> {
    let mut o = Map::new();
    o.insert("name".into(), json!(t.name));
    if !t.description.is_empty() {
        o.insert("description".into(), json!(t.description));
    }
    o.insert(schema_key.into(), t.parameters.clone());
    o
}

/// The system messages' text, joined (None when there is none, or it is empty).
fn system_text(messages: &[M]) -> Option<String> {
    let parts: Vec<&str> = messages
        .iter()
        .filter_map(|m| match m {
            M::System(t) if !t.is_empty() => Some(t.as_str()),
            _ => None,
        })
        .collect();
    (!parts.is_empty()).then(|| parts.join("\n\n"))
}

/// Sets `key` to `value` when given.
fn put(body: &mut Value, key: &str, value: Option<Value>) {
    if let (Some(v), Some(o)) = (value, body.as_object_mut()) {
        o.insert(key.into(), v);
    }
}

/// A function call's arguments from JSON text: `{}` for none, `{"__unparsable__": text}` for
/// text that is not JSON (the linter reports it as an unknown parameter).
fn arguments(raw: Option<&Value>) -> Value {
    match raw {
        Some(Value::String(s)) if s.trim().is_empty() => json!({}),
        Some(Value::String(s)) => {
            serde_json::from_str(s).unwrap_or_else(|_| json!({"__unparsable__": s}))
        }
        Some(other) => other.clone(),
        None => Value::Null,
    }
}

fn str_at<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

fn usage(v: &Value, input: &str, output: &str) -> Usage {
    let n = |p: &str| v.pointer(p).and_then(Value::as_u64).unwrap_or(0);
    Usage {
        input_tokens: n(input),
        output_tokens: n(output),
    }
}

// --- OpenAI chat completions -------------------------------------------------------------

fn openai_body(
    model: &str,
    official: bool,
    messages: &[M],
    tools: &[ToolDecl],
    s: &Sampling,
) -> Value {
    let msgs: Vec<Value> = messages
        .iter()
        .filter_map(|m| match m {
            M::System(t) if t.is_empty() => None,
            M::System(t) => Some(json!({"role": "system", "content": t})),
            M::User(t) => Some(json!({"role": "user", "content": t})),
            M::Assistant { text, calls, .. } => {
                let mut o = json!({"role": "assistant", "content": text});
                if !calls.is_empty() {
                    o["tool_calls"] = calls
                        .iter()
                        .map(|c| json!({"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments.to_string()}}))
                        .collect();
                }
                Some(o)
            }
            M::Tool { id, content, .. } => {
                Some(json!({"role": "tool", "tool_call_id": id, "content": content}))
            }
        })
        .collect();
    let mut body = json!({"model": model, "messages": msgs});
    if !tools.is_empty() {
        body["tools"] = tools
            .iter()
            .map(|t| json!({"type": "function", "function": declaration(t, "parameters")}))
            .collect();
        body["tool_choice"] = json!("auto");
    }
    let max_key = if official {
        "max_completion_tokens"
    } else {
        "max_tokens"
    };
    put(&mut body, max_key, s.max_tokens.map(Value::from));
    put(&mut body, "temperature", s.temperature.map(Value::from));
    put(&mut body, "seed", s.seed.map(Value::from));
    body
}

fn openai_turn(v: &Value) -> Result<ChatTurn, LlmError> {
    let name = "openai";
    let msg = v
        .pointer("/choices/0/message")
        .filter(|m| m.is_object())
        .ok_or_else(|| malformed(name, "no choices[0].message"))?;
    if let Some(r) = str_at(msg, "refusal").filter(|r| !r.is_empty()) {
        return Err(LlmError::Refusal {
            provider: name,
            reason: r.to_owned(),
        });
    }
    let calls = msg
        .get("tool_calls")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
        .map(|(i, c)| ToolCall {
            id: str_at(c, "id").map_or_else(|| format!("call_{i}"), str::to_owned),
            name: c
                .pointer("/function/name")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned(),
            arguments: arguments(c.pointer("/function/arguments")),
        })
        .collect();
    Ok(ChatTurn {
        text: str_at(msg, "content").map(str::to_owned),
        calls,
        usage: usage(v, "/usage/prompt_tokens", "/usage/completion_tokens"),
        raw: None,
    })
}

// --- OpenAI Responses API ----------------------------------------------------------------

fn responses_body(model: &str, messages: &[M], tools: &[ToolDecl], s: &Sampling) -> Value {
    let mut input = Vec::new();
    for m in messages {
        match m {
            M::System(_) => {}
            M::User(t) => input.push(json!({"type": "message", "role": "user", "content": t})),
            M::Assistant {
                raw: Some(Value::Array(items)),
                ..
            } => input.extend(items.iter().cloned()),
            M::Assistant { text, calls, .. } => {
                if let Some(t) = text {
                    input.push(json!({"type": "message", "role": "assistant", "content": t}));
                }
                input.extend(calls.iter().map(|c| {
                    json!({"type": "function_call", "call_id": c.id, "name": c.name, "arguments": c.arguments.to_string()})
                }));
            }
            M::Tool { id, content, .. } => input
                .push(json!({"type": "function_call_output", "call_id": id, "output": content})),
        }
    }
    let mut body = json!({"model": model, "input": input});
    if !tools.is_empty() {
        body["tools"] = tools
            .iter()
            .map(|t| {
                let mut o = Map::new();
                o.insert("type".into(), json!("function"));
                o.extend(declaration(t, "parameters"));
                o.insert("strict".into(), json!(false));
                Value::Object(o)
            })
            .collect();
    }
    put(
        &mut body,
        "instructions",
        system_text(messages).map(Value::from),
    );
    put(
        &mut body,
        "max_output_tokens",
        s.max_tokens.map(Value::from),
    );
    put(&mut body, "temperature", s.temperature.map(Value::from));
    body
}

fn responses_turn(v: &Value) -> Result<ChatTurn, LlmError> {
    let ResponsesOutput {
        text,
        calls: items,
        refusal,
    } = responses_output(v)?;
    if let Some(reason) = refusal {
        return Err(LlmError::Refusal {
            provider: "openai-responses",
            reason,
        });
    }
    let calls = items
        .iter()
        .enumerate()
        .map(|(i, c)| ToolCall {
            id: c
                .get("call_id")
                .and_then(Value::as_str)
                .map_or_else(|| format!("call_{i}"), str::to_owned),
            name: c
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned(),
            arguments: arguments(c.get("arguments")),
        })
        .collect();
    Ok(ChatTurn {
        text: (!text.is_empty()).then_some(text),
        calls,
        usage: usage(v, "/usage/input_tokens", "/usage/output_tokens"),
        raw: v.get("output").cloned(),
    })
}

// --- Anthropic Messages ------------------------------------------------------------------

fn anthropic_body(model: &str, messages: &[M], tools: &[ToolDecl], s: &Sampling) -> Value {
    // Consecutive blocks of one role go in one message: every `tool_result` of a turn in the
    // user message after it, as the API requires.
    let mut msgs: Vec<Value> = Vec::new();
    let mut push = |role: &str, blocks: Vec<Value>| {
        if blocks.is_empty() {
            return;
        }
        if let Some(last) = msgs.last_mut().filter(|l| l["role"] == role)
            && let Some(content) = last["content"].as_array_mut()
        {
            content.extend(blocks);
            return;
        }
        msgs.push(json!({"role": role, "content": blocks}));
    };
    for m in messages {
        match m {
            M::System(_) => {}
            M::User(t) => push("user", vec![json!({"type": "text", "text": t})]),
            M::Assistant {
                raw: Some(Value::Array(blocks)),
                ..
            } => push("assistant", blocks.clone()),
            M::Assistant { text, calls, .. } => {
                let mut blocks: Vec<Value> = text
                    .iter()
                    .filter(|t| !t.is_empty())
                    .map(|t| json!({"type": "text", "text": t}))
                    .collect();
                blocks.extend(calls.iter().map(|c| {
                    json!({"type": "tool_use", "id": c.id, "name": c.name, "input": c.arguments})
                }));
                push("assistant", blocks);
            }
            M::Tool {
                id,
                content,
                is_error,
                ..
            } => {
                let mut block =
                    json!({"type": "tool_result", "tool_use_id": id, "content": content});
                if *is_error {
                    block["is_error"] = json!(true);
                }
                push("user", vec![block]);
            }
        }
    }
    let mut body = json!({
        "model": model,
        "max_tokens": s.max_tokens.unwrap_or(Sampling::ANTHROPIC_MAX_TOKENS),
        "messages": msgs,
    });
    if !tools.is_empty() {
        body["tools"] = tools
            .iter()
            .map(|t| Value::Object(declaration(t, "input_schema")))
            .collect();
    }
    put(&mut body, "system", system_text(messages).map(Value::from));
    put(&mut body, "temperature", s.temperature.map(Value::from));
    body
}

fn anthropic_turn(v: &Value) -> Result<ChatTurn, LlmError> {
    let name = "anthropic";
    if str_at(v, "stop_reason") == Some("refusal") {
        return Err(LlmError::Refusal {
            provider: name,
            reason: "stop_reason refusal".into(),
        });
    }
    let blocks = v
        .get("content")
        .and_then(Value::as_array)
        .ok_or_else(|| malformed(name, "no content blocks"))?;
    let text: String = blocks
        .iter()
        .filter(|b| str_at(b, "type") == Some("text"))
        .filter_map(|b| str_at(b, "text"))
        .collect();
    let calls = blocks
        .iter()
        .filter(|b| str_at(b, "type") == Some("tool_use"))
        .enumerate()
        .map(|(i, b)| ToolCall {
            id: str_at(b, "id").map_or_else(|| format!("call_{i}"), str::to_owned),
            name: str_at(b, "name").unwrap_or("").to_owned(),
            arguments: b.get("input").cloned().unwrap_or(Value::Null),
        })
        .collect();
    Ok(ChatTurn {
        text: (!text.is_empty()).then_some(text),
        calls,
        usage: usage(v, "/usage/input_tokens", "/usage/output_tokens"),
        raw: Some(Value::Array(blocks.clone())),
    })
}

// --- Gemini / Vertex generateContent -----------------------------------------------------

fn gemini_body(messages: &[M], tools: &[ToolDecl], s: &Sampling) -> Value {
    let mut contents = Vec::new();
    // Call ids Gemini gave (it may, it need not): a response to one says which call it answers.
    let mut given_ids = std::collections::BTreeSet::new();
    for m in messages {
        match m {
            M::System(_) => {}
            M::User(t) => contents.push(json!({"role": "user", "parts": [{"text": t}]})),
            M::Assistant {
                raw: Some(Value::Array(parts)),
                ..
            } => {
                given_ids.extend(
                    parts
                        .iter()
                        .filter_map(|p| p.pointer("/functionCall/id").and_then(Value::as_str)),
                );
                contents.push(json!({"role": "model", "parts": parts}));
            }
            M::Assistant { text, calls, .. } => {
                let mut parts: Vec<Value> = text.iter().map(|t| json!({"text": t})).collect();
                parts.extend(
                    calls
                        .iter()
                        .map(|c| json!({"functionCall": {"name": c.name, "args": c.arguments}})),
                );
                contents.push(json!({"role": "model", "parts": parts}));
            }
            M::Tool {
                id, name, content, ..
            } => {
                // `response` must be an object: the CallToolResult is one.
                let response: Value = serde_json::from_str(content)
                    .ok()
                    .filter(Value::is_object)
                    .unwrap_or_else(|| json!({"content": content}));
                let mut answer = json!({"name": name, "response": response});
                if given_ids.contains(id.as_str()) {
                    answer["id"] = json!(id);
                }
                contents.push(json!({"role": "user", "parts": [{"functionResponse": answer}]}));
            }
        }
    }
    let mut body = json!({"contents": contents});
    if !tools.is_empty() {
        let decls: Vec<Value> = tools
            .iter()
            .map(|t| Value::Object(declaration(t, "parametersJsonSchema")))
            .collect();
        body["tools"] = json!([{"functionDeclarations": decls}]);
    }
    put(
        &mut body,
        "systemInstruction",
        system_text(messages).map(|t| json!({"parts": [{"text": t}]})),
    );
    let mut config = json!({});
    put(
        &mut config,
        "maxOutputTokens",
        s.max_tokens.map(Value::from),
    );
    put(&mut config, "temperature", s.temperature.map(Value::from));
    put(&mut config, "seed", s.seed.map(Value::from));
    if config.as_object().is_some_and(|o| !o.is_empty()) {
        body["generationConfig"] = config;
    }
    body
}

fn gemini_turn(name: &'static str, v: &Value) -> Result<ChatTurn, LlmError> {
    if let Some(block) = v
        .pointer("/promptFeedback/blockReason")
        .and_then(Value::as_str)
    {
        return Err(LlmError::Refusal {
            provider: name,
            reason: format!("prompt blocked: {block}"),
        });
    }
    let cand = v
        .pointer("/candidates/0")
        .ok_or_else(|| malformed(name, "no candidates"))?;
    let finish = str_at(cand, "finishReason").unwrap_or("");
    if matches!(
        finish,
        "SAFETY" | "RECITATION" | "PROHIBITED_CONTENT" | "BLOCKLIST" | "SPII"
    ) {
        return Err(LlmError::Refusal {
            provider: name,
            reason: format!("finishReason {finish}"),
        });
    }
    let parts = cand
        .pointer("/content/parts")
        .and_then(Value::as_array)
        .ok_or_else(|| malformed(name, &format!("no content parts (finishReason {finish:?})")))?;
    let text: String = parts
        .iter()
        // Thought summaries are not the reply.
        .filter(|p| p.get("thought").and_then(Value::as_bool) != Some(true))
        .filter_map(|p| str_at(p, "text"))
        .collect();
    let calls = parts
        .iter()
        .filter_map(|p| p.get("functionCall"))
        .enumerate()
        .map(|(i, c)| ToolCall {
            id: str_at(c, "id").map_or_else(|| format!("call_{i}"), str::to_owned),
            name: str_at(c, "name").unwrap_or("").to_owned(),
            arguments: c.get("args").cloned().unwrap_or_else(|| json!({})),
        })
        .collect();
    Ok(ChatTurn {
        text: (!text.is_empty()).then_some(text),
        calls,
        usage: usage(
            v,
            "/usageMetadata/promptTokenCount",
            "/usageMetadata/candidatesTokenCount",
        ),
        raw: Some(Value::Array(parts.clone())),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// OpenAI's own hosts get `max_completion_tokens` (reasoning models refuse `max_tokens`);
    /// any other base URL, a llama.cpp, vLLM or Ollama server, gets `max_tokens`.
    #[test]
    fn the_token_limit_is_spelled_for_the_server() {
        let s = Sampling {
            max_tokens: Some(99),
            ..Sampling::default()
        };
        let body = |base: &str| {
            Provider::OpenAi {
                base_url: base.into(),
                key: None,
            }
            .chat_body("m", &[M::User("hi".into())], &[], &s)
        };
        for official in [
            "https://api.openai.com/v1",
            "https://my-team.openai.azure.com/openai/v1",
        ] {
            let official = body(official);
            assert_eq!(official["max_completion_tokens"], 99);
            assert!(official.get("max_tokens").is_none());
        }
        for local in [
            "http://127.0.0.1:8080/v1",
            "http://localhost:11434/v1",
            "https://api.openai.com.example.net/v1",
        ] {
            let local = body(local);
            assert_eq!(local["max_tokens"], 99);
            assert!(local.get("max_completion_tokens").is_none());
        }
    }

    /// A Gemini call that came with an id gets its response by that id; one without (the
    /// runner named it `call_<i>`) by name only.
    #[test]
    fn gemini_answers_a_call_by_the_id_it_gave() {
        let tool = |id: &str| M::Tool {
            id: id.into(),
            name: "t".into(),
            content: "{}".into(),
            is_error: false,
        };
        let messages = [
            M::User("go".into()),
            M::Assistant {
                text: None,
                calls: vec![],
                raw: Some(
                    json!([{"functionCall": {"id": "g-1", "name": "t", "args": {}}}, {"functionCall": {"name": "t", "args": {}}}]),
                ),
            },
            tool("g-1"),
            tool("call_1"),
        ];
        let body = gemini_body(&messages, &[], &Sampling::default());
        let answers: Vec<&Value> = body["contents"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|c| c.pointer("/parts/0/functionResponse"))
            .collect();
        assert_eq!(answers[0]["id"], "g-1");
        assert!(answers[1].get("id").is_none());
    }

    /// Anthropic needs every `tool_result` of a turn in one user message, flagged when the
    /// result is an error, and a `max_tokens` even when none is given.
    #[test]
    fn anthropic_groups_tool_results_and_flags_errors() {
        let call = |id: &str| ToolCall {
            id: id.into(),
            name: "t".into(),
            arguments: json!({"a": 1}),
        };
        let messages = [
            M::User("go".into()),
            M::Assistant {
                text: None,
                calls: vec![call("a"), call("b")],
                raw: None,
            },
            M::Tool {
                id: "a".into(),
                name: "t".into(),
                content: "{}".into(),
                is_error: false,
            },
            M::Tool {
                id: "b".into(),
                name: "t".into(),
                content: "{\"isError\":true}".into(),
                is_error: true,
            },
        ];
        let body = anthropic_body("m", &messages, &[], &Sampling::default());
        insta::assert_json_snapshot!(body, @r#"
        {
          "max_tokens": 4096,
          "messages": [
            {
              "content": [
                {
                  "text": "go",
                  "type": "text"
                }
              ],
              "role": "user"
            },
            {
              "content": [
                {
                  "id": "a",
                  "input": {
                    "a": 1
                  },
                  "name": "t",
                  "type": "tool_use"
                },
                {
                  "id": "b",
                  "input": {
                    "a": 1
                  },
                  "name": "t",
                  "type": "tool_use"
                }
              ],
              "role": "assistant"
            },
            {
              "content": [
                {
                  "content": "{}",
                  "tool_use_id": "a",
                  "type": "tool_result"
                },
                {
                  "content": "{\"isError\":true}",
                  "is_error": true,
                  "tool_use_id": "b",
                  "type": "tool_result"
                }
              ],
              "role": "user"
            }
          ],
          "model": "m"
        }
        "#);
    }
}
