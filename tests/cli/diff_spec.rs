//! `agent-seer diff-spec`: a changed capture of the Veo server against the shipped one, and
//! the Veo scenarios each change touches.

use super::*;

fn changed_veo() -> String {
    let text = std::fs::read_to_string(repo().join("harnesses/veo.tools.json")).unwrap();
    let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let tools = v.as_array_mut().unwrap();
    tools.retain(|t| t["name"] != "veo_extend_video");
    for t in tools.iter_mut() {
        let name = t["name"].as_str().unwrap().to_owned();
        let schema = &mut t["inputSchema"];
        match name.as_str() {
            "veo_t2v" => {
                schema["properties"]
                    .as_object_mut()
                    .unwrap()
                    .remove("generate_audio");
                schema["properties"]["aspect_ratio"]["enum"] = serde_json::json!(["16:9"]);
            }
            "veo_i2v" => {
                schema["properties"]["safety_level"] = serde_json::json!({"type": "string"});
                schema["required"]
                    .as_array_mut()
                    .unwrap()
                    .push("safety_level".into());
            }
            _ => {}
        }
    }
    tools.push(serde_json::json!({"name": "veo_upscale", "inputSchema": {"type": "object", "properties": {"video_uri": {"type": "string"}}}}));
    serde_json::to_string_pretty(&v).unwrap()
}

#[test]
fn changes_and_the_scenarios_they_touch() {
    let dir = tempfile::tempdir().unwrap();
    let new = dir.path().join("veo-next.tools.json");
    std::fs::write(&new, changed_veo()).unwrap();
    let o = run(
        &[
            "diff-spec",
            "harnesses/veo.tools.json",
            new.to_str().unwrap(),
            "--harness",
            "harnesses/veo.yaml",
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let mut settings = insta::Settings::clone_current();
    settings.add_filter(&regex::escape(new.to_str().unwrap()), "[new]");
    settings.bind(|| insta::assert_snapshot!("diff_spec_veo", stdout(&o)));
}

#[test]
fn identical_specs_differ_in_nothing() {
    let o = run(
        &[
            "diff-spec",
            "harnesses/veo.tools.json",
            "harnesses/veo.tools.json",
            "--format",
            "json",
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o).trim(), "[]");
}
