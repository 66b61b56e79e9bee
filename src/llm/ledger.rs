//! The ledger: calls, tokens and estimated cost of a run, per provider and model. Cost comes
//! from list prices per million tokens ([`Price::list`]); every batch API we speak bills half
//! of it ([`Price::BATCH_DISCOUNT`]).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use serde::Serialize;

use super::Usage;

pub use crate::check::LedgerEntry;

/// Shared by every clone of a [`super::Client`].
#[derive(Clone, Debug, Default)]
pub struct Ledger {
    entries: Arc<Mutex<BTreeMap<String, LedgerEntry>>>,
    /// Prices given by hand (`--price`), by model, over [`Price::list`].
    prices: Arc<Mutex<BTreeMap<String, Price>>>,
}

impl Ledger {
    pub(crate) fn record(&self, provider: &str, model: &str, usage: Usage, cached: bool) {
        self.add(provider, model, usage, cached, false);
    }

    /// An answer that came through a batch API: counted as a call, priced at half.
    pub(crate) fn record_batch(&self, provider: &str, model: &str, usage: Usage) {
        self.add(provider, model, usage, false, true);
    }

    /// Prices `model` at `price` from now on, over the built-in list.
    pub(crate) fn set_price(&self, model: &str, price: Price) {
        self.prices
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(model.to_owned(), price);
    }

    fn add(&self, provider: &str, model: &str, usage: Usage, cached: bool, batch: bool) {
        let price = self
            .prices
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(model)
            .copied()
            .or_else(|| Price::list(model));
        let mut map = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        let e = map.entry(format!("{provider}:{model}")).or_default();
        if cached {
            e.cached += 1;
            return;
        }
        e.calls += 1;
        e.batched += u64::from(batch);
        e.input_tokens += usage.input_tokens;
        e.output_tokens += usage.output_tokens;
        // The first call of an unpriced model leaves the cost unknown for good.
        let first = e.calls == 1;
        e.estimated_cost_usd = match (price, e.estimated_cost_usd, first) {
            (Some(p), Some(so_far), false) => Some(so_far + p.cost(usage, batch)),
            (Some(p), None, true) => Some(p.cost(usage, batch)),
            _ => None,
        };
    }

    /// A snapshot, keyed by `provider:model`.
    pub fn entries(&self) -> BTreeMap<String, LedgerEntry> {
        self.entries
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }
}

/// A model's list price, USD per million tokens.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Price {
    /// Per million prompt tokens.
    pub input: f64,
    /// Per million answer tokens.
    pub output: f64,
}

impl Price {
    /// What a batch API bills of the list price: OpenAI Batch, Anthropic Message Batches and
    /// the Gemini API's batch mode each bill half.
    pub const BATCH_DISCOUNT: f64 = 0.5;

    /// The list price of models whose price we know; None for the rest (local models, new
    /// names), whose cost is then unknown.
    pub fn list(model: &str) -> Option<Price> {
        let m = model.to_lowercase();
        let (input, output) = match () {
            _ if m.starts_with("gemini-2.5-flash-lite") => (0.10, 0.40),
            _ if m.starts_with("gemini-2.5-flash") => (0.30, 2.50),
            _ if m.starts_with("gemini-2.5-pro") => (1.25, 10.0),
            _ if m.starts_with("gpt-4o-mini") => (0.15, 0.60),
            _ if m.starts_with("gpt-4o") => (2.50, 10.0),
            _ if m.contains("claude") && m.contains("haiku-4") => (1.0, 5.0),
            _ if m.contains("claude") && m.contains("haiku") => (0.80, 4.0),
            _ if m.contains("claude") && m.contains("sonnet") => (3.0, 15.0),
            _ => return None,
        };
        Some(Price { input, output })
    }

    /// USD for `usage`, at half price through a batch API.
    pub fn cost(&self, usage: Usage, batch: bool) -> f64 {
        let whole = (usage.input_tokens as f64 * self.input
            + usage.output_tokens as f64 * self.output)
            / 1_000_000.0;
        if batch {
            whole * Self::BATCH_DISCOUNT
        } else {
            whole
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batched_calls_cost_half() {
        let l = Ledger::default();
        let u = Usage {
            input_tokens: 1_000_000,
            output_tokens: 100_000,
        };
        l.record("openai", "gpt-4o-mini", u, false);
        l.record_batch("openai", "gpt-4o-mini", u);
        l.record("openai", "gpt-4o-mini", u, true);
        let e = &l.entries()["openai:gpt-4o-mini"];
        assert_eq!((e.calls, e.batched, e.cached), (2, 1, 1));
        // 0.15 + 0.06 = 0.21 a call at list price; the batched one half of it.
        let cost = e.estimated_cost_usd.unwrap();
        assert!((cost - 0.315).abs() < 1e-9, "{cost}");
        l.record("local", "qwen", u, false);
        assert_eq!(l.entries()["local:qwen"].estimated_cost_usd, None);
    }
}
