use std::path::Path;

use super::*;
use crate::check::Suite;
use crate::source::SourceFile;

fn suite(name: &str) -> Suite {
    Suite::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("harnesses/{name}.yaml")))
        .unwrap()
}

/// The flow of a transcript (leaked: the flow borrows it, and each test is short).
fn run<'s>(suite: &'s Suite, yaml: &str) -> Flow<'s> {
    let t = Transcript::from_source(SourceFile::from_text("t.yaml", yaml), "t".into()).unwrap();
    let t: &'static Transcript = Box::leak(Box::new(t));
    let scenario = t
        .scenario
        .as_deref()
        .and_then(|s| suite.harness.scenario(s));
    let lint_failed: Vec<bool> = t
        .calls()
        .map(|(_, c)| {
            suite
                .linter
                .lint(&c.tool, c.arguments())
                .iter()
                .any(|f| f.severity == Severity::Error)
        })
        .collect();
    analyze(t, scenario, &suite.linter, &lint_failed)
}

fn codes(flow: &Flow<'_>) -> Vec<(&'static str, Option<usize>)> {
    flow.findings
        .iter()
        .map(|f| (f.code.as_str(), f.call))
        .collect()
}

#[test]
fn normalizes_signed_urls_and_punctuation() {
    assert_eq!(
        normalize("https://storage.googleapis.com/b/o/x.mp4?X-Goog-Signature=abc"),
        "gs://b/o/x.mp4"
    );
    assert_eq!(normalize("gs://b/x.png."), "gs://b/x.png");
    assert_eq!(normalize("gs://b/out/"), "gs://b/out");
}

#[test]
fn finds_uris_and_media_paths_in_text() {
    let text = "Generated and saved 2 video(s): gs://b/a_0.mp4, gs://b/a_1.mp4. Saved locally to: gifs/out.gif";
    assert_eq!(
        artifacts_in_text(text),
        ["gifs/out.gif", "gs://b/a_0.mp4", "gs://b/a_1.mp4"]
    );
    let v = serde_json::json!({"content": [{"type": "resource_link", "uri": "gs://b/x.png"}], "structuredContent": {"files": ["gs://b/y.wav"]}});
    assert_eq!(artifacts_of_value(&v), ["gs://b/x.png", "gs://b/y.wav"]);
}

const CHAIN: &str = "prompt: make a storyboard image and animate it with sound\ncalls:\n";

fn image_call(out: &str) -> String {
    format!(
        "  - tool: nanobanana_image_generation\n    arguments: {{prompt: a cafe}}\n    output: {{content: [{{type: resource_link, uri: \"{out}\"}}]}}\n"
    )
}

#[test]
fn grounded_reference_is_clean() {
    let s = suite("narrative");
    let y = format!(
        "{CHAIN}{}  - tool: omni_video_generation\n    arguments: {{prompt: go, images: [\"gs://b/img.png\"]}}\n",
        image_call("gs://b/img.png")
    );
    let flow = run(&s, &y);
    assert!(flow.findings.is_empty(), "{:#?}", flow.findings);
    assert_eq!(flow.calls[1].references[0].origin, Some(Origin::Call(0)));
    assert!(flow.grounded_at("gs://b/img.png", 1, 0));
    assert!(!flow.grounded_at("gs://b/img.png", 0, 0));
}

#[test]
fn hallucinated_reference() {
    let s = suite("narrative");
    let y = format!(
        "{CHAIN}{}  - tool: omni_video_generation\n    arguments: {{prompt: go, images: [\"gs://b/storyboard.png\"]}}\n",
        image_call("gs://b/img.png")
    );
    let flow = run(&s, &y);
    assert_eq!(codes(&flow), [("flow.unknown_reference", Some(1))]);
    assert_eq!(flow.findings[0].pointer, "/images/0");
    assert!(flow.calls[1].failed);
}

#[test]
fn prompt_mentions_ground_references() {
    let s = suite("narrative");
    let y = "prompt: animate gs://b/mine.png please\ncalls:\n  - tool: omni_video_generation\n    arguments: {prompt: go, images: [\"gs://b/mine.png\"]}\n";
    assert!(run(&s, y).findings.is_empty());
}

#[test]
fn use_before_produce_names_the_producer() {
    let s = suite("narrative");
    let y = format!(
        "{CHAIN}  - tool: omni_video_generation\n    arguments: {{prompt: go, images: [\"gs://b/img.png\"]}}\n{}",
        image_call("gs://b/img.png")
    );
    let flow = run(&s, &y);
    assert_eq!(codes(&flow), [("flow.use_before_produce", Some(0))]);
    assert!(
        flow.findings[0]
            .message
            .contains("call 2 (`nanobanana_image_generation`)"),
        "{}",
        flow.findings[0].message
    );
}

#[test]
fn outputs_of_failed_calls_do_not_exist() {
    let s = suite("narrative");
    let failed = "  - tool: nanobanana_image_generation\n    arguments: {prompt: a cafe}\n    output: {isError: true, content: [{type: text, text: \"gs://b/img.png could not be generated\"}]}\n";
    let y = format!(
        "{CHAIN}{failed}  - tool: omni_video_generation\n    arguments: {{prompt: go, images: [\"gs://b/img.png\"]}}\n"
    );
    let flow = run(&s, &y);
    assert!(flow.calls[0].failed);
    assert_eq!(codes(&flow), [("flow.failed_dependency", Some(1))]);
}

#[test]
fn identical_repeat_is_redundant() {
    let s = suite("narrative");
    let y = format!(
        "{CHAIN}{}{}",
        image_call("gs://b/1.png"),
        image_call("gs://b/2.png")
    );
    assert_eq!(codes(&run(&s, &y)), [("flow.redundant_call", Some(1))]);
}

/// Calls are the same call when their arguments are equal however they are written (keys in
/// another order, block or flow style), and not when one value differs, if only in its kind
/// (`1` and `1.0`, as `serde_json`'s `==` has them).
#[test]
fn a_repeat_is_the_same_arguments_however_written() {
    let s = suite("narrative");
    let call = |args: &str, out: &str| {
        format!(
            "  - tool: nanobanana_image_generation\n    arguments: {args}\n    output: {{content: [{{type: resource_link, uri: \"{out}\"}}]}}\n"
        )
    };
    let first = call("{prompt: a cafe, seed: 1}", "gs://b/1.png");
    let again = call("\n      seed: 1\n      prompt: a cafe", "gs://b/2.png");
    let y = format!("{CHAIN}{first}{again}");
    assert_eq!(codes(&run(&s, &y)), [("flow.redundant_call", Some(1))]);
    for other in [
        "{prompt: a cafe, seed: 1.0}",
        "{prompt: a cafe, seed: 2}",
        "{prompt: a cafe}",
    ] {
        let y = format!("{CHAIN}{first}{}", call(other, "gs://b/2.png"));
        assert_eq!(codes(&run(&s, &y)), [], "{other}");
    }
}

#[test]
fn soundtrack_for_a_video_with_sound_is_redundant_unless_asked() {
    let s = suite("narrative");
    let calls = "  - tool: omni_video_generation\n    arguments: {prompt: a dancer}\n    output: {content: [{type: resource_link, uri: \"gs://b/v.mp4\"}]}\n  - tool: lyria_generate_music\n    arguments: {prompt: beats}\n    output: {content: [{type: resource_link, uri: \"gs://b/a.wav\"}]}\n  - tool: ffmpeg_combine_audio_and_video\n    arguments: {input_video_uri: \"gs://b/v.mp4\", input_audio_uri: \"gs://b/a.wav\"}\n";
    let unasked = format!("prompt: a video of a dancer with street sounds\ncalls:\n{calls}");
    let flow = run(&s, &unasked);
    assert_eq!(codes(&flow), [("flow.redundant_call", Some(1))]);
    assert!(
        flow.findings[0].message.contains("already carries audio"),
        "{}",
        flow.findings[0].message
    );
    let asked = format!(
        "prompt: a video of a dancer, with an original music track mixed in\ncalls:\n{calls}"
    );
    assert!(run(&s, &asked).findings.is_empty());
}

#[test]
fn destinations_are_not_references_without_a_matrix() {
    assert!(
        looks_like_input("image_uri")
            && looks_like_input("input_media_uris")
            && looks_like_input("images")
    );
    assert!(
        !looks_like_input("gcs_bucket_uri")
            && !looks_like_input("output_gcs_bucket")
            && !looks_like_input("output_local_dir")
    );
}

#[test]
fn ids_printed_by_a_tool_are_grounded() {
    let s = suite("narrative");
    // ffmpeg_get_media_info takes `input_media_uri`; an object name printed by an earlier call
    // (not a URI) is still a value the agent saw.
    let y = "prompt: check the mix\ncalls:\n  - tool: lyria_generate_music\n    arguments: {prompt: beats}\n    output: {content: [{type: text, text: \"Saved object lyria_output_Ab3xYz9Q in the bucket\"}]}\n  - tool: ffmpeg_get_media_info\n    arguments: {input_media_uri: lyria_output_Ab3xYz9Q}\n  - tool: ffmpeg_get_media_info\n    arguments: {input_media_uri: lyria_output_Zz9}\n";
    assert_eq!(codes(&run(&s, y)), [("flow.unknown_reference", Some(2))]);
}

#[test]
fn scenario_artifacts_are_grounded() {
    let s = suite("narrative");
    let h = crate::harness::Harness::from_source(SourceFile::from_text(
        "harnesses/x.yaml",
        "scenarios:\n  - id: s\n    artifacts: [\"gs://b/brand/logo.png\"]\n    turns:\n      - prompt: put our logo on the clip\n",
    ))
    .unwrap();
    let t = Transcript::from_source(
        SourceFile::from_text("t.yaml", "scenario: s\ncalls:\n  - tool: ffmpeg_overlay_image_on_video\n    arguments: {input_video_uri: \"gs://b/clip.mp4\", input_image_uri: \"gs://b/brand/logo.png\"}\n"),
        "t".into(),
    )
    .unwrap();
    let flow = analyze(&t, h.scenario("s"), &s.linter, &[false]);
    assert_eq!(
        codes(&flow),
        [("flow.unknown_reference", Some(0))],
        "the clip is unknown, the logo is declared"
    );
    assert_eq!(flow.findings[0].pointer, "/input_video_uri");
}

/// Issue 17's compositions, each deterministic: a path joined with one `/`, a URL joined with
/// an id, trailing slashes trimmed, a `file://` URI read as its path, a listed name written
/// `./name` (git's and a shell's same file), a path spelt with `/./` or `//` inside (the same
/// path to a file system, as the `path` policy compares it); nothing else.
#[test]
fn composed_references() {
    let output = serde_json::json!({"content": [{"type": "text", "text": "[FILE] app.toml\n[DIR] src\nitem 8f3a2c created"}]});
    let mut g = Ground::default();
    g.push(
        Origin::Prompt(0),
        Lazy::new(Raw::Prompt(
            "Work in /srv/app/ and https://api.example.com/v1/items.",
        )),
    );
    g.push(Origin::Call(0), Lazy::new(Raw::Output(&output)));
    for grounded in [
        "/srv/app/app.toml",
        "/srv/app//app.toml",
        "/srv/app/src",
        "file:///srv/app/app.toml",
        "https://api.example.com/v1/items/8f3a2c",
        "/srv/app/",
        "./app.toml",
        ".//app.toml",
        "././app.toml",
        "/srv/./app/app.toml",
        "/srv/app/./src",
    ] {
        assert!(g.origin_of(grounded).is_some(), "{grounded}");
    }
    for not in [
        "/srv/app/config.toml",
        "/srv/other/app.toml",
        "https://api.example.com/v1/items/8f3a2d",
        "/srv/app/app.toml.bak",
        "/srv/app/pp.toml",
        "./config.toml",
        "/srv/./other/app.toml",
        ".//config.toml",
        "./",
    ] {
        assert!(g.origin_of(not).is_none(), "{not}");
    }
    // The name came from call 0's listing.
    assert_eq!(g.origin_of("/srv/app/app.toml"), Some(Origin::Call(0)));
}

/// A listed name joins the folder a source names, not a parent of it: the notes folder's
/// `retro.md` under `/srv/project/notes`, not under `/srv/project` (a blind review's case: the
/// project's root with the notes' file name, a file nobody listed) nor the bucket of another
/// object's path.
#[test]
fn a_listed_name_joins_the_folder_named_not_its_parent() {
    let listing = serde_json::json!({"content": [{"type": "text", "text": "[FILE] retro.md\nAudio saved to: vo/take.wav"}]});
    let mut g = Ground::default();
    g.push(
        Origin::Prompt(0),
        Lazy::new(Raw::Prompt(
            "Summarise the retro in /srv/project/notes. Lay it over gs://bucket/in/lamp.mp4.",
        )),
    );
    g.push(Origin::Call(0), Lazy::new(Raw::Output(&listing)));
    assert_eq!(
        g.origin_of("/srv/project/notes/retro.md"),
        Some(Origin::Call(0))
    );
    for not in [
        "/srv/project/retro.md",
        "/srv/retro.md",
        "gs://bucket/vo/take.wav",
        "gs://bucket/in/vo/take.wav",
    ] {
        assert_eq!(g.origin_of(not), None, "{not}");
    }
    // Named whole (here with a trailing slash, there ending a sentence), a folder takes it.
    let mut g = Ground::default();
    g.push(
        Origin::Prompt(0),
        Lazy::new(Raw::Prompt(
            "Work in /srv/project/ today. Or in gs://bucket.",
        )),
    );
    g.push(Origin::Call(0), Lazy::new(Raw::Output(&listing)));
    for grounded in ["/srv/project/retro.md", "gs://bucket/vo/take.wav"] {
        assert_eq!(g.origin_of(grounded), Some(Origin::Call(0)), "{grounded}");
    }
}

/// JSON inside text content gives its values; a name is a whole word, not a piece of a longer
/// one.
#[test]
fn sources_read_json_text_and_whole_words() {
    let s = Source::of_output(
        &serde_json::json!({"content": [{"type": "text", "text": "{\"entities\": [{\"name\": \"Ada\"}]}"}]}),
    );
    assert!(s.values.contains("Ada"));
    let t = Source::of_text("Saved notes.txt. Also notes.txt.bak");
    assert!(t.lists("notes.txt"));
    assert!(!t.lists("otes.txt"));
    let u = Source::of_text("see gs://b/dir/x.png");
    assert!(!u.lists("b/dir"), "a piece of a longer path");
}

/// The index of earlier outputs passes over no output that produces a value: for every value
/// below (whole names, names inside longer ones, paths and the names they end in, a sentence's
/// full stop, words in other cases, names without a letter or digit) the outputs it offers
/// say what reading every output says, and it offers fewer where the words tell.
#[test]
fn the_outputs_index_finds_every_output_that_produces_a_value() {
    let texts = [
        "[FILE] notes.txt\n[DIR] docs",
        "Saved ~/project/docs/a.md. Done.",
        "Created Note 10 and Note 108; see report-2024.pdf",
        r#"{"entities": [{"name": "Ada Lovelace", "id": 1003}]}"#,
        "ÉCOLE école 東京/地図.png",
        "id: abc_def-9 / path: /srv/data/x.csv",
        "-- / .",
        "",
    ];
    let values = [
        "notes.txt",
        "notes",
        "docs",
        "txt",
        "docs/a.md",
        "a.md",
        "/project/docs/a.md",
        "~/project/docs/a.md",
        "project",
        "Done",
        "Note 10",
        "Note 1",
        "Note 108",
        "10",
        "report-2024.pdf",
        "report",
        "2024",
        "Ada Lovelace",
        "Ada",
        "1003",
        "100",
        "école",
        "ÉCOLE",
        "地図.png",
        "東京/地図.png",
        "abc_def-9",
        "abc",
        "def-9",
        "/srv/data/x.csv",
        "x.csv",
        "data/x.csv",
        "file:///srv/data/x.csv",
        "-",
        "/",
        ".",
        "",
        "--",
        "nothing",
    ];
    let mut outputs = Outputs::default();
    for text in texts {
        outputs.push(Earlier {
            output: Source::of_output(
                &serde_json::json!({"content": [{"type": "text", "text": text}]}),
            ),
            given: Source::default(),
            branch: None,
        });
    }
    let ground = Ground::default();
    let (mut produced, mut spared) = (0, 0);
    for value in values {
        let every = outputs
            .all
            .iter()
            .filter(|e| e.output.produces(value, &ground))
            .count();
        let offered: Vec<&Earlier> = outputs.may_produce(value).collect();
        let found = offered
            .iter()
            .filter(|e| e.output.produces(value, &ground))
            .count();
        assert_eq!(found, every, "{value:?}");
        produced += every;
        spared += outputs.all.len() - offered.len();
    }
    assert!(produced >= 25, "{produced} productions");
    assert!(spared >= 200, "{spared} outputs not read");
}

/// A source asked often answers from the index of its words what reading its text answers:
/// a value printed anywhere in it (`gives`) and a name printed whole (`lists`), for values
/// whose words it lacks, has, or has only as parts of longer words.
#[test]
fn a_sources_word_index_answers_as_reading_its_text() {
    let texts = [
        "Create these notes and tag each: Note 0 tagged t0; Note 10 tagged t10.",
        "[FILE] notes.txt\n[DIR] docs\nSaved ~/project/docs/a.md. Done.",
        "see https://notes.example/n/00005 and report-2024.pdf; ÉCOLE 東京/地図.png",
        "",
    ];
    let values = [
        "Note 10",
        "Note 1",
        "ote 10",
        "tagged t1",
        "d t10",
        "notes",
        "notes.txt",
        "txt",
        "docs/a.md",
        "/project/docs/a.md",
        "project/docs",
        "https://notes.example/n/00005",
        "notes.example/n",
        "example/n/0000",
        "https://notes.example/n/00006",
        "report-2024",
        "port-2024.p",
        "ÉCOLE 東京",
        "東京/地図.png",
        "地図",
        "CO",
        "-",
        "a",
        "Done.",
        "",
    ];
    let (mut answered, mut spared) = (0, 0);
    for text in texts {
        let asked = Source::of_text(text);
        // Past the searches a source answers by reading: its words indexed.
        for _ in 0..=Source::SEARCHES {
            asked.gives("warm up");
        }
        assert!(asked.printed.get().is_some());
        for value in values {
            for (what, indexed, read) in [
                (
                    "gives",
                    asked.gives(value),
                    Source::of_text(text).gives(value),
                ),
                (
                    "lists",
                    asked.lists(value),
                    Source::of_text(text).lists(value),
                ),
            ] {
                assert_eq!(indexed, read, "{what} {value:?} in {text:?}");
                answered += usize::from(read);
            }
            spared += usize::from(!asked.may_print(value, true))
                + usize::from(!asked.may_print(value, false));
        }
    }
    assert!(
        answered >= 20 && spared >= 40,
        "{answered} found, {spared} spared"
    );
}

/// A prompt names a SQL table in the singular or the plural ("each loan" grounds `loans`), but
/// a doubled `s` is a typo, not a plural: `loanss` stays unknown.
#[test]
fn a_prompts_plural_grounds_a_table_but_not_a_doubled_s() {
    let mut g = Ground::default();
    g.push(
        Origin::Prompt(0),
        Lazy::new(Raw::Prompt("How many loans has each member taken out?")),
    );
    for grounded in ["loans", "loan", "members", "member"] {
        assert_eq!(
            g.sql_origin(grounded),
            Some(Origin::Prompt(0)),
            "{grounded}"
        );
    }
    for not in ["loanss", "memberss", "loaned"] {
        assert_eq!(g.sql_origin(not), None, "{not}");
    }
}
