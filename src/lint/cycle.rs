//! `$ref` cycles that apply a schema to the same value again, found before a schema is used.
//!
//! JSON Schema 2020-12 (Core §9.4.1, "Guarding Against Infinite Recursion") leaves a schema that
//! re-enters itself without descending into the instance undefined. The `jsonschema` crate's
//! cycle guard answers "valid" on re-entry, so `#/$defs/a` → `#/$defs/b` → `#/$defs/a` (or
//! `anyOf: [{$ref: "#"}]`) accepts any value where it is used (issue 18, item 10). A recursive
//! schema that descends (a tree's `items: {$ref: "#/$defs/node"}`) is fine: each round checks a
//! smaller value.
//!
//! [`in_place_cycle`] walks every subschema, follows the applicators that keep the instance
//! (`$ref`, `$dynamicRef`, `$recursiveRef`, `allOf`, `anyOf`, `oneOf`, `not`, `if`, `then`,
//! `else`, `dependentSchemas`) and returns the first cycle. Only references inside the document
//! resolve (`#`, `#/pointer`, `#anchor`, and an embedded `$id`); remote ones are never fetched.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use crate::source::json::child;

/// Keywords whose value is one subschema, applied to a part of the instance or to all of it.
const ONE: &[&str] = &[
    "additionalProperties",
    "unevaluatedProperties",
    "propertyNames",
    "items",
    "additionalItems",
    "unevaluatedItems",
    "contains",
    "contentSchema",
    "not",
    "if",
    "then",
    "else",
];
/// Keywords whose value is an array of subschemas.
const MANY: &[&str] = &["allOf", "anyOf", "oneOf", "prefixItems", "items"];
/// Keywords whose value maps names to subschemas.
const MAP: &[&str] = &[
    "properties",
    "patternProperties",
    "$defs",
    "definitions",
    "dependentSchemas",
    "dependencies",
];
/// Of those, the applicators that apply to the instance itself.
const IN_PLACE_ONE: &[&str] = &["not", "if", "then", "else"];
const IN_PLACE_MANY: &[&str] = &["allOf", "anyOf", "oneOf"];
const IN_PLACE_MAP: &[&str] = &["dependentSchemas", "dependencies"];
/// The keywords that refer to another schema.
pub(crate) const REFS: &[&str] = &["$ref", "$dynamicRef", "$recursiveRef"];

/// A cycle of in-place applicators (through at least one reference), as the subschemas on it
/// from the first back to itself (`["#/$defs/a", "#/$defs/b", "#/$defs/a"]`), or `None`.
pub(super) fn in_place_cycle(schema: &Value) -> Option<Vec<String>> {
    let doc = Doc::new(schema);
    let mut state = BTreeMap::new();
    for start in doc.nodes.keys() {
        if let Some(c) = doc.visit(start, &mut state) {
            return Some(c);
        }
    }
    None
}

/// The schema document: every subschema by pointer, and what references resolve to.
struct Doc<'a> {
    nodes: BTreeMap<String, &'a Value>,
    /// `$id` (as written, fragment dropped) → the pointer of its resource.
    ids: BTreeMap<String, String>,
    /// The pointers of those resources.
    resources: BTreeSet<String>,
    /// (resource pointer, anchor name) → pointer.
    anchors: BTreeMap<(String, String), String>,
}

#[derive(Clone, Copy, PartialEq)]
enum Seen {
    OnPath,
    Done,
}

impl<'a> Doc<'a> {
    fn new(root: &'a Value) -> Self {
        let mut doc = Doc {
            nodes: BTreeMap::new(),
            ids: BTreeMap::new(),
            resources: BTreeSet::new(),
            anchors: BTreeMap::new(),
        };
        doc.walk(root, String::new(), String::new());
        doc
    }

    fn walk(&mut self, v: &'a Value, ptr: String, resource: String) {
        let Value::Object(obj) = v else {
            if v.is_boolean() {
                self.nodes.insert(ptr, v);
            }
            return;
        };
        let mut resource = resource;
        if let Some(id) = obj.get("$id").and_then(Value::as_str) {
            let (base, fragment) = id.split_once('#').unwrap_or((id, ""));
            if !base.is_empty() {
                resource = ptr.clone();
                self.ids.insert(base.to_owned(), ptr.clone());
                self.resources.insert(ptr.clone());
            }
            // Draft 6/7 anchors: `$id: "#name"`.
            if !fragment.is_empty() && !fragment.starts_with('/') {
                self.anchors
                    .insert((resource.clone(), fragment.to_owned()), ptr.clone());
            }
        }
        for key in ["$anchor", "$dynamicAnchor"] {
            if let Some(a) = obj.get(key).and_then(Value::as_str) {
                self.anchors
                    .insert((resource.clone(), a.to_owned()), ptr.clone());
            }
        }
        self.nodes.insert(ptr.clone(), v);
        for (key, value) in obj {
            let at = child(&ptr, key);
            if ONE.contains(&key.as_str()) && (value.is_object() || value.is_boolean()) {
                self.walk(value, at.clone(), resource.clone());
            }
            if MANY.contains(&key.as_str())
                && let Value::Array(items) = value
            {
                for (i, item) in items.iter().enumerate() {
                    self.walk(item, format!("{at}/{i}"), resource.clone());
                }
            }
            if MAP.contains(&key.as_str())
                && let Value::Object(m) = value
            {
                for (name, item) in m {
                    self.walk(item, child(&at, name), resource.clone());
                }
            }
        }
    }

    /// The resource a node belongs to: its nearest ancestor (or itself) with a base `$id`.
    fn resource_of(&self, ptr: &str) -> String {
        let ancestors = ptr.match_indices('/').map(|(i, _)| &ptr[..i]);
        ancestors
            .chain([ptr])
            .rfind(|p| self.resources.contains(*p))
            .unwrap_or_default()
            .to_owned()
    }

    fn resolve(&self, from: &str, reference: &str) -> Option<String> {
        let (base, fragment) = reference.split_once('#').unwrap_or((reference, ""));
        let resource = if base.is_empty() {
            self.resource_of(from)
        } else {
            self.ids.get(base)?.clone()
        };
        let fragment = percent_decoded(fragment);
        let target = if fragment.is_empty() || fragment.starts_with('/') {
            format!("{resource}{fragment}")
        } else {
            self.anchors.get(&(resource, fragment))?.clone()
        };
        self.nodes.contains_key(&target).then_some(target)
    }

    fn edges(&self, ptr: &str) -> Vec<String> {
        let Some(Value::Object(obj)) = self.nodes.get(ptr) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for key in REFS {
            if let Some(r) = obj.get(*key).and_then(Value::as_str)
                && let Some(t) = self.resolve(ptr, r)
            {
                out.push(t);
            }
        }
        for (key, value) in obj.iter() {
            let at = child(ptr, key);
            match value {
                _ if IN_PLACE_ONE.contains(&key.as_str()) => out.push(at),
                Value::Array(items) if IN_PLACE_MANY.contains(&key.as_str()) => {
                    out.extend((0..items.len()).map(|i| format!("{at}/{i}")));
                }
                Value::Object(m) if IN_PLACE_MAP.contains(&key.as_str()) => {
                    out.extend(m.keys().map(|k| child(&at, k)));
                }
                _ => {}
            }
        }
        out.retain(|t| self.nodes.contains_key(t));
        out
    }

    /// Depth-first search from `start`, iterative (a chain of ten thousand `$defs` must not
    /// overflow the stack); `state` carries over between starts.
    fn visit(&self, start: &str, state: &mut BTreeMap<String, Seen>) -> Option<Vec<String>> {
        if state.contains_key(start) {
            return None;
        }
        // The nodes on the current path, each with the edges still to follow.
        let mut stack: Vec<(String, std::vec::IntoIter<String>)> = Vec::new();
        state.insert(start.to_owned(), Seen::OnPath);
        stack.push((start.to_owned(), self.edges(start).into_iter()));
        while let Some((_, next)) = stack.last_mut() {
            let Some(node) = next.next() else {
                let (done, _) = stack.pop().expect("not empty");
                state.insert(done, Seen::Done);
                continue;
            };
            match state.get(&node) {
                Some(Seen::Done) => {}
                Some(Seen::OnPath) => {
                    let from = stack.iter().position(|(n, _)| *n == node)?;
                    let mut cycle: Vec<String> =
                        stack[from..].iter().map(|(p, _)| format!("#{p}")).collect();
                    cycle.push(format!("#{node}"));
                    return Some(cycle);
                }
                None => {
                    state.insert(node.clone(), Seen::OnPath);
                    let edges = self.edges(&node).into_iter();
                    stack.push((node, edges));
                }
            }
        }
        None
    }
}

/// A URI fragment's `%XX` escapes decoded (a JSON pointer in a `$ref` may be percent-encoded).
fn percent_decoded(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        if bytes[i] == b'%'
            && let (Some(h), Some(l)) = (
                bytes.get(i + 1).copied().and_then(hex),
                bytes.get(i + 2).copied().and_then(hex),
            )
        {
            out.push((h * 16 + l) as u8);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[rstest::rstest]
    #[case::two_defs(json!({"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}, "properties": {"x": {"$ref": "#/$defs/a"}}}), &["#/$defs/a", "#/$defs/b", "#/$defs/a"])]
    #[case::root(json!({"type": "object", "allOf": [{"$ref": "#"}]}), &["#", "#/allOf/0", "#"])]
    #[case::any_of_escape(json!({"$defs": {"a": {"anyOf": [{"type": "string"}, {"$ref": "#/$defs/a"}]}}, "$ref": "#/$defs/a"}), &["#/$defs/a", "#/$defs/a/anyOf/1", "#/$defs/a"])]
    #[case::anchor(json!({"$defs": {"a": {"$anchor": "A", "not": {"not": {"$ref": "#A"}}}}}), &["#/$defs/a", "#/$defs/a/not", "#/$defs/a/not/not", "#/$defs/a"])]
    #[case::draft7_definitions(json!({"definitions": {"a": {"$ref": "#/definitions/a"}}}), &["#/definitions/a", "#/definitions/a"])]
    #[case::percent_encoded(json!({"$defs": {"a b": {"$ref": "#/$defs/a%20b"}}}), &["#/$defs/a b", "#/$defs/a b"])]
    fn finds_in_place_cycles(#[case] schema: Value, #[case] want: &[&str]) {
        let got = in_place_cycle(&schema).expect("a cycle");
        assert_eq!(got, want);
    }

    #[rstest::rstest]
    #[case::tree(json!({"$defs": {"node": {"type": "object", "properties": {"children": {"type": "array", "items": {"$ref": "#/$defs/node"}}}}}, "$ref": "#/$defs/node"}))]
    #[case::chain(json!({"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"type": "string"}}, "properties": {"x": {"$ref": "#/$defs/a"}}}))]
    #[case::json_value(json!({"$defs": {"v": {"anyOf": [{"type": "string"}, {"type": "array", "items": {"$ref": "#/$defs/v"}}, {"type": "object", "additionalProperties": {"$ref": "#/$defs/v"}}]}}}))]
    #[case::ref_as_data(json!({"properties": {"$ref": {"const": {"$ref": "#"}}}, "default": {"allOf": [{"$ref": "#"}]}}))]
    #[case::remote(json!({"$ref": "https://example.com/s.json"}))]
    fn descending_or_acyclic_schemas_pass(#[case] schema: Value) {
        assert_eq!(in_place_cycle(&schema), None);
    }

    #[test]
    fn a_long_chain_does_not_overflow_the_stack() {
        let n = 20_000;
        let defs: serde_json::Map<String, Value> = (0..n)
            .map(|i| {
                let next = if i + 1 < n {
                    json!({"$ref": format!("#/$defs/a{}", i + 1)})
                } else {
                    json!({"$ref": "#/$defs/a0"})
                };
                (format!("a{i}"), next)
            })
            .collect();
        let cycle = in_place_cycle(&json!({"$defs": defs})).expect("a cycle");
        assert_eq!(cycle.len(), n + 1);
    }
}
