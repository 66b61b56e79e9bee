//! Any bytes as an OTLP JSON (Lines) file, read both ways — streamed from disk a line at a
//! time (`import trace`, `check` on `*.jsonl`) and whole from text: runs, or an error that
//! renders with its place; never a panic. The whole-text read tells every recorded format
//! from the content, so the seeds hold the other readers' inputs too (issue 33: runs
//! stitched from several traces, MCP logs with wrappers, provider HTTP logs and cassettes
//! with SSE bodies).
#![no_main]
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use agent_seer::ingest;
use agent_seer::source::SourceFile;
use libfuzzer_sys::fuzz_target;

/// One scratch file per process, rewritten for each input.
fn scratch() -> &'static Path {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("agent-seer-fuzz-otlp-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("scratch dir");
        dir.join("run.jsonl")
    })
}

fuzz_target!(|data: &[u8]| {
    let path = scratch();
    std::fs::write(path, data).expect("scratch file");
    match ingest::read_path(path, false) {
        Ok((_, runs)) => assert!(!runs.is_empty(), "a file read is at least one run"),
        Err(e) => {
            let _ = e.render();
        }
    }
    if let Ok(text) = std::str::from_utf8(data) {
        match ingest::read_all(&SourceFile::from_text(path, text)) {
            Ok(runs) => assert!(!runs.is_empty(), "a file read is at least one run"),
            Err(e) => {
                let _ = e.render();
            }
        }
    }
});
