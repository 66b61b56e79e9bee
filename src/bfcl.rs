//! BFCL import: the Berkeley Function Calling Leaderboard's single-turn AST categories (function
//! docs plus possible answers, as the `bfcl-eval` package ships them) as agent-seer suites.
//!
//! Each category becomes a suite (split in two or more when entries declare one function name
//! with different schemas): the union of the entries' function docs as its spec, one scenario
//! per entry whose workflow is the ground truth — the first allowed value of each parameter as
//! the oracle's argument, every allowed value as an `any_of` policy, `""` (BFCL's "may be left
//! out") as `optional`, parameters the answer does not name as `absent` — and a pass threshold
//! of 1.0, because BFCL's verdict is all or nothing. Parallel categories are unordered (the
//! default `dataflow` order). With `answers`, the first possible answer of each entry is also
//! written as a correct transcript.
//!
//! Deliberate differences from BFCL's `ast_checker`, each a switch ([`Options`]):
//! - BFCL ignores `enum`; we check it (`enums: Ignore` strips enums from the spec);
//! - BFCL compares standardised strings (no spaces or `,./-_*^`, lowercase); we compare exactly
//!   (`strings: Normalized` compares as BFCL does);
//! - BFCL rejects `3.0` for an integer; JSON Schema accepts it (`integers: Strict` rejects it).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::{Map, Value};

use crate::harness::{
    AnyOfDoc, CallDoc, Expect, HarnessDoc, LabelDoc, Normalize, PolicyDoc, PolicyName, ScenarioDoc,
    StepCall, StepDoc, ThresholdsDoc, TranscriptBody, TranscriptDoc, TurnDoc,
};
use crate::source::{SourceError, SourceFile};

/// The categories imported.
pub const CATEGORIES: [&str; 4] = ["simple", "multiple", "parallel", "parallel_multiple"];

/// How BFCL's `enum` constraints are imported.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum EnumMode {
    /// JSON Schema `enum` is enforced (ours).
    #[default]
    Check,
    /// Enums are removed from the imported spec (BFCL's).
    Ignore,
}

/// How string values are compared with BFCL's possible answers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum StringMode {
    /// Strings must equal an allowed value (ours).
    #[default]
    Exact,
    /// BFCL's standardised comparison.
    Normalized,
}

/// Whether a whole float such as `3.0` counts as an `integer`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum IntegerMode {
    /// `3.0` is an integer, as JSON Schema says (ours).
    #[default]
    JsonSchema,
    /// `3.0` is not an integer (BFCL's Python type check).
    Strict,
}

/// How to import.
#[derive(Clone, Copy, Debug, Default)]
pub struct Options {
    /// `--enum`: enforce the functions' enums (ours) or drop them (BFCL's).
    pub enums: EnumMode,
    /// `--strings`: exact comparison (ours) or BFCL's standardised one.
    pub strings: StringMode,
    /// `--integers`: JSON Schema's integers (ours) or Python's type check (BFCL's).
    pub integers: IntegerMode,
    /// Also write each entry's first possible answer as a correct transcript.
    pub answers: bool,
    /// `--force`: replace files that exist in the output folder (else nothing is written).
    pub force: bool,
}

impl Options {
    /// Every switch set to BFCL's behaviour.
    pub fn bfcl_compatible() -> Self {
        Self {
            enums: EnumMode::Ignore,
            strings: StringMode::Normalized,
            integers: IntegerMode::Strict,
            answers: false,
            force: false,
        }
    }
}

/// One BFCL entry: its question, function docs and ground truth.
#[derive(Clone, Debug)]
pub struct Entry {
    /// The entry's id (`simple_0`), which becomes the scenario id.
    pub id: String,
    /// Its category (`simple`, `multiple`, `parallel`, `parallel_multiple`).
    pub category: String,
    /// The user's words (all user messages of the first turn, joined).
    pub prompt: String,
    /// The function docs offered with the question, as BFCL ships them.
    pub functions: Vec<Value>,
    /// `[{function: {param: [allowed values]}}]`.
    pub ground_truth: Vec<GroundTruthCall>,
}

/// One ground-truth call: the function and, per parameter, its allowed values.
pub type GroundTruthCall = (String, Map<String, Value>);

/// What an import wrote and left out.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Report {
    /// Suite name → scenarios written.
    pub suites: BTreeMap<String, usize>,
    /// Entries left out, with why.
    pub skipped: Vec<String>,
    /// Every file written (harnesses, tool specs, answer transcripts).
    pub files: Vec<PathBuf>,
}

impl Report {
    /// The suites this import wrote, each harness passed through `adjust` before its suite is
    /// built (a pass threshold of one's own, say), and which holds each entry's scenario.
    pub fn suites(
        &self,
        adjust: impl Fn(&mut crate::harness::Harness),
    ) -> Result<Imported, SourceError> {
        Imported::load(self.files.iter().cloned(), adjust)
    }
}

/// Imported suites, found by the entries they hold.
#[derive(Default)]
pub struct Imported {
    /// The loaded suites, one per harness the import wrote.
    pub suites: Vec<crate::check::Suite>,
    by_entry: std::collections::HashMap<String, usize>,
}

impl Imported {
    /// The suites an earlier import wrote under `out` (its `harnesses/*.yaml`).
    pub fn read(out: &Path) -> Result<Self, SourceError> {
        let dir = out.join("harnesses");
        let entries = std::fs::read_dir(&dir).map_err(|e| SourceError::io(&dir, e))?;
        let mut paths = Vec::new();
        for e in entries {
            paths.push(e.map_err(|e| SourceError::io(&dir, e))?.path());
        }
        paths.sort();
        Self::load(paths, |_| {})
    }

    fn load(
        paths: impl IntoIterator<Item = PathBuf>,
        adjust: impl Fn(&mut crate::harness::Harness),
    ) -> Result<Self, SourceError> {
        let mut out = Imported::default();
        for p in paths
            .into_iter()
            .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        {
            let mut h = crate::harness::Harness::load(&p)?;
            adjust(&mut h);
            for sc in &h.scenarios {
                out.by_entry.insert(sc.id.clone(), out.suites.len());
            }
            out.suites.push(crate::check::Suite::from_harness(h)?);
        }
        Ok(out)
    }

    /// The index in `suites` of the suite holding `entry`'s scenario.
    pub fn suite_of(&self, entry: &str) -> Option<usize> {
        self.by_entry.get(entry).copied()
    }
}

/// A model's output in BFCL's format — `[{"function": {"param": value}}]`, as BFCL's checker
/// takes it — as a transcript answering scenario `entry` of an imported suite. `path` names it
/// in errors; the output is kept as its text.
pub fn output_transcript(
    entry: &str,
    output: &Value,
    id: &str,
    path: &Path,
) -> Result<crate::harness::Transcript, SourceError> {
    let calls = output_calls(output)
        .map_err(|(what, _)| SourceFile::from_text(path, String::new()).error(shape(id, &what)))?;
    calls_transcript(entry, calls, id, path)
}

/// Transcript calls (from [`output_calls`]) as a transcript answering scenario `entry`.
fn calls_transcript(
    entry: &str,
    calls: Vec<CallDoc>,
    id: &str,
    path: &Path,
) -> Result<crate::harness::Transcript, SourceError> {
    let doc = TranscriptDoc {
        scenario: Some(entry.to_owned()),
        prompt: None,
        agent: None,
        note: None,
        label: LabelDoc::default(),
        body: TranscriptBody::Calls { calls, reply: None },
    };
    let text = doc
        .to_yaml()
        .map_err(|e| SourceFile::from_text(path, String::new()).error(shape(id, &e.to_string())))?;
    crate::harness::Transcript::from_source(SourceFile::from_text(path, text), id.to_owned())
}

fn shape(id: &str, what: &str) -> String {
    format!("BFCL output `{id}`: {what}; expected [{{\"function\": {{\"param\": value}}}}]")
}

/// A BFCL output's calls as transcript calls, or what is wrong and where in the output.
fn output_calls(output: &Value) -> Result<Vec<CallDoc>, (String, Vec<Step>)> {
    let calls = output
        .as_array()
        .ok_or_else(|| ("not a list of calls".to_owned(), vec![]))?;
    calls
        .iter()
        .enumerate()
        .map(|(i, c)| {
            match c
                .as_object()
                .map(|m| m.iter().collect::<Vec<_>>())
                .as_deref()
            {
                Some([(name, Value::Object(args))]) => Ok(CallDoc {
                    tool: (*name).clone(),
                    arguments: args.clone(),
                    id: None,
                    output: None,
                }),
                Some([(name, _)]) => Err((
                    format!("the arguments of `{name}` are not an object"),
                    vec![Step::Index(i), Step::Key((*name).clone())],
                )),
                _ => Err((
                    "a call is not an object with one function name".to_owned(),
                    vec![Step::Index(i)],
                )),
            }
        })
        .collect()
}

/// One step into a JSON value.
#[derive(Clone, Debug)]
enum Step {
    Key(String),
    Index(usize),
}

/// The column (1-based, in bytes, as serde_json counts) where the value at `path` starts on
/// line `line` of `file` — looked up only to word an error — or 1 when it is not there.
fn column_at(file: &SourceFile, line: u32, path: &[Step]) -> u32 {
    use serde_json::value::RawValue;
    let Some(text) = (line as usize)
        .checked_sub(1)
        .and_then(|i| file.text.lines().nth(i))
    else {
        return 1;
    };
    let mut at: &RawValue = match serde_json::from_str(text) {
        Ok(raw) => raw,
        Err(_) => return 1,
    };
    for step in path {
        let next = match step {
            Step::Key(k) => serde_json::from_str::<BTreeMap<String, &RawValue>>(at.get())
                .ok()
                .and_then(|m| m.get(k).copied()),
            Step::Index(i) => serde_json::from_str::<Vec<&RawValue>>(at.get())
                .ok()
                .and_then(|v| v.get(*i).copied()),
        };
        match next {
            Some(raw) => at = raw,
            None => return 1,
        }
    }
    // The raw value borrows from `text`: its offset is where it starts.
    (at.get().as_ptr() as usize - text.as_ptr() as usize + 1) as u32
}

/// One line of a model-outputs file, as a transcript.
#[derive(Clone, Debug)]
pub struct ModelOutput {
    /// The line's `id`, else `o<line number>`.
    pub id: String,
    /// The BFCL entry (our scenario id) it answers.
    pub entry: String,
    /// The output's calls as a transcript of its entry's scenario.
    pub transcript: crate::harness::Transcript,
    /// The whole line, for fields of the caller's own (`bfcl_valid`, …).
    pub line: Value,
}

/// Reads model outputs, one JSON object per line — `entry` (the BFCL entry id), `output` (the
/// calls in BFCL's format) and optionally `id` — as transcripts answering their entries'
/// scenarios. A malformed line (invalid JSON, no `entry`, an output not in BFCL's format) is an
/// error naming the file and line, and the column of the offending value when it is there
/// (the call that is not a call, the arguments that are no object).
pub fn read_outputs(path: &Path) -> Result<Vec<ModelOutput>, SourceError> {
    let mut out = Vec::new();
    for (file, line, v) in lines(path)? {
        let entry = str_field(&file, line, &v, "entry")?;
        let id = match v.get("id") {
            None => format!("o{line}"),
            Some(_) => str_field(&file, line, &v, "id")?,
        };
        let output = v
            .get("output")
            .ok_or_else(|| file.error_at(line, 1, "no `output`"))?;
        // A shape error points into the line.
        let calls = output_calls(output).map_err(|(what, mut at)| {
            at.insert(0, Step::Key("output".into()));
            file.error_at(line, column_at(&file, line, &at), shape(&id, &what))
        })?;
        let transcript = calls_transcript(&entry, calls, &id, path).map_err(|e| {
            // The transcript is built in memory: its error belongs to this line.
            file.error_at(line, 1, e.message.clone())
        })?;
        out.push(ModelOutput {
            id,
            entry,
            transcript,
            line: v,
        });
    }
    Ok(out)
}

/// The question and possible-answer files of a category under `data_dir` (`BFCL_v4_…` or
/// `BFCL_v3_…`; `simple` is `simple_python` in v4).
pub fn files(data_dir: &Path, category: &str) -> Option<(PathBuf, PathBuf)> {
    let mut names = vec![
        format!("BFCL_v4_{category}.json"),
        format!("BFCL_v3_{category}.json"),
    ];
    if category == "simple" {
        names.insert(0, "BFCL_v4_simple_python.json".into());
    }
    names.into_iter().find_map(|n| {
        let q = data_dir.join(&n);
        let a = data_dir.join("possible_answer").join(&n);
        (q.is_file() && a.is_file()).then_some((q, a))
    })
}

/// Reads a category's entries, answers joined by id. Every malformed line is an error naming
/// its file and line.
pub fn read(data_dir: &Path, category: &str) -> Result<Vec<Entry>, SourceError> {
    let (q, a) = files(data_dir, category).ok_or_else(|| {
        SourceError::io(
            &data_dir.join(format!("BFCL_v4_{category}.json")),
            std::io::Error::new(
                std::io::ErrorKind::NotFound,
                "no question file with its possible_answer/ twin for this category",
            ),
        )
    })?;
    let answers: BTreeMap<String, Vec<GroundTruthCall>> = lines(&a)?
        .into_iter()
        .map(|(file, line, v)| {
            let id = str_field(&file, line, &v, "id")?;
            // Each shape error points at the value that is wrong, when the line has it.
            let err =
                |at: &[Step], what: String| file.error_at(line, column_at(&file, line, at), what);
            let truth = v
                .get("ground_truth")
                .and_then(Value::as_array)
                .ok_or_else(|| {
                    err(
                        &[Step::Key("ground_truth".into())],
                        format!("entry `{id}`: no `ground_truth` array"),
                    )
                })?
                .iter()
                .enumerate()
                .map(|(i, call)| {
                    let at = [Step::Key("ground_truth".into()), Step::Index(i)];
                    let obj = call.as_object().filter(|o| o.len() == 1).ok_or_else(|| {
                        err(
                            &at,
                            format!(
                                "entry `{id}`: a ground-truth call must be \
                                 `{{function: {{param: [values]}}}}`"
                            ),
                        )
                    })?;
                    let (name, params) = obj.iter().next().expect("one key");
                    let params = params.as_object().cloned().ok_or_else(|| {
                        let mut at = at.to_vec();
                        at.push(Step::Key(name.clone()));
                        err(
                            &at,
                            format!("entry `{id}`: `{name}`'s parameters must be an object"),
                        )
                    })?;
                    Ok((name.clone(), params))
                })
                .collect::<Result<Vec<_>, SourceError>>()?;
            Ok((id, truth))
        })
        .collect::<Result<_, SourceError>>()?;
    let mut out = Vec::new();
    for (file, line, v) in lines(&q)? {
        let id = str_field(&file, line, &v, "id")?;
        let err = |key: &str, what: String| {
            file.error_at(line, column_at(&file, line, &[Step::Key(key.into())]), what)
        };
        // The id becomes a scenario id and, with answers, a transcript's file name.
        if let Err(e) = crate::source::file_name(&id) {
            return Err(err("id", format!("entry id {e}")));
        }
        let Some(ground_truth) = answers.get(&id).cloned() else {
            return Err(err(
                "id",
                format!("entry `{id}` has no possible answer in {}", a.display()),
            ));
        };
        let prompt = v
            .get("question")
            .and_then(|q| q.get(0))
            .and_then(Value::as_array)
            .map(|msgs| {
                msgs.iter()
                    .filter(|m| m.get("role").and_then(Value::as_str) == Some("user"))
                    .filter_map(|m| m.get("content").and_then(Value::as_str))
                    .collect::<Vec<_>>()
                    .join("\n")
            })
            .filter(|p| !p.is_empty())
            .ok_or_else(|| err("question", format!("entry `{id}` has no user message")))?;
        let functions = v
            .get("function")
            .and_then(Value::as_array)
            .cloned()
            .ok_or_else(|| err("function", format!("entry `{id}` has no `function` array")))?;
        out.push(Entry {
            id,
            category: category.to_owned(),
            prompt,
            functions,
            ground_truth,
        });
    }
    Ok(out)
}

fn lines(path: &Path) -> Result<Vec<(SourceFile, u32, Value)>, SourceError> {
    let file = SourceFile::read(path)?;
    let mut out = Vec::new();
    for (i, l) in file.text.lines().enumerate() {
        if l.trim().is_empty() {
            continue;
        }
        let line = i as u32 + 1;
        let v: Value = serde_json::from_str(l)
            .map_err(|e| file.error_at(line, e.column() as u32, format!("invalid JSON: {e}")))?;
        out.push((file.clone(), line, v));
    }
    Ok(out)
}

fn str_field(file: &SourceFile, line: u32, v: &Value, key: &str) -> Result<String, SourceError> {
    v.get(key)
        .and_then(Value::as_str)
        .map(str::to_owned)
        .ok_or_else(|| {
            let column = column_at(file, line, &[Step::Key(key.to_owned())]);
            file.error_at(line, column, format!("no string `{key}`"))
        })
}

/// Splits entries into groups in which no function name has two different schemas.
fn groups(entries: Vec<Entry>) -> Vec<Vec<Entry>> {
    let mut groups: Vec<(BTreeMap<String, Value>, Vec<Entry>)> = Vec::new();
    for e in entries {
        let fits = |docs: &BTreeMap<String, Value>| {
            e.functions.iter().all(|f| {
                let name = f.get("name").and_then(Value::as_str).unwrap_or("");
                docs.get(name).is_none_or(|d| d == f)
            })
        };
        let at = match groups.iter().position(|(docs, _)| fits(docs)) {
            Some(i) => i,
            None => {
                groups.push((BTreeMap::new(), Vec::new()));
                groups.len() - 1
            }
        };
        for f in &e.functions {
            let name = f
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned();
            groups[at].0.insert(name, f.clone());
        }
        groups[at].1.push(e);
    }
    groups.into_iter().map(|(_, e)| e).collect()
}

/// Removes every `enum` from a BFCL function doc.
fn strip_enums(v: &mut Value) {
    match v {
        Value::Object(m) => {
            m.remove("enum");
            m.values_mut().for_each(strip_enums);
        }
        Value::Array(a) => a.iter_mut().for_each(strip_enums),
        _ => {}
    }
}

/// The JSON Schema of one parameter of a function doc, converted.
fn param_schema(doc: &Value, param: &str) -> Option<Value> {
    let p = doc.get("parameters")?.get("properties")?.get(param)?;
    Some(crate::spec::bfcl_to_json_schema(p))
}

/// BFCL's nested form: an object (or list of objects) whose values are lists of allowed values.
fn nested_answer(v: &Value) -> bool {
    match v {
        Value::Object(m) => !m.is_empty() && m.values().all(Value::is_array),
        Value::Array(items) => items.iter().any(|i| i.is_object() && nested_answer(i)),
        _ => false,
    }
}

/// Builds one scenario, or says why the entry cannot be one.
fn scenario(
    e: &Entry,
    docs: &BTreeMap<String, Value>,
    opts: Options,
) -> Result<ScenarioDoc, String> {
    let mut workflow = Vec::new();
    for (name, params) in &e.ground_truth {
        let doc = docs.get(name).ok_or_else(|| {
            format!("the answer calls `{name}`, which the entry does not declare")
        })?;
        let declared: Vec<String> = doc
            .get("parameters")
            .and_then(|p| p.get("properties"))
            .and_then(Value::as_object)
            .map(|m| m.keys().cloned().collect())
            .unwrap_or_default();
        if let Some(p) = params.keys().find(|p| !declared.contains(p)) {
            return Err(format!(
                "the answer passes `{p}`, which `{name}` does not declare (BFCL's own checker rejects this answer)"
            ));
        }
        let mut args = Map::new();
        let mut policies = BTreeMap::new();
        for (param, allowed) in params {
            let allowed = allowed
                .as_array()
                .ok_or_else(|| format!("`{name}.{param}`: allowed values must be a list"))?;
            let optional = allowed.iter().any(|v| v == "");
            let values: Vec<Value> = allowed.iter().filter(|v| *v != "").cloned().collect();
            if values.is_empty() {
                policies.insert(param.clone(), PolicyDoc::Named(PolicyName::Absent));
                continue;
            }
            if values.iter().any(nested_answer) {
                return Err(format!(
                    "`{name}.{param}` has nested possible answers (an object of allowed values), which are not imported"
                ));
            }
            // The oracle's own argument must pass the schema: the first allowed value that does.
            let schema = param_schema(doc, param);
            let validator = schema
                .as_ref()
                .and_then(|s| jsonschema::validator_for(s).ok());
            let pick = match &validator {
                None => values.first(),
                Some(val) => values.iter().find(|v| val.is_valid(v)),
            };
            let Some(pick) = pick else {
                let why = validator
                    .and_then(|val| val.iter_errors(&values[0]).next().map(|e| e.to_string()))
                    .unwrap_or_default();
                return Err(format!(
                    "no allowed value of `{name}.{param}` passes its schema (BFCL checks types only): {why}"
                ));
            };
            args.insert(param.clone(), pick.clone());
            let integer = schema
                .as_ref()
                .and_then(|s| s.get("type"))
                .is_some_and(|t| t == "integer");
            let any_of = AnyOfDoc {
                any_of: values,
                optional,
                normalize: (opts.strings == StringMode::Normalized).then_some(Normalize::Bfcl),
                strict_integer: opts.integers == IntegerMode::Strict && integer,
            };
            policies.insert(param.clone(), PolicyDoc::AnyOf(any_of));
        }
        for d in declared {
            if !params.contains_key(&d) {
                policies.insert(d, PolicyDoc::Named(PolicyName::Absent));
            }
        }
        let mut step = StepDoc::new(StepCall::Mcp {
            tool: name.clone(),
            arguments: args,
        });
        step.match_policies = policies;
        workflow.push(step);
    }
    Ok(ScenarioDoc {
        id: e.id.clone(),
        category: Some(format!("BFCL {}", e.category)),
        turns: vec![TurnDoc {
            prompt: e.prompt.clone(),
            workflow,
            ..TurnDoc::default()
        }],
        ..ScenarioDoc::default()
    })
}

/// Imports `categories` from `data_dir` into `out` (`harnesses/` and, with answers,
/// `transcripts/`). Nothing is written unless every file can be: an existing file is replaced
/// only with [`Options::force`], and never through a link out of `out` ([`crate::source::OutDir`]).
pub fn import(
    data_dir: &Path,
    out: &Path,
    categories: &[&str],
    opts: Options,
) -> Result<Report, SourceError> {
    let mut report = Report::default();
    let harness_dir = out.join("harnesses");
    let mut files = crate::source::OutDir::new(out, opts.force);
    for category in categories {
        // The category names the suite's files.
        crate::source::file_name(category)
            .map_err(|e| SourceError::about(data_dir, format!("category {e}")))?;
        let entries = read(data_dir, category)?;
        for (i, group) in groups(entries).into_iter().enumerate() {
            let suite = if i == 0 {
                format!("bfcl_{category}")
            } else {
                format!("bfcl_{category}_{}", i + 1)
            };
            let mut docs: BTreeMap<String, Value> = BTreeMap::new();
            for e in &group {
                for f in &e.functions {
                    let mut f = f.clone();
                    if opts.enums == EnumMode::Ignore {
                        strip_enums(&mut f);
                    }
                    let name = f
                        .get("name")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_owned();
                    docs.insert(name, f);
                }
            }
            let mut scenarios = Vec::new();
            let mut kept = Vec::new();
            for e in &group {
                match scenario(e, &docs, opts) {
                    Ok(s) => {
                        scenarios.push(s);
                        kept.push(e);
                    }
                    Err(why) => report.skipped.push(format!("{}: {why}", e.id)),
                }
            }
            if scenarios.is_empty() {
                continue;
            }
            let tools_name = format!("{suite}.tools.json");
            let tools: Vec<&Value> = docs.values().collect();
            let tools_path = harness_dir.join(&tools_name);
            let tools_text = serde_json::to_string_pretty(&tools)
                .map_err(|e| SourceError::caused_by(&tools_path, e))?;
            files.add(tools_path.clone(), tools_text)?;
            let doc = HarnessDoc {
                suite: Some(suite.clone()),
                description: Some(format!(
                    "BFCL `{category}` imported by agent-seer: {} entries; enums {}, strings {}, integers {}.",
                    scenarios.len(),
                    if opts.enums == EnumMode::Check {
                        "checked"
                    } else {
                        "ignored (as BFCL)"
                    },
                    if opts.strings == StringMode::Exact {
                        "exact"
                    } else {
                        "standardised (as BFCL)"
                    },
                    if opts.integers == IntegerMode::JsonSchema {
                        "as JSON Schema (3.0 is an integer)"
                    } else {
                        "strict (as BFCL)"
                    },
                )),
                tools: Some(vec![tools_name]),
                thresholds: Some(ThresholdsDoc {
                    pass: Some(1.0),
                    min_gap: Some(0.0),
                    trajectory: None,
                }),
                scenarios,
                ..HarnessDoc::default()
            };
            let harness_path = harness_dir.join(format!("{suite}.yaml"));
            let text = doc
                .to_yaml()
                .map_err(|e| SourceError::caused_by(&harness_path, e))?;
            files.add(
                harness_path.clone(),
                format!(
                    "# yaml-language-server: $schema=https://agent-seer.dev/schemas/harness.schema.json\n# Generated by `agent-seer import bfcl`.\n{text}"
                ),
            )?;
            report.files.push(tools_path);
            report.files.push(harness_path);
            if opts.answers {
                let dir = out.join("transcripts").join(&suite);
                for e in kept {
                    let calls = e
                        .ground_truth
                        .iter()
                        .map(|(name, params)| CallDoc {
                            tool: name.clone(),
                            arguments: params
                                .iter()
                                .filter_map(|(p, allowed)| {
                                    let v = allowed.as_array()?.iter().find(|v| *v != "")?;
                                    Some((p.clone(), v.clone()))
                                })
                                .collect(),
                            id: None,
                            output: None,
                        })
                        .collect();
                    let t = TranscriptDoc {
                        scenario: Some(e.id.clone()),
                        prompt: None,
                        agent: None,
                        note: None,
                        label: LabelDoc {
                            expect: Some(Expect::Pass),
                            ..LabelDoc::default()
                        },
                        body: TranscriptBody::Calls { calls, reply: None },
                    };
                    let path = dir.join(format!("{}.yaml", e.id));
                    let text = t.to_yaml().map_err(|e| SourceError::caused_by(&path, e))?;
                    files.add(path.clone(), text)?;
                    report.files.push(path);
                }
            }
            report.suites.insert(suite, doc.scenarios.len());
        }
    }
    files.commit()?;
    Ok(report)
}
