//! The ledger: calls, tokens and estimated cost of a run, per provider and model.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use super::Usage;

pub use crate::check::LedgerEntry;

/// Shared by every clone of a [`super::Client`].
#[derive(Clone, Debug, Default)]
pub struct Ledger(Arc<Mutex<BTreeMap<String, LedgerEntry>>>);

impl Ledger {
    pub(crate) fn record(&self, provider: &str, model: &str, usage: Usage, cached: bool) {
        let mut map = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let e = map.entry(format!("{provider}:{model}")).or_default();
        if cached {
            e.cached += 1;
            return;
        }
        e.calls += 1;
        e.input_tokens += usage.input_tokens;
        e.output_tokens += usage.output_tokens;
        e.estimated_cost_usd = price(model)
            .map(|(i, o)| (e.input_tokens as f64 * i + e.output_tokens as f64 * o) / 1_000_000.0);
    }

    /// A snapshot, keyed by `provider:model`.
    pub fn entries(&self) -> BTreeMap<String, LedgerEntry> {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

/// (input, output) USD per million tokens, for models whose list price we know.
fn price(model: &str) -> Option<(f64, f64)> {
    let m = model.to_lowercase();
    Some(match () {
        _ if m.starts_with("gemini-2.5-flash-lite") => (0.10, 0.40),
        _ if m.starts_with("gemini-2.5-flash") => (0.30, 2.50),
        _ if m.starts_with("gemini-2.5-pro") => (1.25, 10.0),
        _ if m.starts_with("gpt-4o-mini") => (0.15, 0.60),
        _ if m.starts_with("gpt-4o") => (2.50, 10.0),
        _ if m.contains("claude") && m.contains("haiku") => (0.80, 4.0),
        _ if m.contains("claude") && m.contains("sonnet") => (3.0, 15.0),
        _ => return None,
    })
}
