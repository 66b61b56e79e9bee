//! `agent-seer lint --spec FILE [--caps FILE]… [CALLS]`: lint calls given as JSON Lines.

use std::io::{BufRead, Write};
use std::path::PathBuf;

use agent_seer::finding::{Finding, Severity};
use agent_seer::lint::Linter;
use agent_seer::source::SourceError;
use serde::Serialize;
use serde_json::Value;

use super::{Format, Outcome};

#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(flatten)]
    spec: super::SpecArgs,
    #[arg(long, value_enum, default_value_t)]
    format: Format,
    /// JSON Lines of calls, `-` for standard input. Each line:
    /// {"tool"|"name"|"function_name": …, "arguments"|"parameters": {…}}, an OpenAI tool call,
    /// a Responses `function_call` item, an Anthropic `tool_use` block, a Gemini
    /// `functionCall`, or an MCP `tools/call` request.
    #[arg(default_value = "-")]
    calls: PathBuf,
}

#[derive(Serialize)]
struct LineResult<'a> {
    line: usize,
    tool: Option<&'a str>,
    ok: bool,
    errors: usize,
    warnings: usize,
    findings: &'a [Finding],
    #[serde(skip_serializing_if = "Option::is_none")]
    input_error: Option<String>,
}

pub fn run(args: Args, out: &mut dyn Write) -> anyhow::Result<Outcome> {
    let (spec, caps) = args.spec.load()?;
    let linter = Linter::new(&spec, caps).map_err(|e| match e.in_file(&spec) {
        Some(located) => anyhow::Error::from(located),
        None => e.into(),
    })?;
    let (name, reader): (String, Box<dyn BufRead>) = if args.calls.as_os_str() == "-" {
        ("<stdin>".into(), Box::new(std::io::stdin().lock()))
    } else {
        let f = std::fs::File::open(&args.calls).map_err(|e| SourceError::io(&args.calls, e))?;
        (
            args.calls.display().to_string(),
            Box::new(std::io::BufReader::new(f)),
        )
    };
    let mut any_error = false;
    let mut bad_input = false;
    for (i, line) in reader.lines().enumerate() {
        let line = line.map_err(|e| anyhow::anyhow!("{name}: cannot read line {}: {e}", i + 1))?;
        if line.trim().is_empty() {
            continue;
        }
        let number = i + 1;
        let (tool, findings, input_error) = match parse_call(&line) {
            Ok((tool, args)) => {
                let f = linter.lint(&tool, &args);
                (Some(tool), f, None)
            }
            Err(msg) => {
                // `file:line:column: message`, the column when the JSON parser gave one.
                let place = match msg.column {
                    Some(c) => format!("{name}:{number}:{c}"),
                    None => format!("{name}:{number}"),
                };
                (None, Vec::new(), Some(format!("{place}: {}", msg.message)))
            }
        };
        bad_input |= input_error.is_some();
        let errors = findings
            .iter()
            .filter(|f| f.severity == Severity::Error)
            .count();
        let warnings = findings
            .iter()
            .filter(|f| f.severity == Severity::Warning)
            .count();
        any_error |= errors > 0;
        let result = LineResult {
            line: number,
            tool: tool.as_deref(),
            ok: errors == 0 && input_error.is_none(),
            errors,
            warnings,
            findings: &findings,
            input_error,
        };
        match args.format {
            Format::Json => writeln!(out, "{}", serde_json::to_string(&result)?)?,
            Format::Human => human(out, &name, &result)?,
        }
    }
    if bad_input {
        anyhow::bail!("{name}: some lines are not calls (see above)");
    }
    Ok(if any_error {
        Outcome::Findings
    } else {
        Outcome::Clean
    })
}

fn human(out: &mut dyn Write, name: &str, r: &LineResult<'_>) -> std::io::Result<()> {
    if let Some(e) = &r.input_error {
        return writeln!(out, "{e}");
    }
    let tool = r.tool.unwrap_or("?");
    match (r.errors, r.warnings) {
        (0, 0) => writeln!(out, "{name}:{}: {tool}: ok", r.line)?,
        (e, w) => writeln!(
            out,
            "{name}:{}: {tool}: {e} error{}, {w} warning{}",
            r.line,
            plural(e),
            plural(w)
        )?,
    }
    for f in r.findings {
        writeln!(out, "  {f}")?;
    }
    Ok(())
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// Why a line is no call, and at which column of it when that is known.
struct NotACall {
    column: Option<usize>,
    message: String,
}

impl From<String> for NotACall {
    fn from(message: String) -> Self {
        Self {
            column: None,
            message,
        }
    }
}

impl From<&str> for NotACall {
    fn from(message: &str) -> Self {
        message.to_owned().into()
    }
}

/// One call in any accepted shape.
fn parse_call(line: &str) -> Result<(String, Value), NotACall> {
    let v: Value = serde_json::from_str(line).map_err(|e| NotACall {
        column: Some(e.column()),
        message: format!(
            "not JSON: {}",
            agent_seer::source::strip_json_position(&e.to_string())
        ),
    })?;
    let obj = v.as_object().ok_or("a call must be a JSON object")?;
    // The call shapes of the chat APIs and MCP, as their logs write them.
    let string_args = |tool: &str, raw: Option<&Value>| -> Result<Value, NotACall> {
        match raw {
            Some(Value::String(s)) if s.trim().is_empty() => Ok(Value::Object(Default::default())),
            Some(Value::String(s)) => serde_json::from_str(s)
                .map_err(|e| format!("the arguments of `{tool}` are not valid JSON: {e}").into()),
            Some(other) => Ok(other.clone()),
            None => Ok(Value::Object(Default::default())),
        }
    };
    let named = |o: &serde_json::Map<String, Value>, what: &str| -> Result<String, NotACall> {
        o.get("name")
            .and_then(Value::as_str)
            .map(str::to_owned)
            .ok_or_else(|| format!("{what} without a `name` string").into())
    };
    match obj.get("type").and_then(Value::as_str) {
        // Anthropic `tool_use` / `mcp_tool_use` blocks: `input` is the arguments.
        Some("tool_use" | "mcp_tool_use") => {
            let name = named(obj, "a `tool_use` block")?;
            let input = obj
                .get("input")
                .cloned()
                .unwrap_or_else(|| Value::Object(Default::default()));
            return Ok((name, input));
        }
        // OpenAI Responses `function_call` and `mcp_call` items: arguments as a JSON string.
        Some("function_call" | "mcp_call") => {
            let name = named(obj, "a `function_call` item")?;
            let args = string_args(&name, obj.get("arguments"))?;
            return Ok((name, args));
        }
        _ => {}
    }
    // Gemini `functionCall` parts (or the part's inside).
    if let Some(Value::Object(f)) = obj.get("functionCall").or_else(|| obj.get("function_call")) {
        let name = named(f, "a `functionCall`")?;
        return Ok((
            name,
            f.get("args")
                .cloned()
                .unwrap_or_else(|| Value::Object(Default::default())),
        ));
    }
    // An MCP `tools/call` request.
    if obj.get("method").and_then(Value::as_str) == Some("tools/call") {
        let params = obj
            .get("params")
            .and_then(Value::as_object)
            .ok_or("a `tools/call` request without `params`")?;
        let name = named(params, "a `tools/call` request's `params`")?;
        return Ok((
            name,
            params
                .get("arguments")
                .cloned()
                .unwrap_or_else(|| Value::Object(Default::default())),
        ));
    }
    if let Some(Value::Object(f)) = obj.get("function") {
        let name = f
            .get("name")
            .and_then(Value::as_str)
            .ok_or("`function.name` is missing")?;
        let args = match f.get("arguments") {
            Some(Value::String(s)) if s.trim().is_empty() => Value::Object(Default::default()),
            Some(Value::String(s)) => serde_json::from_str(s)
                .map_err(|e| format!("`function.arguments` is not valid JSON: {e}"))?,
            Some(other) => other.clone(),
            None => Value::Object(Default::default()),
        };
        return Ok((name.to_owned(), args));
    }
    let names: Vec<&str> = ["tool", "name", "function_name"]
        .into_iter()
        .filter(|k| obj.contains_key(*k))
        .collect();
    let key = match names.as_slice() {
        [one] => *one,
        [] => return Err("a call needs `tool`, `name`, `function_name` or `function`".into()),
        _ => {
            return Err(
                format!("a call has more than one name field: {}", names.join(", ")).into(),
            );
        }
    };
    let name = obj[key]
        .as_str()
        .ok_or(format!("`{key}` must be a string"))?;
    let args = match (obj.get("arguments"), obj.get("parameters")) {
        (Some(_), Some(_)) => {
            return Err("a call has either `arguments` or `parameters`, not both".into());
        }
        (Some(a), None) | (None, Some(a)) => a.clone(),
        (None, None) => Value::Object(Default::default()),
    };
    Ok((name.to_owned(), args))
}
