//! Constraints stated only in prose: a description that lists a parameter's values, bounds
//! it, gives its default, says it depends on the model or on another parameter, while the
//! schema encodes none of it (seed 000: "never hide capability rules in prose").
//!
//! The patterns are conservative on purpose: a finding quotes the one sentence that states
//! the constraint, and a sentence no pattern reads is left alone. Values are read from
//! quoted lists (`'dont_allow', 'allow_adult'`) or from a short list after "supported values
//! are"; bounds only for the types they bound (numbers, arrays, strings); tested against the
//! genmedia specs, whose RULES.md says which of their prose is real.

use std::sync::LazyLock;

use regex::Regex;
use serde_json::{Value, json};

use super::{AuditCode, AuditFinding, Param, Server, params};
use crate::spec::ToolSpec;

fn re(s: &str) -> Regex {
    Regex::new(s).expect("a valid pattern")
}

const QUOTED: &str = r#"(?:'[^']+'|"[^"]+"|`[^`]+`)"#;

static ENUM_LIST: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)\b(?:supported|allowed|valid|accepted|possible)(?:\s+[\w-]+){0,2}?\s+(?:values|types|sizes|formats|options|modes)\s*(?:are|is|include|:)\s*:?\s*(?P<list>.+)",
    )
});
static CAN_BE: LazyLock<Regex> = LazyLock::new(|| {
    re(&format!(
        r"(?i)\b(?:can|must|should)\s+be\s+(?:one\s+of\s+|either\s+)?(?P<list>{QUOTED}(?:\s*(?:,\s*or|,|or|and)\s*{QUOTED})+)"
    ))
});
static ONE_OF: LazyLock<Regex> = LazyLock::new(|| {
    re(&format!(
        r"(?i)\bone\s+of[:\s]+(?P<list>{QUOTED}(?:\s*(?:,\s*or|,|or|and)\s*{QUOTED})+)"
    ))
});
static ONLY_ONE: LazyLock<Regex> = LazyLock::new(|| {
    re(&format!(
        r"(?i)\bonly\s+(?P<list>{QUOTED})\s+(?:is|are)\s+(?:currently\s+)?supported"
    ))
});
static QUOTED_VALUE: LazyLock<Regex> = LazyLock::new(|| re(QUOTED));
static PLAIN_VALUE: LazyLock<Regex> = LazyLock::new(|| re(r"^[A-Za-z0-9_./:+-]{1,40}$"));

const NUMBER: &str = r"-?\d+(?:\.\d+)?";
static BETWEEN: LazyLock<Regex> = LazyLock::new(|| {
    re(&format!(
        r"(?i)\bbetween\s+(?P<a>{NUMBER})\s+and\s+(?P<b>{NUMBER})"
    ))
});
static DASH_RANGE: LazyLock<Regex> = LazyLock::new(|| {
    re(&format!(
        r"(?:^|[\s(\[])(?P<a>{NUMBER})\s*(?:-|–|\.\.|\s+to\s+)\s*(?P<b>{NUMBER})(?:$|[\s),;\]]|s\b|\.(?:\s|$))"
    ))
});
static AT_MOST: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)\b(?:max(?:imum)?(?:\s+(?:of|is))?:?|at\s+most|up\s+to|no\s+more\s+than)\s+(?P<n>\d[\d,]*)\b(?P<chars>\s+(?:characters|chars)\b)?",
    )
});
static AT_LEAST: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?i)\b(?:at\s+least|min(?:imum)?(?:\s+(?:of|is))?)\s+(?P<n>\d+)\b"));
static NON_NEGATIVE: LazyLock<Regex> = LazyLock::new(|| re(r"(?i)\bnon-?negative\b"));
static INTEGER: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?i)\b(?:integer|int32|int64|uint32|uint64|whole\s+number)s?\b"));

const VALUE: &str = r#"(?P<v>'[^']*'|"[^"]*"|`[^`]*`|[^\s,;()]+)"#;
static DEFAULTS: LazyLock<Vec<Regex>> = LazyLock::new(|| {
    [
        format!(r"(?i)\bdefaults?(?:\s+to|\s+is|\s*:)\s*{VALUE}"),
        format!(r"(?i)\bthe\s+default\s+(?:value\s+)?is\s+{VALUE}"),
        format!(r"(?i)[(,]\s*default[:\s]\s*{VALUE}"),
        format!(
            r"(?i)\bif\s+(?:not\s+(?:provided|given|set|specified)|omitted),?\s+(?:it\s+)?(?:is\s+)?(?:assumed\s+to\s+be|defaults\s+to)\s+{VALUE}"
        ),
    ]
    .iter()
    .map(|s| re(s))
    .collect()
});
static MODEL_DEPENDENT: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)\bmodel[- ]dependent\b|\bdepends?\s+on\s+the\s+(?:\w+\s+)?model\b|\bvar(?:y|ies)\s+(?:by|per|with)\s+(?:the\s+)?model\b|\b(?:only|not)\s+supported\s+(?:by|for|on|with)\b|\bsupported\s+only\s+(?:by|for|on|with)\b|\bonly\s+(?:available|works)\s+(?:with|for|on)\b",
    )
});
static CONDITIONAL: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)\brequired\s+(?:when|if)\b|\bone\s+of\s+(?:them|these)\s+is\s+required\b|\bmust\s+match\s+the\s+(?:length|number)\b|\bonly\s+(?:used|applies|applied|honou?red)\s+(?:when|if)\b|\bignored\s+(?:when|if|unless)\b|\bmutually\s+exclusive\b|\bcannot\s+be\s+(?:used|combined)\s+with\b",
    )
});
static FALLBACK: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)\benv(?:ironment)?\s+var(?:iable)?s?\b|\bfalls?\s+back\s+to\b|\bif\s+set\b|\bwill\s+be\s+used\b",
    )
});
static ENV_NAME: LazyLock<Regex> = LazyLock::new(|| re(r"\b[A-Z][A-Z0-9]*_[A-Z0-9_]*[A-Z0-9]\b"));
/// The parameter itself deprecated: "(deprecated; use …)", "Deprecated: …", "this parameter is
/// deprecated" — not "`insert_content` is deprecated" (a value) or "the deprecated `x`" (another
/// parameter).
static DEPRECATED: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)^(?:optional[.,:]?\s*)?\(?deprecated\b|\(deprecated\b|\bthis\s+(?:parameter|field|argument|option)\s+is\s+deprecated\b",
    )
});

/// Words that follow "defaults to" without being a value ("defaults to the first voice").
const NOT_A_VALUE: &[&str] = &[
    "the", "a", "an", "none", "null", "empty", "this", "that", "its",
];

/// The sentences of a description: split at a line break, and at `.`, `!` or `?` followed by
/// a space and a capital (not after "e.g." or "i.e.", not inside `0.5`).
pub(super) fn sentences(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    for line in text.lines() {
        let bytes = line.as_bytes();
        let mut start = 0;
        for i in 0..bytes.len() {
            if !matches!(bytes[i], b'.' | b'!' | b'?') {
                continue;
            }
            let next = bytes.get(i + 1).copied();
            let after = bytes.get(i + 2).copied();
            if next != Some(b' ') || !after.is_some_and(|c| c.is_ascii_uppercase() || c == b'(') {
                continue;
            }
            let word = line[start..i]
                .rsplit(' ')
                .next()
                .unwrap_or("")
                .trim_start_matches('(')
                .to_lowercase();
            if matches!(word.as_str(), "e.g" | "i.e" | "etc" | "vs" | "cf") {
                continue;
            }
            out.push(line[start..=i].trim());
            start = i + 1;
        }
        out.push(line[start..].trim());
    }
    out.retain(|s| !s.is_empty());
    out
}

/// The values a list names: its quoted items, else its plain comma/and/or-separated tokens
/// up to the first parenthesis.
fn values(list: &str) -> Vec<String> {
    let quoted: Vec<String> = QUOTED_VALUE
        .find_iter(list)
        .map(|m| m.as_str()[1..m.as_str().len() - 1].to_owned())
        .collect();
    if !quoted.is_empty() {
        return quoted;
    }
    let list = list.split(['(', ';']).next().unwrap_or("");
    let list = list.trim().trim_end_matches('.');
    let mut out = Vec::new();
    for part in list.split(',') {
        for word in part
            .split(" and ")
            .flat_map(|p| p.split(" or "))
            .map(str::trim)
        {
            if word.is_empty() {
                continue;
            }
            if !PLAIN_VALUE.is_match(word) {
                // A list that turns into prose is not a list.
                return Vec::new();
            }
            out.push(word.to_owned());
        }
    }
    out
}

fn type_of(schema: &Value) -> Option<&str> {
    schema.get("type").and_then(Value::as_str)
}

fn num(v: Option<&Value>) -> Option<f64> {
    v.and_then(Value::as_f64)
}

/// The prose findings of one tool.
pub(super) fn check(server: &Server, tool: &ToolSpec) -> Vec<AuditFinding> {
    let mut out = Vec::new();
    let (tool_at, _) = server.places(tool);
    for sentence in sentences(&tool.description) {
        if MODEL_DEPENDENT.is_match(sentence) {
            out.push(
                server
                    .finding(AuditCode::ModelDependent, Some(&tool.name), None)
                    .at(&format!("{tool_at}/description"))
                    .message(format!(
                        "`{}`'s description says support depends on the model; no schema \
                         can say which, so a capability matrix must",
                        tool.name
                    ))
                    .quote(sentence)
                    .done(),
            );
        }
    }
    for p in params(server, tool) {
        let Some(desc) = p.schema.get("description").and_then(Value::as_str) else {
            continue;
        };
        for sentence in sentences(desc) {
            out.extend(sentence_findings(server, tool, &p, sentence));
        }
    }
    for f in &mut out {
        if !server.caps.is_empty() {
            f.matrix = Some(coverage(server, tool, f));
        }
    }
    out.dedup_by(|a, b| a.code == b.code && a.pointer == b.pointer && a.message == b.message);
    out
}

fn sentence_findings(
    server: &Server,
    tool: &ToolSpec,
    p: &Param<'_>,
    sentence: &str,
) -> Vec<AuditFinding> {
    let mut out = Vec::new();
    let at = format!("{}/description", p.pointer);
    let new = |code| {
        server
            .finding(code, Some(&tool.name), Some(p.name))
            .at(&at)
            .quote(sentence)
    };
    let ty = type_of(p.schema);
    let name = p.name;

    // Enumerations.
    let listed = [&*ENUM_LIST, &*CAN_BE, &*ONE_OF, &*ONLY_ONE]
        .iter()
        .find_map(|r| r.captures(sentence))
        .map(|c| values(&c["list"]))
        .filter(|v| !v.is_empty());
    if let Some(vals) = listed {
        let declared = p
            .schema
            .get("enum")
            .or_else(|| p.schema.get("items").and_then(|i| i.get("enum")))
            .and_then(Value::as_array);
        let has_const = p.schema.get("const").is_some();
        let missing: Vec<&String> = match declared {
            Some(e) => vals
                .iter()
                .filter(|v| !e.iter().any(|x| x.as_str() == Some(v.as_str())))
                .collect(),
            None if has_const => Vec::new(),
            None => vals.iter().collect(),
        };
        if declared.is_none() && !has_const && matches!(ty, Some("string") | None) {
            out.push(
                new(AuditCode::ProseEnum)
                    .message(format!(
                        "`{name}` takes {} (the description says), but the schema has no `enum`",
                        list(&vals)
                    ))
                    .fix(format!("\"enum\": {}", json!(vals)))
                    .done(),
            );
        } else if declared.is_some() && !missing.is_empty() {
            out.push(
                new(AuditCode::ProseEnum)
                    .message(format!(
                        "the description of `{name}` names {} that its `enum` does not have",
                        list(&missing)
                    ))
                    .done(),
            );
        }
    }

    // Bounds.
    let numeric = matches!(ty, Some("number" | "integer"));
    if numeric {
        let range = BETWEEN
            .captures(sentence)
            .or_else(|| DASH_RANGE.captures(sentence))
            .and_then(|c| Some((c["a"].parse::<f64>().ok()?, c["b"].parse::<f64>().ok()?)))
            .filter(|(a, b)| a < b);
        let min = num(p.schema.get("minimum")).or(num(p.schema.get("exclusiveMinimum")));
        let max = num(p.schema.get("maximum")).or(num(p.schema.get("exclusiveMaximum")));
        let bound = |which: &str, stated: f64, declared: Option<f64>, out: &mut Vec<_>| {
            let key = if which == "lower" {
                "minimum"
            } else {
                "maximum"
            };
            match declared {
                Some(d) if d == stated => {}
                Some(d) => out.push(
                    new(AuditCode::ProseRange)
                        .message(format!(
                            "the description of `{name}` gives {which} bound {} but `{key}` is {}",
                            fmt_num(stated),
                            fmt_num(d)
                        ))
                        .done(),
                ),
                None => out.push(
                    new(AuditCode::ProseRange)
                        .message(format!(
                            "the description of `{name}` gives {which} bound {}; the schema has no `{key}`",
                            fmt_num(stated)
                        ))
                        .fix(format!("\"{key}\": {}", fmt_num(stated)))
                        .done(),
                ),
            }
        };
        if let Some((a, b)) = range {
            bound("lower", a, min, &mut out);
            bound("upper", b, max, &mut out);
        } else {
            if let Some(n) = AT_MOST
                .captures(sentence)
                .filter(|c| c.name("chars").is_none())
                .and_then(|c| c["n"].replace(',', "").parse::<f64>().ok())
            {
                bound("upper", n, max, &mut out);
            }
            if let Some(n) = AT_LEAST
                .captures(sentence)
                .and_then(|c| c["n"].parse::<f64>().ok())
            {
                bound("lower", n, min, &mut out);
            }
        }
        if NON_NEGATIVE.is_match(sentence) && min.is_none() && range.is_none() {
            bound("lower", 0.0, min, &mut out);
        }
        if ty == Some("number") && INTEGER.is_match(sentence) {
            out.push(
                new(AuditCode::ProseInteger)
                    .message(format!(
                        "the description of `{name}` says it is an integer; its type is `number`, \
                         so 1.5 validates"
                    ))
                    .fix("\"type\": \"integer\"")
                    .done(),
            );
        }
    }
    if let Some(c) = AT_MOST.captures(sentence) {
        let n = c["n"].replace(',', "").parse::<u64>().ok();
        let (key, applies) = match ty {
            Some("array") => ("maxItems", c.name("chars").is_none()),
            Some("string") => ("maxLength", c.name("chars").is_some()),
            _ => ("", false),
        };
        if let (true, Some(n)) = (applies, n) {
            match p.schema.get(key).and_then(Value::as_u64) {
                Some(d) if d == n => {}
                Some(d) => out.push(
                    new(AuditCode::ProseRange)
                        .message(format!(
                            "the description of `{name}` says at most {n}; `{key}` is {d}"
                        ))
                        .done(),
                ),
                None => out.push(
                    new(AuditCode::ProseRange)
                        .message(format!(
                            "the description of `{name}` says at most {n}; the schema has no `{key}`"
                        ))
                        .fix(format!("\"{key}\": {n}"))
                        .done(),
                ),
            }
        }
    }

    // Defaults.
    if let Some((v, rest)) = DEFAULTS
        .iter()
        .find_map(|r| r.captures(sentence))
        .and_then(|c| c.name("v"))
        .map(|m| (m.as_str().to_owned(), &sentence[m.end()..]))
    {
        let quoted = v.starts_with(['\'', '"', '`']);
        // An unquoted value ends its clause ("defaults to 1."); "defaults to your personal
        // account" names no value.
        let ends = rest.trim_start().is_empty()
            || rest.trim_start().starts_with(['.', ',', ';', ')'])
            || v.ends_with(['.', ',', ';', ')']);
        let raw = if quoted {
            v[1..v.len() - 1].to_owned()
        } else {
            v.trim_end_matches(['.', ')', ':']).to_owned()
        };
        let stop = !quoted && NOT_A_VALUE.contains(&raw.to_lowercase().as_str());
        if !raw.is_empty() && !stop && (quoted || ends) {
            let stated = typed(&raw, ty);
            match p.schema.get("default") {
                Some(d) if same(d, &stated) => {}
                Some(d) => out.push(
                    new(AuditCode::DefaultDisagrees)
                        .message(format!(
                            "the description of `{name}` says it defaults to {stated}; the schema's \
                             `default` is {d}"
                        ))
                        .done(),
                ),
                None => out.push(
                    new(AuditCode::ProseDefault)
                        .message(format!(
                            "the description of `{name}` says it defaults to {stated}; the schema \
                             has no `default`"
                        ))
                        .fix(format!("\"default\": {stated}"))
                        .done(),
                ),
            }
        }
    }

    if MODEL_DEPENDENT.is_match(sentence) {
        out.push(
            new(AuditCode::ModelDependent)
                .message(format!(
                    "what `{name}` accepts depends on the model; no schema can say which, so a \
                     capability matrix must"
                ))
                .done(),
        );
    }
    if CONDITIONAL.is_match(sentence) {
        out.push(
            new(AuditCode::ProseConditional)
                .message(format!(
                    "the description of `{name}` states a condition the schema does not encode \
                     (`dependentRequired`, `if`/`then`, or a capability matrix `cross:` rule)"
                ))
                .done(),
        );
    }
    if let Some(var) = ENV_NAME
        .find(sentence)
        .filter(|_| FALLBACK.is_match(sentence))
    {
        let var = var.as_str();
        out.push(
            new(AuditCode::EnvFallback)
                .message(format!(
                    "without `{name}` the server falls back to the environment variable `{var}`: \
                     a default no agent can see, and a call that fails where it is unset"
                ))
                .done(),
        );
    }
    if DEPRECATED.is_match(sentence) && p.schema.get("deprecated") != Some(&json!(true)) {
        out.push(
            new(AuditCode::ProseDeprecated)
                .message(format!(
                    "the description says `{name}` is deprecated; the schema does not"
                ))
                .fix("\"deprecated\": true")
                .done(),
        );
    }
    out
}

/// The stated default as JSON of the parameter's type.
fn typed(raw: &str, ty: Option<&str>) -> Value {
    match ty {
        Some("boolean") if raw.eq_ignore_ascii_case("true") => json!(true),
        Some("boolean") if raw.eq_ignore_ascii_case("false") => json!(false),
        Some("number" | "integer") => raw
            .parse::<f64>()
            .ok()
            .and_then(|f| {
                if f.fract() == 0.0 && f.abs() < 1e15 {
                    Some(json!(f as i64))
                } else {
                    serde_json::Number::from_f64(f).map(Value::Number)
                }
            })
            .unwrap_or_else(|| json!(raw)),
        _ => json!(raw),
    }
}

fn same(a: &Value, b: &Value) -> bool {
    match (a.as_f64(), b.as_f64()) {
        (Some(x), Some(y)) => x == y,
        _ => a == b,
    }
}

fn fmt_num(n: f64) -> String {
    if n.fract() == 0.0 && n.abs() < 1e15 {
        format!("{}", n as i64)
    } else {
        format!("{n}")
    }
}

fn list(vals: &[impl AsRef<str>]) -> String {
    vals.iter()
        .map(|v| format!("`{}`", v.as_ref()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Whether the server's capability matrices have a rule about what a prose finding states.
fn coverage(server: &Server, tool: &ToolSpec, f: &AuditFinding) -> String {
    let files: Vec<String> = server
        .caps
        .iter()
        .map(|c| {
            c.file
                .file_name()
                .map_or_else(String::new, |n| n.to_string_lossy().into_owned())
        })
        .collect();
    let mut rules = std::collections::BTreeSet::new();
    let mut covered = false;
    for caps in &server.caps {
        let Some(t) = caps.tools.get(&tool.name) else {
            continue;
        };
        let family = t.family.and_then(|i| caps.families.get(i));
        let constraints = |param: &str| {
            let own = t.parameters.get(param).into_iter().flatten();
            let models = family
                .into_iter()
                .flat_map(|fam| fam.models.iter())
                .flat_map(move |m| m.parameters.get(param).into_iter().flatten());
            own.chain(models).collect::<Vec<_>>()
        };
        match f.param.as_deref() {
            Some(param) => {
                let cs = constraints(param);
                let defaulted = t.defaults.contains_key(param)
                    || family.is_some_and(|fam| {
                        fam.selector == param
                            || fam.models.iter().any(|m| m.defaults.contains_key(param))
                    });
                let crossed = t
                    .cross
                    .iter()
                    .filter(|r| r.kind.params().contains(&param))
                    .collect::<Vec<_>>();
                let hit = match f.code {
                    AuditCode::ProseDefault
                    | AuditCode::DefaultDisagrees
                    | AuditCode::EnvFallback => defaulted,
                    AuditCode::ProseConditional => !crossed.is_empty(),
                    AuditCode::ProseDeprecated => false,
                    _ => !cs.is_empty(),
                };
                if hit {
                    covered = true;
                    rules.extend(cs.iter().filter_map(|c| c.rule.clone()));
                    rules.extend(crossed.iter().filter_map(|r| r.rule.clone()));
                    if matches!(
                        f.code,
                        AuditCode::ProseDefault | AuditCode::DefaultDisagrees
                    ) {
                        rules.extend(family.and_then(|fam| fam.rule.clone()));
                    }
                }
            }
            None => {
                // A tool-level rule: the models that serve the tool.
                if family.is_some_and(|fam| fam.models.iter().any(|m| m.tools.is_some())) {
                    covered = true;
                }
            }
        }
    }
    let files = files.join(", ");
    match (covered, rules.is_empty()) {
        (false, _) => format!("no rule in {files}"),
        (true, true) => format!("covered by {files}"),
        (true, false) => format!(
            "covered by {files} ({})",
            rules.into_iter().collect::<Vec<_>>().join(", ")
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sentences_split_at_full_stops_only() {
        assert_eq!(
            sentences("Optional. Sampling temperature, 0.0-2.0 (e.g. 0.5). Sent in config."),
            [
                "Optional.",
                "Sampling temperature, 0.0-2.0 (e.g. 0.5).",
                "Sent in config."
            ]
        );
        assert_eq!(sentences("a\n- b"), ["a", "- b"]);
    }

    #[rstest::rstest]
    #[case("Supported values: 'dont_allow', 'allow_adult'.", &["dont_allow", "allow_adult"])]
    #[case("Supported sizes are 1K and 2K (not supported for Imagen 3 models).", &["1K", "2K"])]
    #[case("Supported values: LINEAR16, MP3, OGG_OPUS.", &["LINEAR16", "MP3", "OGG_OPUS"])]
    #[case("Supported values are whatever the model likes.", &[])]
    fn lists(#[case] s: &str, #[case] want: &[&str]) {
        let got = ENUM_LIST
            .captures(s)
            .map(|c| values(&c["list"]))
            .unwrap_or_default();
        assert_eq!(got, want);
    }

    #[rstest::rstest]
    #[case("Optional (deprecated; use output_filename).", true)]
    #[case("(deprecated; use output_filename) Desired file name.", true)]
    #[case("Deprecated: use `name`.", true)]
    #[case("Takes precedence over the deprecated output_file_name.", false)]
    #[case("`insert_content` and `replace_content_range` are deprecated.", false)]
    fn deprecation(#[case] s: &str, #[case] want: bool) {
        assert_eq!(DEPRECATED.is_match(s), want, "{s}");
    }

    #[rstest::rstest]
    #[case("Number of videos to generate (1-3, default 1).", Some((1.0, 3.0)))]
    #[case("Sampling temperature, 0.0-2.0 (higher = more varied).", Some((0.0, 2.0)))]
    #[case("Volume change in dB (e.g., -10 for -10dB, 5 for +5dB).", None)]
    #[case("a 1-based suffix", None)]
    #[case("Aspect ratio 16:9", None)]
    fn ranges(#[case] s: &str, #[case] want: Option<(f64, f64)>) {
        let got = DASH_RANGE
            .captures(s)
            .and_then(|c| Some((c["a"].parse().ok()?, c["b"].parse().ok()?)));
        assert_eq!(got, want);
    }
}
