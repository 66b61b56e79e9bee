//! The published JSON Schemas print, and every shipped file validates against its schema (so
//! the schema and the loader agree).

use super::*;

fn schema(kind: &str) -> jsonschema::Validator {
    let o = run(&["schema", kind], None);
    assert_eq!(o.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("schema is JSON");
    jsonschema::draft202012::options()
        .should_validate_formats(true)
        .build(&v)
        .expect("schema compiles")
}

fn yaml_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(yaml_files(&p));
        } else if p.extension().is_some_and(|e| e == "yaml") {
            out.push(p);
        }
    }
    out.sort();
    out
}

fn check_all(kind: &str, dir: &str) -> usize {
    let v = schema(kind);
    let files = yaml_files(&repo().join(dir));
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        let doc: serde_json::Value = serde_saphyr::from_str(&text).unwrap();
        let errors: Vec<String> = v
            .iter_errors(&doc)
            .map(|e| format!("{} at {}", e, e.instance_path().as_str()))
            .collect();
        assert!(
            errors.is_empty(),
            "{} does not match the {kind} schema:\n{}",
            f.display(),
            errors.join("\n")
        );
    }
    files.len()
}

#[test]
fn shipped_matrices_match_the_schema() {
    assert_eq!(check_all("capabilities", "capabilities"), 14);
}

#[test]
fn shipped_harnesses_match_the_schema() {
    assert_eq!(check_all("harness", "harnesses"), 12);
}

#[test]
fn shipped_transcripts_match_the_schema() {
    // 212 YAML transcripts and the 8 label files of recorded runs (transcripts without calls).
    assert_eq!(check_all("transcript", "transcripts"), 220);
}

#[test]
fn the_schema_rejects_what_the_loader_rejects() {
    let v = schema("capabilities");
    let bad: serde_json::Value =
        serde_saphyr::from_str(&TINY_CAPS.replace("one_of", "oen_of")).unwrap();
    assert!(!v.is_valid(&bad));
    let v = schema("transcript");
    let bad: serde_json::Value =
        serde_saphyr::from_str("scenario: x\ncalls:\n  - parameters: {}\n").unwrap();
    assert!(!v.is_valid(&bad), "a call without a name");
}
