//! What `agent-seer check` costs before it grades anything: every suite loaded once, then every
//! transcript read and parsed with the loader `check` uses (`load_transcript`: YAML, or a
//! recorded run through `ingest`), and dropped. `bench/memory.sh` sets the per-transcript time
//! of `check` beside this one.
//!
//! `cargo run --release --example parse_only -- PROJECT_ROOT` prints
//! `parse-only: N transcripts in S s (U µs per transcript)`.

use std::path::PathBuf;
use std::time::Instant;

use agent_seer::check::{HarnessConfig, Suite, load_transcript};
use agent_seer::harness::discover;

#[cfg(feature = "mimalloc")]
#[global_allocator]
static ALLOC: agent_seer::Allocator = agent_seer::Allocator;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let root: PathBuf = std::env::args_os()
        .nth(1)
        .map_or_else(|| ".".into(), Into::into);
    let config = HarnessConfig {
        root,
        ..HarnessConfig::from_env()
    };
    let start = Instant::now();
    let mut n = 0usize;
    for files in discover(&config.layout()?)? {
        let Some(harness) = files.harness.as_deref() else {
            continue;
        };
        let suite = Suite::load(harness)?;
        for (_, path) in &files.transcripts {
            std::hint::black_box(load_transcript(&suite, path)?);
            n += 1;
        }
    }
    let secs = start.elapsed().as_secs_f64();
    println!(
        "parse-only: {n} transcripts in {secs:.2} s ({:.0} µs per transcript)",
        secs * 1e6 / n.max(1) as f64
    );
    Ok(())
}
