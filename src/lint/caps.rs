//! Capability checks of one call: resolve the chosen model (selector, aliases, the server's
//! own default), then run each parameter's rule chain — server, tool, model, in that order —
//! on the value the server will actually see, and the cross-parameter rules.
//!
//! A chain models the handler: a `truncate`, `clamp` or `coerce` rewrites the value the next
//! rule sees (V4: 6.9 is truncated to 6, *then* checked against the duration list); a `reject`
//! or `ignore` ends it.

use std::borrow::Cow;

use serde_json::{Map, Value};

use super::did_you_mean;
use super::schema::{pointer, subject};
use crate::finding::{Code, Finding};
use crate::source::json::text as compact;
use crate::spec::ToolSpec;
use crate::spec::capability::{
    Capabilities, Constraint, CrossKind, Model, Outcome, ToolCaps, UnknownModel,
};

/// A tool's rule chains laid out once per resolved model: the parameters with rules, sorted
/// and limited to those the tool declares (a server-wide rule applies only where the tool has
/// the parameter), each with its whole chain (server and tool rules, then the model's) and the
/// handler's default. Looking these up per call was most of a valid call's cost.
pub(super) struct Plan {
    without_model: Vec<Step>,
    per_model: Vec<Vec<Step>>,
}

struct Step {
    param: String,
    /// `true` for a rule of the model, `false` for the server's or the tool's.
    rules: Vec<(bool, Constraint)>,
    default: Option<Value>,
}

impl Plan {
    pub(super) fn new(matrix: &Capabilities, tool: &ToolCaps, spec: &ToolSpec) -> Self {
        let steps = |model: Option<&Model>| -> Vec<Step> {
            let mut params: Vec<&String> = tool.parameters.keys().collect();
            if let Some(m) = model {
                params.extend(
                    m.parameters
                        .keys()
                        .filter(|p| !tool.parameters.contains_key(*p)),
                );
            }
            params.sort_unstable();
            params
                .into_iter()
                .filter(|p| spec.has_param(p))
                .map(|p| Step {
                    param: p.clone(),
                    rules: tool
                        .parameters
                        .get(p)
                        .into_iter()
                        .flatten()
                        .map(|c| (false, c.clone()))
                        .chain(
                            model
                                .and_then(|m| m.parameters.get(p))
                                .into_iter()
                                .flatten()
                                .map(|c| (true, c.clone())),
                        )
                        .collect(),
                    default: model
                        .and_then(|m| m.defaults.get(p))
                        .or_else(|| tool.defaults.get(p))
                        .cloned(),
                })
                .collect()
        };
        let per_model = tool
            .family
            .map(|f| {
                matrix.families[f]
                    .models
                    .iter()
                    .map(|m| steps(Some(m)))
                    .collect()
            })
            .unwrap_or_default();
        Self {
            without_model: steps(None),
            per_model,
        }
    }
}

pub(super) fn check(
    matrix: &Capabilities,
    tool: &ToolCaps,
    plan: &Plan,
    spec: &ToolSpec,
    args: &Map<String, Value>,
    out: &mut Vec<Finding>,
) {
    if let Some(why) = &matrix.retired {
        out.push(Finding::new(
            Code::Retired,
            "",
            format!("`{}` no longer serves requests: {why}", matrix.server),
        ));
    }
    let model = tool
        .family
        .and_then(|f| resolve_model(matrix, f, spec, args, out));
    if let Some(m) = model {
        if let Some(why) = &m.retired {
            out.push(Finding::new(
                Code::Retired,
                "",
                format!("model `{}` no longer serves requests: {why}", m.id),
            ));
        }
        if let Some(served) = &m.tools
            && !served.contains(&spec.name)
        {
            let fam = &matrix.families[tool.family.unwrap_or_default()];
            let able: Vec<&str> = fam
                .models
                .iter()
                .filter(|o| o.tools.as_ref().is_none_or(|t| t.contains(&spec.name)))
                .map(|o| o.id.as_str())
                .collect();
            let sel = &fam.selector;
            out.push(Finding::new(
                    Code::UnsupportedTool,
                    pointer(&[sel]),
                    format!(
                        "model `{}` cannot serve `{}`; the server rejects the call (models that can: {})",
                        m.id,
                        spec.name,
                        if able.is_empty() { "none".to_owned() } else { able.join(", ") }
                    ),
                ));
        }
    }

    // Parameters with rules, server/tool first then model, in a stable order.
    let steps = match (model, tool.family) {
        (Some(m), Some(f)) => matrix.families[f]
            .index_of(m)
            .and_then(|i| plan.per_model.get(i))
            .unwrap_or(&plan.without_model),
        _ => &plan.without_model,
    };
    for step in steps {
        let param = step.param.as_str();
        let chain = step
            .rules
            .iter()
            .map(|(from_model, c)| (if *from_model { model } else { None }, c));
        let (value, defaulted) = match (args.get(param), &step.default) {
            (Some(v), _) => (Cow::Borrowed(v), false),
            (None, Some(d)) => (Cow::Borrowed(d), true),
            (None, None) => continue,
        };
        run_chain(param, value, defaulted, chain, args, out);
    }

    for rule in &tool.cross {
        cross(rule, args, out);
    }
}

fn resolve_model<'m>(
    matrix: &'m Capabilities,
    family: usize,
    spec: &ToolSpec,
    args: &Map<String, Value>,
    out: &mut Vec<Finding>,
) -> Option<&'m Model> {
    let fam = &matrix.families[family];
    let sel = fam.selector.as_str();
    match args.get(sel) {
        Some(Value::String(name)) => {
            let found = fam.resolve(name);
            if found.is_none() {
                let hint = did_you_mean(name, fam.names());
                let what = match fam.unknown {
                    UnknownModel::Reject => "the server rejects it".to_owned(),
                    UnknownModel::PassThrough => {
                        "the server passes it to the API unchanged, which fails for a model it does not serve".to_owned()
                    }
                };
                let known: Vec<&str> = fam.models.iter().map(|m| m.id.as_str()).collect();
                out.push(
                    Finding::new(
                        Code::UnknownModel,
                        pointer(&[sel]),
                        format!(
                            "`{name}` is not a model of `{}`{hint}; {what} (models: {})",
                            matrix.server,
                            known.join(", ")
                        ),
                    )
                    .with_rule(fam.rule.as_deref()),
                );
            }
            found
        }
        // Wrong type: the schema check reports it.
        Some(_) => None,
        None => {
            let used = fam.when_absent.map(|i| &fam.models[i]);
            let schema_default = spec
                .properties()
                .and_then(|p| p.get(sel))
                .and_then(|s| s.get("default"))
                .and_then(Value::as_str);
            if let (Some(used), Some(declared)) = (used, schema_default)
                && fam.resolve(declared).is_none_or(|d| d.id != used.id)
            {
                out.push(
                        Finding::new(
                            Code::DefaultMismatch,
                            pointer(&[sel]),
                            format!(
                                "`{sel}` is absent: the server uses `{}`, not the schema default `{declared}`",
                                used.id
                            ),
                        )
                        .with_rule(fam.rule.as_deref()),
                    );
            }
            used
        }
    }
}

fn run_chain<'a>(
    param: &str,
    mut value: Cow<'a, Value>,
    defaulted: bool,
    chain: impl Iterator<Item = (Option<&'a Model>, &'a Constraint)>,
    args: &Map<String, Value>,
    out: &mut Vec<Finding>,
) {
    for (model, c) in chain {
        if c.when_absent
            .as_ref()
            .is_some_and(|other| args.contains_key(other))
        {
            continue;
        }
        let Some(v) = violation(c, &value, defaulted) else {
            continue;
        };
        let at = if v.index.is_some() {
            format!("{}/{}", pointer(&[param]), v.index.unwrap_or_default())
        } else {
            pointer(&[param])
        };
        let who = match model {
            Some(m) => format!("model `{}`", m.id),
            None => "the server".to_owned(),
        };
        let what = if defaulted {
            format!(
                "`{param}` is absent and the server defaults it to {}, which",
                compact(&value)
            )
        } else {
            format!(
                "{} = {}",
                subject(&at),
                compact(v.value.as_ref().unwrap_or(&value))
            )
        };
        let note = c.note.as_ref().map_or(String::new(), |n| format!(" — {n}"));
        let (code, message, next) = match c.on_violation {
            Outcome::Reject => {
                let code = match v.predicate {
                    Predicate::Integer => Code::NotInteger,
                    Predicate::Pattern => Code::InvalidFormat,
                    Predicate::Unsupported => Code::UnsupportedParam,
                    Predicate::Value => Code::UnsupportedValue,
                };
                let verb = if defaulted {
                    " is rejected by"
                } else {
                    ": rejected by"
                };
                (code, format!("{what}{verb} {who}: {}{note}", v.why), None)
            }
            Outcome::Truncate => {
                let t = truncate(&value);
                (
                    Code::Coerced,
                    format!(
                        "{what}: {who} silently truncates it to {}{note}",
                        compact(&t)
                    ),
                    Some(t),
                )
            }
            Outcome::Clamp => {
                let t = clamp(&value, c.minimum, c.maximum);
                (
                    Code::Clamped,
                    format!(
                        "{what}: {who} silently clamps it to {} ({}){note}",
                        compact(&t),
                        v.why
                    ),
                    Some(t),
                )
            }
            Outcome::Coerce => {
                let to = c.coerce_to.clone();
                let shown = to.as_ref().map_or("another value".to_owned(), compact);
                (
                    Code::Coerced,
                    format!(
                        "{what}: {who} silently replaces it with {shown} ({}){note}",
                        v.why
                    ),
                    Some(to.unwrap_or_else(|| value.clone().into_owned())),
                )
            }
            Outcome::Ignore => (
                Code::Ignored,
                format!("{what}: {who} silently ignores it ({}){note}", v.why),
                None,
            ),
        };
        out.push(Finding::new(code, at, message).with_rule(c.rule.as_deref()));
        match next {
            Some(n) => value = Cow::Owned(n),
            None => return,
        }
    }
}

#[derive(Clone, Copy)]
enum Predicate {
    Unsupported,
    Integer,
    Value,
    Pattern,
}

struct Violation {
    predicate: Predicate,
    why: String,
    /// Index of the offending item when the value is an array.
    index: Option<usize>,
    /// The offending item, when it is not the whole value.
    value: Option<Value>,
}

fn violation(c: &Constraint, value: &Value, defaulted: bool) -> Option<Violation> {
    let whole = |predicate, why: String| {
        Some(Violation {
            predicate,
            why,
            index: None,
            value: None,
        })
    };
    if c.unsupported {
        return if defaulted {
            None
        } else {
            whole(Predicate::Unsupported, "parameter not supported".into())
        };
    }
    if let Value::Array(items) = value {
        if let Some(max) = c.max_items.filter(|m| items.len() > *m) {
            return whole(
                Predicate::Value,
                format!("{} items, at most {max} allowed", items.len()),
            );
        }
        if let Some(min) = c.min_items.filter(|m| items.len() < *m) {
            return whole(
                Predicate::Value,
                format!("{} items, at least {min} required", items.len()),
            );
        }
        return items.iter().enumerate().find_map(|(i, item)| {
            scalar(c, item).map(|(predicate, why)| Violation {
                predicate,
                why,
                index: Some(i),
                value: Some(item.clone()),
            })
        });
    }
    scalar(c, value).map(|(predicate, why)| Violation {
        predicate,
        why,
        index: None,
        value: None,
    })
}

fn scalar(c: &Constraint, v: &Value) -> Option<(Predicate, String)> {
    if c.integer
        && let Some(n) = v.as_f64()
        && n.fract() != 0.0
    {
        return Some((Predicate::Integer, "not an integer".into()));
    }
    if let Some(allowed) = &c.one_of
        && !allowed.iter().any(|a| same(a, v))
    {
        let list: Vec<String> = allowed.iter().map(compact).collect();
        return Some((Predicate::Value, format!("allowed: {}", list.join(", "))));
    }
    if let Some(n) = v.as_f64() {
        let lo = c.minimum.is_some_and(|m| n < m) || c.exclusive_minimum.is_some_and(|m| n <= m);
        let hi = c.maximum.is_some_and(|m| n > m) || c.exclusive_maximum.is_some_and(|m| n >= m);
        if lo || hi {
            let low = c
                .minimum
                .map(|a| format!("[{}", num(a)))
                .or(c.exclusive_minimum.map(|a| format!("({}", num(a))));
            let high = c
                .maximum
                .map(|b| format!("{}]", num(b)))
                .or(c.exclusive_maximum.map(|b| format!("{})", num(b))));
            let range = match (low, high) {
                (Some(a), Some(b)) => format!("allowed range {a}, {b}"),
                (Some(a), None) => format!("allowed range {a}, ∞)"),
                (None, Some(b)) => format!("allowed range (-∞, {b}"),
                (None, None) => String::new(),
            };
            return Some((Predicate::Value, range));
        }
    }
    if let Value::String(s) = v {
        if let Some(max) = c.max_length.filter(|m| s.chars().count() > *m) {
            return Some((
                Predicate::Value,
                format!("{} characters, at most {max} allowed", s.chars().count()),
            ));
        }
        if let Some(re) = c.pattern.as_ref().filter(|re| !re.is_match(s)) {
            return Some((Predicate::Pattern, format!("must match `{}`", re.as_str())));
        }
        if let Some(re) = c.not_pattern.as_ref().filter(|re| re.is_match(s)) {
            return Some((
                Predicate::Pattern,
                format!("must not match `{}`", re.as_str()),
            ));
        }
    }
    None
}

fn cross(
    rule: &crate::spec::capability::CrossRule,
    args: &Map<String, Value>,
    out: &mut Vec<Finding>,
) {
    let (at, why) = match &rule.kind {
        CrossKind::EqualLength(params) => {
            let lens: Vec<(&String, usize)> = params
                .iter()
                .filter_map(|p| args.get(p).and_then(Value::as_array).map(|a| (p, a.len())))
                .collect();
            match lens.split_first() {
                Some(((first, n), rest)) if lens.len() > 1 => {
                    match rest.iter().find(|(_, m)| m != n) {
                        Some((other, m)) => (
                            pointer(&[other]),
                            format!(
                                "`{other}` has {m} items but `{first}` has {n}; they must be the same length"
                            ),
                        ),
                        None => return,
                    }
                }
                _ => return,
            }
        }
        CrossKind::AtLeastOneOf(params) => {
            if params.iter().any(|p| args.contains_key(p)) {
                return;
            }
            (
                String::new(),
                format!("at least one of {} is required", backticks(params)),
            )
        }
        CrossKind::Requires { param, needs } => {
            if !args.contains_key(param) {
                return;
            }
            let missing: Vec<String> = needs
                .iter()
                .filter(|n| !args.contains_key(*n))
                .cloned()
                .collect();
            if missing.is_empty() {
                return;
            }
            (
                pointer(&[param]),
                format!("`{param}` requires {}", backticks(&missing)),
            )
        }
    };
    let note = rule
        .note
        .as_ref()
        .map_or(String::new(), |n| format!(" — {n}"));
    let (code, tail) = match rule.on_violation {
        Outcome::Reject => (Code::CrossParameter, "the server rejects the call"),
        Outcome::Ignore => (Code::Ignored, "the server silently ignores it"),
        _ => (Code::Coerced, "the server silently changes it"),
    };
    out.push(
        Finding::new(code, at, format!("{why}; {tail}{note}")).with_rule(rule.rule.as_deref()),
    );
}

fn backticks(items: &[String]) -> String {
    items
        .iter()
        .map(|s| format!("`{s}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn same(a: &Value, b: &Value) -> bool {
    match (a.as_f64(), b.as_f64()) {
        (Some(x), Some(y)) => x == y,
        _ => a == b,
    }
}

fn num(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        format!("{}", x as i64)
    } else {
        format!("{x}")
    }
}

fn truncate(v: &Value) -> Value {
    match v.as_f64() {
        Some(n) if n.fract() != 0.0 => Value::from(n.trunc() as i64),
        _ => v.clone(),
    }
}

fn clamp(v: &Value, lo: Option<f64>, hi: Option<f64>) -> Value {
    let Some(n) = v.as_f64() else {
        return v.clone();
    };
    let c = n
        .max(lo.unwrap_or(f64::NEG_INFINITY))
        .min(hi.unwrap_or(f64::INFINITY));
    if c.fract() == 0.0 {
        Value::from(c as i64)
    } else {
        Value::from(c)
    }
}
