//! Secret redaction: the configured credentials, and the one function that takes them out of
//! any text before it is shown or written. Every secret-bearing flag goes through here: an LLM
//! provider's key, and the values of `inspect --header` and `serve --proxy --header`.
//!
//! Keys only ever travel in request headers, but a provider or an MCP server can echo them
//! back (a 401 body quoting the `authorization` header, a JSON-RPC error naming the token, a
//! model asked to repeat its prompt). Every provider response body, every answer and error
//! built from it, every cache entry and every transcript the agent runner writes, and every
//! MCP client error and proxied answer goes through [`Secrets::redact`] first, so an echoed
//! key becomes `[redacted]` everywhere. The main type is [`Secrets`], built by
//! [`Secrets::new`] from the provider's credential and the key variables of the environment,
//! or by [`Secrets::of_headers`] from the headers a user gave.

// Each feature (`judge`, `mcp`) uses its own part.
#![cfg_attr(not(all(feature = "judge", feature = "mcp")), allow(dead_code))]

use std::borrow::Cow;
use std::sync::Arc;

/// What a secret value becomes.
pub const REDACTED: &str = "[redacted]";

/// Environment variables that hold credentials, redacted whichever provider is in use (a key
/// of another provider is as secret as this one's).
const SECRET_VARS: &[&str] = &[
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "GOOGLE_OAUTH_ACCESS_TOKEN",
];

/// Values shorter than this are not treated as secrets: no real key is that short, and
/// redacting a placeholder such as `unused` would blank out ordinary words.
const MIN_LEN: usize = 8;

/// The shortest header value redacted: a user's own header is known to be secret, so the bar
/// is lower than for the environment's keys, yet a one-letter value would blank out text.
const MIN_HEADER_LEN: usize = 4;

/// The secret values to redact, longest first (so a key that contains another is redacted
/// whole). Cheap to clone.
#[derive(Clone, Default)]
pub(crate) struct Secrets(Arc<Vec<String>>);

// The values stay out of Debug output.
impl std::fmt::Debug for Secrets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Secrets({} values)", self.0.len())
    }
}

impl Secrets {
    /// `credentials` (the provider's key or bearer token) plus the values of the key
    /// variables set in the environment.
    pub fn new<'a>(credentials: impl IntoIterator<Item = &'a str>) -> Self {
        let env: Vec<String> = SECRET_VARS
            .iter()
            .filter_map(|k| std::env::var(k).ok())
            .collect();
        Self::from_values(credentials.into_iter().map(str::to_owned).chain(env))
    }

    /// The values of headers a user gave on the command line (`--header 'Authorization:
    /// Bearer …'`): each whole value and, after its first space, the token alone, plus the key
    /// variables of the environment. A header value is secret however short it is, down to
    /// [`MIN_HEADER_LEN`] characters.
    pub fn of_headers(headers: &[(String, String)]) -> Self {
        let mut v = Vec::new();
        for (_, value) in headers {
            v.push(value.clone());
            // `Bearer <token>`: the token alone is as secret as the whole value.
            if let Some((_, token)) = value.trim().split_once(' ') {
                v.push(token.to_owned());
            }
        }
        let env = SECRET_VARS
            .iter()
            .filter_map(|k| std::env::var(k).ok())
            .filter(|s| s.trim().chars().count() >= MIN_LEN);
        Self::with_min(v.into_iter().chain(env), MIN_HEADER_LEN)
    }

    /// Exactly these values (for tests and callers that know their secrets).
    pub fn from_values(values: impl IntoIterator<Item = String>) -> Self {
        Self::with_min(values, MIN_LEN)
    }

    fn with_min(values: impl IntoIterator<Item = String>, min: usize) -> Self {
        let mut v: Vec<String> = values
            .into_iter()
            .map(|s| s.trim().to_owned())
            .filter(|s| s.chars().count() >= min)
            .collect();
        v.sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
        v.dedup();
        Self(Arc::new(v))
    }

    /// `text` with every secret value replaced by [`REDACTED`]; borrowed when it held none.
    pub fn redact<'a>(&self, text: &'a str) -> Cow<'a, str> {
        let mut out = Cow::Borrowed(text);
        for s in self.0.iter() {
            if out.contains(s.as_str()) {
                out = Cow::Owned(out.replace(s.as_str(), REDACTED));
            }
        }
        out
    }

    /// [`Secrets::redact`] into an owned string, in place.
    pub fn redact_in_place(&self, text: &mut String) {
        if let Cow::Owned(s) = self.redact(text) {
            *text = s;
        }
    }

    /// Every string inside a JSON value (keys and values), redacted in place.
    pub fn redact_json(&self, v: &mut serde_json::Value) {
        use serde_json::Value;
        match v {
            Value::String(s) => self.redact_in_place(s),
            Value::Array(items) => items.iter_mut().for_each(|i| self.redact_json(i)),
            Value::Object(map) => {
                if map.keys().any(|k| matches!(self.redact(k), Cow::Owned(_))) {
                    let old = std::mem::take(map);
                    for (k, mut val) in old {
                        self.redact_json(&mut val);
                        map.insert(self.redact(&k).into_owned(), val);
                    }
                } else {
                    map.values_mut().for_each(|val| self.redact_json(val));
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redacts_every_value_longest_first_and_ignores_short_ones() {
        let s = Secrets::from_values([
            "sk-abcdefgh".into(),
            "sk-abcdefgh-long".into(),
            "x".into(),
            "ten-chars!".into(),
        ]);
        assert_eq!(
            s.redact("a sk-abcdefgh-long b sk-abcdefgh c x"),
            "a [redacted] b [redacted] c x"
        );
        assert!(matches!(s.redact("nothing here"), Cow::Borrowed(_)));
        let mut v = serde_json::json!({"sk-abcdefgh": ["Bearer sk-abcdefgh", 1]});
        s.redact_json(&mut v);
        assert_eq!(
            v,
            serde_json::json!({"[redacted]": ["Bearer [redacted]", 1]})
        );
        // A key as long as the placeholder is still seen.
        let mut v = serde_json::json!({"ten-chars!": 2});
        s.redact_json(&mut v);
        assert_eq!(v, serde_json::json!({"[redacted]": 2}));
        assert_eq!(format!("{s:?}"), "Secrets(3 values)");
    }
}
