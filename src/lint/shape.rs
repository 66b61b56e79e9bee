//! The input schema most tools have, checked without the general validator: an object of
//! named parameters, each of a JSON type (or a list of them), perhaps one of an `enum`, an
//! array's items of a type. [`Shape::of`] reads such a schema into one small table per tool;
//! [`Shape::admits`] walks a call's arguments against it once. Where it admits them, so does
//! the schema, so the general validator is not asked (its compiled tree of keywords, one per
//! tool, lies far apart in memory and is most of a call's lint). Where it does not, or a
//! schema has any other keyword, the validator decides and words the findings as before.

use serde_json::{Map, Value};

use crate::hash::order;

/// A tool's schema of the common shape: per parameter it declares, in key order (as the
/// linter's declared names), what its value must be.
#[derive(Debug)]
pub(super) struct Shape {
    params: Box<[Param]>,
    /// How many declared parameters are required (each once).
    required: usize,
}

#[derive(Debug)]
struct Param {
    /// The JSON types its value may have.
    types: Types,
    /// The types an array value's items may have (every type where the schema says nothing).
    items: Types,
    /// The values it must be one of, where the schema has an `enum`.
    one_of: Option<Box<[Value]>>,
    required: bool,
}

/// A set of JSON types, one bit each.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Types(u8);

impl Types {
    const NULL: u8 = 1;
    const BOOLEAN: u8 = 2;
    const INTEGER: u8 = 4;
    const NUMBER: u8 = 8;
    const STRING: u8 = 16;
    const ARRAY: u8 = 32;
    const OBJECT: u8 = 64;
    const ANY: Self = Self(127);

    /// The `type` keyword's value (absent: any type); `None` for a name JSON Schema does not
    /// have or a value of another form.
    fn of(ty: Option<&Value>) -> Option<Self> {
        let one = |name: &Value| {
            Some(match name.as_str()? {
                "null" => Self::NULL,
                "boolean" => Self::BOOLEAN,
                "integer" => Self::INTEGER,
                "number" => Self::NUMBER,
                "string" => Self::STRING,
                "array" => Self::ARRAY,
                "object" => Self::OBJECT,
                _ => return None,
            })
        };
        match ty {
            None => Some(Self::ANY),
            // Each name once (draft 2020-12's meta-schema: a list with a name twice does not
            // compile).
            Some(Value::Array(names)) if !names.is_empty() => names
                .iter()
                .try_fold(0, |bits, n| Some(bits | one(n).filter(|b| bits & b == 0)?))
                .map(Self),
            Some(name) => one(name).map(Self),
        }
    }

    /// Whether `v` is of one of the types. An integer is a number with no fraction; one
    /// written with a fraction (`2.0`) is not admitted as an integer here (drafts differ on
    /// it; the validator decides).
    fn admit(self, v: &Value) -> bool {
        let bit = match v {
            Value::Null => Self::NULL,
            Value::Bool(_) => Self::BOOLEAN,
            Value::Number(n) if n.is_f64() => Self::NUMBER,
            Value::Number(_) => Self::NUMBER | Self::INTEGER,
            Value::String(_) => Self::STRING,
            Value::Array(_) => Self::ARRAY,
            Value::Object(_) => Self::OBJECT,
        };
        self.0 & bit != 0
    }
}

/// Whether a keyword's value has the form the meta-schema gives it.
type Form = fn(&Value) -> bool;

/// Keywords that say nothing a value must be, and the form each has (draft 2020-12's
/// meta-schema: a schema with another form does not compile, and gets no shape).
const ANNOTATIONS: [(&str, Form); 8] = [
    ("description", Value::is_string),
    ("title", Value::is_string),
    ("$comment", Value::is_string),
    ("default", |_| true),
    ("examples", Value::is_array),
    ("deprecated", Value::is_boolean),
    ("readOnly", Value::is_boolean),
    ("writeOnly", Value::is_boolean),
];

/// Whether every keyword of `schema` is an annotation of its form or one of `also`.
fn only(schema: &Map<String, Value>, also: &[&str]) -> bool {
    schema.iter().all(|(k, v)| {
        also.contains(&k.as_str())
            || ANNOTATIONS
                .iter()
                .any(|(name, form)| *name == k.as_str() && form(v))
    })
}

impl Shape {
    /// The shape of a tool's input schema, when it is the common one: a `type` that admits
    /// objects (or none), `properties` of parameters with only `type`, `enum` and (for
    /// arrays) `items` of a `type`, `required` names it declares, `additionalProperties` true
    /// or false (which the check never needs: it admits no undeclared argument), every
    /// annotation of its form (such a schema always compiles). `None` for anything else — a
    /// `$ref`, a `format`, a bound, a pattern, a nested object's properties, a `$schema` —
    /// which the validator checks.
    pub(super) fn of(schema: &Value) -> Option<Self> {
        let root = schema.as_object()?;
        let objects = root
            .get("type")
            .is_none_or(|t| Types::of(Some(t)).is_some_and(|t| t.0 & Types::OBJECT != 0));
        let extras = root
            .get("additionalProperties")
            .is_none_or(Value::is_boolean);
        if !objects
            || !extras
            || !only(
                root,
                &["type", "properties", "required", "additionalProperties"],
            )
        {
            return None;
        }
        let properties = root.get("properties")?.as_object()?;
        let mut params: Vec<Param> = properties.values().map(Param::of).collect::<Option<_>>()?;
        // Each required name one that `properties` declares, and named once (the
        // meta-schema's rule).
        let declared: Vec<&str> = properties.keys().map(String::as_str).collect();
        let mut required = 0;
        for name in root
            .get("required")
            .map_or(Some(&[][..]), |r| r.as_array().map(Vec::as_slice))?
        {
            let at = declared.binary_search(&name.as_str()?).ok()?;
            if std::mem::replace(&mut params[at].required, true) {
                return None;
            }
            required += 1;
        }
        Some(Self {
            params: params.into(),
            required,
        })
    }

    /// Whether the schema admits `args`, every one of them declared: `names` the declared
    /// names in key order (the properties this shape was read from), walked once beside the
    /// arguments (in key order too). `false` says only "not here": the validator decides.
    pub(super) fn admits<'n>(
        &self,
        names: impl Iterator<Item = &'n str>,
        args: &Map<String, Value>,
    ) -> bool {
        let mut declared = names.zip(&self.params);
        let mut required = 0;
        for (key, value) in args {
            // The declared name equal to the argument's, past the ones before it.
            let p = loop {
                let Some((name, p)) = declared.next() else {
                    return false;
                };
                match order(name.as_bytes(), key.as_bytes()) {
                    std::cmp::Ordering::Less => {}
                    std::cmp::Ordering::Equal => break p,
                    std::cmp::Ordering::Greater => return false,
                }
            };
            if !p.admits(value) {
                return false;
            }
            required += usize::from(p.required);
        }
        required == self.required
    }
}

impl Param {
    fn of(schema: &Value) -> Option<Self> {
        let schema = schema.as_object()?;
        if !only(schema, &["type", "enum", "items"]) {
            return None;
        }
        let items = match schema.get("items") {
            None => Types::ANY,
            Some(Value::Object(items)) if only(items, &["type"]) => Types::of(items.get("type"))?,
            Some(_) => return None,
        };
        let one_of = match schema.get("enum") {
            None => None,
            Some(Value::Array(values)) => Some(values.clone().into_boxed_slice()),
            Some(_) => return None,
        };
        Some(Self {
            types: Types::of(schema.get("type"))?,
            items,
            one_of,
            required: false,
        })
    }

    /// Whether the parameter's schema admits `v`. (An `enum` member equal by `serde_json`'s
    /// `==` is equal by JSON Schema's too.)
    fn admits(&self, v: &Value) -> bool {
        self.types.admit(v)
            && self.one_of.as_ref().is_none_or(|values| values.contains(v))
            && match v {
                Value::Array(items) if self.items != Types::ANY => {
                    items.iter().all(|i| self.items.admit(i))
                }
                _ => true,
            }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn validator(schema: &Value) -> Option<jsonschema::Validator> {
        jsonschema::draft202012::options()
            .should_validate_formats(true)
            .build(schema)
            .ok()
    }

    fn admits(shape: &Shape, schema: &Value, args: &Value) -> bool {
        let names = schema["properties"].as_object().unwrap().keys();
        shape.admits(names.map(String::as_str), args.as_object().unwrap())
    }

    /// Over every combination of a parameter's schema (types, enums, items, annotations of
    /// either form), the root's `required` and `additionalProperties`, and arguments of every
    /// JSON type: a schema with a shape compiles, and what its shape admits, the validator
    /// finds valid. Where the validator finds arguments valid and the shape does not admit
    /// them, a number is why (`2.0` as an integer, `2` as an enum's `2.0`).
    #[test]
    fn what_a_shape_admits_the_schema_admits() {
        let types = [
            None,
            Some(json!("string")),
            Some(json!("integer")),
            Some(json!("number")),
            Some(json!("boolean")),
            Some(json!("null")),
            Some(json!("array")),
            Some(json!("object")),
            Some(json!(["string", "null"])),
            Some(json!(["integer", "string"])),
            Some(json!(["string", "string"])),
            Some(json!([])),
            Some(json!("float")),
        ];
        let enums = [
            None,
            Some(json!(["a", "b"])),
            Some(json!([1, 2.0, "1"])),
            Some(json!([null, [1], {"a": 1}])),
            Some(json!("a")),
        ];
        let items = [
            None,
            Some(json!({"type": "integer"})),
            Some(json!({"type": ["string", "null"], "description": "d"})),
            Some(json!({"enum": [1]})),
        ];
        let notes = [
            json!({}),
            json!({"description": "d", "default": 3, "examples": [1]}),
            json!({"description": 5}),
            json!({"format": "date"}),
        ];
        let roots = [
            json!({"type": "object"}),
            json!({"type": "object", "required": ["p"]}),
            json!({"required": ["p", "q"], "additionalProperties": false}),
            json!({"type": "object", "required": ["p", "p"]}),
            json!({"type": "object", "required": ["zz"]}),
            json!({"type": "object", "additionalProperties": true}),
            json!({"type": "object", "additionalProperties": {}}),
            json!({"type": "array"}),
            json!({"type": "object", "minProperties": 1}),
        ];
        let values = [
            json!(null),
            json!(true),
            json!(0),
            json!(1),
            json!(-1),
            json!(2.0),
            json!(1.5),
            json!(u64::MAX),
            json!("a"),
            json!(""),
            json!("1"),
            json!([]),
            json!([1]),
            json!([1, "a"]),
            json!(["a", null]),
            json!({}),
            json!({"a": 1}),
        ];
        let (mut shapes, mut admitted, mut rejected) = (0, 0, 0);
        for ty in &types {
            for en in &enums {
                for it in &items {
                    for note in &notes {
                        let mut p = note.as_object().unwrap().clone();
                        for (k, v) in [("type", ty), ("enum", en), ("items", it)] {
                            if let Some(v) = v {
                                p.insert(k.into(), v.clone());
                            }
                        }
                        for root in &roots {
                            let mut schema = root.clone();
                            schema["properties"] = json!({"p": p, "q": {"type": "string"}});
                            let Some(shape) = Shape::of(&schema) else {
                                continue;
                            };
                            shapes += 1;
                            let validator = validator(&schema).unwrap_or_else(|| {
                                panic!("a shape of a schema that does not compile: {schema}")
                            });
                            for v in &values {
                                for args in [
                                    json!({}),
                                    json!({"p": v}),
                                    json!({"q": "s"}),
                                    json!({"p": v, "q": "s"}),
                                    json!({"p": v, "q": 1}),
                                    json!({"p": v, "zz": 1}),
                                ] {
                                    let valid = validator.is_valid(&args);
                                    if admits(&shape, &schema, &args) {
                                        assert!(valid, "{schema} admits {args}, which it does not");
                                        admitted += 1;
                                    } else {
                                        rejected += 1;
                                        let undeclared = args.get("zz").is_some();
                                        assert!(
                                            !valid || undeclared || v.is_number(),
                                            "{schema} finds {args} valid, its shape does not"
                                        );
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        // Many shapes; many arguments admitted and many not, so neither answer is the only one.
        assert!(shapes > 500, "{shapes} shapes");
        assert!(
            admitted > 5_000 && rejected > 5_000,
            "{admitted} admitted, {rejected} not"
        );
    }

    /// A tool's schema as BFCL's and most MCP servers' are written has a shape, which admits
    /// a right call and not a wrong one.
    #[test]
    fn a_common_schema_has_a_shape() {
        let schema = json!({
            "type": "object",
            "properties": {
                "base": {"type": "integer", "description": "The base of the triangle."},
                "unit": {"type": "string", "enum": ["cm", "m"], "default": "cm"},
                "tags": {"type": "array", "items": {"type": "string"}, "description": "Tags."},
                "exact": {"type": "boolean"}
            },
            "required": ["base"]
        });
        let shape = Shape::of(&schema).expect("a shape");
        assert!(admits(
            &shape,
            &schema,
            &json!({"base": 10, "unit": "m", "tags": ["a"]})
        ));
        assert!(admits(
            &shape,
            &schema,
            &json!({"base": 10, "exact": false})
        ));
        for wrong in [
            json!({"unit": "m"}),
            json!({"base": "10"}),
            json!({"base": 10, "unit": "km"}),
            json!({"base": 10, "tags": [1]}),
            json!({"base": 10, "height": 3}),
        ] {
            assert!(!admits(&shape, &schema, &wrong), "{wrong}");
        }
    }
}
