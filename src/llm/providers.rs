//! The providers: where each is, its credential, and its wire format for structured answers
//! (request bodies and response parsing; the tool-using chat is `chat`'s). Keys go in headers,
//! never in URLs, and every response body is redacted ([`Secrets`]) before it is parsed or
//! quoted in an error, so a key the provider echoes reaches neither answers nor errors.

use std::time::Duration;

use serde_json::{Value, json};

use super::{Answer, LlmError, Request, Secrets, Usage};

/// Which API, where, with which credential.
#[derive(Clone)]
pub enum Provider {
    /// OpenAI-compatible `POST {base}/chat/completions` (OpenAI, vLLM, Ollama, llama.cpp).
    OpenAi {
        /// Everything before `/chat/completions`, no trailing slash
        /// (`AGENT_SEER_OPENAI_BASE_URL`, default `https://api.openai.com/v1`).
        base_url: String,
        /// `OPENAI_API_KEY`, sent as `Authorization: Bearer`; None for local servers that take
        /// no key.
        key: Option<String>,
    },
    /// The OpenAI Responses API, `POST {base}/responses` (spec `openai:responses:MODEL`).
    OpenAiResponses {
        /// Everything before `/responses`: `AGENT_SEER_OPENAI_BASE_URL`, as for chat
        /// completions.
        base_url: String,
        /// `OPENAI_API_KEY`, sent as `Authorization: Bearer`; None for servers that take none.
        key: Option<String>,
    },
    /// Gemini API `POST {base}/v1beta/models/{model}:generateContent`, key in `x-goog-api-key`.
    Gemini {
        /// `AGENT_SEER_GEMINI_BASE_URL`, default `https://generativelanguage.googleapis.com`.
        base_url: String,
        /// `GEMINI_API_KEY`, sent as `x-goog-api-key`; None sends no credential (replay mode
        /// needs none).
        key: Option<String>,
    },
    /// Vertex AI `generateContent` with a bearer token.
    Vertex {
        /// `AGENT_SEER_VERTEX_BASE_URL`, default `https://<location>-aiplatform.googleapis.com`.
        base_url: String,
        /// `GOOGLE_CLOUD_PROJECT` (empty in replay mode when unset).
        project: String,
        /// `GOOGLE_CLOUD_LOCATION`, default `us-central1`.
        location: String,
        /// `GOOGLE_OAUTH_ACCESS_TOKEN`, sent as `Authorization: Bearer`; None sends no
        /// credential (replay mode needs none).
        token: Option<String>,
    },
    /// Anthropic `POST {base}/v1/messages`; structured output through a forced tool call.
    Anthropic {
        /// `AGENT_SEER_ANTHROPIC_BASE_URL`, default `https://api.anthropic.com`.
        base_url: String,
        /// `ANTHROPIC_API_KEY`, sent as `x-api-key`; None sends no credential (replay mode
        /// needs none).
        key: Option<String>,
    },
}

// Keys stay out of Debug output.
impl std::fmt::Debug for Provider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.name())
    }
}

impl Provider {
    /// `openai`, `openai-responses`, `gemini`, `vertex` or `anthropic`: the `provider` of a
    /// `provider:model` spec, part of every cache key, and of each ledger row's name.
    pub fn name(&self) -> &'static str {
        match self {
            Provider::OpenAi { .. } => "openai",
            Provider::OpenAiResponses { .. } => "openai-responses",
            Provider::Gemini { .. } => "gemini",
            Provider::Vertex { .. } => "vertex",
            Provider::Anthropic { .. } => "anthropic",
        }
    }

    /// The key or bearer token it sends, if any: a secret to redact.
    pub(super) fn credential(&self) -> Option<&str> {
        match self {
            Provider::OpenAi { key, .. }
            | Provider::OpenAiResponses { key, .. }
            | Provider::Gemini { key, .. }
            | Provider::Anthropic { key, .. } => key.as_deref(),
            Provider::Vertex { token, .. } => token.as_deref(),
        }
    }

    pub(super) fn from_env(
        kind: &str,
        replay: bool,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Self, LlmError> {
        let need = |k: &str| -> Result<Option<String>, LlmError> {
            match env(k) {
                Some(v) => Ok(Some(v)),
                None if replay => Ok(None),
                None => Err(LlmError::Config(format!("{k} is not set"))),
            }
        };
        let base = |k: &str, d: &str| {
            env(k)
                .unwrap_or_else(|| d.to_owned())
                .trim_end_matches('/')
                .to_owned()
        };
        Ok(match kind {
            "openai" => Provider::OpenAi {
                base_url: base("AGENT_SEER_OPENAI_BASE_URL", "https://api.openai.com/v1"),
                // Local servers (llama.cpp, vLLM, Ollama) take no key.
                key: env("OPENAI_API_KEY"),
            },
            "openai-responses" => Provider::OpenAiResponses {
                base_url: base("AGENT_SEER_OPENAI_BASE_URL", "https://api.openai.com/v1"),
                key: env("OPENAI_API_KEY"),
            },
            "gemini" => Provider::Gemini {
                base_url: base(
                    "AGENT_SEER_GEMINI_BASE_URL",
                    "https://generativelanguage.googleapis.com",
                ),
                key: need("GEMINI_API_KEY")?,
            },
            "vertex" => {
                let location = env("GOOGLE_CLOUD_LOCATION").unwrap_or_else(|| "us-central1".into());
                Provider::Vertex {
                    base_url: base(
                        "AGENT_SEER_VERTEX_BASE_URL",
                        &format!("https://{location}-aiplatform.googleapis.com"),
                    ),
                    project: need("GOOGLE_CLOUD_PROJECT")?.unwrap_or_default(),
                    location,
                    token: need("GOOGLE_OAUTH_ACCESS_TOKEN")?,
                }
            }
            "anthropic" => Provider::Anthropic {
                base_url: base("AGENT_SEER_ANTHROPIC_BASE_URL", "https://api.anthropic.com"),
                key: need("ANTHROPIC_API_KEY")?,
            },
            other => {
                return Err(LlmError::Config(format!(
                    "unknown provider `{other}`: use gemini, vertex, openai, openai:responses or anthropic"
                )));
            }
        })
    }

    pub(super) async fn call(
        &self,
        http: &reqwest::Client,
        model: &str,
        req: &Request,
        timeout: Duration,
        secrets: &Secrets,
    ) -> Result<Answer, LlmError> {
        let v = self
            .post(http, model, &self.body(model, req), timeout, secrets)
            .await?;
        let mut answer = self.parse(&v)?;
        // Text parts joined here may spell a key no single part held.
        secrets.redact_in_place(&mut answer.text);
        Ok(answer)
    }

    /// Where requests go, and the credential headers (keys never go in URLs).
    fn endpoint(&self, model: &str) -> (String, Vec<(&'static str, String)>) {
        let url = match self {
            Provider::OpenAi { base_url, .. } => format!("{base_url}/chat/completions"),
            Provider::OpenAiResponses { base_url, .. } => format!("{base_url}/responses"),
            Provider::Gemini { base_url, .. } => {
                format!("{base_url}/v1beta/models/{model}:generateContent")
            }
            Provider::Vertex {
                base_url,
                project,
                location,
                ..
            } => format!(
                "{base_url}/v1/projects/{project}/locations/{location}/publishers/google/models/{model}:generateContent"
            ),
            Provider::Anthropic { base_url, .. } => format!("{base_url}/v1/messages"),
        };
        (url, self.headers())
    }

    /// The credential headers every request of this provider carries (and Anthropic's API
    /// version); keys never go in URLs.
    pub(super) fn headers(&self) -> Vec<(&'static str, String)> {
        match self {
            Provider::OpenAi { key, .. } | Provider::OpenAiResponses { key, .. } => key
                .iter()
                .map(|k| ("authorization", format!("Bearer {k}")))
                .collect(),
            Provider::Gemini { key, .. } => {
                key.iter().map(|k| ("x-goog-api-key", k.clone())).collect()
            }
            Provider::Vertex { token, .. } => token
                .iter()
                .map(|t| ("authorization", format!("Bearer {t}")))
                .collect(),
            Provider::Anthropic { key, .. } => {
                let mut headers = vec![("anthropic-version", "2023-06-01".to_owned())];
                headers.extend(key.iter().map(|k| ("x-api-key", k.clone())));
                headers
            }
        }
    }

    /// POSTs a JSON body and returns the JSON answer, redacted; HTTP errors keep their
    /// status, redacted body excerpt and `Retry-After`.
    pub(super) async fn post(
        &self,
        http: &reqwest::Client,
        model: &str,
        body: &Value,
        timeout: Duration,
        secrets: &Secrets,
    ) -> Result<Value, LlmError> {
        let name = self.name();
        let (url, headers) = self.endpoint(model);
        let mut rb = http.post(&url).json(body);
        for (k, v) in headers {
            rb = rb.header(k, v);
        }
        let text = send(rb, name, timeout, secrets).await?;
        let mut v: Value = serde_json::from_str(&text).map_err(|e| LlmError::Malformed {
            provider: name,
            detail: format!("not JSON ({e}): {}", excerpt(&text)),
        })?;
        // A key written with JSON escapes in the body is whole again once parsed.
        secrets.redact_json(&mut v);
        Ok(v)
    }

    /// The request body of one structured call, as sent alone or as one item of a batch.
    pub(super) fn body(&self, model: &str, req: &Request) -> Value {
        let mut body = self.unseeded_body(model, req);
        match (self, req.seed) {
            (Provider::OpenAi { .. }, Some(seed)) => body["seed"] = json!(seed),
            (Provider::Gemini { .. } | Provider::Vertex { .. }, Some(seed)) => {
                body["generationConfig"]["seed"] = json!(seed);
            }
            _ => {}
        }
        body
    }

    fn unseeded_body(&self, model: &str, req: &Request) -> Value {
        match self {
            Provider::OpenAi { .. } => json!({
                "model": model,
                "temperature": req.temperature,
                "max_tokens": req.max_tokens,
                "messages": [
                    {"role": "system", "content": req.system},
                    {"role": "user", "content": req.user},
                ],
                "response_format": {
                    "type": "json_schema",
                    "json_schema": {"name": req.schema_name, "strict": strict(&req.schema), "schema": req.schema},
                },
            }),
            Provider::OpenAiResponses { .. } => json!({
                "model": model,
                "temperature": req.temperature,
                "max_output_tokens": req.max_tokens,
                "instructions": req.system,
                "input": [{"type": "message", "role": "user", "content": req.user}],
                "text": {"format": {"type": "json_schema", "name": req.schema_name, "strict": strict(&req.schema), "schema": req.schema}},
            }),
            Provider::Gemini { .. } | Provider::Vertex { .. } => gemini_body(req),
            Provider::Anthropic { .. } => json!({
                "model": model,
                "max_tokens": req.max_tokens,
                "temperature": req.temperature,
                "system": req.system,
                "messages": [{"role": "user", "content": req.user}],
                "tools": [{"name": req.schema_name, "description": "Record the answer.", "input_schema": req.schema}],
                "tool_choice": {"type": "tool", "name": req.schema_name},
            }),
        }
    }

    /// The answer in one response body, alone or one item of a batch's results.
    pub(super) fn parse(&self, v: &Value) -> Result<Answer, LlmError> {
        let name = self.name();
        let n = |p: &str| v.pointer(p).and_then(Value::as_u64).unwrap_or(0);
        match self {
            Provider::OpenAi { .. } => {
                let msg = v
                    .pointer("/choices/0/message")
                    .ok_or_else(|| malformed(name, "no choices[0].message"))?;
                if let Some(r) = msg
                    .get("refusal")
                    .and_then(Value::as_str)
                    .filter(|r| !r.is_empty())
                {
                    return Err(LlmError::Refusal {
                        provider: name,
                        reason: r.to_owned(),
                    });
                }
                let text = msg
                    .get("content")
                    .and_then(Value::as_str)
                    .ok_or_else(|| malformed(name, "no message content"))?;
                Ok(Answer {
                    text: text.to_owned(),
                    usage: Usage {
                        input_tokens: n("/usage/prompt_tokens"),
                        output_tokens: n("/usage/completion_tokens"),
                    },
                    truncated: v
                        .pointer("/choices/0/finish_reason")
                        .and_then(Value::as_str)
                        == Some("length"),
                    cached: false,
                })
            }
            Provider::OpenAiResponses { .. } => {
                let ResponsesOutput { text, refusal, .. } = responses_output(v)?;
                if let Some(reason) = refusal {
                    return Err(LlmError::Refusal {
                        provider: name,
                        reason,
                    });
                }
                if text.is_empty() {
                    return Err(malformed(name, "no output_text in the output items"));
                }
                Ok(Answer {
                    text,
                    usage: Usage {
                        input_tokens: n("/usage/input_tokens"),
                        output_tokens: n("/usage/output_tokens"),
                    },
                    truncated: v
                        .pointer("/incomplete_details/reason")
                        .and_then(Value::as_str)
                        == Some("max_output_tokens"),
                    cached: false,
                })
            }
            Provider::Gemini { .. } | Provider::Vertex { .. } => {
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
                let finish = cand
                    .get("finishReason")
                    .and_then(Value::as_str)
                    .unwrap_or("");
                if matches!(
                    finish,
                    "SAFETY" | "RECITATION" | "PROHIBITED_CONTENT" | "BLOCKLIST" | "SPII"
                ) {
                    return Err(LlmError::Refusal {
                        provider: name,
                        reason: format!("finishReason {finish}"),
                    });
                }
                let text: String = cand
                    .pointer("/content/parts")
                    .and_then(Value::as_array)
                    .map(|parts| {
                        parts
                            .iter()
                            .filter_map(|p| p.get("text").and_then(Value::as_str))
                            .collect()
                    })
                    .ok_or_else(|| malformed(name, "no content parts"))?;
                Ok(Answer {
                    text,
                    usage: Usage {
                        input_tokens: n("/usageMetadata/promptTokenCount"),
                        // Thinking tokens are billed as output.
                        output_tokens: n("/usageMetadata/candidatesTokenCount")
                            + n("/usageMetadata/thoughtsTokenCount"),
                    },
                    truncated: finish == "MAX_TOKENS",
                    cached: false,
                })
            }
            Provider::Anthropic { .. } => {
                let truncated = v.get("stop_reason").and_then(Value::as_str) == Some("max_tokens");
                if v.get("stop_reason").and_then(Value::as_str) == Some("refusal") {
                    return Err(LlmError::Refusal {
                        provider: name,
                        reason: "stop_reason refusal".into(),
                    });
                }
                let blocks = v
                    .get("content")
                    .and_then(Value::as_array)
                    .ok_or_else(|| malformed(name, "no content"))?;
                let usage = Usage {
                    input_tokens: n("/usage/input_tokens"),
                    output_tokens: n("/usage/output_tokens"),
                };
                if let Some(input) = blocks
                    .iter()
                    .find(|b| b.get("type").and_then(Value::as_str) == Some("tool_use"))
                    .and_then(|b| b.get("input"))
                {
                    return Ok(Answer {
                        text: input.to_string(),
                        usage,
                        truncated,
                        cached: false,
                    });
                }
                let text: String = blocks
                    .iter()
                    .filter_map(|b| b.get("text").and_then(Value::as_str))
                    .collect();
                if text.is_empty() {
                    return Err(malformed(name, "no tool_use or text block"));
                }
                Ok(Answer {
                    text,
                    usage,
                    truncated,
                    cached: false,
                })
            }
        }
    }
}

/// Whether OpenAI's strict structured outputs take `schema`: every object closed
/// (`additionalProperties: false`) with all its properties required. A schema that leaves a
/// property optional or an object open (a tool's `inputSchema` in a generated call, a mock's
/// free-form output) is sent with `strict: false`, as OpenAI would refuse it otherwise: the model
/// is still steered by it and the answer is still checked against it.
pub(super) fn strict(schema: &Value) -> bool {
    let Some(o) = schema.as_object() else {
        return true;
    };
    let props = o.get("properties").and_then(Value::as_object);
    if o.get("type").is_some_and(|t| t == "object") || props.is_some() {
        let required: Vec<&str> = o
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let closed = o.get("additionalProperties") == Some(&Value::Bool(false));
        let all_required = props.is_some_and(|p| p.keys().all(|k| required.contains(&k.as_str())));
        if !closed || !all_required {
            return false;
        }
    }
    // The subschemas, by the keywords that hold them.
    let many = |k: &str| o.get(k).and_then(Value::as_array).into_iter().flatten();
    let named = |k: &str| {
        o.get(k)
            .and_then(Value::as_object)
            .into_iter()
            .flat_map(|m| m.values())
    };
    named("properties")
        .chain(named("$defs"))
        .chain(many("anyOf"))
        .chain(many("oneOf"))
        .chain(many("allOf"))
        .chain(o.get("items"))
        .all(strict)
}

fn gemini_body(req: &Request) -> Value {
    json!({
        "systemInstruction": {"parts": [{"text": req.system}]},
        "contents": [{"role": "user", "parts": [{"text": req.user}]}],
        "generationConfig": {
            "temperature": req.temperature,
            "maxOutputTokens": req.max_tokens,
            "responseMimeType": "application/json",
            "responseJsonSchema": req.schema,
        },
    })
}

/// What a Responses API answer's output items say.
pub(super) struct ResponsesOutput<'a> {
    /// The `output_text` parts of its `message` items, joined.
    pub text: String,
    /// Its `function_call` items, in order.
    pub calls: Vec<&'a serde_json::Map<String, Value>>,
    /// The refusal, when a message part is one.
    pub refusal: Option<String>,
}

/// A Responses API answer's output items read. A failed or content-filtered response, or one
/// without an `output` array, is an error.
pub(super) fn responses_output(v: &Value) -> Result<ResponsesOutput<'_>, LlmError> {
    let name = "openai-responses";
    if let Some(e) = v.get("error").filter(|e| !e.is_null()) {
        let msg = e.get("message").and_then(Value::as_str).unwrap_or("");
        return Err(malformed(name, &format!("the response failed: {msg}")));
    }
    if v.pointer("/incomplete_details/reason")
        .and_then(Value::as_str)
        == Some("content_filter")
    {
        return Err(LlmError::Refusal {
            provider: name,
            reason: "incomplete: content_filter".into(),
        });
    }
    let items = v
        .get("output")
        .and_then(Value::as_array)
        .ok_or_else(|| malformed(name, "no output items"))?;
    let (mut text, mut calls, mut refusal) = (String::new(), Vec::new(), None);
    for item in items.iter().filter_map(Value::as_object) {
        match item.get("type").and_then(Value::as_str) {
            Some("function_call") => calls.push(item),
            Some("message") => {
                for part in item
                    .get("content")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    match part.get("type").and_then(Value::as_str) {
                        Some("output_text") => {
                            text.push_str(part.get("text").and_then(Value::as_str).unwrap_or(""));
                        }
                        Some("refusal") => {
                            refusal = Some(
                                part.get("refusal")
                                    .and_then(Value::as_str)
                                    .unwrap_or("refusal")
                                    .to_owned(),
                            );
                        }
                        _ => {}
                    }
                }
            }
            // Reasoning and other items carry no answer; the chat replays them as given.
            _ => {}
        }
    }
    Ok(ResponsesOutput {
        text,
        calls,
        refusal,
    })
}

/// Sends a request and reads its body, redacted; a status other than 2xx is an HTTP error with
/// the redacted body's excerpt and the `Retry-After` delay.
pub(super) async fn send(
    rb: reqwest::RequestBuilder,
    name: &'static str,
    timeout: Duration,
    secrets: &Secrets,
) -> Result<String, LlmError> {
    let resp = rb.send().await.map_err(|e| transport(name, timeout, &e))?;
    let status = resp.status();
    let retry_after = resp
        .headers()
        .get("retry-after")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok())
        .map(Duration::from_secs);
    let text = resp
        .text()
        .await
        .map_err(|e| transport(name, timeout, &e))?;
    // Before any excerpt is cut: a key cut in half would no longer match.
    let text = secrets.redact(&text).into_owned();
    if !status.is_success() {
        return Err(LlmError::Http {
            provider: name,
            status: status.as_u16(),
            body: excerpt(&text),
            retry_after,
        });
    }
    Ok(text)
}

pub(super) fn malformed(provider: &'static str, detail: &str) -> LlmError {
    LlmError::Malformed {
        provider,
        detail: detail.to_owned(),
    }
}

pub(super) fn transport(provider: &'static str, timeout: Duration, e: &reqwest::Error) -> LlmError {
    if e.is_timeout() {
        LlmError::Timeout { provider, timeout }
    } else {
        // reqwest's Display includes the URL, which never carries a key here.
        LlmError::Transport {
            provider,
            message: e.to_string(),
        }
    }
}

pub(super) fn excerpt(text: &str) -> String {
    let t: String = text.chars().take(300).collect();
    if text.chars().count() > 300 {
        format!("{t}…")
    } else {
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Strict structured outputs only for a schema OpenAI's strict mode takes: closed objects
    /// with every property required, all the way down (through arrays and `anyOf`).
    #[test]
    fn strict_only_where_every_object_is_closed_and_required() {
        let closed = |props: Value, required: Value| json!({"type": "object", "additionalProperties": false, "properties": props, "required": required});
        let leaf = closed(
            json!({"a": {"type": "string", "enum": ["x"]}}),
            json!(["a"]),
        );
        assert!(strict(&leaf));
        assert!(strict(&closed(
            json!({"xs": {"type": "array", "items": {"anyOf": [leaf.clone(), leaf.clone()]}}}),
            json!(["xs"])
        )));
        // An open object anywhere, an optional property, an object with no properties: not strict.
        assert!(!strict(&json!({"type": "object"})));
        assert!(!strict(&closed(
            json!({"a": {"type": "string"}, "b": {"type": "string"}}),
            json!(["a"])
        )));
        let open =
            json!({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]});
        assert!(!strict(&closed(
            json!({"xs": {"type": "array", "items": {"anyOf": [leaf, open]}}}),
            json!(["xs"])
        )));
    }

    /// A seed goes where each API takes one, and nowhere else; without one the body is as it
    /// always was. The cache key changes only when a seed is set.
    #[test]
    fn seeds_go_where_the_api_takes_them() {
        let req = Request {
            system: "s".into(),
            user: "u".into(),
            schema_name: "a".into(),
            schema: json!({"type": "object"}),
            temperature: 0.0,
            max_tokens: 10,
            cache_tag: "t".into(),
            seed: Some(7),
        };
        let unseeded = Request {
            seed: None,
            ..req.clone()
        };
        let p = |kind: &str| {
            Provider::from_env(kind, true, &|k: &str| {
                k.ends_with("_KEY").then(|| "k".to_owned())
            })
            .unwrap()
        };
        assert_eq!(p("openai").body("m", &req)["seed"], 7);
        assert_eq!(p("gemini").body("m", &req)["generationConfig"]["seed"], 7);
        for kind in ["openai-responses", "anthropic"] {
            assert_eq!(
                p(kind).body("m", &req),
                p(kind).body("m", &unseeded),
                "{kind}"
            );
        }
        assert_eq!(p("openai").body("m", &unseeded).get("seed"), None);
        assert_ne!(
            super::super::cache::key("openai", "m", &req),
            super::super::cache::key("openai", "m", &unseeded)
        );
    }
}
