//! The providers' wire formats: request bodies and response parsing. Keys go in headers, never
//! in URLs, so no error or log line can carry one.

use std::time::Duration;

use serde_json::{Value, json};

use super::{Answer, LlmError, Request, Usage};

/// Which API, where, with which credential.
#[derive(Clone)]
pub enum Provider {
    /// OpenAI-compatible `POST {base}/chat/completions` (OpenAI, vLLM, Ollama, llama.cpp).
    OpenAi {
        base_url: String,
        key: Option<String>,
    },
    /// Gemini API `POST {base}/v1beta/models/{model}:generateContent`, key in `x-goog-api-key`.
    Gemini {
        base_url: String,
        key: Option<String>,
    },
    /// Vertex AI `generateContent` with a bearer token.
    Vertex {
        base_url: String,
        project: String,
        location: String,
        token: Option<String>,
    },
    /// Anthropic `POST {base}/v1/messages`; structured output through a forced tool call.
    Anthropic {
        base_url: String,
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
    pub fn name(&self) -> &'static str {
        match self {
            Provider::OpenAi { .. } => "openai",
            Provider::Gemini { .. } => "gemini",
            Provider::Vertex { .. } => "vertex",
            Provider::Anthropic { .. } => "anthropic",
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
                    "unknown provider `{other}`: use gemini, vertex, openai or anthropic"
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
    ) -> Result<Answer, LlmError> {
        let name = self.name();
        let (url, body, headers) = self.build(model, req);
        let mut rb = http.post(&url).json(&body);
        for (k, v) in headers {
            rb = rb.header(k, v);
        }
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
        if !status.is_success() {
            return Err(LlmError::Http {
                provider: name,
                status: status.as_u16(),
                body: excerpt(&text),
                retry_after,
            });
        }
        let v: Value = serde_json::from_str(&text).map_err(|e| LlmError::Malformed {
            provider: name,
            detail: format!("not JSON ({e}): {}", excerpt(&text)),
        })?;
        self.parse(&v)
    }

    fn build(&self, model: &str, req: &Request) -> (String, Value, Vec<(&'static str, String)>) {
        match self {
            Provider::OpenAi { base_url, key } => {
                let body = json!({
                    "model": model,
                    "temperature": req.temperature,
                    "max_tokens": req.max_tokens,
                    "messages": [
                        {"role": "system", "content": req.system},
                        {"role": "user", "content": req.user},
                    ],
                    "response_format": {
                        "type": "json_schema",
                        "json_schema": {"name": req.schema_name, "strict": true, "schema": req.schema},
                    },
                });
                let headers = key
                    .iter()
                    .map(|k| ("authorization", format!("Bearer {k}")))
                    .collect();
                (format!("{base_url}/chat/completions"), body, headers)
            }
            Provider::Gemini { base_url, key } => {
                let headers = key.iter().map(|k| ("x-goog-api-key", k.clone())).collect();
                (
                    format!("{base_url}/v1beta/models/{model}:generateContent"),
                    gemini_body(req),
                    headers,
                )
            }
            Provider::Vertex {
                base_url,
                project,
                location,
                token,
            } => {
                let headers = token
                    .iter()
                    .map(|t| ("authorization", format!("Bearer {t}")))
                    .collect();
                let url = format!(
                    "{base_url}/v1/projects/{project}/locations/{location}/publishers/google/models/{model}:generateContent"
                );
                (url, gemini_body(req), headers)
            }
            Provider::Anthropic { base_url, key } => {
                let body = json!({
                    "model": model,
                    "max_tokens": req.max_tokens,
                    "temperature": req.temperature,
                    "system": req.system,
                    "messages": [{"role": "user", "content": req.user}],
                    "tools": [{"name": req.schema_name, "description": "Record the answer.", "input_schema": req.schema}],
                    "tool_choice": {"type": "tool", "name": req.schema_name},
                });
                let mut headers = vec![("anthropic-version", "2023-06-01".to_owned())];
                headers.extend(key.iter().map(|k| ("x-api-key", k.clone())));
                (format!("{base_url}/v1/messages"), body, headers)
            }
        }
    }

    fn parse(&self, v: &Value) -> Result<Answer, LlmError> {
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
                        output_tokens: n("/usageMetadata/candidatesTokenCount"),
                    },
                })
            }
            Provider::Anthropic { .. } => {
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
                    });
                }
                let text: String = blocks
                    .iter()
                    .filter_map(|b| b.get("text").and_then(Value::as_str))
                    .collect();
                if text.is_empty() {
                    return Err(malformed(name, "no tool_use or text block"));
                }
                Ok(Answer { text, usage })
            }
        }
    }
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

fn malformed(provider: &'static str, detail: &str) -> LlmError {
    LlmError::Malformed {
        provider,
        detail: detail.to_owned(),
    }
}

fn transport(provider: &'static str, timeout: Duration, e: &reqwest::Error) -> LlmError {
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

fn excerpt(text: &str) -> String {
    let t: String = text.chars().take(300).collect();
    if text.chars().count() > 300 {
        format!("{t}…")
    } else {
        t
    }
}
