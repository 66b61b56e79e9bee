//! A suite loaded for evaluation: its harness, its tools and matrices compiled into a linter.
//! The main type is [`Suite`], made by [`Suite::load`] (every file checked), or for trials by
//! [`Suite::load_prepared`] (through a stamp of its files, [`super::prepared`]).

use std::collections::HashMap;
use std::path::Path;
use std::sync::OnceLock;

use super::evaluate::Reference;
use super::fast::FastPath;
use super::prepared::{Entry, Kept, Prepared};
use crate::harness::{Harness, Scenario, Transcript};
use crate::lint::Linter;
use crate::score::own::OwnCalls;
use crate::source::{SourceError, SourceFile};
use crate::spec::{Capabilities, ToolSet};

/// Everything needed to evaluate the transcripts of one suite. Loaded once per process.
pub struct Suite {
    /// The harness file, parsed.
    pub harness: Harness,
    /// The tools its specs declare.
    pub tools: ToolSet,
    /// The linter over those tools and the suite's capability matrices.
    pub linter: Linter,
    /// Scenario id → index in the harness (the first, should an id repeat). Ids come from the
    /// suite's own files: hashed as names are.
    index: HashMap<String, usize, std::hash::BuildHasherDefault<crate::hash::NameHasher>>,
    /// Built at its first use (a transcript that is not its scenario's reference run, or
    /// [`crate::verdict`]): building it for every scenario was a seventh of a one-trial process.
    fast: OnceLock<FastPath>,
    /// Per scenario, the engines' evaluation of its reference run, made at its first use
    /// ([`Reference`]).
    pub(crate) references: Vec<OnceLock<Option<Reference>>>,
    /// Per scenario, what the engines find for each workflow step's own call under this
    /// suite's linter, worked out at its first use ([`crate::score::own`]).
    own: Vec<OnceLock<OwnCalls>>,
}

impl Suite {
    /// Loads the harness, its tool specs and capability matrices. Errors about a referenced
    /// file point at the reference in the harness (a missing file) or into the file itself (a
    /// malformed one).
    pub fn load(path: &Path) -> Result<Self, SourceError> {
        Self::from_harness(Harness::load(path)?)
    }

    /// A suite from an already parsed harness (its references resolved against its path).
    pub fn from_harness(harness: Harness) -> Result<Self, SourceError> {
        Self::build(harness, &mut Disk(None), Checks::Now)
    }

    /// Loads a suite for its trials: as [`Suite::load`] does, except that when `prepared`
    /// keeps a stamp of exactly these files for this build, their YAML is not parsed (the
    /// stamp's snapshots of it are read) and what would only check them again — compiling
    /// every regex and every tool's schema — waits for its first use. A load without such a
    /// stamp is the full one (same result, same errors), and keeps the stamp when it succeeds.
    pub(crate) fn load_prepared(path: &Path, prepared: &Prepared) -> Result<Self, SourceError> {
        let file = SourceFile::read(path)?;
        if let Some(kept) = prepared.kept(&file)
            && let Some(suite) = Self::from_kept(&file, &kept)
        {
            return Ok(suite);
        }
        Self::load_and_keep(file, prepared)
    }

    /// The full load of the harness `file` (every file read, parsed and checked), which keeps
    /// the suite's stamp in `prepared` when it succeeds.
    pub(crate) fn load_and_keep(
        file: SourceFile,
        prepared: &Prepared,
    ) -> Result<Self, SourceError> {
        let (harness, snapshot) = Harness::with_snapshot(file.clone())?;
        let mut disk = Disk(Some(vec![Kept::entry(file, snapshot)]));
        let suite = Self::build(harness, &mut disk, Checks::Now)?;
        if let Disk(Some(entries)) = disk {
            prepared.keep(&entries);
        }
        Ok(suite)
    }

    /// The suite from a stamp's files and snapshots; `None` when any of it does not load
    /// (the full load then says why, if anything is wrong).
    fn from_kept(file: &SourceFile, kept: &Kept) -> Option<Self> {
        crate::pattern::deferring(|| {
            let harness = match kept.snapshot(&file.path) {
                Some(json) => Harness::from_snapshot(file.clone(), json)?,
                None => Harness::from_source(file.clone()),
            };
            Self::build(harness.ok()?, &mut &*kept, Checks::Later).ok()
        })
    }

    /// The suite of a parsed harness, each file it references got from `files`. With
    /// [`Checks::Later`] (files a stamp vouches for), the linter compiles each tool's schema
    /// at its first call.
    fn build(harness: Harness, files: &mut dyn Files, checks: Checks) -> Result<Self, SourceError> {
        let root = ProjectRoot::of(&harness);
        let mut tools = ToolSet::default();
        for p in &harness.tools {
            root.check(&harness, p)?;
            let set = files.tools(p).map_err(|e| reference(&harness, p, e))?;
            tools.extend(set).map_err(|e| {
                let message = format!("{}: {e}", p.display());
                harness.source.error(message).with_cause(e)
            })?;
        }
        let mut caps = Vec::new();
        for p in &harness.capabilities {
            root.check(&harness, p)?;
            let matrix = files.matrix(p).map_err(|e| reference(&harness, p, e))?;
            if let Checks::Now = checks {
                matrix.check_against(&tools)?;
            }
            caps.push(matrix);
        }
        let linter = match checks {
            Checks::Now => Linter::new(&tools, caps),
            Checks::Later => Linter::deferred(&tools, caps),
        };
        let linter = linter.map_err(|e| {
            e.in_file(&tools)
                .unwrap_or_else(|| harness.source.error(e.to_string()).with_cause(e))
        })?;
        Ok(Self::with_linter(harness, tools, linter))
    }

    /// A suite from its parts: the scenario index built here (the fast path's matchers and
    /// the scenarios' reference runs at their first use).
    pub(crate) fn with_linter(harness: Harness, tools: ToolSet, linter: Linter) -> Self {
        let n = harness.scenarios.len();
        let mut index = HashMap::with_capacity_and_hasher(n, Default::default());
        for (i, sc) in harness.scenarios.iter().enumerate() {
            index.entry(sc.id.clone()).or_insert(i);
        }
        Self {
            harness,
            tools,
            linter,
            index,
            fast: OnceLock::new(),
            references: (0..n).map(|_| OnceLock::new()).collect(),
            own: (0..n).map(|_| OnceLock::new()).collect(),
        }
    }

    /// The fast path's matchers, compiled at the first call.
    pub(crate) fn fast(&self) -> &FastPath {
        self.fast
            .get_or_init(|| FastPath::new(&self.harness, &self.linter))
    }

    /// The scenario a transcript names, if the harness has it (a transcript with an inline
    /// prompt, or an unknown id, has none; [`crate::evaluate`] says which).
    pub fn scenario_of(&self, t: &Transcript) -> Option<&Scenario> {
        let id = t.scenario.as_deref()?;
        self.scenario(id).map(|(_, sc)| sc)
    }

    /// The scenario with this id, and its index in the harness.
    pub fn scenario(&self, id: &str) -> Option<(usize, &Scenario)> {
        let i = *self.index.get(id)?;
        Some((i, &self.harness.scenarios[i]))
    }

    /// What the engines find for each workflow step's own call of scenario `index` (worked
    /// out once); `None` past the scenarios the suite was built with.
    pub(crate) fn own_calls(&self, index: usize) -> Option<&OwnCalls> {
        let sc = self.harness.scenarios.get(index)?;
        let own = self.own.get(index)?;
        Some(own.get_or_init(|| OwnCalls::of(sc, &self.linter)))
    }
}

/// Where a suite's tool specs and matrices come from.
trait Files {
    fn tools(&mut self, path: &Path) -> Result<ToolSet, SourceError>;
    fn matrix(&mut self, path: &Path) -> Result<Capabilities, SourceError>;
}

/// Read and parsed from disk; with `Some`, each file is kept with the snapshot of what it
/// parsed to, for a stamp.
struct Disk(Option<Vec<Entry>>);

impl Files for Disk {
    fn tools(&mut self, path: &Path) -> Result<ToolSet, SourceError> {
        let file = SourceFile::read(path)?;
        let set = ToolSet::from_source(&file)?;
        if let Some(kept) = &mut self.0 {
            kept.push(Kept::entry(file, None));
        }
        Ok(set)
    }

    fn matrix(&mut self, path: &Path) -> Result<Capabilities, SourceError> {
        let file = SourceFile::read(path)?;
        let Some(kept) = &mut self.0 else {
            return Capabilities::from_source(&file);
        };
        let (matrix, snapshot) = Capabilities::with_snapshot(&file)?;
        kept.push(Kept::entry(file, snapshot));
        Ok(matrix)
    }
}

/// A stamp's files, as they are on disk, and its snapshots.
impl Files for &Kept {
    fn tools(&mut self, path: &Path) -> Result<ToolSet, SourceError> {
        ToolSet::from_stamped(self.file(path)?)
    }

    fn matrix(&mut self, path: &Path) -> Result<Capabilities, SourceError> {
        let file = self.file(path)?;
        match self.snapshot(path) {
            Some(json) => Capabilities::from_snapshot(file, json)
                .unwrap_or_else(|| Err(SourceError::about(path, "not the stamp's snapshot"))),
            None => Capabilities::from_source(file),
        }
    }
}

/// Whether a load checks what only compiling tells (regexes, JSON Schemas) now, or leaves it
/// to the first use.
#[derive(Clone, Copy)]
enum Checks {
    Now,
    /// The files are stamped: they loaded clean with this build, so what checks only these
    /// files against each other (a matrix against the tool spec) is not checked again.
    Later,
}

// A file that cannot be read is reported at the harness line naming it; a file that can be
// read but is malformed is reported inside that file.
fn reference(harness: &Harness, path: &Path, err: SourceError) -> SourceError {
    if err.line.is_none() && err.path == path {
        harness.reference_error(path, &err)
    } else {
        err
    }
}

/// The directory a harness's file references (`tools:`, `capabilities:`) must stay inside, so
/// that `tools: [/etc/passwd]` is never read, let alone quoted into a report (issue 18,
/// item 5): the project holding the harness — the nearest directory at or above the one that
/// holds the harness's directory (`<root>/harnesses/x.yaml` → `<root>`) with a `Cargo.toml`
/// (which may move the harnesses deeper, `[package.metadata.agent-seer]`), else that
/// directory itself. Both sides are canonicalised, so neither `..` nor a symlink leads out.
struct ProjectRoot(Result<std::path::PathBuf, std::io::Error>);

impl ProjectRoot {
    fn of(harness: &Harness) -> Self {
        let dir = match harness.path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        Self(std::fs::canonicalize(dir).map(|dir| {
            let base = dir.parent().unwrap_or(&dir);
            base.ancestors()
                .find(|a| a.join("Cargo.toml").is_file())
                .unwrap_or(base)
                .to_path_buf()
        }))
    }

    /// `Ok` when `referenced` lies inside the project (or does not exist: loading it then
    /// says so at the reference); otherwise an error at the reference naming the file.
    fn check(&self, harness: &Harness, referenced: &Path) -> Result<(), SourceError> {
        let Ok(real) = std::fs::canonicalize(referenced) else {
            return Ok(());
        };
        let why = match &self.0 {
            Ok(root) if real.starts_with(root) => return Ok(()),
            Ok(root) => format!(
                "is outside the project ({}), and a harness reads only files inside its project",
                root.display()
            ),
            Err(e) => format!(
                "is not read: the harness's own directory cannot be resolved ({e}), so where its \
                 project lies is unknown"
            ),
        };
        Err(harness.reference_error(referenced, &SourceError::about(referenced, why)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::{TrialRecord, check_loaded};
    use crate::harness::{Layout, TrialId, discover};
    use crate::spec::capability::Family;
    use std::path::PathBuf;

    /// What a trial sees of a suite: every transcript's record and evaluation (or its error),
    /// the harness trial's verdict on the oracles, and the loaded harness, specs and matrices.
    fn graded(suite: &Suite, transcripts: &[(String, PathBuf)]) -> Vec<String> {
        let mut out = vec![
            format!("{:?}", suite.harness.scenarios),
            format!("{:?}", suite.harness.thresholds),
            format!("{:?}", suite.tools.tools()),
        ];
        // Each matrix but the families' lookup maps (hash maps, in no order; made from the
        // models, which are compared).
        for m in suite.linter.capabilities() {
            let families: Vec<_> = m
                .families
                .iter()
                .map(|f| {
                    let Family {
                        name,
                        selector,
                        when_absent,
                        unknown,
                        case_insensitive,
                        rule,
                        models,
                        ..
                    } = f;
                    format!("{name:?} {selector:?} {when_absent:?} {unknown:?} {case_insensitive:?} {rule:?} {models:?}")
                })
                .collect();
            out.push(format!(
                "{:?} {:?} {:?} {:?} {:?} {:?} {:?} {:?} {:?} {:?} {families:?}",
                m.server,
                m.version,
                m.source,
                m.retired,
                m.tools,
                m.effects,
                m.errors,
                m.error_defaults,
                m.sql_dialect,
                m.file
            ));
        }
        for (id, path) in transcripts {
            out.push(record(suite, id, path));
        }
        // Last: it compiles every oracle's regexes and schemas, which a trial compiles only
        // as its transcript needs them.
        out.push(format!(
            "{:?}",
            crate::check::plan::check_oracles_for_tests(suite)
        ));
        out
    }

    /// A transcript trial's record and evaluation, or its error.
    fn record(suite: &Suite, id: &str, path: &Path) -> String {
        let id = TrialId::transcript(&suite.harness.suite, id);
        match check_loaded(suite, path) {
            Ok(r) => {
                let record: TrialRecord = r.record(&id);
                serde_json::to_string(&(record, &r.evaluation)).unwrap()
            }
            Err(e) => e.render(),
        }
    }

    /// The first difference of `got` from `want`, in a few words around it.
    fn same(got: &[String], want: &[String], what: &Path) {
        assert_eq!(got.len(), want.len(), "{}", what.display());
        for (i, (g, w)) in got.iter().zip(want).enumerate() {
            if g != w {
                let at = g.bytes().zip(w.bytes()).take_while(|(a, b)| a == b).count();
                let around = |s: &str| {
                    s.get(at.saturating_sub(200)..(at + 200).min(s.len()))
                        .unwrap_or(s)
                        .to_owned()
                };
                panic!(
                    "{} [{i}] differs at byte {at}:\n got: …{}…\nwant: …{}…",
                    what.display(),
                    around(g),
                    around(w)
                );
            }
        }
    }

    /// A trial's process loads its suite through the suite's stamp: from the snapshots of its
    /// YAML, each regex and schema compiled at its first use. On every shipped suite that is
    /// the suite the full load gives — the same harness, specs and matrices, the same record
    /// and evaluation for every transcript, the same verdict on the oracles — and it is the
    /// stamp that is read, with a snapshot of every YAML file.
    #[test]
    fn a_suite_loaded_through_its_stamp_grades_as_the_full_load_does() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let dir = tempfile::tempdir().unwrap();
        let prepared = Prepared::at(dir.path().to_path_buf()).unwrap();
        let suites = discover(&Layout::under(root)).unwrap();
        assert!(suites.len() >= 12);
        for files in suites {
            let path = files.harness.as_deref().unwrap();
            let want = graded(&Suite::load(path).unwrap(), &files.transcripts);
            // The first load is the full one, and keeps the stamp.
            let first = Suite::load_prepared(path, &prepared).unwrap();
            same(&graded(&first, &files.transcripts), &want, path);
            let file = SourceFile::read(path).unwrap();
            let kept = prepared.kept(&file).expect("the stamp is kept");
            for p in
                std::iter::once(path).chain(first.harness.capabilities.iter().map(|p| p.as_path()))
            {
                assert!(kept.snapshot(p).is_some(), "no snapshot of {}", p.display());
            }
            let stamped = Suite::from_kept(&file, &kept).expect("loads from its stamp");
            same(&graded(&stamped, &files.transcripts), &want, path);
            // As a trial's process does: a suite of its own for one transcript.
            let n = want.len() - files.transcripts.len() - 1;
            for (i, (id, p)) in files.transcripts.iter().enumerate() {
                let alone = Suite::from_kept(&file, &kept).unwrap();
                assert_eq!(record(&alone, id, p), want[n + i], "{}", p.display());
            }
            let again = Suite::load_prepared(path, &prepared).unwrap();
            same(&graded(&again, &files.transcripts), &want, path);
        }
    }

    /// A stamp is of the files as they were: an edit to any of them — a matrix rule that now
    /// fails the transcript, a harness regex that no longer compiles — is graded, or refused,
    /// as the full load would, and the stamp is kept again for the new files.
    #[test]
    fn an_edit_to_any_file_is_graded_as_a_full_load_grades_it() {
        let dir = tempfile::tempdir().unwrap();
        let h = dir.path().join("harnesses");
        std::fs::create_dir_all(&h).unwrap();
        let write = |name: &str, text: &str| std::fs::write(h.join(name), text).unwrap();
        write(
            "s.tools.json",
            r#"[{"name": "t", "inputSchema": {"type": "object", "properties": {"x": {"type": "string"}}}}]"#,
        );
        write("caps.yaml", "server: srv\ntools:\n  t: {}\n");
        let harness = |policy: &str| {
            format!(
                "suite: s\ncapabilities: [caps.yaml]\nscenarios:\n  - id: a\n    turns:\n      - prompt: p\n        workflow:\n          - tool: t\n            arguments: {{x: b}}\n            match: {{x: {policy}}}\n"
            )
        };
        write("s.yaml", &harness("exact"));
        write(
            "t.yaml",
            "scenario: a\ncalls:\n  - {tool: t, arguments: {x: b}}\n",
        );
        let (path, transcript) = (h.join("s.yaml"), h.join("t.yaml"));
        let prepared = Prepared::at(dir.path().join("prepared")).unwrap();
        let verdict = |suite: &Suite| check_loaded(suite, &transcript).unwrap().evaluation.verdict;
        let load = || Suite::load_prepared(&path, &prepared);
        let kept = || prepared.kept(&SourceFile::read(&path).unwrap()).is_some();

        assert_eq!(verdict(&load().unwrap()), crate::check::Verdict::Pass);
        assert!(kept());
        assert_eq!(verdict(&load().unwrap()), crate::check::Verdict::Pass);
        // The matrix now refuses `b`: the stamp is not used, the call is a capability error.
        write(
            "caps.yaml",
            "server: srv\ntools:\n  t:\n    parameters:\n      x: [{ pattern: '^a' }]\n",
        );
        assert!(!kept());
        assert_eq!(verdict(&load().unwrap()), crate::check::Verdict::Fail);
        assert_eq!(verdict(&load().unwrap()), crate::check::Verdict::Fail);
        assert!(kept());
        // A regex that does not compile is the full load's error, at its line.
        write("s.yaml", &harness("{regex: '('}"));
        let want = Suite::load(&path).err().unwrap().render();
        assert_eq!(load().err().unwrap().render(), want);
        assert!(!kept());
        // A policy its transcript meets again: passes once the matrix allows `b` again.
        write("s.yaml", &harness("{regex: '^b$'}"));
        write("caps.yaml", "server: srv\ntools:\n  t: {}\n");
        assert_eq!(verdict(&load().unwrap()), crate::check::Verdict::Pass);
        assert!(kept());
        assert_eq!(verdict(&load().unwrap()), crate::check::Verdict::Pass);
    }

    /// A project of one suite under `dir`: tool `t` with `schema`, a matrix, a harness whose
    /// step matches `x` by `policy`, and transcript `t` calling `t` with `x: b`.
    fn project(dir: &Path, schema: &str, policy: &str) -> PathBuf {
        let h = dir.join("harnesses");
        let ts = dir.join("transcripts").join("s");
        std::fs::create_dir_all(&h).unwrap();
        std::fs::create_dir_all(&ts).unwrap();
        let tools = format!(r#"[{{"name": "t", "inputSchema": {schema}}}]"#);
        std::fs::write(h.join("s.tools.json"), tools).unwrap();
        std::fs::write(h.join("caps.yaml"), "server: srv\ntools:\n  t: {}\n").unwrap();
        let harness = format!(
            "suite: s\ncapabilities: [caps.yaml]\nscenarios:\n  - id: a\n    turns:\n      - prompt: p\n        workflow:\n          - tool: t\n            arguments: {{x: b}}\n            match: {{x: {policy}}}\n"
        );
        std::fs::write(h.join("s.yaml"), harness).unwrap();
        std::fs::write(
            ts.join("t.yaml"),
            "scenario: a\ncalls:\n  - {tool: t, arguments: {x: b}}\n",
        )
        .unwrap();
        h.join("s.yaml")
    }

    /// A stamp that says the suite's files loaded clean when they do not (written by hand
    /// here: copied from elsewhere, or edited): what it vouched for is compiled at its use.
    fn forge(prepared: &Prepared, harness: &Path) {
        let h = harness.parent().unwrap();
        let entries: Vec<Entry> = [harness, &h.join("s.tools.json"), &h.join("caps.yaml")]
            .into_iter()
            .map(|p| Kept::entry(SourceFile::read(p).unwrap(), None))
            .collect();
        prepared.keep(&entries);
    }

    /// The record of trial `name` planned with `prepared` as the stamp directory (`None`: no
    /// stamps), the project's root as the configuration's.
    fn trial(root: &Path, name: &str, prepared: Option<PathBuf>) -> TrialRecord {
        let config = crate::check::HarnessConfig {
            root: root.to_path_buf(),
            harnesses: None,
            transcripts: None,
            judge: crate::check::JudgeSetup::Unset,
            bless: false,
            full_scan_forbidden: false,
            prepared,
        };
        let layout = Layout::under(root);
        crate::check::plan_exact(name, &layout, &config)
            .expect("the name names a trial")
            .run()
    }

    /// A stamp that vouches for a tool schema or a match regex this build cannot compile
    /// (one nobody's full load ever wrote) is caught at the first use, without a panic: the
    /// schema checks nothing and the regex matches nothing, the use is counted, and the
    /// trial runs again on the suite loaded in full, whose record is the one a run without
    /// stamps gives — the error at its place in the file. The stamp is gone afterwards.
    #[test]
    fn a_stamp_that_vouches_for_what_does_not_compile_changes_no_record() {
        for (schema, policy) in [
            // `type` names no JSON type: the schema does not compile.
            (
                r#"{"type": "object", "properties": {"x": {"type": "strin"}}}"#,
                "exact",
            ),
            (
                r#"{"type": "object", "properties": {"x": {"type": "string"}}}"#,
                "{regex: '('}",
            ),
        ] {
            let dir = tempfile::tempdir().unwrap();
            let harness = project(dir.path(), schema, policy);
            let stamps = dir.path().join("prepared");
            let prepared = Prepared::at(stamps.clone()).unwrap();
            let want = Suite::load(&harness)
                .err()
                .expect("the full load refuses it");
            assert!(want.render().contains("-->"), "an error at its place");

            // The suite loads through the forged stamp, and grading with it does not panic.
            forge(&prepared, &harness);
            let suite = Suite::load_prepared(&harness, &prepared).expect("through the stamp");
            let before = crate::pattern::broken_uses();
            let graded = check_loaded(&suite, &dir.path().join("transcripts/s/t.yaml"));
            assert!(graded.is_ok());
            assert!(crate::pattern::broken_uses() > before, "{schema} {policy}");

            // Each trial's record is the one without stamps.
            for name in ["s::t", "s::harness"] {
                let plain = trial(dir.path(), name, None);
                forge(&prepared, &harness);
                assert!(
                    prepared
                        .kept(&SourceFile::read(&harness).unwrap())
                        .is_some()
                );
                let stamped = trial(dir.path(), name, Some(stamps.clone()));
                assert_eq!(
                    serde_json::to_string(&stamped).unwrap(),
                    serde_json::to_string(&plain).unwrap(),
                    "{name}: {schema} {policy}"
                );
                assert!(
                    prepared
                        .kept(&SourceFile::read(&harness).unwrap())
                        .is_none(),
                    "the stamp is gone"
                );
            }
        }
    }

    /// An invalid regex in a harness is an error at its line and column on a fresh load: no
    /// stamp, or a stamp of other bytes, defers nothing.
    #[test]
    fn an_invalid_regex_is_an_error_at_its_place_without_a_stamp() {
        let dir = tempfile::tempdir().unwrap();
        let schema = r#"{"type": "object", "properties": {"x": {"type": "string"}}}"#;
        let harness = project(dir.path(), schema, "{regex: '^b$'}");
        let prepared = Prepared::at(dir.path().join("prepared")).unwrap();
        Suite::load_prepared(&harness, &prepared).unwrap();
        assert!(
            prepared
                .kept(&SourceFile::read(&harness).unwrap())
                .is_some()
        );
        // The same length, one byte changed: `^b$` becomes `(b$`.
        let text = std::fs::read_to_string(&harness)
            .unwrap()
            .replace("'^b$'", "'(b$'");
        std::fs::write(&harness, &text).unwrap();
        let err = Suite::load_prepared(&harness, &prepared)
            .err()
            .expect("an error");
        let line = text.lines().position(|l| l.contains("regex")).unwrap() + 1;
        let rendered = err.render();
        assert!(
            rendered.contains(&format!("s.yaml:{line}:")) && rendered.contains("invalid regex"),
            "{rendered}"
        );
        assert_eq!(rendered, Suite::load(&harness).err().unwrap().render());
        assert!(
            prepared
                .kept(&SourceFile::read(&harness).unwrap())
                .is_none()
        );
    }
}
