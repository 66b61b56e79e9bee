//! The capability-matrix scaffold `agent-seer init` writes for a server: every tool listed,
//! its effects as the server's annotations say or, where it says nothing, proposed from the
//! tool's name and description and marked `proposed:` (the harness trial fails until someone
//! reviews them), reference parameters proposed as `inputs`, SQL parameters as `sql`, error
//! texts the server was seen to answer with, and the audit's findings as comments.
//!
//! Pure: the caller reads the server; this renders YAML text (comments included, which is
//! why it is written by hand and checked by loading it back).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde_json::{Map, Value};

/// What a scaffold is made from.
pub struct Facts<'a> {
    /// The server's name and version (`serverInfo`).
    pub server: &'a str,
    /// Its version.
    pub version: &'a str,
    /// How it was started (`agent-seer init -- …`), for `source:`.
    pub source: &'a str,
    /// The tools as the server listed them.
    pub tools: &'a [Value],
    /// Per tool, the text of an error the server answered a probe with (`{}` arguments).
    pub errors: &'a BTreeMap<String, String>,
    /// Per tool, what the audit says of it (one line each).
    pub audit: &'a BTreeMap<String, Vec<String>>,
}

/// What a tool's effects are, and where that comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Effects {
    /// The server's annotations (the hints it gave, by name).
    Annotated(Vec<(&'static str, bool)>),
    /// Proposed from the tool's name or description: the hints, and why.
    Proposed(Vec<(&'static str, bool)>, String),
    /// Nothing to go on: the MCP defaults apply.
    Unknown,
}

/// What kind of action a verb names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Action {
    Read,
    /// Adds without overwriting (create, insert, append, send).
    Add,
    /// May overwrite or remove what exists (update, set, write, move).
    Change,
    Delete,
}

fn action(word: &str) -> Option<Action> {
    const READ: &[&str] = &[
        "get",
        "list",
        "read",
        "search",
        "find",
        "query",
        "describe",
        "show",
        "fetch",
        "count",
        "status",
        "diff",
        "log",
        "lookup",
        "view",
        "inspect",
        "check",
        "explain",
        "select",
        "open",
        "scan",
        "exists",
        "info",
        "stat",
        "peek",
        "keys",
        "ttl",
        "type",
        "hget",
        "hgetall",
        "hkeys",
        "hvals",
        "hexists",
        "smembers",
        "sismember",
        "lrange",
        "llen",
        "zrange",
        "zscore",
        "mget",
        "dbsize",
        "ping",
        "convert",
        "resolve",
        "validate",
        "preview",
        "summarize",
        "browse",
        "retrieve",
        "download",
        "export",
        "analyze",
        "compare",
        "head",
        "tail",
        "load",
    ];
    const ADD: &[&str] = &[
        "create", "add", "insert", "append", "commit", "push", "send", "post", "upload", "publish",
        "enqueue", "lpush", "rpush", "sadd", "zadd", "hset", "xadd", "incr", "incrby", "decr",
        "new", "make", "generate", "record", "log_", "save", "store", "start", "run", "execute",
        "exec", "init", "clone", "fork", "branch", "tag", "schedule", "invite", "comment", "reply",
    ];
    const CHANGE: &[&str] = &[
        "update",
        "set",
        "write",
        "put",
        "edit",
        "modify",
        "move",
        "rename",
        "replace",
        "patch",
        "merge",
        "checkout",
        "reset",
        "restore",
        "rebase",
        "upsert",
        "overwrite",
        "configure",
        "mset",
        "expire",
        "persist",
        "lset",
        "rpop",
        "lpop",
        "spop",
        "pop",
        "assign",
        "close",
        "approve",
        "cancel",
        "stop",
        "apply",
        "sync",
        "migrate",
    ];
    const DELETE: &[&str] = &[
        "delete", "remove", "drop", "destroy", "purge", "clear", "truncate", "flush", "flushdb",
        "flushall", "del", "unlink", "rm", "kill", "revoke", "erase", "wipe", "hdel", "srem",
        "zrem", "lrem", "xdel", "prune", "evict",
    ];
    let w = word.to_ascii_lowercase();
    let stems = [
        w.clone(),
        w.strip_suffix("es").unwrap_or(&w).to_owned(),
        w.strip_suffix('s').unwrap_or(&w).to_owned(),
    ];
    let is = |list: &[&str]| stems.iter().any(|s| list.contains(&s.as_str()));
    // Most specific first: `reset` removes, `list` reads.
    if is(DELETE) {
        Some(Action::Delete)
    } else if is(CHANGE) {
        Some(Action::Change)
    } else if is(ADD) {
        Some(Action::Add)
    } else if is(READ) {
        Some(Action::Read)
    } else {
        None
    }
}

/// The words of a name: `git_diff_unstaged`, `createEntities`, `read-file`.
fn words(name: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut prev_lower = false;
    for c in name.chars() {
        if c == '_' || c == '-' || c == '.' || c == '/' || c == ' ' {
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
            prev_lower = false;
            continue;
        }
        if c.is_uppercase() && prev_lower && !cur.is_empty() {
            out.push(std::mem::take(&mut cur));
        }
        prev_lower = c.is_lowercase() || c.is_ascii_digit();
        cur.extend(c.to_lowercase());
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// A tool's effects: its annotations, or a proposal from its name (the first word that names
/// an action; a server prefix such as `git_` or `redis_` is skipped by that rule) or else from
/// the first word of its description (`Deletes a key.`).
pub fn effects(tool: &Value) -> Effects {
    if let Some(a) = tool.get("annotations").and_then(Value::as_object) {
        let hints: Vec<(&'static str, bool)> = [
            ("read_only", "readOnlyHint"),
            ("destructive", "destructiveHint"),
            ("idempotent", "idempotentHint"),
            ("open_world", "openWorldHint"),
        ]
        .into_iter()
        .filter_map(|(ours, theirs)| a.get(theirs).and_then(Value::as_bool).map(|b| (ours, b)))
        .collect();
        if !hints.is_empty() {
            return Effects::Annotated(hints);
        }
    }
    let name = tool.get("name").and_then(Value::as_str).unwrap_or("");
    let description = tool
        .get("description")
        .and_then(Value::as_str)
        .unwrap_or("");
    let from_name = words(name)
        .into_iter()
        .find_map(|w| action(&w).map(|a| (a, w)));
    let found = from_name
        .map(|(a, w)| (a, format!("the name says `{w}`")))
        .or_else(|| {
            let first = description.split_whitespace().next()?;
            let w = first.trim_matches(|c: char| !c.is_alphanumeric());
            action(w).map(|a| (a, format!("the description starts `{w}`")))
        });
    let Some((a, why)) = found else {
        return Effects::Unknown;
    };
    let open_world = words(name)
        .iter()
        .chain(words(description).iter())
        .any(|w| {
            matches!(
                w.as_str(),
                "web" | "http" | "https" | "url" | "internet" | "email" | "browser" | "webpage"
            )
        });
    let hints = match a {
        Action::Read => vec![
            ("read_only", true),
            ("destructive", false),
            ("idempotent", true),
        ],
        Action::Add => vec![
            ("read_only", false),
            ("destructive", false),
            ("idempotent", false),
        ],
        Action::Change => vec![
            ("read_only", false),
            ("destructive", true),
            ("idempotent", true),
        ],
        Action::Delete => vec![
            ("read_only", false),
            ("destructive", true),
            ("idempotent", true),
        ],
    };
    let mut hints = hints;
    hints.push(("open_world", open_world));
    Effects::Proposed(hints, why)
}

/// Parameters (names, or pointers `/list/*/field` one level into arrays of objects) whose
/// names say they refer to something that must already exist: ids, keys, paths, names of
/// existing things. Creating tools take new names, so theirs are left out.
pub fn inputs(tool: &Value) -> Vec<String> {
    let creates = matches!(
        words(tool.get("name").and_then(Value::as_str).unwrap_or(""))
            .iter()
            .find_map(|w| action(w)),
        Some(Action::Add)
    );
    let Some(props) = tool
        .pointer("/inputSchema/properties")
        .and_then(Value::as_object)
    else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (name, schema) in props {
        if refers(name) && !creates {
            out.push(name.clone());
        }
        if let Some(items) = schema
            .pointer("/items/properties")
            .and_then(Value::as_object)
        {
            for field in items.keys() {
                if refers(field) && (!creates || is_link(field)) {
                    out.push(format!("/{name}/*/{field}"));
                }
            }
        }
    }
    out
}

/// Names that say "an existing thing": `id`, `user_id`, `entityName`, `path`, `key`, `table`.
fn refers(name: &str) -> bool {
    let w = words(name);
    let last = w.last().map(String::as_str).unwrap_or("");
    matches!(
        last,
        "id" | "ids"
            | "uuid"
            | "key"
            | "keys"
            | "path"
            | "paths"
            | "uri"
            | "file"
            | "files"
            | "table"
            | "handle"
            | "ref"
            | "sha"
            | "hash"
            | "slug"
    ) || is_link(name)
        || (last == "name" && w.len() > 1 && !matches!(w[0].as_str(), "new" | "display" | "full"))
}

/// Fields of a link between existing things (`from`, `to`, `source`, `target`).
fn is_link(name: &str) -> bool {
    matches!(
        name,
        "from" | "to" | "source" | "target" | "parent" | "parentId" | "parent_id"
    )
}

/// String parameters that carry SQL: named `query`, `sql` or `statement` on a tool whose name or
/// description speaks of SQL, queries or tables.
pub fn sql(tool: &Value) -> Vec<String> {
    let text = format!(
        "{} {}",
        tool.get("name").and_then(Value::as_str).unwrap_or(""),
        tool.get("description")
            .and_then(Value::as_str)
            .unwrap_or("")
    )
    .to_ascii_lowercase();
    let speaks = ["sql", "select", "query", "table", "database"]
        .iter()
        .any(|w| text.contains(w));
    let Some(props) = tool
        .pointer("/inputSchema/properties")
        .and_then(Value::as_object)
    else {
        return Vec::new();
    };
    props
        .iter()
        .filter(|(n, s)| {
            speaks
                && matches!(n.as_str(), "query" | "sql" | "statement")
                && s.get("type").and_then(Value::as_str) == Some("string")
        })
        .map(|(n, _)| n.clone())
        .collect()
}

/// A key or a string as YAML: plain when it can be, JSON-quoted otherwise.
fn scalar(s: &str) -> String {
    let plain = !s.is_empty()
        && s.chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == '/')
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "_-./*".contains(c))
        && !matches!(
            s,
            "true" | "false" | "null" | "yes" | "no" | "on" | "off" | "y" | "n"
        );
    if plain {
        s.to_owned()
    } else {
        Value::String(s.to_owned()).to_string()
    }
}

/// One comment line (or several, each `# `-prefixed) at `indent`.
fn comment(out: &mut String, indent: &str, text: &str) {
    for line in text.lines() {
        let _ = writeln!(out, "{indent}# {line}");
    }
}

fn hints_text(hints: &[(&'static str, bool)]) -> String {
    hints
        .iter()
        .map(|(k, v)| format!("{k}: {v}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// How many tools got their effects from where: (annotated, proposed, unknown).
pub fn census(tools: &[Value]) -> (usize, usize, usize) {
    tools
        .iter()
        .fold((0, 0, 0), |(a, p, u), t| match effects(t) {
            Effects::Annotated(_) => (a + 1, p, u),
            Effects::Proposed(..) => (a, p + 1, u),
            Effects::Unknown => (a, p, u + 1),
        })
}

/// A regex for the start of an error text the common shapes do not already recognise: its
/// first line up to the first `:` (or its first four words), escaped and anchored.
pub fn error_pattern(text: &str) -> String {
    let first = text.lines().next().unwrap_or("").trim();
    let head = match first.find(':') {
        Some(i) if i > 0 => &first[..i],
        _ => {
            let end = first
                .split_whitespace()
                .take(4)
                .map(str::len)
                .sum::<usize>()
                + first.split_whitespace().take(4).count().saturating_sub(1);
            &first[..end.min(first.len())]
        }
    };
    format!("^{}", regex::escape(head))
}

/// The scaffold's text.
pub fn render(f: &Facts) -> String {
    let mut out = String::new();
    let (annotated, proposed, unknown) = census(f.tools);
    let _ = writeln!(
        out,
        "# Capability matrix of {} {}, scaffolded by `agent-seer init` from its tools/list.",
        f.server, f.version
    );
    comment(
        &mut out,
        "",
        &format!(
            "{annotated} tool(s) take their effects from the server's annotations, {proposed} have effects\n\
             proposed from their names (`proposed:`: the harness trial fails until you check each against\n\
             the server and delete the key), {unknown} have nothing to go on (the MCP defaults apply: may\n\
             change state, may destroy, not idempotent, open world; say what they do).\n\
             `inputs` lists arguments that must name something that already exists (an id, a key, a\n\
             path from an earlier answer); `sql` the arguments that carry SQL. Both are proposals too:\n\
             delete what is wrong. The full format: `agent-seer schema capabilities`."
        ),
    );
    let _ = writeln!(out, "server: {}", scalar(f.server));
    if !f.version.is_empty() {
        let _ = writeln!(out, "version: {}", Value::String(f.version.to_owned()));
    }
    let _ = writeln!(out, "source: {}", Value::String(f.source.to_owned()));
    out.push_str("\ntools:\n");
    for tool in f.tools {
        let name = tool.get("name").and_then(Value::as_str).unwrap_or("");
        let mut body = String::new();
        for line in f.audit.get(name).into_iter().flatten() {
            comment(&mut body, "    ", &format!("audit: {line}"));
        }
        let ins = inputs(tool);
        if !ins.is_empty() {
            let list: Vec<String> = ins.iter().map(|i| scalar(i)).collect();
            let _ = writeln!(
                body,
                "    inputs: [{}]   # proposed from the names: review",
                list.join(", ")
            );
        }
        let sq = sql(tool);
        if !sq.is_empty() {
            let _ = writeln!(
                body,
                "    sql: [{}]   # proposed: these arguments carry SQL",
                sq.join(", ")
            );
        }
        match effects(tool) {
            Effects::Annotated(h) => {
                let _ = writeln!(
                    body,
                    "    effects: [{{ {} }}]   # the server's annotations",
                    hints_text(&h)
                );
            }
            Effects::Proposed(h, why) => {
                let _ = writeln!(
                    body,
                    "    effects: [{{ {}, proposed: {} }}]",
                    hints_text(&h),
                    Value::String(why)
                );
            }
            Effects::Unknown => comment(
                &mut body,
                "    ",
                "effects: nothing in the name or description says what this tool does; the MCP defaults apply",
            ),
        }
        if let Some(text) = f.errors.get(name) {
            let one = text.lines().next().unwrap_or("");
            comment(
                &mut body,
                "    ",
                &format!("answered `{{}}` with: {}", truncate(one, 100)),
            );
            let _ = writeln!(
                body,
                "    errors: [{}]   # proposed: an answer starting so is a refusal",
                Value::String(error_pattern(text))
            );
        }
        if body.is_empty() {
            let _ = writeln!(out, "  {}: {{}}", scalar(name));
        } else {
            let _ = writeln!(out, "  {}:", scalar(name));
            out.push_str(&body);
        }
    }
    out
}

fn truncate(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_owned()
    } else {
        let mut t: String = s.chars().take(n).collect();
        t.push('…');
        t
    }
}

/// The required parameters of a tool: a tool without any is not probed (`{}` would run it).
pub fn required(tool: &Value) -> Vec<&str> {
    tool.pointer("/inputSchema/required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

/// An empty arguments object, for the probe.
pub fn empty_arguments() -> Value {
    Value::Object(Map::new())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn names_say_what_a_tool_does() {
        let e = |name: &str, desc: &str| effects(&json!({"name": name, "description": desc}));
        assert!(
            matches!(e("git_status", ""), Effects::Proposed(h, _) if h.contains(&("read_only", true)))
        );
        assert!(
            matches!(e("deleteEntities", ""), Effects::Proposed(h, w) if h.contains(&("destructive", true)) && w.contains("delete"))
        );
        assert!(
            matches!(e("hset", ""), Effects::Proposed(h, _) if h.contains(&("destructive", false)) && h.contains(&("read_only", false)))
        );
        assert!(
            matches!(e("frobnicate", "Removes a key."), Effects::Proposed(h, w) if h.contains(&("destructive", true)) && w.contains("description"))
        );
        assert_eq!(e("frobnicate", "Does things."), Effects::Unknown);
        let annotated = json!({"name": "delete_all", "annotations": {"readOnlyHint": true}});
        assert_eq!(
            effects(&annotated),
            Effects::Annotated(vec![("read_only", true)])
        );
    }

    #[test]
    fn reference_arguments_are_proposed_as_inputs() {
        let t = json!({"name": "create_relations", "inputSchema": {"properties": {"relations": {"type": "array", "items": {"properties": {"from": {}, "to": {}, "relationType": {}}}}}}});
        assert_eq!(inputs(&t), ["/relations/*/from", "/relations/*/to"]);
        let t = json!({"name": "open_nodes", "inputSchema": {"properties": {"names": {}, "entity_id": {}, "limit": {}}}});
        assert_eq!(inputs(&t), ["entity_id"]);
        let t = json!({"name": "get_key", "inputSchema": {"properties": {"key": {}}}});
        assert_eq!(inputs(&t), ["key"]);
    }

    #[test]
    fn error_patterns_are_anchored_prefixes() {
        assert_eq!(
            error_pattern("WRONGTYPE Operation against a key"),
            "^WRONGTYPE Operation against a"
        );
        assert_eq!(
            error_pattern("Tool failed: missing key\nmore"),
            "^Tool failed"
        );
    }
}
