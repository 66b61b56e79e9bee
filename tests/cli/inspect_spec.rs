use super::*;

#[test]
fn veo_profile() {
    let o = run(&["inspect-spec", "harnesses/veo.tools.json"], None);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    insta::assert_snapshot!("inspect_spec_veo", stdout(&o));
}

#[test]
fn json_profile() {
    let o = run(
        &[
            "inspect-spec",
            "--format",
            "json",
            "harnesses/avtool.tools.json",
        ],
        None,
    );
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["tools"], 8);
    assert_eq!(v["max_params_tool"], "ffmpeg_combine_audio_and_video");
}

#[test]
fn a_directory_is_not_a_spec() {
    let o = run(&["inspect-spec", "harnesses"], None);
    assert_eq!(o.status.code(), Some(2));
    insta::assert_snapshot!("inspect_spec_directory", stderr(&o));
}
