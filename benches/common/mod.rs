//! What the mock-LLM benches share.

use std::time::Duration;

/// The mock LLM's answer time: 200 ms, or `AGENT_SEER_BENCH_DELAY_MS` (CI runs the benches
/// briefly with a few milliseconds, to prove they still run).
pub fn delay() -> Duration {
    let ms = std::env::var("AGENT_SEER_BENCH_DELAY_MS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200);
    Duration::from_millis(ms)
}
