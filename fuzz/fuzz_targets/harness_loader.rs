//! Any bytes as a harness file: an error naming a place, or a harness.
#![no_main]
use agent_seer::harness::Harness;
use agent_seer::source::SourceFile;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data).into_owned();
    let file = SourceFile::from_text("harnesses/fuzz.yaml", text);
    if let Err(e) = Harness::from_source(file) {
        let _ = e.render();
    }
});
