//! The OpenAI Agents SDK's trace export: the items its tracing hands an exporter, each
//! `item.export()` — `{"object": "trace", …}` and `{"object": "trace.span", "trace_id",
//! "started_at", "span_data": {…}}` — one a line, or batched as the SDK's backend exporter
//! posts them (`{"data": [ … ]}`).
//!
//! The calls are the `function` spans (`name`, `input` = the arguments as a JSON string,
//! `output`, `mcp_data` for an MCP server's tool), in start order; a span's `error` with no
//! output is a refused call. The SDK writes `output` as Python's `str()` of the value, so an
//! MCP tool's result is a Python literal (`{'type': 'text', 'text': '…'}`): it is read back as
//! one, and refused when it is not. `generation` spans (the Chat Completions model) give the
//! prompt (the first one's user message) and the reply (the last one's assistant text);
//! `response` spans (the default Responses model) hold no content, so those runs record no
//! prompt and need a label file.

use std::collections::HashMap;

use serde_json::{Map, Value};

use super::{Docs, Event, Place, Refusal, json_arguments, text_result};

/// Whether a document is one exported item.
pub(super) fn is_item(v: &Value) -> bool {
    matches!(
        v.get("object").and_then(Value::as_str),
        Some("trace" | "trace.span")
    )
}

/// Whether a document is a batch as the backend exporter posts it.
pub(super) fn is_batch(v: &Value) -> bool {
    v.get("data")
        .and_then(Value::as_array)
        .and_then(|d| d.first())
        .is_some_and(is_item)
}

/// One run per trace that has function or generation spans, in the order the traces first
/// appear.
pub(super) fn runs(docs: &Docs) -> Result<Vec<Vec<Event>>, Refusal> {
    let mut items: Vec<(&Value, Place)> = Vec::new();
    match docs {
        Docs::One(v) => {
            for (i, item) in v
                .get("data")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .enumerate()
            {
                items.push((item, Place::at(format!("/data/{i}"))));
            }
        }
        Docs::Lines(lines) => {
            for (i, v) in lines {
                items.push((v, Place::on_line(*i, "")));
            }
        }
    }
    let mut order: Vec<&str> = Vec::new();
    let mut by_trace: HashMap<&str, Vec<(&str, &Value, Place)>> = HashMap::new();
    for (item, at) in items {
        if item.get("object").and_then(Value::as_str) != Some("trace.span") {
            continue;
        }
        let Some(data) = item.get("span_data") else {
            continue;
        };
        if !matches!(
            data.get("type").and_then(Value::as_str),
            Some("function" | "generation")
        ) {
            continue;
        }
        let trace = item.get("trace_id").and_then(Value::as_str).unwrap_or("");
        let started = item.get("started_at").and_then(Value::as_str).unwrap_or("");
        let spans = by_trace.entry(trace).or_insert_with(|| {
            order.push(trace);
            Vec::new()
        });
        spans.push((started, item, at));
    }
    if order.is_empty() {
        return Err(Refusal::file(
            "no `function` or `generation` span in it: nothing the agent did",
        ));
    }
    order
        .iter()
        .map(|t| {
            let mut spans = by_trace.remove(t).unwrap_or_default();
            // ISO 8601 times in one zone sort as text; the sort is stable for equal ones.
            spans.sort_by(|a, b| a.0.cmp(b.0));
            events(&spans)
        })
        .collect()
}

fn events(spans: &[(&str, &Value, Place)]) -> Result<Vec<Event>, Refusal> {
    let mut events = Vec::new();
    let generations: Vec<&Value> = spans
        .iter()
        .map(|s| &s.1["span_data"])
        .filter(|d| d.get("type").and_then(Value::as_str) == Some("generation"))
        .collect();
    if let Some(first) = generations.first() {
        for m in first
            .get("input")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if m.get("role").and_then(Value::as_str) == Some("user")
                && let Some(t) = m.get("content").and_then(Value::as_str)
            {
                events.push(Event::User { text: t.to_owned() });
            }
        }
    }
    for (_, item, at) in spans {
        let data = &item["span_data"];
        if data.get("type").and_then(Value::as_str) != Some("function") {
            continue;
        }
        let at = at.join("span_data");
        let tool = data
            .get("name")
            .and_then(Value::as_str)
            .ok_or_else(|| Refusal::at(&at, "a `function` span without `name`"))?;
        let raw = data.get("input").filter(|v| !v.is_null()).ok_or_else(|| {
            Refusal::at(
                &at,
                format!(
                    "the call of `{tool}` was exported without its `input` (trace_include_sensitive_data off?)"
                ),
            )
        })?;
        let output = match (data.get("output"), item.get("error")) {
            (Some(Value::String(s)), _) => Some(result_of(
                s,
                data.get("mcp_data").is_some_and(|m| !m.is_null()),
                tool,
                &at,
            )?),
            (_, Some(e)) if !e.is_null() => Some(text_result(
                e.get("message").and_then(Value::as_str).unwrap_or("error"),
                Some(true),
            )),
            _ => None,
        };
        events.push(Event::Call {
            id: item.get("id").and_then(Value::as_str).map(str::to_owned),
            tool: tool.to_owned(),
            arguments: json_arguments(tool, raw, &at)?,
            output,
            at,
        });
    }
    if let Some(last) = generations.last() {
        for m in last
            .get("output")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if let Some(t) = m.get("content").and_then(Value::as_str)
                && !t.is_empty()
            {
                events.push(Event::Text { text: t.to_owned() });
            }
        }
    }
    Ok(events)
}

/// A function span's `output` (Python's `str()` of the tool's value) as a CallToolResult: for
/// an MCP tool, the content block(s) the SDK made of the result, read back as the Python
/// literal they were written as; else the text as it is.
fn result_of(s: &str, mcp: bool, tool: &str, at: &Place) -> Result<Value, Refusal> {
    if !mcp {
        return Ok(text_result(s, None));
    }
    let value = python_literal(s)
        .or_else(|| serde_json::from_str(s).ok())
        .ok_or_else(|| {
            Refusal::at(
                at,
                format!("the output of `{tool}` is neither a Python literal nor JSON (cut by a length limit?)"),
            )
        })?;
    let blocks = match value {
        Value::Array(b) => b,
        Value::Object(o) if o.contains_key("type") => vec![Value::Object(o)],
        Value::Object(o) if o.contains_key("content") => return Ok(Value::Object(o)),
        other => vec![serde_json::json!({"type": "text", "text": other.to_string()})],
    };
    let mut r = Map::new();
    r.insert("content".into(), Value::Array(blocks));
    Ok(Value::Object(r))
}

/// A Python literal (`repr` of dicts, lists, tuples, strings, numbers, `True`, `False`,
/// `None`) as JSON; `None` when `s` is not one, whole.
fn python_literal(s: &str) -> Option<Value> {
    let mut p = Py {
        s: s.as_bytes(),
        i: 0,
        depth: 0,
    };
    let v = p.value()?;
    p.ws();
    (p.i == p.s.len()).then_some(v)
}

struct Py<'a> {
    s: &'a [u8],
    i: usize,
    depth: usize,
}

impl Py<'_> {
    fn ws(&mut self) {
        while self.s.get(self.i).is_some_and(u8::is_ascii_whitespace) {
            self.i += 1;
        }
    }

    fn eat(&mut self, b: u8) -> bool {
        self.ws();
        if self.s.get(self.i) == Some(&b) {
            self.i += 1;
            true
        } else {
            false
        }
    }

    fn value(&mut self) -> Option<Value> {
        self.ws();
        // Deep nesting is refused, not followed to a stack overflow.
        if self.depth > 128 {
            return None;
        }
        match *self.s.get(self.i)? {
            b'{' => {
                self.i += 1;
                self.depth += 1;
                let mut o = Map::new();
                if !self.eat(b'}') {
                    loop {
                        let k = match self.value()? {
                            Value::String(k) => k,
                            other => other.to_string(),
                        };
                        if !self.eat(b':') {
                            return None;
                        }
                        let v = self.value()?;
                        o.insert(k, v);
                        if self.eat(b',') {
                            if self.eat(b'}') {
                                break;
                            }
                            continue;
                        }
                        if self.eat(b'}') {
                            break;
                        }
                        return None;
                    }
                }
                self.depth -= 1;
                Some(Value::Object(o))
            }
            open @ (b'[' | b'(') => {
                self.i += 1;
                self.depth += 1;
                let close = if open == b'[' { b']' } else { b')' };
                let mut a = Vec::new();
                if !self.eat(close) {
                    loop {
                        a.push(self.value()?);
                        if self.eat(b',') {
                            if self.eat(close) {
                                break;
                            }
                            continue;
                        }
                        if self.eat(close) {
                            break;
                        }
                        return None;
                    }
                }
                self.depth -= 1;
                Some(Value::Array(a))
            }
            q @ (b'\'' | b'"') => self.string(q).map(Value::String),
            _ => {
                let start = self.i;
                while self
                    .s
                    .get(self.i)
                    .is_some_and(|b| b.is_ascii_alphanumeric() || b"+-._".contains(b))
                {
                    self.i += 1;
                }
                let word = std::str::from_utf8(&self.s[start..self.i]).ok()?;
                match word {
                    "True" => Some(Value::Bool(true)),
                    "False" => Some(Value::Bool(false)),
                    "None" => Some(Value::Null),
                    w => w.parse::<i64>().map(Value::from).ok().or_else(|| {
                        w.parse::<f64>()
                            .ok()
                            .and_then(|f| serde_json::Number::from_f64(f).map(Value::Number))
                    }),
                }
            }
        }
    }

    fn string(&mut self, quote: u8) -> Option<String> {
        self.i += 1;
        let mut out: Vec<u8> = Vec::new();
        loop {
            let b = *self.s.get(self.i)?;
            self.i += 1;
            match b {
                b if b == quote => break,
                b'\\' => {
                    let e = *self.s.get(self.i)?;
                    self.i += 1;
                    let mut push = |c: char| {
                        let mut buf = [0; 4];
                        out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
                    };
                    match e {
                        b'n' => push('\n'),
                        b't' => push('\t'),
                        b'r' => push('\r'),
                        b'0' => push('\0'),
                        b'\\' | b'\'' | b'"' => push(e as char),
                        b'x' | b'u' | b'U' => {
                            let n = match e {
                                b'x' => 2,
                                b'u' => 4,
                                _ => 8,
                            };
                            let hex = std::str::from_utf8(self.s.get(self.i..self.i + n)?).ok()?;
                            self.i += n;
                            push(char::from_u32(u32::from_str_radix(hex, 16).ok()?)?);
                        }
                        _ => return None,
                    }
                }
                b => out.push(b),
            }
        }
        String::from_utf8(out).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::python_literal;
    use serde_json::json;

    #[test]
    fn python_literals_read_as_json() {
        assert_eq!(
            python_literal(
                r#"{'type': 'text', 'text': 'it\'s "x"\n', 'n': [1, 2.5, (True, None)]}"#
            ),
            Some(json!({"type": "text", "text": "it's \"x\"\n", "n": [1, 2.5, [true, null]]}))
        );
        assert_eq!(python_literal("'\\u00e9\\x41'"), Some(json!("éA")));
        assert_eq!(python_literal("{'a': 1"), None);
        assert_eq!(python_literal("{'a': 1} x"), None);
        assert_eq!(python_literal(&"[".repeat(10_000)), None);
    }
}
