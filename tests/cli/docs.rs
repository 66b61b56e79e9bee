//! The book (`docs/src/`) and the README stay true: the generated reference pages equal what
//! the code says (`AGENT_SEER_UPDATE_DOCS=1` rewrites them, insta-style), every relative link
//! and anchor resolves, every page with Rust code is a doctest, every environment variable the
//! source reads is documented, and the quickstart's quoted output is what the binary prints.

use super::*;

use std::collections::{BTreeMap, BTreeSet};

use agent_seer::audit::{AuditCode, Kind};
use agent_seer::{Code, Severity};

fn book() -> PathBuf {
    repo().join("docs/src")
}

/// Every Markdown page of the book, relative to `docs/src`, sorted.
fn pages() -> Vec<PathBuf> {
    fn walk(dir: &Path, base: &Path, out: &mut Vec<PathBuf>) {
        let mut entries: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        entries.sort();
        for p in entries {
            if p.is_dir() {
                walk(&p, base, out);
            } else if p.extension().is_some_and(|e| e == "md") {
                out.push(p.strip_prefix(base).unwrap().to_path_buf());
            }
        }
    }
    let mut out = Vec::new();
    walk(&book(), &book(), &mut out);
    out
}

/// Every documented file whose `console` blocks' commands run: the README, then the book's
/// pages in their SUMMARY order (a page's `report` may read the run an earlier `check` saved).
pub fn documented_files() -> Vec<String> {
    let summary = std::fs::read_to_string(book().join("SUMMARY.md")).unwrap();
    let mut out = vec!["README.md".to_owned()];
    for (target, _) in links(&summary) {
        out.push(format!("docs/src/{target}"));
    }
    out
}

fn severity(s: Severity) -> &'static str {
    match s {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Info => "info",
    }
}

/// A doc comment as one table cell.
fn cell(doc: &str) -> String {
    doc.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .replace('|', "\\|")
}

fn codes_table() -> String {
    let mut t = String::from("| code | sub-dimension | severity | meaning |\n|---|---|---|---|\n");
    for c in Code::ALL {
        t += &format!(
            "| `{}` | {} | {} | {} |\n",
            c.as_str(),
            c.sub_dimension().as_str(),
            severity(c.severity()),
            cell(c.doc())
        );
    }
    t
}

fn audit_codes_table() -> String {
    let mut t = String::from("| code | check | severity | meaning |\n|---|---|---|---|\n");
    for c in AuditCode::ALL {
        let kind = match c.kind() {
            Kind::Prose => "prose-only constraint",
            Kind::Contract => "missing contract",
            Kind::Names => "fleet nomenclature",
            Kind::Provider => "provider compatibility",
        };
        t += &format!(
            "| `{}` | {kind} | {} | {} |\n",
            c.as_str(),
            severity(c.severity()),
            cell(c.doc())
        );
    }
    t
}

/// `agent-seer [VERB…] --help`, with the variables clap would show the value of removed.
fn help(verbs: &[&str]) -> String {
    let o = Command::new(env!("CARGO_BIN_EXE_agent-seer"))
        .args(verbs)
        .arg("--help")
        .env_remove("AGENT_SEER_JUDGE")
        .env_remove("AGENT_SEER_GENERATOR")
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert!(o.status.success(), "{verbs:?}: {}", stderr(&o));
    stdout(&o)
        .lines()
        .map(str::trim_end)
        .collect::<Vec<_>>()
        .join("\n")
        .trim_end()
        .to_owned()
}

/// The subcommands a `--help` lists under `Commands:` (without `help`).
fn subcommands(help: &str) -> Vec<String> {
    help.lines()
        .skip_while(|l| *l != "Commands:")
        .skip(1)
        .take_while(|l| !l.is_empty())
        .filter_map(|l| l.split_whitespace().next())
        .filter(|v| *v != "help")
        .map(str::to_owned)
        .collect()
}

fn help_pages() -> String {
    let mut out = String::new();
    let mut queue: Vec<Vec<String>> = subcommands(&help(&[]))
        .into_iter()
        .map(|v| vec![v])
        .collect();
    queue.reverse();
    while let Some(verbs) = queue.pop() {
        let args: Vec<&str> = verbs.iter().map(String::as_str).collect();
        let text = help(&args);
        out += &format!(
            "## `agent-seer {}`\n\n```text\n{text}\n```\n\n",
            verbs.join(" ")
        );
        let mut subs: Vec<Vec<String>> = subcommands(&text)
            .into_iter()
            .map(|s| {
                let mut v = verbs.clone();
                v.push(s);
                v
            })
            .collect();
        subs.reverse();
        queue.extend(subs);
    }
    out.trim_end().to_owned() + "\n"
}

/// The text between `<!-- begin generated: NAME -->` and `<!-- end generated: NAME -->` of
/// `page` must be `body`; with `AGENT_SEER_UPDATE_DOCS=1` it is rewritten instead.
fn generated(page: &str, name: &str, body: &str) {
    let path = book().join(page);
    let text = std::fs::read_to_string(&path).unwrap();
    let begin = format!("<!-- begin generated: {name} -->\n");
    let end = format!("<!-- end generated: {name} -->");
    let start = text.find(&begin).expect("begin marker") + begin.len();
    let stop = text.find(&end).expect("end marker");
    let current = &text[start..stop];
    if current == body {
        return;
    }
    if std::env::var_os("AGENT_SEER_UPDATE_DOCS").is_some_and(|v| v != "0") {
        let new = format!("{}{body}{}", &text[..start], &text[stop..]);
        std::fs::write(&path, new).unwrap();
        return;
    }
    let old: BTreeSet<&str> = current.lines().collect();
    let new: BTreeSet<&str> = body.lines().collect();
    let mut diff = String::new();
    for l in old.difference(&new) {
        diff += &format!("- {l}\n");
    }
    for l in new.difference(&old) {
        diff += &format!("+ {l}\n");
    }
    panic!(
        "docs/src/{page} ({name}) differs from the code; rewrite it with \
         `AGENT_SEER_UPDATE_DOCS=1 cargo test --test cli -- docs::`:\n{diff}"
    );
}

#[test]
fn the_finding_code_reference_is_generated_from_the_codes_table() {
    generated("reference/findings.md", "codes", &codes_table());
    generated("reference/findings.md", "audit-codes", &audit_codes_table());
}

#[test]
fn the_cli_reference_is_every_verbs_help() {
    generated("reference/cli-help.md", "help", &help_pages());
}

/// Markdown with fenced code blocks and inline code spans blanked out.
fn prose(md: &str) -> String {
    let mut out = String::new();
    let mut fenced = false;
    for line in md.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            out.push('\n');
            continue;
        }
        if fenced {
            out.push('\n');
            continue;
        }
        let mut in_code = false;
        for ch in line.chars() {
            if ch == '`' {
                in_code = !in_code;
            }
            out.push(if in_code || ch == '`' { ' ' } else { ch });
        }
        out.push('\n');
    }
    out
}

/// Every inline link `[text](target)` (and image) in `md`'s prose: (target, line).
fn links(md: &str) -> Vec<(String, usize)> {
    let mut out = Vec::new();
    for (n, line) in prose(md).lines().enumerate() {
        let mut rest = line;
        while let Some(i) = rest.find("](") {
            let after = &rest[i + 2..];
            let Some(end) = after.find(')') else { break };
            out.push((after[..end].to_owned(), n + 1));
            rest = &after[end..];
        }
    }
    // A link's text may wrap onto the next line; its target never does here.
    out
}

/// mdBook's heading ids for a page: lower case, spaces to `-`, only alphanumerics, `-` and
/// `_` kept; a repeated id gets `-1`, `-2`, ….
fn anchors(md: &str) -> BTreeSet<String> {
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut out = BTreeSet::new();
    let mut fenced = false;
    for line in md.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced || !line.starts_with('#') {
            continue;
        }
        let text = line.trim_start_matches('#');
        if !text.starts_with(' ') {
            continue;
        }
        let id: String = text
            .trim()
            .chars()
            .filter_map(|c| {
                if c.is_alphanumeric() || c == '_' || c == '-' {
                    Some(c.to_ascii_lowercase())
                } else if c.is_whitespace() {
                    Some('-')
                } else {
                    None
                }
            })
            .collect();
        let n = seen.entry(id.clone()).or_insert(0);
        out.insert(if *n == 0 {
            id.clone()
        } else {
            format!("{id}-{n}")
        });
        *n += 1;
    }
    out
}

/// Checks one file's relative links; `inside`: the directory its targets must stay in.
fn check_links(file: &Path, inside: &Path, problems: &mut Vec<String>) {
    let md = std::fs::read_to_string(file).unwrap();
    let shown = file.strip_prefix(repo()).unwrap().display().to_string();
    for (target, line) in links(&md) {
        if target.contains("://") || target.starts_with("mailto:") {
            continue;
        }
        let (path, anchor) = match target.split_once('#') {
            Some((p, a)) => (p, Some(a)),
            None => (target.as_str(), None),
        };
        let resolved = if path.is_empty() {
            file.to_path_buf()
        } else {
            file.parent().unwrap().join(path)
        };
        let Ok(real) = resolved.canonicalize() else {
            problems.push(format!("{shown}:{line}: `{target}`: no such file"));
            continue;
        };
        if !real.starts_with(inside.canonicalize().unwrap()) {
            problems.push(format!(
                "{shown}:{line}: `{target}` leads out of {}",
                inside.display()
            ));
            continue;
        }
        if let Some(anchor) = anchor {
            let text = std::fs::read_to_string(&real).unwrap_or_default();
            if !anchors(&text).contains(anchor) {
                problems.push(format!(
                    "{shown}:{line}: `{target}`: no heading `#{anchor}`"
                ));
            }
        }
    }
}

#[test]
fn every_link_and_anchor_in_the_book_and_the_readme_resolves() {
    let mut problems = Vec::new();
    for page in pages() {
        check_links(&book().join(&page), &book(), &mut problems);
    }
    check_links(&repo().join("README.md"), &repo(), &mut problems);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn every_page_is_in_the_summary_and_every_summary_entry_exists() {
    let summary = std::fs::read_to_string(book().join("SUMMARY.md")).unwrap();
    let listed: BTreeSet<PathBuf> = links(&summary)
        .into_iter()
        .map(|(t, _)| PathBuf::from(t))
        .collect();
    for page in pages() {
        if page != Path::new("SUMMARY.md") {
            assert!(
                listed.contains(&page),
                "{} is not in SUMMARY.md",
                page.display()
            );
        }
    }
    for p in &listed {
        assert!(book().join(p).is_file(), "SUMMARY.md lists {}", p.display());
    }
}

#[test]
fn every_page_with_rust_code_is_a_doctest() {
    let lib = std::fs::read_to_string(repo().join("src/lib.rs")).unwrap();
    for page in pages() {
        let text = std::fs::read_to_string(book().join(&page)).unwrap();
        if text.lines().any(|l| l.starts_with("```rust")) {
            let include = format!("include_str!(\"../docs/src/{}\")", page.display());
            assert!(
                lib.contains(&include),
                "src/lib.rs must compile the Rust blocks of docs/src/{}: add a doctest struct with #[doc = {include}]",
                page.display()
            );
        }
    }
}

#[test]
fn every_environment_variable_the_source_reads_is_documented() {
    fn walk(dir: &Path, out: &mut BTreeSet<String>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|e| e == "rs") {
                let text = std::fs::read_to_string(&p).unwrap();
                for piece in text.split("\"AGENT_SEER_").skip(1) {
                    let name: String = piece
                        .chars()
                        .take_while(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || *c == '_')
                        .collect();
                    if piece[name.len()..].starts_with('"') {
                        out.insert(format!("AGENT_SEER_{name}"));
                    }
                }
            }
        }
    }
    let mut vars = BTreeSet::new();
    walk(&repo().join("src"), &mut vars);
    assert!(vars.len() > 10, "{vars:?}");
    let page = std::fs::read_to_string(book().join("reference/environment.md")).unwrap();
    let missing: Vec<_> = vars
        .iter()
        .filter(|v| !page.contains(&format!("`{v}")) && !page.contains(&format!(" {v}")))
        .collect();
    assert!(
        missing.is_empty(),
        "docs/src/reference/environment.md does not name {missing:?}"
    );
}

/// `PATH` with the built binary first, for commands that start `agent-seer serve` themselves.
fn path_with_the_binary() -> std::ffi::OsString {
    let bin = Path::new(env!("CARGO_BIN_EXE_agent-seer"))
        .parent()
        .unwrap();
    std::env::join_paths(
        std::iter::once(bin.to_path_buf()).chain(std::env::split_paths(
            &std::env::var_os("PATH").unwrap_or_default(),
        )),
    )
    .unwrap()
}

/// The quickstart's files, as the README and the guide show them.
const QUICKSTART: [&str; 4] = [
    "harnesses/notes.tools.json",
    "harnesses/notes.yaml",
    "transcripts/notes/correct.yaml",
    "transcripts/notes/broken.yaml",
];

/// Every line of the ```text block that follows `marker` in `doc` (`…` lines left out).
fn quoted_block<'a>(doc: &'a str, marker: &str) -> Vec<&'a str> {
    let start = doc.find(marker).unwrap_or_else(|| panic!("no `{marker}`"));
    let block = &doc[start..];
    let open = block.find("```text\n").expect("a text block") + "```text\n".len();
    block[open..]
        .lines()
        .take_while(|l| !l.starts_with("```"))
        .filter(|l| l.trim() != "…")
        .collect()
}

#[test]
fn the_quickstart_fails_as_the_readme_shows() {
    let dir = repo().join("examples/quickstart");
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let guide = std::fs::read_to_string(book().join("guide/first-suite.md")).unwrap();
    for file in QUICKSTART {
        let text = std::fs::read_to_string(dir.join(file)).unwrap();
        assert!(
            readme.contains(&text),
            "README.md does not show {file} as it is"
        );
        assert!(
            guide.contains(&text),
            "the guide does not show {file} as it is"
        );
    }
    let o = run_in(&dir, &["check", "--no-save"], None);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let out = stdout(&o);
    insta::assert_snapshot!("quickstart_check", out);
    for line in quoted_block(&readme, "**4. Run**") {
        assert!(
            out.contains(line),
            "README line not in the output:\n{line}\n---\n{out}"
        );
    }
    for line in quoted_block(&guide, "$ agent-seer check --root examples/quickstart") {
        assert!(
            out.contains(line),
            "guide line not in the output:\n{line}\n---\n{out}"
        );
    }
}

#[test]
fn the_labelled_quickstart_gates_and_kills_its_mutants_as_the_guide_shows() {
    let guide = std::fs::read_to_string(book().join("guide/first-suite.md")).unwrap();
    let src = repo().join("examples/quickstart");
    let read = |f: &str| std::fs::read_to_string(src.join(f)).unwrap();
    let label = |text: String, with: &str| text.replacen("scenario: dentist\n", with, 1);
    let harness = read("harnesses/notes.yaml").replace(
        "thresholds: { pass: 0.8 }",
        "thresholds: { pass: 0.8, min_gap: 0.3 }",
    );
    assert!(guide.contains("thresholds: { pass: 0.8, min_gap: 0.3 }"));
    assert!(guide.contains("expect: fail                         # in broken.yaml"));
    assert!(guide.contains("faults: [flow.unknown_reference]"));
    let p = project(&[
        (
            "harnesses/notes.tools.json",
            &read("harnesses/notes.tools.json"),
        ),
        ("capabilities/notes.yaml", &read("capabilities/notes.yaml")),
        ("harnesses/notes.yaml", &harness),
        (
            "transcripts/notes/correct.yaml",
            &label(
                read("transcripts/notes/correct.yaml"),
                "scenario: dentist\nexpect: pass\n",
            ),
        ),
        (
            "transcripts/notes/broken.yaml",
            &label(
                read("transcripts/notes/broken.yaml"),
                "scenario: dentist\nexpect: fail\nfaults: [flow.unknown_reference]\n",
            ),
        ),
    ]);
    let o = run_in(p.path(), &["check", "--no-save"], None);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("PASS  notes::discrimination"), "{out}");
    for line in quoted_block(&guide, "`agent-seer check` prints its table:") {
        assert!(
            out.contains(line),
            "guide line not in the output:\n{line}\n---\n{out}"
        );
    }
    // Step 8's gate: `thresholds.mutation` adds a passing `notes::mutation` trial.
    assert!(guide.contains("`thresholds: { pass: 0.8, mutation: 0.9 }`"));
    let gated = harness.replace("min_gap: 0.3 }", "min_gap: 0.3, mutation: 0.9 }");
    std::fs::write(p.path().join("harnesses/notes.yaml"), gated).unwrap();
    let o = run_in(p.path(), &["check", "--no-save"], None);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    assert!(
        stdout(&o).contains("PASS  notes::mutation"),
        "{}",
        stdout(&o)
    );
    let o = run_in(p.path(), &["mutate", "--root", "."], None);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    for line in quoted_block(&guide, "$ agent-seer mutate --root examples/quickstart") {
        assert!(
            out.contains(line),
            "guide line not in the output:\n{line}\n---\n{out}"
        );
    }
}

#[test]
fn init_writes_the_quickstarts_files_as_the_guide_shows() {
    // The guide's stand-in server: the quickstart's twin, `agent-seer serve`, on PATH.
    let guide = std::fs::read_to_string(book().join("guide/first-suite.md")).unwrap();
    let src = repo().join("examples/quickstart");
    // A fresh project: the harness (without the matrix init is about to write) for the twin.
    let dir = project(&[(
        "harnesses/notes.yaml",
        &std::fs::read_to_string(src.join("harnesses/notes.yaml"))
            .unwrap()
            .replace("capabilities: [../capabilities/notes.yaml]\n", ""),
    )]);
    std::fs::copy(
        src.join("harnesses/notes.tools.json"),
        dir.path().join("harnesses/notes.tools.json"),
    )
    .unwrap();
    let path = path_with_the_binary();
    let command = "init --suite notes --force -- agent-seer serve harnesses/notes.yaml";
    assert!(
        guide.contains(&command.replace(" --force", "")),
        "the guide runs `{command}`"
    );
    let o = Command::new(env!("CARGO_BIN_EXE_agent-seer"))
        .args(command.split(' '))
        .current_dir(dir.path())
        .env_remove("AGENT_SEER_ROOT")
        .env("NO_COLOR", "1")
        .env("PATH", path)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    let out = stdout(&o);
    for line in quoted_block(&guide, "That prints:") {
        assert!(
            out.contains(line),
            "guide line not in init's output:\n{line}\n---\n{out}"
        );
    }
    // The quickstart's matrix is the scaffold init writes (but for how it was started).
    let written = std::fs::read_to_string(dir.path().join("capabilities/notes.yaml")).unwrap();
    let written = written.replace("--force ", "");
    let shipped = std::fs::read_to_string(src.join("capabilities/notes.yaml")).unwrap();
    assert_eq!(
        written, shipped,
        "examples/quickstart/capabilities/notes.yaml is not what `agent-seer {command}` writes now: copy it from a run"
    );
}

#[test]
fn ground_checks_the_quickstart_against_its_twin_as_the_guide_shows() {
    let guide = std::fs::read_to_string(book().join("guide/first-suite.md")).unwrap();
    let command = "ground --check examples/quickstart/harnesses/notes.yaml -- agent-seer serve {harness_dir}/notes.yaml";
    assert!(guide.contains(&format!("$ agent-seer {command}")));
    let path = path_with_the_binary();
    let o = Command::new(env!("CARGO_BIN_EXE_agent-seer"))
        .args(command.split(' '))
        .current_dir(repo())
        .env("NO_COLOR", "1")
        .env("PATH", path)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    let out = stdout(&o);
    for line in quoted_block(&guide, &format!("$ agent-seer {command}")) {
        assert!(
            out.contains(line),
            "guide line not in ground's output:\n{line}\n---\n{out}"
        );
    }
}

/// The README is the quickstart (issue 34): at most 200 lines; the rest belongs in the book.
#[test]
fn the_readme_stays_a_quickstart() {
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let lines = readme.lines().count();
    assert!(
        lines <= 200,
        "README.md has {lines} lines; move the detail into a page under docs/src/"
    );
}
