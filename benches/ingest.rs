//! Recorded-run throughput: an OTLP JSON trace (the time suite's correct run as the OTel
//! OpenAI instrumentation recorded it) read and graded, and a Chat Completions log for
//! comparison. `cargo bench --bench ingest`; the figure is runs/second (one core). The memory
//! of a 100 MB trace file is measured by `bench/ingest.sh`.

#[cfg(feature = "mimalloc")]
#[global_allocator]
static ALLOC: agent_seer::Allocator = agent_seer::Allocator;

use std::hint::black_box;
use std::path::Path;

use agent_seer::check::{Suite, evaluate};
use agent_seer::harness::Transcript;
use agent_seer::ingest;
use agent_seer::source::SourceFile;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

fn bench(c: &mut Criterion) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let suite = Suite::load(&root.join("harnesses/time.yaml")).expect("suite");
    let label = Transcript::from_source(
        SourceFile::from_text("label.yaml", "scenario: meeting-conversion\n"),
        "t".into(),
    )
    .expect("label");
    let mut group = c.benchmark_group("ingest");
    group.throughput(Throughput::Elements(1));
    for (name, rel) in [
        (
            "otlp-trace",
            "tests/fixtures/ingest/otel/latest/correct.traces.otlp.jsonl",
        ),
        (
            "otlp-logs",
            "tests/fixtures/ingest/otel/events/correct.logs.otlp.jsonl",
        ),
        (
            "openai-chat",
            "tests/fixtures/ingest/openai-chat/correct.json",
        ),
    ] {
        let file = SourceFile::read(&root.join(rel)).expect("fixture");
        group.bench_function(format!("{name}-read"), |b| {
            b.iter(|| black_box(ingest::read(&file).expect("reads")))
        });
        group.bench_function(format!("{name}-read-and-grade"), |b| {
            b.iter(|| {
                let run = ingest::read(&file).expect("reads");
                let mut t = label.clone();
                t.turns = run.turns;
                black_box(evaluate(&suite, &t).expect("grades"))
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
