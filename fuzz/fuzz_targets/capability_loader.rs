//! Any bytes as a capability matrix: an error or a matrix, checked against the veo spec.
#![no_main]
use agent_seer::source::SourceFile;
use agent_seer::spec::{Capabilities, ToolSet};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data).into_owned();
    let file = SourceFile::from_text("fuzz.yaml", text);
    if let Ok(caps) = Capabilities::from_source(&file) {
        let spec = SourceFile::from_text("veo.tools.json", include_str!("../../harnesses/veo.tools.json"));
        let tools = ToolSet::from_source(&spec).expect("the shipped spec loads");
        if caps.check_against(&tools).is_ok() {
            let _ = agent_seer::lint::Linter::new(&tools, vec![caps]);
        }
    }
});
