//! Any bytes as a tool spec (MCP tools/list, OpenAI tools, BFCL docs): an error or a spec, and
//! a loaded spec compiles into a linter or says why not.
#![no_main]
use agent_seer::lint::Linter;
use agent_seer::source::SourceFile;
use agent_seer::spec::ToolSet;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data).into_owned();
    let file = SourceFile::from_text("fuzz.tools.json", text);
    if let Ok(set) = ToolSet::from_source(&file) {
        let _ = set.profile();
        let _ = Linter::new(&set, Vec::new());
    }
});
