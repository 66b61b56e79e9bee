//! `agent-seer inspect` (a real server's tools, over stdio or streamable HTTP) and
//! `agent-seer serve <harness>` (the server's twin, or with `--proxy` a recorder in front of
//! the real one).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use agent_seer::Linter;
use agent_seer::check::Suite;
use agent_seer::lint::LintError;
use agent_seer::mcp::server::{self, Faults, Options, Twin};
use agent_seer::mcp::{Client, Endpoint, Protocol, ServerInfo, proxy};
use agent_seer::spec::ToolSet;
use serde_json::{Value, json};

use super::{Format, Outcome};

/// The revision `--protocol` picks.
#[derive(Clone, Copy, Debug, Default, clap::ValueEnum)]
pub enum Revision {
    /// `server/discover` first, as the 2026-07-28 spec says; the handshake when the server
    /// does not know it.
    #[default]
    Auto,
    /// The session-based revision (`initialize`).
    #[value(name = "2025-11-25")]
    Legacy,
    /// The stateless revision (per-request `_meta`).
    #[value(name = "2026-07-28")]
    Modern,
}

impl From<Revision> for Protocol {
    fn from(r: Revision) -> Self {
        match r {
            Revision::Auto => Protocol::Auto,
            Revision::Legacy => Protocol::Legacy,
            Revision::Modern => Protocol::Modern,
        }
    }
}

/// Where the server is, as flags: a command after `--` or `--url`.
#[derive(clap::Args, Debug)]
pub struct Target {
    /// The server's streamable HTTP endpoint (`http://127.0.0.1:8080/mcp`) instead of a
    /// command.
    #[arg(long, conflicts_with = "command")]
    pub(super) url: Option<String>,
    /// A header for every HTTP request, `Name: value`; `${VAR}` in the value is read from the
    /// environment, so a token need not be on the command line. Values are never printed.
    #[arg(long = "header", value_name = "NAME: VALUE", requires = "url")]
    pub(super) headers: Vec<String>,
    /// The protocol revision.
    #[arg(long, value_enum, default_value_t)]
    pub(super) protocol: Revision,
    /// Seconds to wait for the server to start and for each answer.
    #[arg(long, default_value_t = 30)]
    pub(super) timeout: u64,
    /// The server command and its arguments (after `--`).
    #[arg(last = true)]
    pub(super) command: Vec<String>,
}

impl Target {
    fn endpoint(&self) -> anyhow::Result<Endpoint> {
        if let Some(url) = &self.url {
            let headers = self
                .headers
                .iter()
                .map(|h| header(h, &|k| std::env::var(k).ok()))
                .collect::<anyhow::Result<Vec<_>>>()?;
            return Ok(Endpoint::Url {
                url: url.clone(),
                headers,
            });
        }
        let (program, rest) = self
            .command
            .split_first()
            .ok_or_else(|| anyhow::anyhow!("give the server: a command after `--`, or --url"))?;
        Ok(Endpoint::Command {
            program: program.clone(),
            args: rest.to_vec(),
            envs: Vec::new(),
        })
    }

    pub(super) async fn connect(&self) -> anyhow::Result<Client> {
        Ok(Client::connect(
            self.endpoint()?,
            self.protocol.into(),
            Duration::from_secs(self.timeout),
        )
        .await?)
    }
}

/// `Name: value` with `${VAR}` read through `env`; a missing variable is named, never its
/// value.
pub(super) fn header(
    spec: &str,
    env: &dyn Fn(&str) -> Option<String>,
) -> anyhow::Result<(String, String)> {
    let (name, value) = spec.split_once(':').ok_or_else(|| {
        anyhow::anyhow!(
            "--header `{}`: write it `Name: value`",
            spec.split(' ').next().unwrap_or("")
        )
    })?;
    let mut out = String::new();
    let mut rest = value.trim();
    while let Some(at) = rest.find("${") {
        out.push_str(&rest[..at]);
        let end = rest[at..]
            .find('}')
            .ok_or_else(|| anyhow::anyhow!("--header {name}: `${{` without its `}}`"))?;
        let var = &rest[at + 2..at + end];
        let v = env(var).ok_or_else(|| {
            anyhow::anyhow!("--header {name}: the environment variable `{var}` is not set")
        })?;
        out.push_str(&v);
        rest = &rest[at + end + 1..];
    }
    out.push_str(rest);
    Ok((name.trim().to_owned(), out))
}

#[derive(clap::Args, Debug)]
pub struct InspectArgs {
    /// Save the tools/list array here (JSON, every tool as the server wrote it), and what the
    /// server said of itself beside it (`X.tools.json` → `X.server.json`), for `serve`.
    #[arg(short, long)]
    output: Option<PathBuf>,
    /// Compare the live tools with this capture (a harness's `tools.json`) and list what
    /// changed, as `diff-spec` does: exit 1 when the mock has drifted from the server.
    #[arg(long, value_name = "CAPTURE")]
    drift: Option<PathBuf>,
    #[arg(long, value_enum, default_value_t)]
    format: Format,
    #[command(flatten)]
    target: Target,
}

#[derive(clap::Args, Debug)]
pub struct ServeArgs {
    /// The harness whose twin to serve (its captured tools and identity, its mock outputs).
    #[arg(required_unless_present = "proxy")]
    harness: Option<PathBuf>,
    /// Serve streamable HTTP on this address (`127.0.0.1:8080`; port 0 picks one), endpoint
    /// `/mcp`, instead of stdio. The address is printed on stderr.
    #[arg(long, value_name = "ADDR")]
    http: Option<String>,
    /// Record every call received as a transcript here (rewritten as calls come: each of the first 64 at once, then in batches or a second apart; and at the end).
    #[arg(long, value_name = "FILE")]
    record: Option<PathBuf>,
    /// Attribute every call to this scenario (without it, the calls tell which).
    #[arg(long, value_name = "ID")]
    scenario: Option<String>,
    /// Wait this long before each answer: milliseconds, or a range `LO..HI` drawn from.
    #[arg(long, value_name = "MS")]
    latency: Option<String>,
    /// The share of calls (0 to 1) that fail with the server's internal-error result.
    #[arg(long, default_value_t = 0.0, value_name = "RATE")]
    fail_rate: f64,
    /// Calls that fail, by their order (1-based, comma-separated).
    #[arg(long, value_delimiter = ',', value_name = "N,…")]
    fail_calls: Vec<usize>,
    /// The seed of `--latency` ranges and `--fail-rate` draws.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Sit in front of the real server (a command after `--`, or --proxy-url), forward
    /// everything, and write what the session was into `--output`: the capture, a harness
    /// whose mock outputs are the real ones, and the transcript of what the agent did.
    #[arg(long)]
    proxy: bool,
    /// The real server's streamable HTTP endpoint, for `--proxy`.
    #[arg(long, value_name = "URL", requires = "proxy")]
    proxy_url: Option<String>,
    /// A header for every request to `--proxy-url` (`Name: value`, `${VAR}` from the
    /// environment).
    #[arg(long = "header", value_name = "NAME: VALUE", requires = "proxy_url")]
    headers: Vec<String>,
    /// With `--proxy`: the folder the recorded suite goes to.
    #[arg(short, long, value_name = "DIR", requires = "proxy")]
    output: Option<PathBuf>,
    /// With `--proxy`: the suite's name (default: the server's name).
    #[arg(long, requires = "proxy")]
    suite: Option<String>,
    /// With `--proxy`: what the user asked the agent, the scenario's prompt.
    #[arg(long, requires = "proxy")]
    prompt: Option<String>,
    /// With `--proxy`: seconds to wait for the real server.
    #[arg(long, default_value_t = 30, requires = "proxy")]
    timeout: u64,
    /// With `--proxy`: the real server command (after `--`).
    #[arg(last = true)]
    command: Vec<String>,
}

fn runtime() -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
}

pub fn inspect(args: InspectArgs, out: &mut dyn Write) -> anyhow::Result<Outcome> {
    let rt = runtime()?;
    let (info, tools, texts) = rt.block_on(async {
        let mut client = args.target.connect().await?;
        let listed = client.list_tools_text().await;
        let info = client.info.clone();
        client.close().await;
        let (tools, texts) = listed?;
        Ok::<_, anyhow::Error>((info, tools, texts))
    })?;
    let spec = ToolSet::from_json(&Value::Array(tools.clone()))
        .map_err(|e| anyhow::anyhow!("the server's tools do not load: {e}"))?;
    let broken = uncompilable(&tools);
    if let Some(path) = &args.output {
        save_capture(path, &texts, info.as_ref())?;
    }
    let profile = spec.profile();
    match args.format {
        Format::Json => writeln!(
            out,
            "{}",
            serde_json::to_string_pretty(
                &json!({"server": info, "profile": profile, "tools": tools.iter().map(|t| &t["name"]).collect::<Vec<_>>()})
            )?
        )?,
        Format::Human => {
            if let Some(i) = &info {
                writeln!(
                    out,
                    "server    {} {} (protocol {}, {})",
                    i.name, i.version, i.protocol_version, i.era
                )?;
            }
            let names: Vec<&str> = spec.tools().iter().map(|t| t.name.as_str()).collect();
            writeln!(out, "tools     {}", names.join(", "))?;
            writeln!(out, "{profile}")?;
            if let Some(p) = &args.output {
                writeln!(
                    out,
                    "saved     {} and {}",
                    p.display(),
                    server::sidecar_of(p).display()
                )?;
            }
        }
    }
    let mut outcome = Outcome::Clean;
    if let Some(capture) = &args.drift {
        let old = ToolSet::load(capture)?;
        let changes = agent_seer::spec::diff::diff(&old, &spec);
        writeln!(out)?;
        super::diff_spec::report(
            &changes,
            0,
            &capture.display().to_string(),
            "the live server",
            args.format,
            out,
        )?;
        if !changes.is_empty() {
            outcome = Outcome::Findings;
        }
    }
    if broken.is_empty() {
        return Ok(outcome);
    }
    // Saved all the same (it is what the server says, and can be fixed by hand), but a
    // harness on it would not load, so this is a finding, not a clean capture.
    let mut err = std::io::stderr().lock();
    for (tool, why) in &broken {
        writeln!(
            err,
            "warning: tool `{tool}`: its inputSchema does not compile as JSON Schema ({why}); \
             a harness using these tools will not load until it is fixed"
        )?;
    }
    Ok(Outcome::Findings)
}

/// Writes the tools (each as the server wrote it, laid out two spaces deep) and the sidecar
/// with the server's own description of itself.
fn save_capture(path: &Path, texts: &[String], info: Option<&ServerInfo>) -> anyhow::Result<()> {
    let Some(info) = info else {
        anyhow::bail!("the server said nothing of itself");
    };
    let (tools, side) = agent_seer::mcp::proxy::capture_texts(texts, info);
    // A capture is re-taken in place (`-o harnesses/x.tools.json` again), so an existing file
    // is replaced; a link leading out of its folder is not followed (the one writer's rule).
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => std::path::PathBuf::from("."),
    };
    let name = |p: &Path| dir.join(p.file_name().unwrap_or_default());
    let mut out = agent_seer::source::OutDir::new(&dir, true);
    out.add(name(path), tools)?;
    out.add(name(&server::sidecar_of(path)), side)?;
    out.commit()?;
    Ok(())
}

/// `(tool, compiler message)` for every tool whose input schema does not compile, compiled
/// one by one so that each is named.
fn uncompilable(tools: &[Value]) -> Vec<(String, String)> {
    tools
        .iter()
        .filter_map(|tool| {
            let one = ToolSet::from_json(&Value::Array(vec![tool.clone()])).ok()?;
            match Linter::new(&one, Vec::new()) {
                Err(LintError::InvalidSchema { tool, message, .. }) => Some((tool, message)),
                _ => None,
            }
        })
        .collect()
}

/// `MS` or `LO..HI` milliseconds.
fn latency(spec: &str) -> anyhow::Result<(Duration, Duration)> {
    let ms = |s: &str| -> anyhow::Result<Duration> {
        let n: u64 = s.trim().parse().map_err(|_| {
            anyhow::anyhow!("--latency {spec}: give milliseconds, `200` or `100..500`")
        })?;
        Ok(Duration::from_millis(n))
    };
    match spec.split_once("..") {
        Some((lo, hi)) => {
            let (lo, hi) = (ms(lo)?, ms(hi)?);
            anyhow::ensure!(lo <= hi, "--latency {spec}: the range runs backwards");
            Ok((lo, hi))
        }
        None => {
            let d = ms(spec)?;
            Ok((d, d))
        }
    }
}

pub fn serve(args: ServeArgs) -> anyhow::Result<Outcome> {
    if args.proxy {
        return proxy(args);
    }
    // Said before the first request, not after the first call ("cache …: Is a directory").
    if let Some(record) = &args.record
        && record.is_dir()
    {
        anyhow::bail!(
            "--record {}: is a directory; give the transcript file to write (e.g. {})",
            record.display(),
            record.join("session.yaml").display()
        );
    }
    anyhow::ensure!(
        args.fail_rate.is_finite() && (0.0..=1.0).contains(&args.fail_rate),
        "--fail-rate {}: give a share between 0 and 1",
        args.fail_rate
    );
    let Some(harness) = &args.harness else {
        anyhow::bail!("give the harness to serve");
    };
    let suite = Suite::load(harness)?;
    if let Some(id) = &args.scenario
        && suite.scenario(id).is_none()
    {
        let ids: Vec<&str> = suite
            .harness
            .scenarios
            .iter()
            .map(|s| s.id.as_str())
            .collect();
        anyhow::bail!(
            "--scenario {id}: no such scenario in {} (it has {})",
            harness.display(),
            ids.join(", ")
        );
    }
    let twin = Twin::load(&suite)?;
    let options = Options {
        scenario: args.scenario.clone(),
        faults: Faults {
            latency: args.latency.as_deref().map(latency).transpose()?,
            fail_rate: args.fail_rate,
            fail_calls: args.fail_calls.iter().copied().collect(),
            seed: args.seed,
        },
    };
    let session = match &args.http {
        None => {
            let stdin = std::io::stdin().lock();
            let stdout = std::io::stdout().lock();
            server::serve(&suite, twin, options, stdin, stdout, args.record.as_deref())?
        }
        Some(addr) => {
            // The server runs until the process is stopped; the suite lives as long.
            let suite: &'static Suite = Box::leak(Box::new(suite));
            let rt = runtime()?;
            rt.block_on(async {
                let listener = tokio::net::TcpListener::bind(addr.as_str())
                    .await
                    .map_err(|e| anyhow::anyhow!("--http {addr}: {e}"))?;
                let local = listener.local_addr()?;
                eprintln!("serving {} on http://{local}/mcp", suite.harness.suite);
                let session = server::Session::with(suite, twin, options);
                let stop = async {
                    let _ = shutdown_signal().await;
                };
                Ok::<_, anyhow::Error>(
                    server::serve_http(session, listener, args.record.clone(), stop).await?,
                )
            })?
        }
    };
    let mut err = std::io::stderr().lock();
    for f in session.findings() {
        writeln!(err, "finding: {f}")?;
    }
    if session.calls() == 0 {
        return Ok(Outcome::Clean);
    }
    match session.attribution() {
        Ok(s) => {
            if let Some(r) = &args.record {
                writeln!(
                    err,
                    "recorded {} call(s) of scenario `{s}` in {}",
                    session.calls(),
                    r.display()
                )?;
            }
            Ok(Outcome::Clean)
        }
        Err(why) => {
            writeln!(
                err,
                "error: the recording cannot be graded against a scenario: {why}"
            )?;
            Ok(Outcome::Findings)
        }
    }
}

async fn shutdown_signal() -> std::io::Result<()> {
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
    tokio::select! {
        r = tokio::signal::ctrl_c() => r,
        _ = term.recv() => Ok(()),
    }
}

/// `serve --proxy`: the agent on stdio, the real server behind, the session written as a suite.
fn proxy(args: ServeArgs) -> anyhow::Result<Outcome> {
    anyhow::ensure!(
        args.http.is_none(),
        "--proxy serves the agent over stdio; --http is for the twin (serve the recorded harness \
         with --http afterwards)"
    );
    let endpoint = match &args.proxy_url {
        Some(url) => Endpoint::Url {
            url: url.clone(),
            headers: args
                .headers
                .iter()
                .map(|h| header(h, &|k| std::env::var(k).ok()))
                .collect::<anyhow::Result<Vec<_>>>()?,
        },
        None => {
            let (program, rest) = args.command.split_first().ok_or_else(|| {
                anyhow::anyhow!(
                    "--proxy: give the real server, a command after `--` or --proxy-url"
                )
            })?;
            Endpoint::Command {
                program: program.clone(),
                args: rest.to_vec(),
                envs: Vec::new(),
            }
        }
    };
    let root = args
        .output
        .clone()
        .ok_or_else(|| anyhow::anyhow!("--proxy: give the folder to write the suite to, -o DIR"))?;
    let rt = runtime()?;
    let recording = rt.block_on(async {
        let client =
            Client::connect(endpoint, Protocol::Auto, Duration::from_secs(args.timeout)).await?;
        let name = match &args.suite {
            Some(s) => s.clone(),
            None => proxy::suite_name(client.info.as_ref().map_or("server", |i| i.name.as_str())),
        };
        agent_seer::source::file_name(&name).map_err(|e| anyhow::anyhow!("--suite: {e}"))?;
        let prompt = args.prompt.clone().unwrap_or_else(|| {
            "(what the user asked the agent: write it here, or record with --prompt)".to_owned()
        });
        Ok::<_, anyhow::Error>(
            proxy::proxy(
                client,
                tokio::io::stdin(),
                std::io::stdout(),
                &root,
                &name,
                &prompt,
            )
            .await?,
        )
    })?;
    let mut err = std::io::stderr().lock();
    writeln!(
        err,
        "recorded {} call(s) as suite `{}`:",
        recording.calls, recording.suite
    )?;
    for f in &recording.files {
        writeln!(err, "  {}", f.display())?;
    }
    Ok(Outcome::Clean)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_read_variables_and_never_quote_them() {
        let env = |k: &str| (k == "TOKEN").then(|| "s3cret".to_owned());
        assert_eq!(
            header("Authorization: Bearer ${TOKEN}", &env).unwrap(),
            ("Authorization".to_owned(), "Bearer s3cret".to_owned())
        );
        let e = header("X-Key: ${NOPE}", &env).unwrap_err().to_string();
        assert_eq!(
            e,
            "--header X-Key: the environment variable `NOPE` is not set"
        );
        let e = header("Bearer s3cret", &env).unwrap_err().to_string();
        assert!(!e.contains("s3cret"), "{e}");
    }
}
