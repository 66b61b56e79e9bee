//! The formats' JSON Schemas (`schemas/*.schema.json`, what editors validate against) and the
//! loaders agree (issue 18, item 14): every shipped harness, transcript and capability matrix
//! is valid under its schema and loads; and of thousands of mutants of them — each text field
//! made a boolean or a 60-digit number, each member removed, an unknown member added — the
//! schema accepts exactly those the loader accepts.

use std::path::{Path, PathBuf};

use agent_seer::harness::{Harness, Transcript};
use agent_seer::source::SourceFile;
use agent_seer::spec::Capabilities;
use serde_json::{Value, json};

use super::*;

#[derive(Clone, Copy, Debug)]
enum Format {
    Harness,
    Transcript,
    Capabilities,
}

impl Format {
    fn schema(self) -> jsonschema::Validator {
        let name = match self {
            Format::Harness => "harness",
            Format::Transcript => "transcript",
            Format::Capabilities => "capabilities",
        };
        let text =
            std::fs::read_to_string(repo().join(format!("schemas/{name}.schema.json"))).unwrap();
        jsonschema::validator_for(&serde_json::from_str(&text).unwrap()).unwrap()
    }

    /// Whether the loader takes `text` as a file at `path` (its references resolve from there).
    fn loads(self, path: &Path, text: &str) -> Result<(), String> {
        let file = SourceFile::from_text(path, text);
        match self {
            Format::Harness => Harness::from_source(file).map(drop),
            Format::Transcript => Transcript::from_source(file, "t".into()).map(drop),
            Format::Capabilities => Capabilities::from_source(&file).map(drop),
        }
        .map_err(|e| e.to_string())
    }
}

/// The shipped files of each format.
fn samples() -> Vec<(Format, PathBuf)> {
    let mut out = Vec::new();
    let yaml = |dir: &Path| -> Vec<PathBuf> {
        let mut v: Vec<PathBuf> = walk(dir)
            .into_iter()
            .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
            .collect();
        v.sort();
        v
    };
    for p in yaml(&repo().join("harnesses")) {
        out.push((Format::Harness, p));
    }
    for p in yaml(&repo().join("transcripts")) {
        out.push((Format::Transcript, p));
    }
    for p in yaml(&repo().join("capabilities")) {
        out.push((Format::Capabilities, p));
    }
    out
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

/// The document as the schema sees it: YAML read into JSON values.
fn as_json(text: &str) -> Value {
    serde_saphyr::from_str(text).unwrap()
}

/// Members whose values are free-form JSON (tool arguments and outputs): their insides are
/// not the format's.
const FREE: &[&str] = &[
    "arguments",
    "parameters",
    "output",
    "mock_output",
    "structuredContent",
    "content",
    "tools",
    "match",
    "when",
];

/// Every mutant of `doc`: (what was done, the mutated document).
fn mutants(doc: &Value) -> Vec<(String, Value)> {
    let mut out = Vec::new();
    let mut paths = Vec::new();
    members(doc, String::new(), &mut paths);
    for (pointer, value) in paths {
        let (parent, key) = pointer.rsplit_once('/').unwrap();
        // A matrix's `models` is a map of names that rules elsewhere refer to (`when_absent`):
        // removing an entry breaks a cross-reference, which no JSON Schema can state.
        if !parent.ends_with("/models") {
            let mut removed = doc.clone();
            if let Some(Value::Object(o)) = removed.pointer_mut(parent) {
                o.remove(key);
            }
            out.push((format!("remove {pointer}"), removed));
        }
        if value.is_string() {
            for v in [
                json!(true),
                serde_json::from_str::<Value>(&"9".repeat(60)).unwrap(),
            ] {
                let mut changed = doc.clone();
                *changed.pointer_mut(&pointer).unwrap() = v.clone();
                out.push((format!("{pointer} = {v}"), changed));
            }
        }
        if value.is_object() {
            let mut added = doc.clone();
            added
                .pointer_mut(&pointer)
                .unwrap()
                .as_object_mut()
                .unwrap()
                .insert("zz_unknown".into(), json!(1));
            out.push((format!("{pointer}/zz_unknown = 1"), added));
        }
    }
    out
}

/// Every object member's pointer and value, outside the free-form members.
fn members(v: &Value, at: String, out: &mut Vec<(String, Value)>) {
    match v {
        Value::Object(o) => {
            for (k, child) in o {
                let p = format!("{at}/{}", k.replace('~', "~0").replace('/', "~1"));
                out.push((p.clone(), child.clone()));
                if !FREE.contains(&k.as_str()) {
                    members(child, p, out);
                }
            }
        }
        Value::Array(items) => {
            for (i, child) in items.iter().enumerate() {
                members(child, format!("{at}/{i}"), out);
            }
        }
        _ => {}
    }
}

#[test]
fn every_shipped_file_is_schema_valid_and_loads() {
    let mut wrong = Vec::new();
    for (format, path) in samples() {
        let text = std::fs::read_to_string(&path).unwrap();
        let doc = as_json(&text);
        let errors: Vec<String> = format
            .schema()
            .iter_errors(&doc)
            .map(|e| format!("{} {e}", e.instance_path()))
            .collect();
        if !errors.is_empty() {
            wrong.push(format!("{}: schema: {}", path.display(), errors.join("; ")));
        }
        if let Err(e) = format.loads(&path, &text) {
            wrong.push(format!("{}: loader: {e}", path.display()));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn schemas_and_loaders_agree_on_every_mutant() {
    let mut wrong = Vec::new();
    let mut total = 0;
    for (format, path) in samples() {
        let rel = path.strip_prefix(repo()).unwrap().display().to_string();
        let schema = format.schema();
        let doc = as_json(&std::fs::read_to_string(&path).unwrap());
        for (what, mutant) in mutants(&doc) {
            total += 1;
            let text = serde_json::to_string_pretty(&mutant).unwrap();
            let valid = schema.is_valid(&mutant);
            let loaded = format.loads(&path, &text);
            if valid != loaded.is_ok() {
                wrong.push(format!(
                    "{rel}: {what}: schema {}, loader {}",
                    if valid { "accepts" } else { "rejects" },
                    match &loaded {
                        Ok(()) => "accepts".to_owned(),
                        Err(e) => format!("rejects ({})", e.lines().next().unwrap_or("")),
                    }
                ));
            }
        }
    }
    assert!(total > 2000, "{total} mutants");
    assert!(
        wrong.is_empty(),
        "{} of {total} mutants:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}

/// `judge: { certify: { tpr, tnr } }`, which no shipped harness has: Lyria's harness with it
/// added, its mutants and out-of-range bars, the schema and the loader agreeing on each.
#[test]
fn schema_and_loader_agree_on_the_judge_certification_bar() {
    let path = repo().join("harnesses/lyria.yaml");
    let text = std::fs::read_to_string(&path).unwrap().replace(
        "suite: lyria\n",
        "suite: lyria\njudge: { certify: { tpr: 0.8, tnr: 0.75 } }\n",
    );
    let doc = as_json(&text);
    let schema = Format::Harness.schema();
    assert!(schema.is_valid(&doc));
    Format::Harness.loads(&path, &text).unwrap();
    let mut cases = mutants(&doc);
    cases.retain(|(what, _)| what.contains("/judge"));
    for v in [
        json!(1.5),
        json!(-0.1),
        // Not `"0.8"`: serde-saphyr reads a quoted number into an f64, here as for
        // `thresholds.pass` (a leniency of every numeric key, not this one's).
        json!(null),
        json!(true),
        json!(1),
    ] {
        let mut m = doc.clone();
        m["judge"]["certify"]["tpr"] = v.clone();
        cases.push((format!("/judge/certify/tpr = {v}"), m));
    }
    for v in [json!(null), json!({}), json!([])] {
        let mut m = doc.clone();
        m["judge"] = v.clone();
        cases.push((format!("/judge = {v}"), m.clone()));
        m["judge"] = json!({ "certify": v });
        cases.push((format!("/judge/certify = {v}"), m));
    }
    assert!(cases.len() >= 15, "{}", cases.len());
    let mut wrong = Vec::new();
    for (what, mutant) in cases {
        let text = serde_json::to_string_pretty(&mutant).unwrap();
        let valid = schema.is_valid(&mutant);
        let loaded = Format::Harness.loads(&path, &text);
        if valid != loaded.is_ok() {
            wrong.push(format!("{what}: schema {valid}, loader {loaded:?}"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
