//! Grounding a suite's mocks in the real server: `agent-seer ground`.
//!
//! For every scenario (each `any_of` choice of its turns on its own), a fresh server is started
//! after the scenario's set-up — a fresh folder, the `ground.files` written into it, the
//! `ground.setup` command run there — and the oracle's calls are sent in order. Each step's
//! answer becomes its `mock_output` (with `grounding: high`); with transcripts, each recorded
//! call's answer becomes its `output:`. `--check` writes nothing and names every step whose
//! answer differs: drift between the suite and the server it claims to mock.
//!
//! The planning ([`plan`]), the comparison and the text edits ([`set_key`]) are I/O-free; the
//! runs ([`run_job`]) start processes. Edits are textual, as `bless`'s: only the edited key's
//! lines change, comments and layout are kept, and the edited file is loaded again and checked
//! to hold the answers before anything is written.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

use crate::harness::{Ground, Harness, Scenario, Transcript};
use crate::mcp::{Client, Endpoint, McpError, Protocol};
use crate::source::Location;

/// Which key of which file an answer goes to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Slot {
    /// A workflow step's `mock_output:` in the harness.
    Mock,
    /// A transcript call's `output:`.
    Output,
}

impl Slot {
    /// The YAML key.
    pub fn key(self) -> &'static str {
        match self {
            Slot::Mock => "mock_output",
            Slot::Output => "output",
        }
    }
}

/// One call to send, and where its answer goes.
#[derive(Clone, Debug)]
pub struct Target {
    /// The tool.
    pub tool: String,
    /// The arguments as the suite writes them (paths not yet moved into the run's folder).
    pub arguments: Value,
    /// Where the call's mapping starts.
    pub location: Location,
    /// The answer the file holds now.
    pub recorded: Option<Value>,
    /// Which key the answer goes to.
    pub slot: Slot,
    /// Whether this run grounds the call (a step shared by several `any_of` choices is sent in
    /// each of their runs, but its answer is taken from the first).
    pub grounds: bool,
    /// `scenario x, turn 1, step 2 (`tool`)` or `transcript t03, call 2 (`tool`)`.
    pub label: String,
}

/// One fresh server: a scenario's set-up, then calls in order.
#[derive(Clone, Debug)]
pub struct Job {
    /// The scenario whose set-up the server starts from.
    pub scenario: String,
    /// The set-up: the suite's `ground:` with the scenario's over it.
    pub ground: Ground,
    /// What the job is, in words (`scenario tokyo-now`, `scenario x (any_of choice 2)`,
    /// `transcript t03`).
    pub what: String,
    /// The calls, in order.
    pub calls: Vec<Target>,
}

/// What a harness's `ground:` and a scenario's combine to.
pub fn effective(suite: &Ground, scenario: &Ground) -> Ground {
    let mut g = suite.clone();
    if scenario.setup.is_some() {
        g.setup = scenario.setup.clone();
    }
    g.files.extend(scenario.files.clone());
    g.env.extend(scenario.env.clone());
    g.skip = scenario.skip.clone();
    g
}

/// The jobs for a harness's scenarios (`only`: their ids; empty for all), with the scenarios
/// left out and why.
pub fn plan(harness: &Harness, only: &[String]) -> (Vec<Job>, Vec<(String, String)>) {
    let mut jobs = Vec::new();
    let mut skipped = Vec::new();
    for sc in &harness.scenarios {
        if !only.is_empty() && !only.contains(&sc.id) {
            continue;
        }
        let ground = effective(&harness.ground, &sc.ground);
        if let Some(why) = &ground.skip {
            skipped.push((sc.id.clone(), why.clone()));
            continue;
        }
        jobs.extend(scenario_jobs(sc, &ground));
    }
    (jobs, skipped)
}

/// One job per `any_of` choice (turn by turn, the i-th choice of each turn that has one).
fn scenario_jobs(sc: &Scenario, ground: &Ground) -> Vec<Job> {
    let variants: Vec<Vec<Vec<usize>>> = sc.turns.iter().map(|t| t.variants()).collect();
    let runs = variants.iter().map(Vec::len).max().unwrap_or(1).max(1);
    let mut grounded: HashSet<(usize, usize)> = HashSet::new();
    let mut jobs = Vec::new();
    for run in 0..runs {
        let mut calls = Vec::new();
        for (ti, (turn, vs)) in sc.turns.iter().zip(&variants).enumerate() {
            let Some(steps) = vs.get(run).or(vs.last()) else {
                continue;
            };
            for &si in steps {
                let step = &turn.workflow[si];
                calls.push(Target {
                    tool: step.call.tool.clone(),
                    arguments: step.call.arguments().clone(),
                    location: step.call.location.clone(),
                    recorded: step.mock_output.clone(),
                    slot: Slot::Mock,
                    grounds: grounded.insert((ti, si)),
                    label: format!(
                        "scenario `{}`, turn {}, step {} (`{}`)",
                        sc.id,
                        ti + 1,
                        si + 1,
                        step.call.tool
                    ),
                });
            }
        }
        let what = if runs > 1 {
            format!("scenario `{}` (any_of choice {})", sc.id, run + 1)
        } else {
            format!("scenario `{}`", sc.id)
        };
        jobs.push(Job {
            scenario: sc.id.clone(),
            ground: ground.clone(),
            what,
            calls,
        });
    }
    jobs
}

/// The job that replays a transcript's calls from its scenario's set-up.
pub fn transcript_job(harness: &Harness, t: &Transcript) -> Result<Job, String> {
    let id = t.scenario.as_deref().ok_or_else(|| {
        format!(
            "transcript `{}` names no scenario, so there is no set-up to replay it from",
            t.id
        )
    })?;
    let sc = harness.scenario(id).ok_or_else(|| {
        format!(
            "transcript `{}` names scenario `{id}`, which the harness does not have",
            t.id
        )
    })?;
    let calls = t
        .calls()
        .enumerate()
        .map(|(n, (_, c))| Target {
            tool: c.tool.clone(),
            arguments: c.arguments().clone(),
            location: c.location.clone(),
            recorded: c.output.clone(),
            slot: Slot::Output,
            grounds: true,
            label: format!("transcript `{}`, call {} (`{}`)", t.id, n + 1, c.tool),
        })
        .collect();
    Ok(Job {
        scenario: id.to_owned(),
        ground: effective(&harness.ground, &sc.ground),
        what: format!("transcript `{}`", t.id),
        calls,
    })
}

/// Where and how the server runs.
#[derive(Clone, Debug)]
pub struct Launch {
    /// The server command (`{scratch}`, `{scenario}`, `{harness_dir}` not yet replaced); empty
    /// with `url`.
    pub command: Vec<String>,
    /// A server already running (`--url`): set-ups still run, but its state is its own.
    pub url: Option<(String, Vec<(String, String)>)>,
    /// `--setup`, over the harness's.
    pub setup: Option<String>,
    /// The harness file's folder.
    pub harness_dir: PathBuf,
    /// How long the server may take to start, and each answer (and each set-up to finish).
    pub timeout: Duration,
    /// Run set-ups and servers in a network namespace with only loopback (`unshare -n`).
    pub isolate: Isolation,
    /// The protocol revision.
    pub protocol: Protocol,
}

/// How the server's network is cut off.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Isolation {
    /// `unshare` with these flags (`-n`, or `-rn` when not root).
    Unshare(&'static str),
    /// The network this process has.
    Inherit,
}

impl Isolation {
    /// `unshare -n` as root, `unshare -rn` otherwise, if it works here; why not otherwise.
    pub fn probe() -> Result<Self, String> {
        let root = std::process::Command::new("id")
            .arg("-u")
            .output()
            .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0");
        let flags = if root { "-n" } else { "-rn" };
        match std::process::Command::new("unshare")
            .args([flags, "true"])
            .stderr(std::process::Stdio::piped())
            .output()
        {
            Ok(o) if o.status.success() => Ok(Isolation::Unshare(flags)),
            Ok(o) => Err(format!(
                "`unshare {flags}` failed: {}",
                String::from_utf8_lossy(&o.stderr).trim()
            )),
            Err(e) => Err(format!("`unshare` could not run: {e}")),
        }
    }
}

/// `{scratch}`, `{scenario}`, `{harness_dir}` replaced.
fn fill(text: &str, scratch: &Path, scenario: &str, harness_dir: &Path) -> String {
    text.replace("{scratch}", &scratch.to_string_lossy())
        .replace("{scenario}", scenario)
        .replace("{harness_dir}", &harness_dir.to_string_lossy())
}

/// The program and arguments that run `command` in `scratch`, isolated, under the clock.
fn wrapped(
    command: &[String],
    scratch: &Path,
    clock: Option<&str>,
    isolate: &Isolation,
) -> (String, Vec<String>) {
    let mut script = String::new();
    if matches!(isolate, Isolation::Unshare(_)) {
        script.push_str("ip link set lo up 2>/dev/null; ");
    }
    script.push_str("cd \"$0\" || exit 126; exec \"$@\"");
    let mut inner = vec![
        "sh".to_owned(),
        "-c".to_owned(),
        script,
        scratch.to_string_lossy().into_owned(),
    ];
    if let Some(c) = clock {
        inner.extend(["faketime".to_owned(), "-f".to_owned(), c.to_owned()]);
    }
    inner.extend(command.iter().cloned());
    match isolate {
        Isolation::Unshare(flags) => (
            "unshare".to_owned(),
            std::iter::once((*flags).to_owned()).chain(inner).collect(),
        ),
        Isolation::Inherit => {
            let mut it = inner.into_iter();
            (it.next().unwrap_or_default(), it.collect())
        }
    }
}

/// The environment of a set-up and a server: telemetry off unless the harness says otherwise,
/// the harness's `env`, the run's folder and scenario, and under a clock the zone and the
/// monotonic clock libfaketime needs.
fn environment(
    ground: &Ground,
    scratch: &Path,
    scenario: &str,
    harness_dir: &Path,
) -> Vec<(String, String)> {
    let mut env: BTreeMap<String, String> = BTreeMap::new();
    env.insert("OTEL_SDK_DISABLED".into(), "true".into());
    if ground.clock.is_some() {
        env.insert("TZ".into(), "UTC".into());
        env.insert("DONT_FAKE_MONOTONIC".into(), "1".into());
    }
    for (k, v) in &ground.env {
        env.insert(k.clone(), fill(v, scratch, scenario, harness_dir));
    }
    env.insert(
        "AGENT_SEER_SCRATCH".into(),
        scratch.to_string_lossy().into_owned(),
    );
    env.insert("AGENT_SEER_SCENARIO".into(), scenario.to_owned());
    env.into_iter().collect()
}

/// The suite's paths and where they are in this run, longest first.
fn path_map(
    ground: &Ground,
    scratch: &Path,
    scenario: &str,
    harness_dir: &Path,
) -> Vec<(String, String)> {
    let mut m: Vec<(String, String)> = ground
        .paths
        .iter()
        .map(|(suite, run)| (suite.clone(), fill(run, scratch, scenario, harness_dir)))
        .collect();
    m.sort_by_key(|(s, _)| std::cmp::Reverse(s.len()));
    m
}

/// Every string in `v` with each `from` replaced by its `to`.
pub fn rebase(v: &Value, map: &[(String, String)], back: bool) -> Value {
    match v {
        Value::String(s) => {
            let mut s = s.clone();
            for (suite, run) in map {
                let (from, to) = if back { (run, suite) } else { (suite, run) };
                if s.contains(from.as_str()) {
                    s = s.replace(from.as_str(), to);
                }
            }
            Value::String(s)
        }
        Value::Array(a) => Value::Array(a.iter().map(|x| rebase(x, map, back)).collect()),
        Value::Object(o) => Value::Object(
            o.iter()
                .map(|(k, x)| (k.clone(), rebase(x, map, back)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// A `tools/call` result without what the 2026-07-28 revision wraps every result in (its
/// `resultType: complete` and `_meta` entries under `io.modelcontextprotocol/`): what the tool
/// answered, the same whichever revision the server speaks.
pub fn without_envelope(mut v: Value) -> Value {
    if let Some(o) = v.as_object_mut() {
        if o.get("resultType").and_then(Value::as_str) == Some("complete") {
            o.remove("resultType");
        }
        if let Some(Value::Object(meta)) = o.get_mut("_meta") {
            meta.retain(|k, _| !k.starts_with("io.modelcontextprotocol/"));
            if meta.is_empty() {
                o.remove("_meta");
            }
        }
    }
    v
}

/// Why a job could not run at all.
#[derive(Debug, thiserror::Error)]
pub enum JobError {
    /// The set-up failed (its exit status and the tail of its output).
    #[error("the set-up of {what} failed: {why}")]
    Setup {
        /// The job.
        what: String,
        /// Why.
        why: String,
    },
    /// The server did not start or broke the protocol.
    #[error("{what}: {source}")]
    Server {
        /// The job.
        what: String,
        /// The client's error.
        source: McpError,
    },
    /// Nothing says how to start the server.
    #[error(
        "no server to ground against: give its command after `--` (or `--url`), or `ground.server` in the harness"
    )]
    NoServer,
}

/// Runs a job: a fresh folder, its files and set-up, a fresh server, its calls in order. Each
/// answer is what the server sent with the run's paths written back as the suite's, or the
/// JSON-RPC error that refused the call.
pub async fn run_job(job: &Job, launch: &Launch, server: &[String]) -> Result<Answers, JobError> {
    let dir = Scratch::new().map_err(|e| JobError::Setup {
        what: job.what.clone(),
        why: format!("no scratch folder: {e}"),
    })?;
    let scratch = dir.0.clone();
    let hd = &launch.harness_dir;
    let env = environment(&job.ground, &scratch, &job.scenario, hd);
    for (name, text) in &job.ground.files {
        let path = scratch.join(name);
        let written = path
            .parent()
            .map_or(Ok(()), std::fs::create_dir_all)
            .and_then(|()| std::fs::write(&path, fill(text, &scratch, &job.scenario, hd)));
        written.map_err(|e| JobError::Setup {
            what: job.what.clone(),
            why: format!("cannot write `{name}`: {e}"),
        })?;
    }
    if let Some(setup) = launch.setup.as_ref().or(job.ground.setup.as_ref()) {
        let command = vec![
            "sh".to_owned(),
            "-c".to_owned(),
            fill(setup, &scratch, &job.scenario, hd),
        ];
        let (program, args) = wrapped(&command, &scratch, None, &launch.isolate);
        tokio::task::block_in_place(|| run_setup(&program, &args, &env, launch.timeout)).map_err(
            |why| JobError::Setup {
                what: job.what.clone(),
                why,
            },
        )?;
    }
    let endpoint = match &launch.url {
        Some((url, headers)) => Endpoint::Url {
            url: url.clone(),
            headers: headers.clone(),
        },
        None => {
            if server.is_empty() {
                return Err(JobError::NoServer);
            }
            let command: Vec<String> = server
                .iter()
                .map(|a| fill(a, &scratch, &job.scenario, hd))
                .collect();
            let (program, args) = wrapped(
                &command,
                &scratch,
                job.ground.clock.as_deref(),
                &launch.isolate,
            );
            Endpoint::Command {
                program,
                args,
                envs: env,
            }
        }
    };
    let paths = path_map(&job.ground, &scratch, &job.scenario, hd);
    let server_error = |source| JobError::Server {
        what: job.what.clone(),
        source,
    };
    let mut client = Client::connect(endpoint, launch.protocol, launch.timeout)
        .await
        .map_err(server_error)?;
    let mut answers = Vec::with_capacity(job.calls.len());
    for call in &job.calls {
        let args = rebase(&call.arguments, &paths, false);
        let params = serde_json::json!({"name": call.tool, "arguments": args});
        match client.request_reply("tools/call", params).await {
            Ok(Ok(v)) => answers.push(Ok(rebase(&without_envelope(v), &paths, true))),
            // A JSON-RPC error answers the request; a dead or silent server ends the job.
            Ok(Err(e)) => answers.push(Err(format!(
                "JSON-RPC error {}",
                one_line(&rebase(&e, &paths, true))
            ))),
            Err(e) => {
                client.close().await;
                return Err(server_error(e));
            }
        }
    }
    client.close().await;
    drop(dir);
    Ok(answers)
}

/// A fresh folder of our own under the temporary directory, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new() -> std::io::Result<Self> {
        use std::sync::atomic::{AtomicU64, Ordering};
        static SEQ: AtomicU64 = AtomicU64::new(0);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let name = format!(
            "agent-seer-ground-{}-{}-{nanos}",
            std::process::id(),
            SEQ.fetch_add(1, Ordering::Relaxed)
        );
        let path = std::env::temp_dir().join(name);
        // `create_dir` fails on anything already there, a link included.
        std::fs::create_dir(&path)?;
        Ok(Scratch(path.canonicalize()?))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A job's answers, each call's in its place: the server's result, or the JSON-RPC error that
/// refused the call, as text.
pub type Answers = Vec<Result<Value, String>>;

/// Runs every job, `width` at a time, each result in the job's place.
pub fn run_all(
    jobs: &[Job],
    launch: &Launch,
    server: &[String],
    width: usize,
) -> std::io::Result<Vec<Result<Answers, JobError>>> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let gate = std::sync::Arc::new(tokio::sync::Semaphore::new(width.max(1)));
    Ok(rt.block_on(async {
        let mut set = tokio::task::JoinSet::new();
        for (i, job) in jobs.iter().enumerate() {
            let (job, launch, server, gate) =
                (job.clone(), launch.clone(), server.to_vec(), gate.clone());
            set.spawn(async move {
                let _permit = gate.acquire_owned().await;
                (i, run_job(&job, &launch, &server).await)
            });
        }
        let mut out: Vec<Option<Result<Answers, JobError>>> =
            (0..jobs.len()).map(|_| None).collect();
        while let Some(done) = set.join_next().await {
            if let Ok((i, r)) = done {
                out[i] = Some(r);
            }
        }
        out.into_iter()
            .map(|r| {
                r.unwrap_or(Err(JobError::Setup {
                    what: "a run".into(),
                    why: "its task panicked".into(),
                }))
            })
            .collect()
    }))
}

/// Runs a set-up to its end (or its timeout), its output kept for the error.
fn run_setup(
    program: &str,
    args: &[String],
    env: &[(String, String)],
    timeout: Duration,
) -> Result<(), String> {
    use std::process::{Command, Stdio};
    let mut child = Command::new(program)
        .args(args)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("`{program}` could not start: {e}"))?;
    let start = std::time::Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if start.elapsed() > timeout => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("it ran longer than {} s", timeout.as_secs()));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(10)),
            Err(e) => return Err(e.to_string()),
        }
    }
    let out = child.wait_with_output().map_err(|e| e.to_string())?;
    if out.status.success() {
        return Ok(());
    }
    let mut text = String::from_utf8_lossy(&out.stderr).into_owned();
    text.push_str(&String::from_utf8_lossy(&out.stdout));
    let tail: Vec<&str> = text.lines().rev().take(10).collect();
    Err(format!(
        "{}{}",
        out.status,
        if tail.is_empty() {
            String::new()
        } else {
            format!(
                ", its output ended with:\n  {}",
                tail.into_iter().rev().collect::<Vec<_>>().join("\n  ")
            )
        }
    ))
}

/// The line range of the mapping that starts at `at`: its first line and one past its last
/// (trailing blank and comment lines left out), and its keys' column (0-based).
fn mapping_lines(lines: &[&str], at: &Location) -> Result<(usize, usize, usize), String> {
    let first = (at.line as usize)
        .checked_sub(1)
        .filter(|&l| l < lines.len())
        .ok_or("the location is outside the file")?;
    let col = at.column as usize - 1;
    let head = lines[first];
    if head.get(col..).is_some_and(|rest| rest.starts_with('{')) {
        return Err("the call is written as a flow mapping (`{ … }`); ground edits block mappings (one key a line)".into());
    }
    if head.get(col..).is_none_or(|rest| rest.trim().is_empty()) {
        return Err("no mapping starts at the call's location".into());
    }
    let mut end = first + 1;
    let mut last = first + 1;
    while end < lines.len() {
        let line = lines[end];
        let trimmed = line.trim_start();
        let indent = line.len() - trimmed.len();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            end += 1;
            continue;
        }
        if indent < col {
            break;
        }
        end += 1;
        last = end;
    }
    Ok((first, last, col))
}

/// `text` with the mapping at `at` holding `key: value` (the value one line of YAML, flow
/// style): the key's lines replaced when it is there, a line added after the mapping's last
/// otherwise.
pub fn set_key(text: &str, at: &Location, key: &str, value: &str) -> Result<String, String> {
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let (first, last, col) = mapping_lines(&lines, at)?;
    let is_key = |line: &str, i: usize| {
        let body = if i == first {
            line.get(col..)
        } else {
            line.get(col..).filter(|_| line[..col].trim().is_empty())
        };
        body.is_some_and(|b| b.strip_prefix(key).is_some_and(|r| r.starts_with(':')))
    };
    let newline = if text.contains("\r\n") { "\r\n" } else { "\n" };
    let found = (first..last).find(|&i| is_key(lines[i], i));
    let mut out = String::with_capacity(text.len() + value.len() + key.len() + 8);
    match found {
        Some(k) => {
            // The value runs on over the lines indented deeper than the key.
            let mut stop = k + 1;
            while stop < last {
                let line = lines[stop];
                let trimmed = line.trim_start();
                let indent = line.len() - trimmed.len();
                if !trimmed.trim().is_empty() && indent <= col {
                    break;
                }
                stop += 1;
            }
            // Trailing blank lines of the value belong to the file's layout, not the value.
            while stop > k + 1 && lines[stop - 1].trim().is_empty() {
                stop -= 1;
            }
            for l in &lines[..k] {
                out.push_str(l);
            }
            out.push_str(&lines[k][..col]);
            out.push_str(&format!("{key}: {value}{newline}"));
            for l in &lines[stop..] {
                out.push_str(l);
            }
        }
        None => {
            for l in &lines[..last] {
                out.push_str(l);
            }
            if !out.ends_with('\n') {
                out.push_str(newline);
            }
            out.push_str(&" ".repeat(col));
            out.push_str(&format!("{key}: {value}{newline}"));
            for l in &lines[last..] {
                out.push_str(l);
            }
        }
    }
    Ok(out)
}

/// An answer as one line of YAML: JSON (which is flow YAML), spaced after `,` and `:` as the
/// shipped suites write it.
pub fn one_line(v: &Value) -> String {
    use serde::Serialize;
    struct Spaced;
    impl serde_json::ser::Formatter for Spaced {
        fn begin_array_value<W: ?Sized + std::io::Write>(
            &mut self,
            w: &mut W,
            first: bool,
        ) -> std::io::Result<()> {
            if first { Ok(()) } else { w.write_all(b", ") }
        }
        fn begin_object_key<W: ?Sized + std::io::Write>(
            &mut self,
            w: &mut W,
            first: bool,
        ) -> std::io::Result<()> {
            if first { Ok(()) } else { w.write_all(b", ") }
        }
        fn begin_object_value<W: ?Sized + std::io::Write>(
            &mut self,
            w: &mut W,
        ) -> std::io::Result<()> {
            w.write_all(b": ")
        }
    }
    let mut out = Vec::new();
    let mut ser = serde_json::Serializer::with_formatter(&mut out, Spaced);
    match v.serialize(&mut ser) {
        Ok(()) => String::from_utf8(out).unwrap_or_default(),
        Err(_) => serde_json::to_string(v).unwrap_or_default(),
    }
}

/// A unified diff of two answers, pretty-printed.
pub fn answer_diff(recorded: &Value, got: &Value, recorded_name: &str) -> String {
    let pretty = |v: &Value| {
        let mut s = serde_json::to_string_pretty(v).unwrap_or_default();
        s.push('\n');
        s
    };
    crate::diff::unified(
        &pretty(recorded),
        &pretty(got),
        2,
        recorded_name,
        "the server now",
    )
}

/// What became of one call.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    /// The answer is the one recorded.
    Same,
    /// The answer differs from the one recorded (or none was): the new one.
    Differs(Value),
    /// The server refused the request with a JSON-RPC error.
    Refused(String),
}

/// Compares a call's answer with what the file records.
pub fn outcome(target: &Target, answer: &Result<Value, String>) -> Outcome {
    match answer {
        Err(e) => Outcome::Refused(e.clone()),
        Ok(v) if target.recorded.as_ref() == Some(v) => Outcome::Same,
        Ok(v) => Outcome::Differs(v.clone()),
    }
}

/// One file's edits applied: each call's new answer (`None`: the answer stands, a mock only
/// gets `grounding: high`), bottom-up so earlier lines stay where the locations say.
pub fn edit_file(text: &str, edits: &[(&Target, Option<&Value>)]) -> Result<String, String> {
    let mut edits: Vec<&(&Target, Option<&Value>)> = edits.iter().collect();
    edits.sort_by_key(|(t, _)| std::cmp::Reverse((t.location.line, t.location.column)));
    let mut out = text.to_owned();
    for (t, v) in edits {
        let at = |e: String| format!("{}: {e}", t.label);
        if t.slot == Slot::Mock {
            out = set_key(&out, &t.location, "grounding", "high").map_err(at)?;
        }
        if let Some(v) = v {
            out = set_key(&out, &t.location, t.slot.key(), &one_line(v)).map_err(at)?;
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn at(line: u32, column: u32) -> Location {
        Location {
            file: Arc::from(Path::new("h.yaml")),
            line,
            column,
        }
    }

    const STEPS: &str = "\
turns:
  - prompt: hi
    workflow:
      # first
      - tool: a
        arguments: { x: 1 }
        mock_output:
          content: [{type: text, text: old}]

      - tool: b
        arguments: { y: 2 }
    expected_response: ok
";

    #[test]
    fn a_block_value_is_replaced_and_the_layout_kept() {
        let out = set_key(STEPS, &at(5, 9), "mock_output", "{\"content\": []}").unwrap();
        insta::assert_snapshot!(out, @r#"
        turns:
          - prompt: hi
            workflow:
              # first
              - tool: a
                arguments: { x: 1 }
                mock_output: {"content": []}

              - tool: b
                arguments: { y: 2 }
            expected_response: ok
        "#);
    }

    #[test]
    fn a_missing_key_is_added_after_the_mapping() {
        let out = set_key(STEPS, &at(10, 9), "mock_output", "{}").unwrap();
        let out = set_key(&out, &at(10, 9), "grounding", "high").unwrap();
        insta::assert_snapshot!(out, @r#"
        turns:
          - prompt: hi
            workflow:
              # first
              - tool: a
                arguments: { x: 1 }
                mock_output:
                  content: [{type: text, text: old}]

              - tool: b
                arguments: { y: 2 }
                mock_output: {}
                grounding: high
            expected_response: ok
        "#);
    }

    #[test]
    fn a_flow_mapping_is_refused() {
        let text = "workflow:\n  - { tool: a, arguments: {} }\n";
        let err = set_key(text, &at(2, 5), "mock_output", "{}").unwrap_err();
        assert!(err.contains("flow mapping"), "{err}");
    }

    #[test]
    fn paths_go_to_the_run_and_come_back() {
        let map = vec![
            ("/home/dev/repo".to_owned(), "/tmp/x/repo".to_owned()),
            ("/home/dev".to_owned(), "/tmp/x".to_owned()),
        ];
        let v = serde_json::json!({"p": "/home/dev/repo/a.txt", "q": ["/home/dev/b"], "n": 1});
        let there = rebase(&v, &map, false);
        assert_eq!(
            there,
            serde_json::json!({"p": "/tmp/x/repo/a.txt", "q": ["/tmp/x/b"], "n": 1})
        );
        assert_eq!(rebase(&there, &map, true), v);
    }

    #[test]
    fn the_server_runs_in_its_folder_under_its_clock() {
        let (p, a) = wrapped(
            &["srv".into(), "--x".into()],
            Path::new("/tmp/s"),
            Some("2026-12-01 17:24:21"),
            &Isolation::Unshare("-n"),
        );
        assert_eq!(p, "unshare");
        assert_eq!(
            a,
            [
                "-n",
                "sh",
                "-c",
                "ip link set lo up 2>/dev/null; cd \"$0\" || exit 126; exec \"$@\"",
                "/tmp/s",
                "faketime",
                "-f",
                "2026-12-01 17:24:21",
                "srv",
                "--x"
            ]
        );
        let (p, a) = wrapped(
            &["srv".into()],
            Path::new("/tmp/s"),
            None,
            &Isolation::Inherit,
        );
        assert_eq!(p, "sh");
        assert_eq!(
            a,
            ["-c", "cd \"$0\" || exit 126; exec \"$@\"", "/tmp/s", "srv"]
        );
    }
}
