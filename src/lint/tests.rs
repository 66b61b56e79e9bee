//! Every single-call rule of RULES.md, against the shipped specs and matrices: a violating call
//! and its correct twin (which must come out clean of that rule).

use std::path::Path;

use rstest::rstest;
use serde_json::{Value, json};

use super::*;
use crate::finding::Severity;

fn linter(server: &str) -> Linter {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let spec = ToolSet::load(&root.join(format!("harnesses/{server}.tools.json"))).unwrap();
    let caps =
        Capabilities::load(&root.join(format!("capabilities/mcp-{server}-go.yaml"))).unwrap();
    caps.check_against(&spec).unwrap();
    Linter::new(&spec, vec![caps]).unwrap()
}

fn codes(findings: &[Finding]) -> Vec<(String, Option<String>)> {
    findings
        .iter()
        .map(|f| (f.code.as_str().to_owned(), f.rule.clone()))
        .collect()
}

#[rstest]
// ---- Veo ----
#[case::v1_model_absent("veo", "veo_t2v", json!({"prompt": "p"}), "cap.unsupported_value", "V2",
    json!({"prompt": "p", "model": "veo-3.1-fast-generate-001"}))]
#[case::v1_default_mismatch("veo", "veo_t2v", json!({"prompt": "p", "generate_audio": false}), "cap.default_mismatch", "V1",
    json!({"prompt": "p", "generate_audio": false, "model": "veo-2.0-generate-001"}))]
#[case::v2_audio_on_veo2("veo", "veo_t2v", json!({"prompt": "p", "model": "veo-2.0-generate-001", "generate_audio": true}), "cap.unsupported_value", "V2",
    json!({"prompt": "p", "model": "veo-2.0-generate-001", "generate_audio": false}))]
#[case::v2_audio_on_veo2_exp_alias("veo", "veo_t2v", json!({"prompt": "p", "model": "VEO 2 EXP"}), "cap.unsupported_value", "V2",
    json!({"prompt": "p", "model": "VEO 2 EXP", "generate_audio": false}))]
#[case::v3_portrait_on_veo30("veo", "veo_t2v", json!({"prompt": "p", "model": "veo-3.0-generate-001", "aspect_ratio": "9:16"}), "cap.unsupported_value", "V3",
    json!({"prompt": "p", "model": "veo-3.0-generate-001", "aspect_ratio": "16:9"}))]
#[case::v3_square_anywhere("veo", "veo_t2v", json!({"prompt": "p", "model": "veo-3.1-generate-001", "aspect_ratio": "1:1"}), "cap.unsupported_value", "V3",
    json!({"prompt": "p", "model": "veo-3.1-generate-001", "aspect_ratio": "9:16"}))]
#[case::v4_duration_5_on_veo3("veo", "veo_t2v", json!({"prompt": "p", "model": "veo-3.1-generate-001", "duration": 5}), "cap.unsupported_value", "V4",
    json!({"prompt": "p", "model": "veo-3.1-generate-001", "duration": 6}))]
#[case::v4_duration_4_on_veo2("veo", "veo_t2v", json!({"prompt": "p", "model": "veo-2.0-generate-001", "generate_audio": false, "duration": 4}), "cap.unsupported_value", "V4",
    json!({"prompt": "p", "model": "veo-2.0-generate-001", "generate_audio": false, "duration": 5}))]
#[case::v4_fraction_truncated("veo", "veo_t2v", json!({"prompt": "p", "model": "veo-3.1-generate-001", "duration": 6.9}), "cap.coerced", "V4",
    json!({"prompt": "p", "model": "veo-3.1-generate-001", "duration": 6}))]
#[case::v5_num_videos_clamped("veo", "veo_t2v", json!({"prompt": "p", "model": "veo-3.0-generate-001", "num_videos": 3}), "cap.clamped", "V5",
    json!({"prompt": "p", "model": "veo-3.0-generate-001", "num_videos": 2}))]
#[case::v6_first_last_on_veo30("veo", "veo_first_last_to_video", json!({"first_image_uri": "gs://b/a.png", "last_image_uri": "gs://b/z.png", "model": "veo-3.0-generate-001"}), "cap.unsupported_tool", "",
    json!({"first_image_uri": "gs://b/a.png", "last_image_uri": "gs://b/z.png", "model": "veo-3.1-generate-001"}))]
#[case::v7_reference_on_schema_default("veo", "veo_reference_to_video", json!({"prompt": "p", "reference_image_uris": ["gs://b/r.png"], "model": "veo-3.1-fast-generate-001"}), "cap.unsupported_tool", "",
    json!({"prompt": "p", "reference_image_uris": ["gs://b/r.png"], "model": "veo-3.1-fast-generate-preview"}))]
#[case::v7_ingredients_on_ga("veo", "veo_ingredients_to_video", json!({"prompt": "p", "reference_image_uris": ["gs://b/r.png"], "model": "veo-3.1-generate-001"}), "cap.unsupported_tool", "",
    json!({"prompt": "p", "reference_image_uris": ["gs://b/r.png"], "model": "veo-3.1-generate-preview"}))]
#[case::v8_four_references("veo", "veo_reference_to_video", json!({"prompt": "p", "model": "veo-3.1-generate-preview", "reference_image_uris": ["gs://b/1.png", "gs://b/2.png", "gs://b/3.png", "gs://b/4.png"]}), "cap.unsupported_value", "V8",
    json!({"prompt": "p", "model": "veo-3.1-generate-preview", "reference_image_uris": ["gs://b/1.png", "gs://b/2.png", "gs://b/3.png"]}))]
#[case::v8_mime_lengths("veo", "veo_reference_to_video", json!({"prompt": "p", "model": "veo-3.1-generate-preview", "reference_image_uris": ["gs://b/1.png", "gs://b/2.png"], "reference_mime_types": ["image/png"]}), "cap.cross_parameter", "V8",
    json!({"prompt": "p", "model": "veo-3.1-generate-preview", "reference_image_uris": ["gs://b/1.png", "gs://b/2.png"], "reference_mime_types": ["image/png", "image/png"]}))]
#[case::v9_extend_on_schema_default("veo", "veo_extend_video", json!({"video_uri": "gs://b/v.mp4", "model": "veo-3.1-fast-generate-001"}), "cap.unsupported_tool", "",
    json!({"video_uri": "gs://b/v.mp4", "model": "veo-3.1-lite-generate-001"}))]
#[case::v10_not_gcs("veo", "veo_i2v", json!({"image_uri": "https://example.com/a.png", "model": "veo-3.1-generate-001"}), "cap.invalid_format", "V10",
    json!({"image_uri": "gs://b/a.png", "model": "veo-3.1-generate-001"}))]
#[case::v10_uninferable_type("veo", "veo_i2v", json!({"image_uri": "gs://b/a.webp", "model": "veo-3.1-generate-001"}), "cap.invalid_format", "V10",
    json!({"image_uri": "gs://b/a.webp", "mime_type": "image/png", "model": "veo-3.1-generate-001"}))]
#[case::v10_mime_type("veo", "veo_i2v", json!({"image_uri": "gs://b/a.png", "mime_type": "image/webp", "model": "veo-3.1-generate-001"}), "cap.unsupported_value", "V10",
    json!({"image_uri": "gs://b/a.png", "mime_type": "image/jpeg", "model": "veo-3.1-generate-001"}))]
#[case::v11_person_generation("veo", "veo_t2v", json!({"prompt": "p", "model": "veo-3.1-generate-001", "person_generation": "allow_all"}), "cap.unsupported_value", "V11",
    json!({"prompt": "p", "model": "veo-3.1-generate-001", "person_generation": "dont_allow"}))]
#[case::v12_seed_fraction("veo", "veo_t2v", json!({"prompt": "p", "model": "veo-3.1-generate-001", "seed": 1.5}), "cap.not_integer", "V12",
    json!({"prompt": "p", "model": "veo-3.1-generate-001", "seed": 1}))]
#[case::v12_seed_range("veo", "veo_t2v", json!({"prompt": "p", "model": "veo-3.1-generate-001", "seed": -1}), "cap.unsupported_value", "V12",
    json!({"prompt": "p", "model": "veo-3.1-generate-001", "seed": 2147483647}))]
#[case::x1_unknown_model("veo", "veo_t2v", json!({"prompt": "p", "model": "veo-4.0-ultra"}), "cap.unknown_model", "V1",
    json!({"prompt": "p", "model": "Veo 3.1 Fast"}))]
// ---- Imagen ----
#[case::i1_ratio_coerced("imagen", "imagen_t2i", json!({"prompt": "p", "aspect_ratio": "21:9"}), "cap.coerced", "I1",
    json!({"prompt": "p", "aspect_ratio": "16:9"}))]
#[case::i2_ultra_one_image("imagen", "imagen_t2i", json!({"prompt": "p", "model": "Imagen 4 Ultra", "num_images": 3}), "cap.clamped", "I2",
    json!({"prompt": "p", "model": "Imagen 4 Ultra", "num_images": 1}))]
#[case::i3_size_on_imagen3("imagen", "imagen_t2i", json!({"prompt": "p", "model": "imagen-3.0-generate-002", "image_size": "2K"}), "cap.ignored", "I3",
    json!({"prompt": "p", "model": "imagen-3.0-generate-002"}))]
#[case::i3_4k_dropped("imagen", "imagen_t2i", json!({"prompt": "p", "model": "imagen-4.0-generate-001", "image_size": "4K"}), "cap.ignored", "I3",
    json!({"prompt": "p", "model": "imagen-4.0-generate-001", "image_size": "2K"}))]
// ---- Gemini image (nanobanana, gemini) ----
#[case::g1_ratio_on_flash25("nanobanana", "nanobanana_image_generation", json!({"prompt": "p", "model": "gemini-2.5-flash-image", "aspect_ratio": "21:9"}), "cap.unsupported_value", "G1",
    json!({"prompt": "p", "model": "gemini-2.5-flash-image", "aspect_ratio": "16:9"}))]
#[case::g1_one_to_eight("nanobanana", "nanobanana_image_generation", json!({"prompt": "p", "model": "Nano Banana 2", "aspect_ratio": "1:8"}), "cap.unsupported_value", "G1",
    json!({"prompt": "p", "model": "Nano Banana 2", "aspect_ratio": "8:1"}))]
#[case::g1_gemini_server("gemini", "gemini_image_generation", json!({"prompt": "p", "model": "gemini-3-pro-image", "aspect_ratio": "4:1"}), "cap.unsupported_value", "G1",
    json!({"prompt": "p", "model": "gemini-3-pro-image", "aspect_ratio": "21:9"}))]
#[case::g5_unknown_model_passes_through("nanobanana", "nanobanana_image_generation", json!({"prompt": "p", "model": "gemini-4-ultra-image"}), "cap.unknown_model", "G5",
    json!({"prompt": "p", "model": "nano-banana"}))]
#[case::v12_nanobanana_seed("nanobanana", "nanobanana_image_generation", json!({"prompt": "p", "seed": 3000000000u64}), "cap.unsupported_value", "V12",
    json!({"prompt": "p", "seed": 42}))]
// ---- Lyria ----
#[case::l1_negative_prompt_ignored("lyria", "lyria_generate_music", json!({"prompt": "p", "model_id": "lyria-3-pro-preview", "negative_prompt": "drums"}), "cap.ignored", "L1",
    json!({"prompt": "p", "model_id": "lyria-002", "negative_prompt": "drums"}))]
#[case::l1_seed_ignored("lyria", "lyria_generate_music", json!({"prompt": "p", "seed": 7}), "cap.ignored", "L1",
    json!({"prompt": "p", "model_id": "Lyria 2", "seed": 7}))]
#[case::l2_only_first_sample("lyria", "lyria_generate_music", json!({"prompt": "p", "model_id": "lyria-002", "sample_count": 3}), "cap.clamped", "L2",
    json!({"prompt": "p", "model_id": "lyria-002", "sample_count": 1}))]
#[case::l2_seed_wraps("lyria", "lyria_generate_music", json!({"prompt": "p", "model_id": "lyria-002", "seed": -5}), "cap.coerced", "L2",
    json!({"prompt": "p", "model_id": "lyria-002", "seed": 5}))]
// ---- Chirp3 / Gemini TTS ----
#[case::c1_unknown_voice("chirp3", "chirp_tts", json!({"text": "hi", "voice_name": "Zephyr"}), "cap.coerced", "C1",
    json!({"text": "hi", "voice_name": "en-GB-Chirp3-HD-Charon"}))]
#[case::t1_text_too_long("gemini", "gemini_audio_tts", json!({"text": "x".repeat(801)}), "cap.unsupported_value", "T1",
    json!({"text": "x".repeat(800)}))]
// ---- Omni ----
#[case::o1_eleven_images("omni", "omni_video_generation", json!({"prompt": "p", "images": vec!["gs://b/1.png"; 11]}), "cap.unsupported_value", "O1",
    json!({"prompt": "p", "images": vec!["gs://b/1.png"; 10]}))]
#[case::o2_fractional_count("omni", "omni_video_generation", json!({"prompt": "p", "sample_count": 1.5}), "cap.not_integer", "O2",
    json!({"prompt": "p", "sample_count": 2}))]
#[case::o2_count_clamped("omni", "omni_video_generation", json!({"prompt": "p", "sample_count": 5}), "cap.clamped", "O2",
    json!({"prompt": "p", "sample_count": 3}))]
#[case::o2_count_below_one("omni", "omni_video_generation", json!({"prompt": "p", "sample_count": 0}), "cap.clamped", "O2",
    json!({"prompt": "p", "sample_count": 1}))]
#[case::o3_temperature("omni", "omni_video_generation", json!({"prompt": "p", "temperature": 2.5}), "cap.unsupported_value", "O3",
    json!({"prompt": "p", "temperature": 2.0}))]
#[case::o3_top_p("omni", "omni_video_generation", json!({"prompt": "p", "top_p": 1.5}), "cap.unsupported_value", "O3",
    json!({"prompt": "p", "top_p": 0.9}))]
#[case::o3_gemini_server("gemini", "omni_video_generation", json!({"prompt": "p", "top_p": -0.1}), "cap.unsupported_value", "O3",
    json!({"prompt": "p", "top_p": 0.0}))]
#[case::o4_unknown_model("omni", "omni_video_generation", json!({"prompt": "p", "model": "veo-3.1-generate-001"}), "cap.unknown_model", "O4",
    json!({"prompt": "p", "model": "Omni"}))]
// ---- avtool ----
#[case::a1_volume_truncated("avtool", "ffmpeg_adjust_volume", json!({"input_audio_uri": "gs://b/a.wav", "volume_db_change": 2.7}), "cap.coerced", "A1",
    json!({"input_audio_uri": "gs://b/a.wav", "volume_db_change": 2}))]
#[case::a2_fps_nonpositive("avtool", "ffmpeg_video_to_gif", json!({"input_video_uri": "gs://b/v.mp4", "fps": 0}), "cap.coerced", "A2",
    json!({"input_video_uri": "gs://b/v.mp4", "fps": 12}))]
#[case::a2_fps_clamped("avtool", "ffmpeg_video_to_gif", json!({"input_video_uri": "gs://b/v.mp4", "fps": 60}), "cap.clamped", "A2",
    json!({"input_video_uri": "gs://b/v.mp4", "fps": 50}))]
#[case::a2_scale_factor("avtool", "ffmpeg_video_to_gif", json!({"input_video_uri": "gs://b/v.mp4", "scale_width_factor": -1}), "cap.coerced", "A2",
    json!({"input_video_uri": "gs://b/v.mp4", "scale_width_factor": 0.5}))]
#[case::a2_overlay_truncated("avtool", "ffmpeg_overlay_image_on_video", json!({"input_video_uri": "gs://b/v.mp4", "input_image_uri": "gs://b/l.png", "x_coordinate": 10.5}), "cap.coerced", "A2",
    json!({"input_video_uri": "gs://b/v.mp4", "input_image_uri": "gs://b/l.png", "x_coordinate": 10}))]
fn rules_md(
    #[case] server: &str,
    #[case] tool: &str,
    #[case] bad: Value,
    #[case] code: &str,
    #[case] rule: &str,
    #[case] good: Value,
) {
    let linter = linter(server);
    let found = linter.lint(tool, &bad);
    let want_rule = (!rule.is_empty()).then(|| rule.to_owned());
    assert!(
        codes(&found).contains(&(code.to_owned(), want_rule.clone())),
        "expected {code} ({rule}) for {bad}, got {found:#?}"
    );
    let twin = linter.lint(tool, &good);
    assert!(
        !twin
            .iter()
            .any(|f| f.code.as_str() == code && f.rule == want_rule),
        "the correct twin {good} still trips {code}: {twin:#?}"
    );
    // Imagen's twins still fail for I4 (the server is retired), and only for that.
    let errors = twin
        .iter()
        .filter(|f| f.severity == Severity::Error && f.code != Code::Retired);
    assert_eq!(errors.count(), 0, "twin has errors: {twin:#?}");
}

#[test]
fn imagen_is_retired_whatever_the_arguments() {
    let found = linter("imagen").lint("imagen_t2i", &json!({"prompt": "p"}));
    assert_eq!(codes(&found), [("cap.retired".to_owned(), None)]);
    assert!(found[0].message.contains("2026-08-17"));
}

#[test]
fn later_rules_stay_off_at_the_shipped_version() {
    // X2 [≥3.21]: absolute output directories only fail from 3.21 on.
    let found = linter("veo").lint(
        "veo_t2v",
        &json!({"prompt": "p", "model": "veo-3.1-generate-001", "output_directory": "/tmp/out"}),
    );
    assert!(found.is_empty(), "{found:#?}");
}

#[test]
fn chains_see_the_rewritten_value() {
    // V4: 4.5 is truncated to 4 first, then 4 is not a Veo 2 duration.
    let found = linter("veo").lint("veo_t2v", &json!({"prompt": "p", "model": "veo-2.0-generate-001", "generate_audio": false, "duration": 4.5}));
    assert_eq!(
        codes(&found),
        [
            ("cap.coerced".into(), Some("V4".into())),
            ("cap.unsupported_value".into(), Some("V4".into()))
        ]
    );
}

#[rstest]
#[case::unknown_tool("veo_t2", json!({}), "lint.unknown_tool", "", "unknown tool `veo_t2` (did you mean `veo_t2v`?)")]
#[case::unknown_param("veo_t2v", json!({"prompt": "p", "model": "veo-3.1-generate-001", "aspect": "16:9"}), "lint.unknown_param", "/aspect", "did you mean `aspect_ratio`?")]
#[case::missing_required("veo_i2v", json!({"prompt": "p", "model": "veo-3.1-generate-001"}), "lint.missing_required", "/image_uri", "missing required parameter `image_uri`")]
#[case::wrong_type("veo_t2v", json!({"prompt": "p", "model": "veo-3.1-generate-001", "duration": "6"}), "lint.type", "/duration", "`duration` must be number, got string \"6\"")]
#[case::not_object("veo_t2v", json!(["p"]), "lint.arguments_not_object", "", "arguments must be a JSON object, got array")]
fn schema_findings(
    #[case] tool: &str,
    #[case] args: Value,
    #[case] code: &str,
    #[case] pointer: &str,
    #[case] message: &str,
) {
    let found = linter("veo").lint(tool, &args);
    let f = found
        .iter()
        .find(|f| f.code.as_str() == code)
        .unwrap_or_else(|| panic!("no {code} in {found:#?}"));
    assert_eq!(f.pointer, pointer);
    assert!(f.message.contains(message), "{}", f.message);
}

/// A tool found by name is that linter's tool of that name, however the lookups of two
/// linters whose tools sit at each other's places interleave (each remembers the tool found
/// last on the thread): the spec, the required parameters and whether undeclared arguments
/// are refused all the asked linter's own.
#[test]
fn a_tool_is_its_own_linters_wherever_it_was_found_last() {
    let tool = |name: &str, closed: bool, required: &str| {
        json!({"name": name, "inputSchema": {"type": "object",
            "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
            "required": [required], "additionalProperties": !closed}})
    };
    let first = Linter::new(
        &ToolSet::from_json(&json!([tool("x", true, "a"), tool("y", false, "b")])).unwrap(),
        vec![],
    )
    .unwrap();
    let second = Linter::new(
        &ToolSet::from_json(&json!([
            tool("y", true, "a"),
            tool("x", false, "b"),
            tool("z", true, "a")
        ]))
        .unwrap(),
        vec![],
    )
    .unwrap();
    let want = |l: &Linter, name: &str| match (std::ptr::eq(l, &first), name) {
        (true, "x") | (false, "y") => Some((true, "a")),
        (true, "y") | (false, "x") => Some((false, "b")),
        (false, "z") => Some((true, "a")),
        _ => None,
    };
    for round in 0..3 {
        for (l, name) in [
            (&first, "x"),
            (&second, "x"),
            (&second, "y"),
            (&first, "y"),
            (&first, "z"),
            (&second, "z"),
            (&first, "x"),
        ] {
            let got = l.tool(name).map(|s| {
                assert_eq!(s.name, name, "round {round}");
                (l.rejects_undeclared(name), &*l.required(name)[0])
            });
            assert_eq!(got, want(l, name), "round {round}: `{name}`");
        }
    }
}

/// Every argument a tool declares is known and every other one is not, for tools of a few
/// parameters and of many (looked through one by one, and looked up in order): each declared
/// name, names that sort before, between and after them, and a name one letter off.
#[test]
fn declared_parameters_are_known_at_every_count() {
    for n in [0, 1, 3, 16, 17, 40] {
        let names: Vec<String> = (0..n).map(|i| format!("p{i:02}")).collect();
        let props: serde_json::Map<String, Value> = names
            .iter()
            .map(|p| (p.clone(), json!({"type": "string"})))
            .collect();
        let spec = ToolSet::from_json(&json!([{"name": "t", "inputSchema": {
            "type": "object", "additionalProperties": false, "properties": props}}]))
        .unwrap();
        let linter = Linter::new(&spec, vec![]).unwrap();
        let unknown = |arg: &str| {
            linter
                .lint("t", &json!({ arg: "x" }))
                .iter()
                .any(|f| f.code == Code::UnknownParam)
        };
        for p in &names {
            assert!(!unknown(p), "{n} parameters: `{p}` is declared");
        }
        for p in ["a", "p", "p0", "p000", "p0a", "p99", "q", "P01", "p1 "] {
            assert!(unknown(p), "{n} parameters: `{p}` is not declared");
        }
    }
}

#[test]
fn json_schema_keywords_beyond_the_basics() {
    let spec = ToolSet::from_json(&json!([{"name": "t", "inputSchema": {
    "type": "object", "additionalProperties": false,
    "properties": {
        "n": {"type": "integer", "minimum": 1, "maximum": 5, "multipleOf": 1},
        "e": {"enum": ["a", "b"]},
        "d": {"type": "string", "format": "date"},
        "p": {"type": "string", "pattern": "^gs://"},
        "l": {"type": "array", "maxItems": 1, "items": {"type": "string"}},
        "o": {"type": "object", "properties": {"k": {"type": "boolean"}}, "required": ["k"]}
    }}}]))
    .unwrap();
    let linter = Linter::new(&spec, vec![]).unwrap();
    let found = linter.lint(
        "t",
        &json!({"n": 9, "e": "c", "d": "yesterday", "p": "s3://x", "l": ["a", "b"], "o": {}}),
    );
    let got: Vec<(&str, &str)> = found
        .iter()
        .map(|f| (f.code.as_str(), f.pointer.as_str()))
        .collect();
    for want in [
        ("lint.range", "/n"),
        ("lint.enum", "/e"),
        ("lint.format", "/d"),
        ("lint.format", "/p"),
        ("lint.range", "/l"),
        ("lint.missing_required", "/o/k"),
    ] {
        assert!(got.contains(&want), "missing {want:?} in {got:?}");
    }
    // 3.0 is an integer for JSON Schema (BFCL disagrees: a documented difference).
    assert!(linter.lint("t", &json!({"n": 3.0})).is_empty());
}

#[test]
fn remote_refs_are_never_fetched() {
    let spec = ToolSet::from_json(
        &json!([{"name": "t", "inputSchema": {"$ref": "https://example.com/schema.json"}}]),
    )
    .unwrap();
    match Linter::new(&spec, vec![]) {
        Err(LintError::InvalidSchema { tool, .. }) => assert_eq!(tool, "t"),
        Ok(_) => panic!("a remote $ref must not resolve"),
        Err(e) => panic!("unexpected {e}"),
    }
}

// Issue 18, item 10: the validator's cycle guard answers "valid" on re-entry, so a tool whose
// schema runs through such a cycle accepted any arguments.
#[test]
fn a_ref_cycle_is_an_invalid_schema_naming_the_tool() {
    let schema = json!({
        "type": "object",
        "properties": {"n": {"$ref": "#/$defs/a"}},
        "$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}},
    });
    // What the validator does with it: anything goes.
    let v = jsonschema::validator_for(&schema).unwrap();
    assert!(v.is_valid(&json!({"n": {"anything": [1, "x"]}})));
    let spec = ToolSet::from_json(&json!([
        {"name": "fine", "inputSchema": {"type": "object"}},
        {"name": "loops", "inputSchema": schema},
    ]))
    .unwrap();
    match Linter::new(&spec, vec![]) {
        Err(e @ LintError::InvalidSchema { .. }) => {
            let msg = e.to_string();
            assert!(
                msg.starts_with("tool `loops` has an invalid input schema"),
                "{msg}"
            );
            assert!(msg.contains("#/$defs/a → #/$defs/b → #/$defs/a"), "{msg}");
        }
        Ok(_) => panic!("a $ref cycle must not compile into an accept-all validator"),
        Err(e) => panic!("unexpected {e}"),
    }
}

#[rstest]
#[case("model", ["model_id", "prompt"], Some("model_id"))]
#[case("gcs_bucket_uri", ["output_gcs_bucket", "prompt"], Some("output_gcs_bucket"))]
#[case("ratio", ["aspect_ratio", "prompt"], Some("aspect_ratio"))]
#[case("text_prompt", ["prompt", "model"], Some("prompt"))]
#[case("colour", ["prompt", "model"], None)]
fn did_you_mean_finds_what_agents_mean(
    #[case] name: &str,
    #[case] cands: [&str; 2],
    #[case] want: Option<&str>,
) {
    assert_eq!(nearest(name, cands), want);
}

/// [`nearest`] as its doc states the measure, every candidate lowered and split anew and its
/// edits counted whatever its length: what the one that lowers into one buffer and counts no
/// edits past a length difference a typo cannot make must answer, on names one to three
/// edits apart at every length around the long-name line (8), in both cases, in other
/// scripts, with words shared and names contained.
#[test]
fn nearest_is_its_measure() {
    fn plain<'a>(name: &str, candidates: &[&'a str]) -> Option<&'a str> {
        let lower = name.to_lowercase();
        let words = |s: &str| -> Vec<String> {
            s.split(['_', '-', '.', ' '])
                .filter(|w| !w.is_empty())
                .map(str::to_owned)
                .collect()
        };
        let mine = words(&lower);
        let mut best: Option<(f64, &str)> = None;
        for &cand in candidates {
            if cand == name {
                continue;
            }
            let c = cand.to_lowercase();
            let jw = strsim::jaro_winkler(&lower, &c);
            let theirs = words(&c);
            let shared = mine.iter().filter(|w| theirs.contains(w)).count();
            let union = mine.len() + theirs.len() - shared;
            let jaccard = if union == 0 {
                0.0
            } else {
                shared as f64 / union as f64
            };
            let contains =
                lower.len().min(c.len()) >= 3 && (lower.contains(&c) || c.contains(&lower));
            let score = jw.max(jaccard + 0.3).max(if contains { 0.85 } else { 0.0 });
            let edits = strsim::osa_distance(&lower, &c);
            let typo = edits <= 1 || (lower.len() >= 8 && edits <= 2);
            let score = if typo { score.max(0.9) } else { score };
            if (jw >= 0.8 || jaccard >= 0.5 || contains || typo)
                && best.is_none_or(|(s, _)| score > s)
            {
                best = Some((score, cand));
            }
        }
        best.map(|(_, c)| c)
    }
    let bases = [
        "ab",
        "abc",
        "abcdef",
        "abcdefg",
        "abcdefgh",
        "abcdefghi",
        "model",
        "Model_ID",
        "gcs_bucket_uri",
        "ΣΟΦΊΑ",
        "straße",
        "x-y.z w",
    ];
    let mut names: Vec<String> = Vec::new();
    for b in bases {
        names.push(b.to_owned());
        names.push(b.to_uppercase());
        let chars: Vec<char> = b.chars().collect();
        // One to three characters cut from the end, added, changed; two swapped.
        for k in 1..=3.min(chars.len()) {
            names.push(chars[..chars.len() - k].iter().collect());
            names.push(format!("{b}{}", "q".repeat(k)));
            let mut changed = chars.clone();
            for c in changed.iter_mut().take(k) {
                *c = 'z';
            }
            names.push(changed.into_iter().collect());
        }
        if chars.len() >= 2 {
            let mut swapped = chars.clone();
            swapped.swap(0, 1);
            names.push(swapped.into_iter().collect());
        }
    }
    let (mut found, mut none) = (0, 0);
    for name in &names {
        for i in 0..names.len().saturating_sub(3) {
            let cands: Vec<&str> = names[i..i + 3].iter().map(String::as_str).collect();
            let want = plain(name, &cands);
            assert_eq!(
                nearest(name, cands.iter().copied()),
                want,
                "{name} among {cands:?}"
            );
            found += usize::from(want.is_some());
            none += usize::from(want.is_none());
        }
    }
    assert!(found >= 1_000 && none >= 1_000, "{found} found, {none} not");
}

/// The refusal shapes read by hand answer as their regex does: on generated text made of the
/// pieces it turns on (its words in any case, the long s that folds onto `s`, spaces and
/// newlines of every kind, colons, word and non-word characters after a word).
#[test]
fn error_text_is_read_as_its_regex_reads_it() {
    let re = regex::Regex::new(
        r"^\s*(?:(?i:error)(?:\s+executing\b[^:\n]*)?:|(?i:database error|sql error|query error|binder error|catalog error|parser error)\b|ERR\s|WRONGTYPE\s|NOAUTH\s|Traceback \(most recent call last\))",
    )
    .unwrap();
    let pieces = [
        "error",
        "Error",
        "ERROR",
        "eRRor",
        "executing",
        "Executing",
        "database",
        "DataBase",
        "sql",
        "\u{17F}ql",
        "SQL",
        "query",
        "binder",
        "catalog",
        "parser",
        " error",
        "ERR",
        "WRONGTYPE",
        "NOAUTH",
        "Traceback (most recent call last)",
        "Traceback",
        " ",
        "\t",
        "\n",
        "\u{a0}",
        "\u{2003}",
        ":",
        "x",
        "_",
        "é",
        "-",
        ".",
        "tool",
        "\u{301}",
    ];
    let mut matched = 0;
    for text in crate::pattern::random_texts(&pieces, 0x2545_f491_4f6c_dd1d, 7, 60_000) {
        assert_eq!(looks_like_error_text(&text), re.is_match(&text), "{text:?}");
        matched += usize::from(re.is_match(&text));
    }
    assert!(matched > 1000, "only {matched} refusals generated");
    for text in [
        "Error: no such table",
        "  error executing tool query: boom",
        "Error executing tool query\n: not on its line",
        "Database error: x",
        "SQL errors are data",
        "\u{17F}ql error",
        "ERR wrong number",
        "ERRx",
        "Traceback (most recent call last):\n  File",
        "Result: error: later",
    ] {
        assert_eq!(looks_like_error_text(text), re.is_match(text), "{text:?}");
    }
}

/// An answer's text: a string itself, a result's one text part in place, several joined by
/// newlines (other parts skipped), none for structured data.
#[test]
fn an_answers_text_is_its_text_parts() {
    use std::borrow::Cow;
    let text = |v: Value| answer_text(&v).map(Cow::into_owned);
    assert_eq!(text(json!("no such file")), Some("no such file".into()));
    let one = json!({"content": [{"type": "text", "text": "Error: gone"}]});
    assert!(matches!(
        answer_text(&one),
        Some(Cow::Borrowed("Error: gone"))
    ));
    let parts = json!({"content": [
        {"type": "text", "text": "a"}, {"type": "image", "data": "…"},
        {"type": "text", "text": "b"}, {"type": "text", "text": "c"}]});
    assert_eq!(text(parts), Some("a\nb\nc".into()));
    assert_eq!(
        text(json!({"content": [{"type": "image", "data": "…"}]})),
        None
    );
    assert_eq!(text(json!({"rows": [1, 2]})), None);
    assert_eq!(text(json!(3)), None);
}
