//! Any text as an LLM judge's answer: the JSON is found or not, the verdict is accepted or
//! rejected with a reason, and an accepted one scores within [0, 1].
#![no_main]
use agent_seer::judge::Verdict;
use agent_seer::llm::extract_json;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let Some(v) = extract_json(&text) else { return };
    let Ok(verdict) = serde_json::from_value::<Verdict>(v) else { return };
    if verdict.check().is_ok() {
        for calls in [0, 1, 3] {
            let s = verdict.score(calls);
            assert!((0.0..=1.0).contains(&s.tc), "TC {} out of range", s.tc);
        }
        let c = verdict.coherence(true);
        assert!((0.0..=1.0).contains(&c), "coherence {c} out of range");
    }
});
