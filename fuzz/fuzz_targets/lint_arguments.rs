//! Any JSON as the arguments of any veo tool (and any tool name): findings, never a panic.
#![no_main]
use std::sync::OnceLock;

use agent_seer::lint::Linter;
use agent_seer::source::SourceFile;
use agent_seer::spec::{Capabilities, ToolSet};
use libfuzzer_sys::fuzz_target;

fn linter() -> &'static Linter {
    static LINTER: OnceLock<Linter> = OnceLock::new();
    LINTER.get_or_init(|| {
        let spec = SourceFile::from_text("veo.tools.json", include_str!("../../harnesses/veo.tools.json"));
        let caps = SourceFile::from_text("mcp-veo-go.yaml", include_str!("../../capabilities/mcp-veo-go.yaml"));
        let tools = ToolSet::from_source(&spec).expect("spec");
        let caps = Capabilities::from_source(&caps).expect("matrix");
        Linter::new(&tools, vec![caps]).expect("linter")
    })
}

const TOOLS: [&str; 7] = [
    "veo_t2v",
    "veo_i2v",
    "veo_extend_video",
    "veo_first_last_to_video",
    "veo_ingredients_to_video",
    "veo_reference_to_video",
    "veo_t2",
];

fuzz_target!(|data: &[u8]| {
    let Some((&pick, rest)) = data.split_first() else { return };
    let Ok(args) = serde_json::from_slice::<serde_json::Value>(rest) else { return };
    let tool = TOOLS[pick as usize % TOOLS.len()];
    for f in linter().lint(tool, &args) {
        assert!(!f.message.is_empty());
    }
});
