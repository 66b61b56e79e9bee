//! LLM providers behind one client: Gemini (API key and Vertex AI), OpenAI-compatible chat
//! completions (OpenAI, vLLM, Ollama, llama.cpp's server) and Anthropic messages.
//!
//! [`Client`] owns what every call needs: structured output (each provider's JSON-schema mode,
//! validated with serde, up to 3 attempts with the validation error fed back), retries of 429
//! and 5xx with exponential backoff honouring `Retry-After` (backon), a timeout per request, a
//! concurrency cap, the on-disk [`cache`] (live / record / replay) and a [`Ledger`] of calls,
//! tokens and estimated cost. Keys come only from the environment and never reach logs,
//! errors, reports or the cache. The main type is [`Client`], built with [`Client::new`] from an
//! [`LlmConfig`] (usually [`LlmConfig::from_env`]).

pub mod cache;
mod ledger;
mod providers;
mod structured;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::sync::Semaphore;

use cache::Cache;
pub use cache::CacheMode;
pub use ledger::{Ledger, LedgerEntry};
pub use providers::Provider;
pub use structured::extract_json;

/// One request: a system instruction, a user message, and the JSON Schema the answer must
/// follow.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Request {
    /// The system instruction: the task and its rules (the judge's rubric, a stage's brief).
    pub system: String,
    /// The user message: the material to work on (a transcript, a tool spec, a workflow).
    pub user: String,
    /// Name of the structured answer, as the provider's JSON-schema mode wants one (OpenAI's
    /// `json_schema.name`, Anthropic's forced tool).
    pub schema_name: String,
    /// The JSON Schema the answer must follow.
    pub schema: Value,
    /// Sampling temperature: 0.0 for the judge, 0.7 for the generation stages.
    pub temperature: f64,
    /// The answer's token limit (`max_tokens`, Gemini's `maxOutputTokens`).
    pub max_tokens: u32,
    /// Extra key material for the cache (e.g. the rubric version).
    pub cache_tag: String,
}

/// Tokens used by one call.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Prompt tokens, as the provider counted them (0 when it did not say).
    pub input_tokens: u64,
    /// Answer tokens, as the provider counted them (0 when it did not say).
    pub output_tokens: u64,
}

/// A provider's answer: the text that should hold the JSON object.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct Answer {
    /// The answer text; from Anthropic, the forced tool call's input as JSON text.
    pub text: String,
    /// Tokens the call used.
    pub usage: Usage,
    /// The provider stopped at `max_tokens` (OpenAI `finish_reason: "length"`, Anthropic
    /// `stop_reason: "max_tokens"`, Gemini `finishReason: "MAX_TOKENS"`): the text is cut off.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub truncated: bool,
}

/// Why a call did not produce a usable answer.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum LlmError {
    /// The setup is wrong: a malformed `provider:model` or an unknown provider, a missing key,
    /// an unknown `AGENT_SEER_LLM` mode, a provider that cannot chat, or an HTTP client that
    /// did not build.
    #[error("configuration: {0}")]
    Config(String),
    /// The provider answered with a non-2xx status (429 and 5xx are retried).
    #[error("{provider} answered HTTP {status}: {body}")]
    Http {
        /// The provider's name (`openai`, `gemini`, `vertex`, `anthropic`).
        provider: &'static str,
        /// The HTTP status code.
        status: u16,
        /// The response body, cut at 300 characters.
        body: String,
        /// The `Retry-After` delay, when the response gave one in seconds; it replaces the
        /// backoff's next delay.
        retry_after: Option<Duration>,
    },
    /// No answer within the request timeout (retried).
    #[error("{provider} did not answer within {0:?}", .timeout)]
    Timeout {
        /// The provider's name.
        provider: &'static str,
        /// The request timeout ([`LlmConfig::timeout`]); zero from [`Client::chat`], which
        /// does not pass it down.
        timeout: Duration,
    },
    /// The request or its response did not get through: connection refused or reset, DNS,
    /// TLS (retried).
    #[error("{provider}: {message}")]
    Transport {
        /// The provider's name, or `judge` for a judgement task that failed.
        provider: &'static str,
        /// The HTTP client's error (its URL never carries a key).
        message: String,
    },
    /// The model declined: OpenAI `refusal`, a Gemini block or safety `finishReason`,
    /// Anthropic `stop_reason: "refusal"`. Not retried.
    #[error("{provider} refused to answer: {reason}")]
    Refusal {
        /// The provider's name.
        provider: &'static str,
        /// What the provider gave as the reason (e.g. `finishReason SAFETY`).
        reason: String,
    },
    /// The response is not JSON, or has no answer text where the wire format puts it.
    #[error("{provider}: the response has no answer text ({detail})")]
    Malformed {
        /// The provider's name.
        provider: &'static str,
        /// What was missing (e.g. `no choices[0].message`), or the parse error and an excerpt.
        detail: String,
    },
    /// Every attempt of a structured answer was rejected: cut off, no JSON object, not the
    /// schema's shape, or refused by the caller's check.
    #[error(
        "no valid answer after {attempts} attempts; last problem: {problem}; last answer began: {excerpt:?}"
    )]
    InvalidOutput {
        /// Attempts made (3).
        attempts: u32,
        /// Why the last answer was rejected, as it was fed back to the model.
        problem: String,
        /// The last answer's first 200 characters.
        excerpt: String,
    },
    /// Replay mode and the cache holds no answer for the request.
    #[error("replay mode: no cached answer for key {key} (record it with AGENT_SEER_LLM=record)")]
    CacheMiss {
        /// The request's cache key ([`Client::cache_key`]), which names the missing file.
        key: String,
    },
    /// A cache file could not be read, parsed or written.
    #[error("cache {path}: {message}")]
    Cache {
        /// The file that could not be read or written.
        path: PathBuf,
        /// The I/O or JSON error.
        message: String,
    },
}

impl LlmError {
    /// 429, 5xx, timeouts and connection errors are worth another try.
    pub(crate) fn is_retryable(&self) -> bool {
        match self {
            LlmError::Http { status, .. } => *status == 429 || *status >= 500,
            LlmError::Timeout { .. } | LlmError::Transport { .. } => true,
            _ => false,
        }
    }

    /// The server's `Retry-After` delay, on an HTTP error that carried one.
    pub(crate) fn retry_after(&self) -> Option<Duration> {
        match self {
            LlmError::Http { retry_after, .. } => *retry_after,
            _ => None,
        }
    }
}

/// How calls are made: which provider and model, limits, and where the cache lives.
#[derive(Clone, Debug)]
pub struct LlmConfig {
    /// Which API, where, with which credential.
    pub provider: Provider,
    /// The model id the provider knows (`gemini-2.5-flash`, `gpt-4o-mini`, a local name).
    pub model: String,
    /// Per HTTP request; from `AGENT_SEER_LLM_TIMEOUT_SECS`, 120 s by default.
    pub timeout: Duration,
    /// Calls in flight at once; from `AGENT_SEER_LLM_CONCURRENCY` (at least 1), 4 by default.
    pub concurrency: usize,
    /// How many times a retryable error is retried after the first attempt; 4 from
    /// [`LlmConfig::from_env`].
    pub max_retries: usize,
    /// The first backoff delay, growing exponentially (with jitter) up to 60 s; from
    /// `AGENT_SEER_LLM_BACKOFF_MS`, 500 ms by default.
    pub min_backoff: Duration,
    /// The answer cache's directory; `AGENT_SEER_LLM_CACHE`, else the caller's default.
    pub cache_dir: PathBuf,
    /// Live, record or replay (`AGENT_SEER_LLM`).
    pub mode: CacheMode,
}

impl LlmConfig {
    /// Reads `spec` (`provider:model`, e.g. `gemini:gemini-2.5-flash`) and the environment:
    /// keys (`GEMINI_API_KEY`, `OPENAI_API_KEY`, `ANTHROPIC_API_KEY`, `GOOGLE_OAUTH_ACCESS_TOKEN`
    /// with `GOOGLE_CLOUD_PROJECT` / `GOOGLE_CLOUD_LOCATION` for Vertex), base URLs
    /// (`AGENT_SEER_<PROVIDER>_BASE_URL`), `AGENT_SEER_LLM` (live | record | replay),
    /// `AGENT_SEER_LLM_CACHE`, `AGENT_SEER_LLM_TIMEOUT_SECS`, `AGENT_SEER_LLM_CONCURRENCY`.
    /// In replay mode no key is needed.
    pub fn from_env(spec: &str, default_cache: PathBuf) -> Result<Self, LlmError> {
        let env = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
        let mode = match env("AGENT_SEER_LLM").as_deref() {
            None | Some("live") => CacheMode::Live,
            Some("record") => CacheMode::Record,
            Some("replay") => CacheMode::Replay,
            Some(other) => {
                return Err(LlmError::Config(format!(
                    "AGENT_SEER_LLM={other}: use live, record or replay"
                )));
            }
        };
        let (kind, model) = spec.split_once(':').ok_or_else(|| {
            LlmError::Config(format!(
                "`{spec}`: expected provider:model, e.g. gemini:gemini-2.5-flash"
            ))
        })?;
        let provider = Provider::from_env(kind, mode == CacheMode::Replay, &env)?;
        let num = |k: &str, d: u64| env(k).and_then(|v| v.parse().ok()).unwrap_or(d);
        Ok(Self {
            provider,
            model: model.to_owned(),
            timeout: Duration::from_secs(num("AGENT_SEER_LLM_TIMEOUT_SECS", 120)),
            concurrency: num("AGENT_SEER_LLM_CONCURRENCY", 4).max(1) as usize,
            max_retries: 4,
            min_backoff: Duration::from_millis(num("AGENT_SEER_LLM_BACKOFF_MS", 500)),
            cache_dir: env("AGENT_SEER_LLM_CACHE")
                .map(PathBuf::from)
                .unwrap_or(default_cache),
            mode,
        })
    }
}

/// A configured LLM client: provider, cache, retries, concurrency cap and ledger.
#[derive(Clone)]
pub struct Client {
    config: LlmConfig,
    http: reqwest::Client,
    cache: Cache,
    permits: Arc<Semaphore>,
    ledger: Ledger,
}

impl Client {
    /// A client for `config`, with an empty ledger; fails only if the HTTP client cannot be
    /// built.
    pub fn new(config: LlmConfig) -> Result<Self, LlmError> {
        let http = reqwest::Client::builder()
            .timeout(config.timeout)
            .build()
            .map_err(|e| LlmError::Config(format!("HTTP client: {e}")))?;
        Ok(Self {
            cache: Cache::new(config.cache_dir.clone(), config.mode),
            permits: Arc::new(Semaphore::new(config.concurrency)),
            ledger: Ledger::default(),
            http,
            config,
        })
    }

    /// Exponential backoff with jitter; `Retry-After` overrides each delay when given.
    fn backoff(&self) -> backon::ExponentialBuilder {
        backon::ExponentialBuilder::default()
            .with_min_delay(self.config.min_backoff)
            .with_max_delay(Duration::from_secs(60))
            .with_max_times(self.config.max_retries)
            .with_jitter()
    }

    /// The configuration it was built with.
    pub fn config(&self) -> &LlmConfig {
        &self.config
    }

    /// Calls, cache hits, tokens and estimated cost so far, shared by every clone.
    pub fn ledger(&self) -> &Ledger {
        &self.ledger
    }

    /// The cache key of a request: what identifies its answer.
    pub fn cache_key(&self, req: &Request) -> String {
        cache::key(self.config.provider.name(), &self.config.model, req)
    }

    /// One raw answer, through the cache: replay answers only from it, live reads through it,
    /// record always calls and overwrites.
    pub(crate) async fn answer(&self, req: &Request) -> Result<Answer, LlmError> {
        let key = self.cache_key(req);
        if let Some(hit) = self.cache.get(&key)? {
            self.ledger.record(
                self.config.provider.name(),
                &self.config.model,
                hit.usage,
                true,
            );
            return Ok(hit);
        }
        let answer = self.call_with_retries(req).await?;
        self.ledger.record(
            self.config.provider.name(),
            &self.config.model,
            answer.usage,
            false,
        );
        Ok(answer)
    }

    /// The answer cache, for writing hand-made entries.
    pub(crate) fn cache(&self) -> &Cache {
        &self.cache
    }

    /// Stores an answer that passed validation (invalid answers are never cached).
    pub(crate) fn remember(&self, req: &Request, answer: &Answer) -> Result<(), LlmError> {
        self.cache.put(
            &self.cache_key(req),
            self.config.provider.name(),
            &self.config.model,
            req,
            answer,
        )
    }

    async fn call_with_retries(&self, req: &Request) -> Result<Answer, LlmError> {
        use backon::Retryable;
        let _permit = self
            .permits
            .acquire()
            .await
            .map_err(|e| LlmError::Config(e.to_string()))?;
        (|| {
            self.config
                .provider
                .call(&self.http, &self.config.model, req, self.config.timeout)
        })
        .retry(self.backoff())
        .when(LlmError::is_retryable)
        .adjust(|e, d| e.retry_after().or(d))
        .await
    }

    /// A structured answer: the provider's JSON-schema mode, then serde, then `check`; an
    /// invalid answer is retried with the problem fed back (3 attempts in all), then a clear
    /// error.
    pub async fn structured<T, F>(&self, req: &Request, check: F) -> Result<T, LlmError>
    where
        T: serde::de::DeserializeOwned,
        F: Fn(&T) -> Result<(), String>,
    {
        structured::structured(self, req, check).await
    }
}

/// One message of a tool-using conversation (the agent under test's side).
#[derive(Clone, Debug, PartialEq)]
pub enum ChatMessage {
    /// The system instruction, first.
    System(String),
    /// A user turn's prompt.
    User(String),
    /// The model's turn, replayed to it as it was.
    Assistant {
        /// Its text, if it wrote any.
        text: Option<String>,
        /// The tool calls it made.
        calls: Vec<ToolCall>,
    },
    /// The answer to one of the model's tool calls.
    Tool {
        /// The [`ToolCall::id`] it answers (OpenAI's `tool_call_id`).
        id: String,
        /// The tool's name (Gemini's `functionResponse` names it).
        name: String,
        /// The tool's result as JSON text (the mock's `CallToolResult`).
        content: String,
    },
}

/// A tool call the model asked for.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolCall {
    /// The provider's call id; `call_<i>` (its index in the turn) when it gives none, as
    /// Gemini never does.
    pub id: String,
    /// The tool the model called, as it spelled it (empty when it gave no name).
    pub name: String,
    /// The arguments; a model that sends unparsable JSON gets `{"__unparsable__": "<text>"}`,
    /// which the linter then reports as an unknown parameter.
    pub arguments: Value,
}

/// A tool offered to the model.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolDecl {
    /// The tool's name, as in the spec.
    pub name: String,
    /// The spec's description.
    pub description: String,
    /// The spec's input JSON Schema (MCP `inputSchema`).
    pub parameters: Value,
}

/// The model's next move: text, tool calls, or both.
#[derive(Clone, Debug, PartialEq)]
pub struct ChatTurn {
    /// The model's text; None when it wrote none.
    pub text: Option<String>,
    /// The tool calls it asked for, in order; none means it replied to the user.
    pub calls: Vec<ToolCall>,
    /// Tokens the step used.
    pub usage: Usage,
}

impl Client {
    /// One step of a tool-using conversation (never cached: the agent under test runs live),
    /// with the same retries, timeout and concurrency cap as every call.
    pub async fn chat(
        &self,
        messages: &[ChatMessage],
        tools: &[ToolDecl],
    ) -> Result<ChatTurn, LlmError> {
        use backon::Retryable;
        let _permit = self
            .permits
            .acquire()
            .await
            .map_err(|e| LlmError::Config(e.to_string()))?;
        let turn = (|| {
            self.config
                .provider
                .chat(&self.http, &self.config.model, messages, tools)
        })
        .retry(self.backoff())
        .when(LlmError::is_retryable)
        .adjust(|e, d| e.retry_after().or(d))
        .await?;
        self.ledger.record(
            self.config.provider.name(),
            &self.config.model,
            turn.usage,
            false,
        );
        Ok(turn)
    }
}
