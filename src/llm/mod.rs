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

pub use cache::{Cache, CacheMode};
pub use ledger::{Ledger, LedgerEntry};
pub use providers::Provider;
pub use structured::extract_json;

/// One request: a system instruction, a user message, and the JSON Schema the answer must
/// follow.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Request {
    pub system: String,
    pub user: String,
    /// Name and JSON Schema of the structured answer.
    pub schema_name: String,
    pub schema: Value,
    pub temperature: f64,
    pub max_tokens: u32,
    /// Extra key material for the cache (e.g. the rubric version).
    pub cache_tag: String,
}

/// Tokens used by one call.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
}

/// A provider's answer: the text that should hold the JSON object.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Answer {
    pub text: String,
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
    #[error("configuration: {0}")]
    Config(String),
    #[error("{provider} answered HTTP {status}: {body}")]
    Http {
        provider: &'static str,
        status: u16,
        body: String,
        retry_after: Option<Duration>,
    },
    #[error("{provider} did not answer within {0:?}", .timeout)]
    Timeout {
        provider: &'static str,
        timeout: Duration,
    },
    #[error("{provider}: {message}")]
    Transport {
        provider: &'static str,
        message: String,
    },
    #[error("{provider} refused to answer: {reason}")]
    Refusal {
        provider: &'static str,
        reason: String,
    },
    #[error("{provider}: the response has no answer text ({detail})")]
    Malformed {
        provider: &'static str,
        detail: String,
    },
    #[error(
        "no valid answer after {attempts} attempts; last problem: {problem}; last answer began: {excerpt:?}"
    )]
    InvalidOutput {
        attempts: u32,
        problem: String,
        excerpt: String,
    },
    #[error("replay mode: no cached answer for key {key} (record it with AGENT_SEER_LLM=record)")]
    CacheMiss { key: String },
    #[error("cache {path}: {message}")]
    Cache { path: PathBuf, message: String },
}

impl LlmError {
    /// 429, 5xx, timeouts and connection errors are worth another try.
    pub fn is_retryable(&self) -> bool {
        match self {
            LlmError::Http { status, .. } => *status == 429 || *status >= 500,
            LlmError::Timeout { .. } | LlmError::Transport { .. } => true,
            _ => false,
        }
    }

    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            LlmError::Http { retry_after, .. } => *retry_after,
            _ => None,
        }
    }
}

/// How calls are made: which provider and model, limits, and where the cache lives.
#[derive(Clone, Debug)]
pub struct LlmConfig {
    pub provider: Provider,
    pub model: String,
    pub timeout: Duration,
    pub concurrency: usize,
    pub max_retries: usize,
    pub min_backoff: Duration,
    pub cache_dir: PathBuf,
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

    pub fn config(&self) -> &LlmConfig {
        &self.config
    }

    pub fn ledger(&self) -> &Ledger {
        &self.ledger
    }

    /// The cache key of a request: what identifies its answer.
    pub fn cache_key(&self, req: &Request) -> String {
        cache::key(self.config.provider.name(), &self.config.model, req)
    }

    /// One raw answer, through the cache: replay answers only from it, live reads through it,
    /// record always calls and overwrites.
    pub async fn answer(&self, req: &Request) -> Result<Answer, LlmError> {
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

    pub fn cache(&self) -> &Cache {
        &self.cache
    }

    /// Stores an answer that passed validation (invalid answers are never cached).
    pub fn remember(&self, req: &Request, answer: &Answer) -> Result<(), LlmError> {
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
    System(String),
    User(String),
    Assistant {
        text: Option<String>,
        calls: Vec<ToolCall>,
    },
    Tool {
        id: String,
        name: String,
        content: String,
    },
}

/// A tool call the model asked for.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    /// The arguments; a model that sends unparsable JSON gets `{"__unparsable__": "<text>"}`,
    /// which the linter then reports as an unknown parameter.
    pub arguments: Value,
}

/// A tool offered to the model.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolDecl {
    pub name: String,
    pub description: String,
    pub parameters: Value,
}

/// The model's next move: text, tool calls, or both.
#[derive(Clone, Debug, PartialEq)]
pub struct ChatTurn {
    pub text: Option<String>,
    pub calls: Vec<ToolCall>,
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
