//! Real servers from PyPI: `mcp-server-git` and `mcp-server-time` 2026.10.19, installed by
//! `.ci/servers-pypi.sh` into a venv (`AGENT_SEER_PYPI_SERVERS` names it) and started inside a
//! loopback-only namespace with telemetry off (`.ci/mcp-e2e.sh`). Two kinds of drift fail here:
//! a `tools/list` that is no longer the shipped `harnesses/<suite>.tools.json`, and (git) an
//! answer that is no longer the `output:` a transcript recorded from the real server.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use super::*;

/// The venv `.ci/servers-pypi.sh` prints as its last line.
fn venv() -> PathBuf {
    PathBuf::from(
        std::env::var("AGENT_SEER_PYPI_SERVERS")
            .expect("AGENT_SEER_PYPI_SERVERS: the venv .ci/servers-pypi.sh prints"),
    )
}

/// The repository path the git suite's prompts and transcripts name; the tests build the same
/// repository in a temporary directory and translate the path both ways.
const REPO_IN_SUITE: &str = "/home/dev/bookshop";

/// The dates of the commits the server itself makes (GitPython reads these), so their hashes
/// are the recorded ones.
const COMMIT_DATE: &str = "1789210800 +0000"; // 2026-09-12T11:00:00Z

/// Builds the git suite's repository: `bash -c BOOKSHOP bash DIR STATE`. A fixed history with
/// fixed author and dates (hashes a260429, 7792dc1, be61bb5, 2c993ac), then one scenario's
/// working tree: `clean`, `commit` (app.py modified, test_pricing.py untracked), `unstaged`
/// (pricing.py modified) or `staged` (a README change in the index).
const BOOKSHOP: &str = r##"set -euo pipefail
export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1
D=$1; STATE=$2
rm -rf "$D"; mkdir -p "$D"; cd "$D"
export GIT_AUTHOR_NAME="Dana Reviewer" GIT_AUTHOR_EMAIL=dana@example.com
export GIT_COMMITTER_NAME="Dana Reviewer" GIT_COMMITTER_EMAIL=dana@example.com
git init -q -b main
git config user.name "Dana Reviewer"; git config user.email dana@example.com
commit() { GIT_AUTHOR_DATE="$1" GIT_COMMITTER_DATE="$1" git commit -q -m "$2"; }
printf '# bookshop\n\nA tiny bookshop checkout.\n' > README.md
cat > app.py <<'PY'
def checkout(cart):
    total = sum(item["price"] for item in cart)
    return "Total: %.2f" % total
PY
git add README.md app.py; commit "2026-09-01T09:00:00+00:00" "Initial commit"
cat > pricing.py <<'PY'
def format_price(amount):
    return f"{amount:.2f} EUR"
PY
git add pricing.py; commit "2026-09-03T10:30:00+00:00" "Add format_price helper"
cat > pricing.py <<'PY'
from decimal import ROUND_HALF_UP, Decimal


def format_price(amount):
    cents = Decimal(str(amount)).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)
    return f"{cents} EUR"
PY
git add pricing.py; commit "2026-09-08T14:15:00+00:00" "Fix rounding of half-cent prices in format_price"
printf '# bookshop\n\nA tiny bookshop checkout.\n\n## Checkout\n\n`checkout(cart)` sums the cart and formats the total.\n' > README.md
git add README.md; commit "2026-09-10T16:45:00+00:00" "Document the checkout flow in README"
case $STATE in
  clean) ;;
  commit)   # app.py modified (unstaged), test_pricing.py untracked
    cat > app.py <<'PY'
from pricing import format_price


def checkout(cart):
    total = sum(item["price"] for item in cart)
    return "Total: " + format_price(total)
PY
    cat > test_pricing.py <<'PY'
from pricing import format_price


def test_half_cent_rounds_up():
    assert format_price(2.675) == "2.68 EUR"
PY
    ;;
  unstaged) # pricing.py modified, not staged
    cat > pricing.py <<'PY'
from decimal import ROUND_HALF_UP, Decimal


def format_price(amount, currency="EUR"):
    cents = Decimal(str(amount)).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)
    return f"{cents} {currency}"
PY
    ;;
  staged)   # README.md change staged
    printf '# bookshop\n\nA tiny bookshop checkout.\n\n## Checkout\n\n`checkout(cart)` sums the cart and formats the total.\n\n## Tests\n\nRun `pytest`.\n' > README.md
    git add README.md
    ;;
esac
"##;

/// The working tree each git scenario starts from.
fn state_of(scenario: &str) -> &'static str {
    match scenario {
        "commit-work" => "commit",
        "review-unstaged" => "unstaged",
        "review-staged" => "staged",
        "show-rounding-fix" | "feature-branch" | "recent-history" => "clean",
        other => panic!("no repository state for git scenario `{other}`"),
    }
}

fn bookshop(dir: &Path, state: &str) {
    let o = Command::new("bash")
        .args(["-c", BOOKSHOP, "bash", dir.to_str().unwrap(), state])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

fn git_server(repo: &Path) -> (String, Vec<String>) {
    (
        venv().join("bin/mcp-server-git").display().to_string(),
        vec!["--repository".into(), repo.display().to_string()],
    )
}

fn time_server() -> (String, Vec<String>) {
    (
        venv().join("bin/mcp-server-time").display().to_string(),
        vec!["--local-timezone".into(), "UTC".into()],
    )
}

/// `agent-seer inspect` against the real server saves exactly the shipped tools/list; gives
/// what inspect printed.
pub(super) fn inspect_equals_shipped(program: &str, a: &[String], shipped: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("tools.json");
    let o = Command::new(bin())
        .args([
            "inspect",
            "-o",
            out.to_str().unwrap(),
            "--timeout",
            "60",
            "--",
            program,
        ])
        .args(a)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let saved: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let ours: Value =
        serde_json::from_str(&std::fs::read_to_string(repo().join(shipped)).unwrap()).unwrap();
    assert_eq!(
        saved, ours,
        "the real server's tools/list drifted from {shipped}: re-capture it (see the harness's header) and review the suite"
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
#[ignore = "needs the PyPI servers that .ci/servers-pypi.sh installs"]
fn real_git_tools_equal_the_shipped_spec() {
    let dir = tempfile::tempdir().unwrap();
    let repo_dir = dir.path().join("bookshop");
    bookshop(&repo_dir, "clean");
    let (program, a) = git_server(&repo_dir);
    inspect_equals_shipped(&program, &a, "harnesses/git.tools.json");
}

#[test]
#[ignore = "needs the PyPI servers that .ci/servers-pypi.sh installs"]
fn real_time_tools_equal_the_shipped_spec() {
    let (program, a) = time_server();
    inspect_equals_shipped(&program, &a, "harnesses/time.tools.json");
}

/// A dual-era server slow to start (mcp 2.x importing under load, as on a busy CI machine)
/// misses the `server/discover` probe's 3 s, takes it late, and then refuses the handshake on
/// that connection: `inspect` asks again and speaks the stateless revision.
#[test]
#[ignore = "needs the PyPI servers that .ci/servers-pypi.sh installs"]
fn a_slow_stateless_server_is_not_taken_for_a_legacy_one() {
    let (program, a) = time_server();
    let script = format!("sleep 4; exec {program} {}", a.join(" "));
    let printed = inspect_equals_shipped(
        "sh",
        &["-c".to_owned(), script],
        "harnesses/time.tools.json",
    );
    assert!(
        printed.contains("(protocol 2026-07-28, modern)"),
        "{printed}"
    );
}

fn transcripts(suite: &str) -> Vec<(String, Transcript)> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(repo().join("transcripts").join(suite))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no {suite} transcripts");
    files
        .iter()
        .map(|p| {
            let id = p.file_stem().unwrap().to_string_lossy().into_owned();
            (id, Transcript::load(p).unwrap())
        })
        .collect()
}

/// Every git transcript, replayed call by call against the real server on a fresh repository in
/// the scenario's state, gets exactly the outputs it recorded (the hashes included).
#[test]
#[ignore = "needs the PyPI servers that .ci/servers-pypi.sh installs"]
fn replayed_git_transcripts() {
    let env = [
        ("GIT_AUTHOR_DATE".to_owned(), COMMIT_DATE.to_owned()),
        ("GIT_COMMITTER_DATE".to_owned(), COMMIT_DATE.to_owned()),
    ];
    let mut replayed = 0;
    for (id, t) in transcripts("git") {
        let scenario = t
            .scenario
            .clone()
            .expect("a git transcript names its scenario");
        let dir = tempfile::tempdir().unwrap();
        let repo_dir = dir.path().join("bookshop");
        bookshop(&repo_dir, state_of(&scenario));
        let here = repo_dir.canonicalize().unwrap().display().to_string();
        let (program, a) = git_server(&repo_dir);
        rt().block_on(async {
            let mut c = Client::start(&program, &a, &env, Duration::from_secs(60))
                .await
                .unwrap();
            for (n, (_, call)) in t.calls().enumerate() {
                let args = super::generic::rebase(&call.arguments, REPO_IN_SUITE, &here);
                let got = c.call_tool(&call.tool, &args).await.unwrap();
                let got = super::generic::rebase(&got, &here, REPO_IN_SUITE);
                assert_eq!(
                    Some(&got),
                    call.output.as_ref(),
                    "{id}, call {} (`{}`): the real server's answer differs from the recorded one",
                    n + 1,
                    call.tool
                );
                replayed += 1;
            }
            c.close().await;
        });
    }
    assert!(replayed >= 40, "{replayed} calls replayed");
}

/// The time server's answers depend on the clock, so a replay compares what does not: whether
/// the call was refused and, if so, the exact error; otherwise the result's shape (the
/// structuredContent keys, the zones) and that the text block is the same JSON.
#[test]
#[ignore = "needs the PyPI servers that .ci/servers-pypi.sh installs"]
fn replayed_time_transcripts() {
    fn shape(v: &Value) -> Value {
        match v {
            Value::Object(o) => Value::Object(
                o.iter()
                    .map(|(k, x)| {
                        let x = match k.as_str() {
                            "datetime" | "day_of_week" | "is_dst" | "time_difference" => {
                                Value::Null
                            }
                            _ => shape(x),
                        };
                        (k.clone(), x)
                    })
                    .collect(),
            ),
            other => other.clone(),
        }
    }
    let (program, a) = time_server();
    let mut counts: BTreeMap<bool, usize> = BTreeMap::new();
    for (id, t) in transcripts("time") {
        rt().block_on(async {
            let mut c = Client::start(&program, &a, &[], Duration::from_secs(60))
                .await
                .unwrap();
            for (n, (_, call)) in t.calls().enumerate() {
                let got = c.call_tool(&call.tool, &call.arguments).await.unwrap();
                let want = call.output.clone().expect("a recorded output");
                let what = format!("{id}, call {} (`{}`)", n + 1, call.tool);
                assert_eq!(got["isError"], want["isError"], "{what}");
                if want["isError"] == true {
                    assert_eq!(got, want, "{what}: the error changed");
                } else {
                    let text: Value =
                        serde_json::from_str(got["content"][0]["text"].as_str().unwrap()).unwrap();
                    assert_eq!(
                        text, got["structuredContent"],
                        "{what}: text = structuredContent"
                    );
                    assert_eq!(
                        shape(&got["structuredContent"]),
                        shape(&want["structuredContent"]),
                        "{what}"
                    );
                }
                *counts.entry(want["isError"] == true).or_default() += 1;
            }
            c.close().await;
        });
    }
    assert!(counts.get(&true).is_some_and(|&n| n >= 4), "{counts:?}");
    assert!(counts.get(&false).is_some_and(|&n| n >= 20), "{counts:?}");
}
