//! Must-reject mutants of a real `tools/list` capture (issue 18, item 13: 228 of 300 got no
//! line:column, and under `lint` no file): every one is refused with an error at the line of
//! what the mutant broke, through the library and through `lint`.

use agent_seer::lint::Linter;
use agent_seer::source::SourceFile;
use agent_seer::spec::ToolSet;
use serde_json::{Value, json};

use super::*;

/// One mutant: the pretty-printed document, and the text whose line the error must be on.
struct Mutant {
    name: String,
    text: String,
    line_with: String,
}

/// The capture every mutant starts from: veo's tools, as `inspect` saved them, in a
/// tools/list result (`{"tools": [...]}`).
fn capture() -> Value {
    let text = std::fs::read_to_string(repo().join("harnesses/veo.tools.json")).unwrap();
    json!({"tools": serde_json::from_str::<Value>(&text).unwrap()})
}

fn pretty(v: &Value) -> String {
    serde_json::to_string_pretty(v).unwrap() + "\n"
}

/// `"key": value` as the pretty printer writes it on one line (scalars and empty containers).
fn member(key: &str, value: &Value) -> String {
    format!("{}: {}", json!(key), serde_json::to_string(value).unwrap())
}

/// Sets the member `at` names, adding it when the object has none.
fn put(doc: &mut Value, at: &str, value: Value) {
    let (parent, key) = at.rsplit_once('/').unwrap();
    let key = key.replace("~1", "/").replace("~0", "~");
    match doc.pointer_mut(parent) {
        Some(Value::Object(o)) => {
            o.insert(key, value);
        }
        _ => panic!("{at}"),
    }
}

fn mutants() -> Vec<Mutant> {
    let base = capture();
    let tools = base["tools"].as_array().unwrap().clone();
    let mut out = Vec::new();
    let mut edited = Vec::new();
    let mut set = |name: String, at: &str, key: &str, value: Value| {
        let mut doc = base.clone();
        put(&mut doc, at, value.clone());
        edited.push(Mutant {
            name,
            text: pretty(&doc),
            line_with: member(key, &value),
        });
    };
    let bad_strings = || {
        [
            json!(777777),
            json!(null),
            json!(true),
            json!([]),
            json!({}),
        ]
    };
    for (i, tool) in tools.iter().enumerate() {
        let t = format!("/tools/{i}");
        let n = tool["name"].as_str().unwrap();
        for v in bad_strings().into_iter().chain([json!("")]) {
            set(format!("{n}: name {v}"), &format!("{t}/name"), "name", v);
        }
        for v in [json!(5), json!(true), json!([]), json!({})] {
            let at = format!("{t}/description");
            set(format!("{n}: description {v}"), &at, "description", v);
        }
        for v in [json!([]), json!("object"), json!(5), json!(null)] {
            let at = format!("{t}/inputSchema");
            set(format!("{n}: inputSchema {v}"), &at, "inputSchema", v);
        }
        let s = format!("{t}/inputSchema");
        for v in [json!("objec"), json!(5), json!([])] {
            set(format!("{n}: type {v}"), &format!("{s}/type"), "type", v);
        }
        for v in [json!([]), json!("x"), json!(5)] {
            let at = format!("{s}/properties");
            set(format!("{n}: properties {v}"), &at, "properties", v);
        }
        for v in [json!("prompt"), json!({})] {
            let at = format!("{s}/required");
            set(format!("{n}: required {v}"), &at, "required", v);
        }
        // A wrong element: the error is at the element, on a line of its own.
        let mut doc = base.clone();
        put(&mut doc, &format!("{s}/required"), json!([7777]));
        out.push(Mutant {
            name: format!("{n}: required [7777]"),
            text: pretty(&doc),
            line_with: "7777".into(),
        });
        set(
            format!("{n}: additionalProperties"),
            &format!("{s}/additionalProperties"),
            "additionalProperties",
            json!("no"),
        );
        for (p, schema) in tool["inputSchema"]["properties"].as_object().unwrap() {
            let at = |k: &str| format!("{s}/properties/{p}/{k}");
            let keyword = |k: &str, v: Value| (format!("{n}.{p}: {k} {v}"), at(k), k.to_owned(), v);
            let mut edits = vec![
                keyword("type", json!("strin")),
                keyword("type", json!(7)),
                keyword("enum", json!("x")),
                keyword("minimum", json!("0")),
                keyword("maximum", json!([])),
                keyword("minLength", json!(-1)),
                keyword("pattern", json!("(unclosed")),
                keyword("format", json!(5)),
                keyword("items", json!(5)),
                keyword("$ref", json!("#/$defs/nowhere")),
            ];
            if schema.get("description").is_some() {
                edits.push(keyword("description", json!(5)));
            }
            for (name, at, key, v) in edits {
                set(name, &at, &key, v);
            }
        }
        // A key the capture has twice, the second time further down the tool.
        let mut text = pretty(&base);
        let needle = format!("\"name\": {}", json!(n));
        let start = text.find(&needle).unwrap();
        text.insert_str(start, "\"name\": \"dup\", ");
        out.push(Mutant {
            name: format!("{n}: duplicate key"),
            text,
            line_with: needle,
        });
    }
    // Two tools with one name: the error is at the second one's.
    let mut doc = base.clone();
    let first = tools[0]["name"].clone();
    doc["tools"][1]["name"] = first.clone();
    out.push(Mutant {
        name: "duplicate tool name".into(),
        text: pretty(&doc),
        line_with: member("name", &first),
    });
    for v in [json!({}), json!("x"), json!(5)] {
        let mut doc = base.clone();
        doc["tools"] = v.clone();
        out.push(Mutant {
            name: format!("tools {v}"),
            text: pretty(&doc),
            line_with: if v == json!({}) {
                "{".into()
            } else {
                member("tools", &v)
            },
        });
    }
    edited.extend(out);
    edited
}

/// The error a mutant gets, from the spec loader or the schema compiler, located.
fn rejection(file: &SourceFile) -> Option<agent_seer::source::SourceError> {
    let spec = match ToolSet::from_source(file) {
        Err(e) => return Some(e),
        Ok(spec) => spec,
    };
    match Linter::new(&spec, Vec::new()) {
        Ok(_) => None,
        Err(e) => Some(
            e.in_file(&spec)
                .unwrap_or_else(|| file.error(e.to_string())),
        ),
    }
}

#[test]
fn every_mutant_is_refused_at_the_line_it_broke() {
    let mutants = mutants();
    assert!(mutants.len() >= 300, "{} mutants", mutants.len());
    let mut wrong = Vec::new();
    for m in &mutants {
        let file = SourceFile::from_text("veo.tools.json", m.text.clone());
        let Some(e) = rejection(&file) else {
            wrong.push(format!("{}: accepted", m.name));
            continue;
        };
        let Some((line, _)) = e.line else {
            wrong.push(format!("{}: no line:column: {e}", m.name));
            continue;
        };
        let quoted = m.text.lines().nth(line as usize - 1).unwrap_or("");
        if !quoted.contains(&m.line_with) {
            wrong.push(format!(
                "{}: at line {line} `{}`, not the line with `{}`: {e}",
                m.name,
                quoted.trim(),
                m.line_with
            ));
        }
    }
    assert!(
        wrong.is_empty(),
        "{} of {} mutants:\n{}",
        wrong.len(),
        mutants.len(),
        wrong.join("\n")
    );
}

/// Through `lint`, the error names the spec file with its line and column.
#[test]
fn lint_names_the_spec_file_of_a_broken_schema() {
    let mut doc = capture();
    doc["tools"][0]["inputSchema"]["properties"]["prompt"]["type"] = json!("strin");
    let dir = project(&[("tools.json", &pretty(&doc))]);
    let o = run_in(
        dir.path(),
        &["lint", "--spec", "tools.json", "-"],
        Some("{\"tool\": \"veo_t2v\", \"arguments\": {}}\n"),
    );
    assert_eq!(o.status.code(), Some(2));
    insta::assert_snapshot!(stderr(&o), @r#"
    error: tool `veo_extend_video` has an invalid input schema: "strin" is not valid under any of the schemas listed in the 'anyOf' keyword
      --> tools.json:49:13
       |
    49 |             "type": "strin"
       |             ^
    "#);
}
