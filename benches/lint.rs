//! Lint throughput on the veo spec with its capability matrix: pre-parsed calls, one core.
//! `cargo bench --bench lint`; the figure is calls/second (criterion's "thrpt").

#[cfg(feature = "mimalloc")]
#[global_allocator]
static ALLOC: agent_seer::Allocator = agent_seer::Allocator;

use std::hint::black_box;
use std::path::Path;

use agent_seer::lint::Linter;
use agent_seer::spec::{Capabilities, ToolSet};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use serde_json::{Value, json};

fn linter() -> Linter {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let spec = ToolSet::load(&root.join("harnesses/veo.tools.json")).expect("veo spec");
    let caps = Capabilities::load(&root.join("capabilities/mcp-veo-go.yaml")).expect("veo matrix");
    Linter::new(&spec, vec![caps]).expect("linter")
}

/// The seeds' Veo cases: valid calls and the usual mistakes, in the proportions of seed 001's
/// suite (2 valid of 11).
fn calls() -> Vec<(&'static str, Value)> {
    vec![
        (
            "veo_t2v",
            json!({"prompt": "a tiger in neon rain", "model": "veo-3.1-fast-generate-001", "aspect_ratio": "16:9", "duration": 6, "generate_audio": true, "bucket": "gs://b/out/"}),
        ),
        (
            "veo_t2v",
            json!({"prompt": "a tiger", "model": "veo-2.0-generate-001", "aspect_ratio": "16:9", "generate_audio": true, "bucket": "gs://b/out/"}),
        ),
        (
            "veo_t2v",
            json!({"prompt": "a tiger", "model": "veo-3.1-fast-generate-001", "aspect_ratio": "21:9", "bucket": "gs://b/out/"}),
        ),
        (
            "veo_t2v",
            json!({"prompt": "a tiger", "model": "veo-4.0-ultra", "bucket": "gs://b/out/"}),
        ),
        (
            "veo_t2v",
            json!({"model": "veo-3.1-fast-generate-001", "bucket": "gs://b/out/"}),
        ),
        (
            "veo_i2v",
            json!({"image_uri": "gs://b/tiger.png", "prompt": "a tiger", "model": "veo-3.1-fast-generate-001"}),
        ),
        (
            "veo_t2v",
            json!({"text_prompt": "a tiger", "ratio": "16:9", "model": "veo-3.1-fast-generate-001"}),
        ),
        (
            "veo_i2v",
            json!({"image_uri": "gs://b/in/frame.png", "prompt": "push in", "model": "veo-3.1-fast-generate-001", "duration": 8}),
        ),
        (
            "veo_t2v",
            json!({"prompt": "push in", "model": "veo-3.1-fast-generate-001", "duration": 8}),
        ),
        (
            "veo_i2v",
            json!({"prompt": "push in", "model": "veo-3.1-fast-generate-001"}),
        ),
        (
            "veo_i2v",
            json!({"image_uri": "https://x/frame.png", "prompt": "push in", "model": "veo-3.1-fast-generate-001"}),
        ),
    ]
}

fn bench(c: &mut Criterion) {
    let linter = linter();
    let calls = calls();
    let mut group = c.benchmark_group("lint/veo");
    group.throughput(Throughput::Elements(calls.len() as u64));
    group.bench_function("seed-001-mix", |b| {
        b.iter(|| {
            for (tool, args) in &calls {
                black_box(linter.lint(tool, args));
            }
        })
    });
    let valid = &calls[0];
    group.throughput(Throughput::Elements(1));
    group.bench_function("valid-call", |b| {
        b.iter(|| black_box(linter.lint(valid.0, &valid.1)))
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
