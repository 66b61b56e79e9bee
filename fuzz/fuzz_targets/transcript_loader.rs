//! Any bytes as a transcript of the veo suite: an error naming a place, or a transcript that
//! the engines evaluate (lint, flow, oracle) without panicking, with scores in [0, 1], and
//! whose verdict the fast path gives as the engines do.
#![no_main]
use std::sync::OnceLock;

use agent_seer::harness::{Harness, Transcript};
use agent_seer::check::{Suite, evaluate, verdict};
use agent_seer::source::SourceFile;
use agent_seer::spec::{Capabilities, ToolSet};
use libfuzzer_sys::fuzz_target;

fn suite() -> &'static Suite {
    static SUITE: OnceLock<Suite> = OnceLock::new();
    SUITE.get_or_init(|| {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let mut s = Suite::load(&root.join("harnesses/veo.yaml")).expect("veo suite");
        // Keep the linter's inputs as loaded.
        let _ = (&mut s, Harness::load, ToolSet::load, Capabilities::load);
        s
    })
}

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data).into_owned();
    let file = SourceFile::from_text("transcripts/veo/fuzz.yaml", text);
    match Transcript::from_source(file, "fuzz".into()) {
        Err(e) => {
            let _ = e.render();
        }
        Ok(t) => {
            let engines = evaluate(suite(), &t);
            if let Ok(ev) = &engines {
                if let Some(s) = &ev.score {
                    assert!((0.0..=1.0).contains(&s.tc), "TC {} out of range", s.tc);
                }
                let _ = ev.agrees_with_label();
            }
            assert_eq!(
                verdict(suite(), &t).ok(),
                engines.ok().map(|e| e.verdict),
                "the fast path and the engines disagree"
            );
        }
    }
});
