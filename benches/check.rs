//! Whole-transcript throughput: lint → flow → oracle score on the shipped suites' transcripts
//! (YAML and recorded runs, each read as `check` reads it), parsed once. `cargo bench --bench
//! check`; the figure is transcripts/second (one core). `-- --test` runs each case once (CI).

#[cfg(feature = "mimalloc")]
#[global_allocator]
static ALLOC: agent_seer::Allocator = agent_seer::Allocator;

use std::hint::black_box;
use std::path::Path;

use agent_seer::check::{Suite, evaluate, load_transcript};
use agent_seer::harness::{Layout, Transcript, discover};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

fn bench(c: &mut Criterion) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let layout = Layout::under(root);
    let mut work: Vec<(Suite, Vec<Transcript>)> = Vec::new();
    for files in discover(&layout).expect("discover") {
        let suite = Suite::load(files.harness.as_deref().expect("harness")).expect("suite");
        let ts = files
            .transcripts
            .iter()
            // A recorded run (`*.json`, `*.jsonl`) is read by `ingest`, its scenario from its
            // label; `Transcript::load` reads YAML transcripts only.
            .map(|(_, p)| load_transcript(&suite, p).unwrap_or_else(|e| panic!("{e}")))
            .collect();
        work.push((suite, ts));
    }
    let n: usize = work.iter().map(|(_, t)| t.len()).sum();
    let mut group = c.benchmark_group("check");
    group.throughput(Throughput::Elements(n as u64));
    group.bench_function("shipped-transcripts", |b| {
        b.iter(|| {
            for (suite, ts) in &work {
                for t in ts {
                    black_box(evaluate(suite, t).expect("evaluates"));
                }
            }
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
