//! LLM providers behind one client: Gemini (API key and Vertex AI), OpenAI-compatible chat
//! completions (OpenAI, vLLM, Ollama, llama.cpp's server), the OpenAI Responses API and
//! Anthropic messages.
//!
//! [`Client`] owns what every call needs: structured output (each provider's JSON-schema mode,
//! validated with serde, up to 3 attempts with the validation error fed back), retries of 429,
//! 5xx, timeouts and connection errors with exponential backoff honouring `Retry-After` capped
//! at the backoff's maximum (backon's delays), one budget of requests per call shared by both
//! kinds of retry ([`LlmConfig::max_retries`] after the first), a timeout per request, a
//! concurrency cap, the on-disk [`cache`] (live / record / replay; read-only on a hit) and a
//! [`Ledger`] of calls, tokens and estimated cost. Keys come only from the environment, travel
//! only in headers, and a key the provider echoes is redacted (see `redact`) from every
//! answer, error, cache entry and transcript before it is shown or written. The main type is
//! [`Client`], built with [`Client::new`] from an [`LlmConfig`] (usually
//! [`LlmConfig::from_env`]).

mod batch;
pub mod cache;
mod chat;
mod ledger;
mod providers;
mod structured;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::sync::Semaphore;

pub(crate) use crate::redact::Secrets;
pub use batch::{BatchEvent, BatchOptions, Estimate};
use cache::Cache;
pub use cache::CacheMode;
pub use ledger::{Ledger, LedgerEntry, Price};
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
    /// A sampling seed, sent where the API takes one (OpenAI chat completions' `seed`,
    /// Gemini's `generationConfig.seed`; the Responses API and Anthropic have none) and part
    /// of the cache key only when set, so requests without one keep their keys. Judge
    /// certification seeds its repeats with their number.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u32>,
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
    /// It came from the cache (never stored in it): [`Client::remember`] leaves it alone.
    #[serde(skip)]
    pub cached: bool,
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
        /// The request timeout ([`LlmConfig::timeout`]).
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
        /// Requests made for it (at most 1 + [`LlmConfig::max_retries`]), retried transport
        /// errors included.
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
    /// A batch round would take the spend past the `--max-cost` budget, so it was not sent:
    /// a clean stop of its own, not a provider's failure.
    #[error(
        "not sent: this batch round could cost up to ${estimate_usd:.4} at the batch price, and with ${spent_usd:.4} spent that would pass the --max-cost budget of ${budget_usd:.4}"
    )]
    OverBudget {
        /// The round's estimate, USD at most.
        estimate_usd: f64,
        /// Spent by earlier rounds of the same call, USD.
        spent_usd: f64,
        /// The budget, USD.
        budget_usd: f64,
    },
    /// A batch job did not end within the wait; it goes on at the provider, and its journal
    /// lets the next run with the same requests collect it instead of sending it again.
    #[error(
        "{provider} batch {id} had not ended after {waited:?}; it goes on at the provider, and running the same command again collects it (journal {journal})"
    )]
    BatchPending {
        /// The provider's name.
        provider: &'static str,
        /// The provider's id of the job.
        id: String,
        /// How long this run waited.
        waited: Duration,
        /// The journal file that remembers the job.
        journal: PathBuf,
    },
    /// One request of a batch job failed at the provider (errored, expired, cancelled), or the
    /// whole job did.
    #[error("{provider} batch {id}: {message}")]
    BatchItem {
        /// The provider's name.
        provider: &'static str,
        /// The provider's id of the job.
        id: String,
        /// What the provider said of the request.
        message: String,
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
    /// Whether the provider failed (an HTTP error, a timeout, a dropped connection, a refusal,
    /// an answer that is not the wire format or not the schema's shape), as opposed to the
    /// setup or the local cache being wrong (a missing key, a replay miss, an unreadable cache
    /// file). The command line gives the two different exit codes (3 and 2).
    pub fn is_provider_failure(&self) -> bool {
        !matches!(
            self,
            LlmError::Config(_)
                | LlmError::CacheMiss { .. }
                | LlmError::Cache { .. }
                | LlmError::OverBudget { .. }
        )
    }

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

    /// The error with every secret value taken out of its text.
    pub(crate) fn redacted(mut self, secrets: &Secrets) -> Self {
        match &mut self {
            LlmError::Config(m) => secrets.redact_in_place(m),
            LlmError::Http { body, .. } => secrets.redact_in_place(body),
            LlmError::Transport { message, .. } => secrets.redact_in_place(message),
            LlmError::Refusal { reason, .. } => secrets.redact_in_place(reason),
            LlmError::Malformed { detail, .. } => secrets.redact_in_place(detail),
            LlmError::InvalidOutput {
                problem, excerpt, ..
            } => {
                secrets.redact_in_place(problem);
                secrets.redact_in_place(excerpt);
            }
            LlmError::Cache { message, .. } => secrets.redact_in_place(message),
            LlmError::BatchItem { message, id, .. } => {
                secrets.redact_in_place(message);
                secrets.redact_in_place(id);
            }
            LlmError::BatchPending { id, .. } => secrets.redact_in_place(id),
            LlmError::Timeout { .. } | LlmError::CacheMiss { .. } | LlmError::OverBudget { .. } => {
            }
        }
        self
    }
}

/// The requests one call may still make: the first and [`LlmConfig::max_retries`] more,
/// shared by transport retries (429, 5xx, timeouts, connection errors) and answer-shape
/// retries, so no mix of faults makes more.
#[derive(Debug)]
pub(crate) struct Budget {
    left: usize,
}

impl Budget {
    /// No request may be made any more.
    pub(crate) fn is_spent(&self) -> bool {
        self.left == 0
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
    /// Requests one call may make after its first, transport and answer-shape retries
    /// together; 3 from [`LlmConfig::from_env`] (4 requests at most).
    pub max_retries: usize,
    /// The first backoff delay, growing exponentially (with jitter) up to
    /// [`LlmConfig::max_backoff`]; from `AGENT_SEER_LLM_BACKOFF_MS`, 500 ms by default.
    pub min_backoff: Duration,
    /// The longest wait between two requests, a server's `Retry-After` included; from
    /// `AGENT_SEER_LLM_BACKOFF_MAX_MS`, 60 s by default.
    pub max_backoff: Duration,
    /// The answer cache's directory; `AGENT_SEER_LLM_CACHE`, else the caller's default.
    pub cache_dir: PathBuf,
    /// Live, record or replay (`AGENT_SEER_LLM`).
    pub mode: CacheMode,
}

impl LlmConfig {
    /// Reads `spec` (`provider:model`, e.g. `gemini:gemini-2.5-flash`; `openai:responses:MODEL`
    /// or `openai-responses:MODEL` for the OpenAI Responses API) and the environment:
    /// keys (`GEMINI_API_KEY`, `OPENAI_API_KEY`, `ANTHROPIC_API_KEY`, `GOOGLE_OAUTH_ACCESS_TOKEN`
    /// with `GOOGLE_CLOUD_PROJECT` / `GOOGLE_CLOUD_LOCATION` for Vertex), base URLs
    /// (`AGENT_SEER_<PROVIDER>_BASE_URL`), `AGENT_SEER_LLM` (live | record | replay),
    /// `AGENT_SEER_LLM_CACHE`, `AGENT_SEER_LLM_TIMEOUT_SECS`, `AGENT_SEER_LLM_CONCURRENCY`,
    /// `AGENT_SEER_LLM_BACKOFF_MS`, `AGENT_SEER_LLM_BACKOFF_MAX_MS`. In replay mode no key is
    /// needed.
    pub fn from_env(spec: &str, default_cache: PathBuf) -> Result<Self, LlmError> {
        Self::from_lookup(spec, default_cache, &|k| std::env::var(k).ok())
    }

    /// [`LlmConfig::from_env`] over any variable lookup.
    fn from_lookup(
        spec: &str,
        default_cache: PathBuf,
        lookup: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Self, LlmError> {
        let env = |k: &str| lookup(k).filter(|v| !v.is_empty());
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
        // promptfoo's spellings: `openai:responses:MODEL` for the Responses API,
        // `openai:chat:MODEL` for chat completions (a bare `openai:MODEL` is chat too).
        let (kind, model) = match (kind, model.split_once(':')) {
            ("openai", Some(("responses", m))) => ("openai-responses", m),
            ("openai", Some(("chat", m))) => ("openai", m),
            _ => (kind, model),
        };
        let provider = Provider::from_env(kind, mode == CacheMode::Replay, &env)?;
        let num = |k: &str, d: u64| env(k).and_then(|v| v.parse().ok()).unwrap_or(d);
        Ok(Self {
            provider,
            model: model.to_owned(),
            timeout: Duration::from_secs(num("AGENT_SEER_LLM_TIMEOUT_SECS", 120)),
            concurrency: num("AGENT_SEER_LLM_CONCURRENCY", 4).max(1) as usize,
            max_retries: 3,
            min_backoff: Duration::from_millis(num("AGENT_SEER_LLM_BACKOFF_MS", 500)),
            max_backoff: Duration::from_millis(num("AGENT_SEER_LLM_BACKOFF_MAX_MS", 60_000)),
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
    secrets: Secrets,
}

impl Client {
    /// A client for `config`, with an empty ledger; fails only if the HTTP client cannot be
    /// built.
    pub fn new(config: LlmConfig) -> Result<Self, LlmError> {
        let http = reqwest::Client::builder()
            .timeout(config.timeout)
            .build()
            .map_err(|e| LlmError::Config(format!("HTTP client: {e}")))?;
        let secrets = Secrets::new(config.provider.credential());
        Ok(Self {
            cache: Cache::new(config.cache_dir.clone(), config.mode, secrets.clone()),
            secrets,
            permits: Arc::new(Semaphore::new(config.concurrency)),
            ledger: Ledger::default(),
            http,
            config,
        })
    }

    /// Exponential backoff with jitter, up to the configured maximum.
    fn backoff(&self) -> backon::ExponentialBackoff {
        use backon::BackoffBuilder;
        backon::ExponentialBuilder::default()
            .with_min_delay(self.config.min_backoff)
            .with_max_delay(self.config.max_backoff)
            .with_max_times(self.config.max_retries)
            .with_jitter()
            .build()
    }

    /// A fresh budget for one call: the first request and [`LlmConfig::max_retries`] more.
    pub(crate) fn budget(&self) -> Budget {
        Budget {
            left: self.config.max_retries.saturating_add(1),
        }
    }

    /// `text` with every configured secret value replaced by `[redacted]`: what the agent
    /// runner applies to a transcript before writing it.
    #[cfg_attr(not(feature = "agent"), allow(dead_code))]
    pub(crate) fn redact<'a>(&self, text: &'a str) -> std::borrow::Cow<'a, str> {
        self.secrets.redact(text)
    }

    /// Calls `attempt` until it succeeds, fails for good, or `budget` is spent; between
    /// retries waits the backoff's delay, or the server's `Retry-After`, never longer than
    /// [`LlmConfig::max_backoff`]. A spent budget returns the last error as it was.
    async fn retrying<T, F, Fut>(&self, budget: &mut Budget, attempt: F) -> Result<T, LlmError>
    where
        F: Fn() -> Fut,
        Fut: std::future::Future<Output = Result<T, LlmError>>,
    {
        let _permit = self
            .permits
            .acquire()
            .await
            .map_err(|e| LlmError::Config(e.to_string()))?;
        let mut delays = self.backoff();
        loop {
            budget.left = budget.left.saturating_sub(1);
            let err = match attempt().await {
                Ok(t) => return Ok(t),
                Err(e) => e.redacted(&self.secrets),
            };
            if !err.is_retryable() || budget.is_spent() {
                return Err(err);
            }
            let delay = err
                .retry_after()
                .or_else(|| delays.next())
                .unwrap_or(self.config.max_backoff)
                .min(self.config.max_backoff);
            tokio::time::sleep(delay).await;
        }
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
    /// record always calls and overwrites. A miss spends requests from `budget`; a hit spends
    /// none and comes back marked [`Answer::cached`].
    pub(crate) async fn answer(
        &self,
        req: &Request,
        budget: &mut Budget,
    ) -> Result<Answer, LlmError> {
        let key = self.cache_key(req);
        if let Some(mut hit) = self.cache.get(&key)? {
            hit.cached = true;
            self.ledger.record(
                self.config.provider.name(),
                &self.config.model,
                hit.usage,
                true,
            );
            return Ok(hit);
        }
        if budget.is_spent() {
            return Err(LlmError::Config(
                "no request left in this call's retry budget".into(),
            ));
        }
        let answer = self
            .retrying(budget, || {
                self.config.provider.call(
                    &self.http,
                    &self.config.model,
                    req,
                    self.config.timeout,
                    &self.secrets,
                )
            })
            .await?;
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

    /// Stores an answer that passed validation (invalid answers are never cached). An answer
    /// that came from the cache is not written again: a cache is read-only on a hit.
    pub(crate) fn remember(&self, req: &Request, answer: &Answer) -> Result<(), LlmError> {
        if answer.cached {
            return Ok(());
        }
        self.cache.put(
            &self.cache_key(req),
            self.config.provider.name(),
            &self.config.model,
            req,
            answer,
        )
    }

    /// A structured answer: the provider's JSON-schema mode, then serde, then `check`; an
    /// invalid answer is retried with the problem fed back (3 answers at most), all within one
    /// budget of 1 + [`LlmConfig::max_retries`] requests, then a clear error naming the last
    /// cause.
    pub async fn structured<T, F>(&self, req: &Request, check: F) -> Result<T, LlmError>
    where
        T: serde::de::DeserializeOwned,
        F: Fn(&T) -> Result<(), String>,
    {
        structured::structured(self, req, check).await.0
    }

    /// [`Client::structured`], with how many answers the provider gave for it (cache hits not
    /// counted): generation counts a record that took more than one as retried. The count
    /// is this call's own, whatever other calls run beside it.
    #[cfg_attr(not(feature = "generate"), allow(dead_code))]
    pub(crate) async fn structured_counted<T, F>(
        &self,
        req: &Request,
        check: F,
    ) -> (Result<T, LlmError>, u32)
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
        /// The provider's own form of the turn ([`ChatTurn::raw`]), replayed verbatim when
        /// present; None builds it from `text` and `calls`.
        raw: Option<Value>,
    },
    /// The answer to one of the model's tool calls.
    Tool {
        /// The [`ToolCall::id`] it answers (OpenAI's `tool_call_id`).
        id: String,
        /// The tool's name (Gemini's `functionResponse` names it).
        name: String,
        /// The tool's result as JSON text (the mock's `CallToolResult`).
        content: String,
        /// The result has `isError: true` (Anthropic's `tool_result` says `is_error`).
        is_error: bool,
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
    /// The provider's own form of the turn, for replaying it exactly: Anthropic's content
    /// blocks, the Responses API's output items (reasoning items included), Gemini's parts
    /// (with their thought signatures). None for chat completions, rebuilt from the fields.
    pub raw: Option<Value>,
}

/// The agent under test's sampling settings, sent with every step: `run`'s `--max-tokens`,
/// `--temperature` and `--seed`. A setting left at None is not sent, so the provider's
/// default applies, except Anthropic's `max_tokens`, which the API requires
/// ([`Sampling::ANTHROPIC_MAX_TOKENS`] then).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Sampling {
    /// The answer's token limit per step.
    pub max_tokens: Option<u32>,
    /// Sampling temperature: 0 to 2, Anthropic 0 to 1.
    pub temperature: Option<f64>,
    /// Sampling seed: OpenAI chat completions and Gemini take one (Gemini an int32);
    /// Anthropic and the Responses API have none.
    pub seed: Option<u32>,
}

impl Sampling {
    /// Anthropic's `max_tokens` when none is given: the Messages API requires one.
    pub const ANTHROPIC_MAX_TOKENS: u32 = 4096;

    /// Whether `provider` can take these settings: a temperature in its range, a seed only
    /// where the API has one, a token limit above 0. The error says which and why.
    pub fn check(&self, provider: &Provider) -> Result<(), LlmError> {
        let name = provider.name();
        if let Some(t) = self.temperature {
            let max = if matches!(provider, Provider::Anthropic { .. }) {
                1.0
            } else {
                2.0
            };
            if !t.is_finite() || !(0.0..=max).contains(&t) {
                return Err(LlmError::Config(format!(
                    "temperature {t}: {name} takes 0 to {max}"
                )));
            }
        }
        if self.max_tokens == Some(0) {
            return Err(LlmError::Config(
                "a token limit of 0 allows no answer".into(),
            ));
        }
        match (self.seed, provider) {
            (Some(_), Provider::Anthropic { .. }) => Err(LlmError::Config(
                "anthropic: the Messages API has no seed parameter, so its sampling cannot be seeded".into(),
            )),
            (Some(_), Provider::OpenAiResponses { .. }) => Err(LlmError::Config(
                "openai-responses: the Responses API has no seed parameter (chat completions, `openai:MODEL`, has one)".into(),
            )),
            (Some(s), Provider::Gemini { .. } | Provider::Vertex { .. })
                if i32::try_from(s).is_err() =>
            {
                Err(LlmError::Config(format!(
                    "seed {s}: {name} takes a 32-bit signed integer"
                )))
            }
            _ => Ok(()),
        }
    }
}

impl Client {
    /// One step of a tool-using conversation (never cached: the agent under test runs live),
    /// with the same retries, timeout and concurrency cap as every call. Settings the
    /// provider cannot take ([`Sampling::check`]) fail before any request.
    pub async fn chat(
        &self,
        messages: &[ChatMessage],
        tools: &[ToolDecl],
        sampling: &Sampling,
    ) -> Result<ChatTurn, LlmError> {
        sampling.check(&self.config.provider)?;
        let mut budget = self.budget();
        let turn = self
            .retrying(&mut budget, || {
                self.config.provider.chat(
                    &self.http,
                    &self.config.model,
                    messages,
                    tools,
                    sampling,
                    self.config.timeout,
                    &self.secrets,
                )
            })
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The defaults: 3 retries (4 requests a call at most), waits capped at 60 s; both knobs
    /// are read from the environment.
    #[test]
    fn from_env_defaults_bound_the_retries() {
        let vars = |extra: &'static [(&'static str, &'static str)]| {
            move |k: &str| {
                [("OPENAI_API_KEY", "sk-unit-test-key")]
                    .iter()
                    .chain(extra)
                    .find(|(n, _)| *n == k)
                    .map(|(_, v)| (*v).to_owned())
            }
        };
        let c = LlmConfig::from_lookup("openai:m", "/tmp".into(), &vars(&[])).unwrap();
        assert_eq!(c.max_retries, 3);
        assert_eq!(c.max_backoff, Duration::from_secs(60));
        assert_eq!(c.min_backoff, Duration::from_millis(500));
        let c = LlmConfig::from_lookup(
            "openai:m",
            "/tmp".into(),
            &vars(&[
                ("AGENT_SEER_LLM_BACKOFF_MS", "5"),
                ("AGENT_SEER_LLM_BACKOFF_MAX_MS", "50"),
            ]),
        )
        .unwrap();
        assert_eq!(
            (c.min_backoff, c.max_backoff),
            (Duration::from_millis(5), Duration::from_millis(50))
        );
        let client = Client::new(c).unwrap();
        assert_eq!(client.budget().left, 4);
        assert_eq!(
            client.redact("Bearer sk-unit-test-key"),
            "Bearer [redacted]"
        );
    }

    /// promptfoo's spellings pick the OpenAI API; any other colon is part of the model name
    /// (Ollama's `llama3.1:8b`).
    #[test]
    fn openai_specs_pick_the_api() {
        let parse = |spec: &str| {
            let c = LlmConfig::from_lookup(spec, "/tmp".into(), &|_| None).unwrap();
            (c.provider.name(), c.model)
        };
        assert_eq!(parse("openai:gpt-4.1"), ("openai", "gpt-4.1".into()));
        assert_eq!(parse("openai:chat:gpt-4.1"), ("openai", "gpt-4.1".into()));
        assert_eq!(
            parse("openai:responses:gpt-5"),
            ("openai-responses", "gpt-5".into())
        );
        assert_eq!(
            parse("openai-responses:gpt-5"),
            ("openai-responses", "gpt-5".into())
        );
        assert_eq!(
            parse("openai:llama3.1:8b"),
            ("openai", "llama3.1:8b".into())
        );
    }

    /// Each API's range and seed: what `run` refuses before any request.
    #[test]
    fn sampling_is_checked_against_the_api() {
        let p = |spec: &str| {
            LlmConfig::from_lookup(spec, "/tmp".into(), &|k| {
                k.ends_with("_KEY").then(|| "k".into())
            })
            .unwrap()
            .provider
        };
        let s = |temperature: Option<f64>, seed: Option<u32>| Sampling {
            max_tokens: None,
            temperature,
            seed,
        };
        assert!(s(Some(2.0), Some(1)).check(&p("openai:m")).is_ok());
        assert!(s(Some(2.0), None).check(&p("openai:responses:m")).is_ok());
        assert!(s(Some(1.0), None).check(&p("anthropic:m")).is_ok());
        assert!(s(Some(1.5), None).check(&p("anthropic:m")).is_err());
        assert!(s(Some(f64::NAN), None).check(&p("gemini:m")).is_err());
        assert!(s(Some(-0.1), None).check(&p("openai:m")).is_err());
        assert!(s(None, Some(1)).check(&p("anthropic:m")).is_err());
        assert!(s(None, Some(1)).check(&p("openai:responses:m")).is_err());
        assert!(s(None, Some(u32::MAX)).check(&p("gemini:m")).is_err());
        assert!(s(None, Some(u32::MAX)).check(&p("openai:m")).is_ok());
        let zero = Sampling {
            max_tokens: Some(0),
            ..Sampling::default()
        };
        assert!(zero.check(&p("openai:m")).is_err());
    }
}
