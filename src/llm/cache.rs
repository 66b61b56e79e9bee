//! The answer cache: content-addressed over canonical JSON (provider, model, parameters, the
//! full prompt and schema, and the caller's tag, e.g. the rubric version), one file per
//! answer, written atomically (a temporary file, then a rename) so concurrent nextest
//! processes never see a partial entry. No key, timestamp or request id goes in: every text of
//! an entry (prompt, answer) is redacted ([`Secrets`]) before it is written.
//!
//! Modes: `live` answers from the cache and calls on a miss, `record` always calls and
//! overwrites, `replay` answers only from the cache and fails on a miss, naming the key. A hit
//! never writes: the entry keeps its bytes, its `source` and its modification time.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use super::{Answer, LlmError, Request, Secrets};

/// How the client uses the cache (`AGENT_SEER_LLM`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CacheMode {
    /// Answer from the cache; on a miss call the provider and store the answer once it
    /// validates.
    Live,
    /// Always call the provider; an answer that validates overwrites the entry.
    Record,
    /// Answer only from the cache; a miss is [`LlmError::CacheMiss`]. Needs no key.
    Replay,
}

/// One stored answer.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct Entry {
    /// The cache key, also the file's name.
    pub key: String,
    /// Where the answer came from: `"recorded"` from a model, or `"hand-written: …"` for
    /// entries a person wrote (never presented as a model's judgement).
    pub source: String,
    /// The provider's name.
    pub provider: String,
    /// The model id.
    pub model: String,
    /// The answer, as the provider gave it.
    pub answer: Answer,
    /// The request, for people reading the cache (the key is its hash).
    pub request: Value,
}

/// The cache directory and the mode that decides what [`Cache::get`] and [`Cache::put`] do.
#[derive(Clone, Debug)]
pub(crate) struct Cache {
    dir: PathBuf,
    mode: CacheMode,
    secrets: Secrets,
}

/// The cache key: SHA-256 of the canonical JSON of everything that determines the answer.
pub(crate) fn key(provider: &str, model: &str, req: &Request) -> String {
    let mut material = json!({
        "provider": provider,
        "model": model,
        "temperature": req.temperature,
        "max_tokens": req.max_tokens,
        "system": req.system,
        "user": req.user,
        "schema_name": req.schema_name,
        "schema": req.schema,
        "tag": req.cache_tag,
    });
    // Only when set: a request without a seed keeps the key it always had.
    if let Some(seed) = req.seed {
        material["seed"] = json!(seed);
    }
    // serde_json maps are sorted (no `preserve_order`): this string is canonical.
    let digest = Sha256::digest(material.to_string().as_bytes());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

impl Cache {
    /// A cache in `dir` (created on the first write), whose entries never hold `secrets`.
    pub fn new(dir: PathBuf, mode: CacheMode, secrets: Secrets) -> Self {
        Self { dir, mode, secrets }
    }

    /// `<dir>/<first two characters of the key>/<key>.json`.
    pub fn path(&self, key: &str) -> PathBuf {
        self.dir
            .join(&key[..2.min(key.len())])
            .join(format!("{key}.json"))
    }

    /// A cached answer, as the mode allows; a replay miss is an error.
    pub fn get(&self, key: &str) -> Result<Option<Answer>, LlmError> {
        if self.mode == CacheMode::Record {
            return Ok(None);
        }
        let path = self.path(key);
        match std::fs::read_to_string(&path) {
            Ok(text) => {
                let e: Entry = serde_json::from_str(&text).map_err(|err| LlmError::Cache {
                    path: path.clone(),
                    message: format!("not a cache entry: {err}"),
                })?;
                Ok(Some(e.answer))
            }
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
                if self.mode == CacheMode::Replay {
                    Err(LlmError::CacheMiss {
                        key: key.to_owned(),
                    })
                } else {
                    Ok(None)
                }
            }
            Err(err) => Err(LlmError::Cache {
                path,
                message: err.to_string(),
            }),
        }
    }

    /// Stores a model's answer (source `"recorded"`), except in replay mode, which never writes.
    pub fn put(
        &self,
        key: &str,
        provider: &str,
        model: &str,
        req: &Request,
        answer: &Answer,
    ) -> Result<(), LlmError> {
        if self.mode == CacheMode::Replay {
            return Ok(());
        }
        self.put_with_source(key, provider, model, req, answer, "recorded")
    }

    /// Stores an entry whatever the mode, saying where it came from (`"hand-written: …"` for
    /// fixtures a script wrote).
    pub fn put_with_source(
        &self,
        key: &str,
        provider: &str,
        model: &str,
        req: &Request,
        answer: &Answer,
        source: &str,
    ) -> Result<(), LlmError> {
        let mut entry = Entry {
            key: key.to_owned(),
            source: self.secrets.redact(source).into_owned(),
            provider: provider.into(),
            model: model.into(),
            answer: answer.clone(),
            request: serde_json::to_value(req).unwrap_or(Value::Null),
        };
        self.secrets.redact_in_place(&mut entry.answer.text);
        self.secrets.redact_json(&mut entry.request);
        write_atomically(
            &self.path(key),
            &serde_json::to_string_pretty(&entry).unwrap_or_default(),
        )
    }
}

/// [`crate::source::write_atomically`], its error as a cache error.
pub(crate) fn write_atomically(path: &Path, text: &str) -> Result<(), LlmError> {
    crate::source::write_atomically(path, text.as_bytes()).map_err(|e| LlmError::Cache {
        path: path.to_path_buf(),
        message: e.to_string(),
    })
}
