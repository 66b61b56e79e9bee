//! The run directory: every trial writes its [`TrialRecord`] as one JSON line under
//! `target/agent-seer/<run-id>/` (one `records-<pid>-<start>.jsonl` per process), so a run split over
//! processes (nextest runs one per trial) or machines (`--partition`) can be assembled
//! afterwards by `agent-seer report`.
//!
//! The run id is `NEXTEST_RUN_ID` when nextest sets it (shared by all its processes), else one
//! per process (`20261129T153000Z-4242`). `AGENT_SEER_REPORT_DIR` names the run directory
//! outright; `AGENT_SEER_REPORT=off` writes nothing. Each record is one
//! `write` of a whole line in append mode; a reader drops a last line a killed process left
//! unfinished. A process that ends normally closes its file with an end marker, a last line
//! `{"end":N}` holding the number of bytes it wrote before it ([`RunDir::close`]; `check`'s
//! run file, and earlier versions, write it beside as `records-<pid>-<start>.end`); a record
//! file without one, with a torn last line, or of another length, was left by a killed process
//! (or a crashed machine), and [`RunDir::read_run`] names it so a report on the run says it is
//! incomplete (and does not pass). (One file per trial, written by rename, cost 4× the whole
//! evaluation at 10,000 trials.)
//!
//! Nothing is synced to disk: a killed process loses nothing it wrote, and the length in the
//! marker catches records a machine crash lost. Under nextest, where each trial is a process,
//! the two syncs a process made (the record file, the `latest` pointer) cost 7 ms each on a
//! virtual machine's disk, more than the trial; `latest` is written only when it names
//! another run.

use std::collections::HashMap;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use super::RunFile;
use crate::check::Status;
use crate::check::TrialRecord;

/// Where a run's records go.
#[derive(Clone, Debug)]
pub struct RunDir {
    /// The run's id (the directory's name).
    pub id: String,
    /// The run directory (`<target>/agent-seer/<id>`).
    pub path: PathBuf,
}

/// A record or run directory that could not be read or written.
#[derive(Debug)]
#[non_exhaustive]
pub enum RunDirError {
    /// Reading or writing a file failed.
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The cause.
        source: io::Error,
    },
    /// A line of a record file is not a trial record.
    Parse {
        /// The record file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What the JSON parser said.
        message: String,
    },
    /// The run directory does not exist.
    NoRun(PathBuf),
    /// The run directory holds no record.
    Empty(PathBuf),
}

impl std::fmt::Display for RunDirError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RunDirError::Io { path, source } => write!(f, "{}: {source}", path.display()),
            RunDirError::Parse {
                path,
                line,
                column,
                message,
            } => write!(
                f,
                "{}:{line}:{column}: not a trial record: {message}",
                path.display()
            ),
            RunDirError::NoRun(p) => write!(
                f,
                "no run to report: {} does not exist (run `cargo test --test agents` or `agent-seer check` first, or name a run directory)",
                p.display()
            ),
            RunDirError::Empty(p) => {
                write!(
                    f,
                    "{}: the run directory holds no trial records",
                    p.display()
                )
            }
        }
    }
}

impl std::error::Error for RunDirError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            RunDirError::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

fn io_err(path: &Path) -> impl FnOnce(io::Error) -> RunDirError + '_ {
    move |source| RunDirError::Io {
        path: path.to_path_buf(),
        source,
    }
}

impl RunDir {
    /// The run directory of this process's trials, from the environment, or `None` when
    /// reports are off. `root` is the project root, for the `target/` fallback.
    pub fn for_harness(root: &Path) -> Option<RunDir> {
        static DIR: OnceLock<Option<RunDir>> = OnceLock::new();
        DIR.get_or_init(|| {
            if matches!(
                std::env::var("AGENT_SEER_REPORT").as_deref(),
                Ok("0" | "off" | "false" | "no")
            ) {
                return None;
            }
            let id = std::env::var("NEXTEST_RUN_ID")
                .ok()
                .filter(|s| !s.is_empty())
                .unwrap_or_else(process_run_id);
            if let Some(p) = std::env::var_os("AGENT_SEER_REPORT_DIR") {
                return Some(RunDir {
                    id,
                    path: PathBuf::from(p),
                });
            }
            Some(RunDir::new(&crate::check::target_dir(root), id))
        })
        .clone()
    }

    /// `<target>/agent-seer/<id>`.
    pub fn new(target: &Path, id: String) -> RunDir {
        RunDir {
            path: target.join("agent-seer").join(&id),
            id,
        }
    }

    /// The target directory the CLI uses for a project: `CARGO_TARGET_DIR`, else
    /// `<root>/target`.
    pub fn cli_target(root: &Path) -> PathBuf {
        std::env::var_os("CARGO_TARGET_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| root.join("target"))
    }

    /// Appends one trial's record to this process's record file (`records-<pid>-<start>.jsonl`, one
    /// line per trial, each written with a single `write`), and points `latest` at this run
    /// once its first record is written. Returns the record file.
    pub fn write(&self, record: &TrialRecord) -> Result<PathBuf, RunDirError> {
        let mut line = serde_json::to_string(record).map_err(|e| RunDirError::Io {
            path: self.path.clone(),
            source: io::Error::other(e),
        })?;
        line.push('\n');
        let mut files = FILES.lock().unwrap_or_else(|p| p.into_inner());
        let files = files.get_or_insert_with(HashMap::new);
        let first = !files.contains_key(&self.path);
        if first {
            std::fs::create_dir_all(&self.path).map_err(io_err(&self.path))?;
            let file = self.path.join(format!(
                "records-{}-{}.jsonl",
                std::process::id(),
                process_nonce()
            ));
            let handle = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&file)
                .map_err(io_err(&file))?;
            files.insert(self.path.clone(), (file, handle, 0));
        }
        let (file, handle, wrote) = files.get_mut(&self.path).expect("inserted above");
        if let Err(e) = handle.write_all(line.as_bytes()) {
            // A record is lost: this process's file must not claim to be complete.
            WRITE_FAILED.store(true, std::sync::atomic::Ordering::Relaxed);
            return Err(io_err(file)(e));
        }
        *wrote += line.len() as u64;
        // `latest` names the run once it holds a record, so `report` never finds it empty
        // (under nextest every process of the run finds it named already).
        if first && let Some(parent) = self.path.parent() {
            let latest = parent.join("latest");
            let named = std::fs::read(&latest).is_ok_and(|id| id == self.id.as_bytes());
            if !named {
                crate::source::write_atomically(&latest, self.id.as_bytes())
                    .map_err(io_err(&latest))?;
            }
        }
        Ok(file.clone())
    }

    /// Ends this process's record file in this run: writes its end marker, so a reader knows
    /// no record of it is missing. Does nothing when this process wrote no record here, or
    /// when a write of one failed (the file is then reported incomplete).
    pub fn close(&self) -> Result<(), RunDirError> {
        if WRITE_FAILED.load(std::sync::atomic::Ordering::Relaxed) {
            return Ok(());
        }
        let mut files = FILES.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((file, handle, wrote)) = files.as_mut().and_then(|f| f.get_mut(&self.path)) {
            // In the file itself: creating the record file and a marker file beside it was
            // 9 % of a trial's process under nextest (perf, the kernel's inode allocation).
            let end = format!("{END}{wrote}}}\n");
            handle.write_all(end.as_bytes()).map_err(io_err(file))?;
        }
        Ok(())
    }

    /// A record file of this run for one process to write alone, in trial order (`check`:
    /// [`RunFile`] reads it back in name order): `records-<pid>-<start>.jsonl`, as
    /// [`RunDir::write`] names its own. End it with [`RunDir::finish`].
    pub fn run_file(&self) -> Result<RunFile, RunDirError> {
        std::fs::create_dir_all(&self.path).map_err(io_err(&self.path))?;
        RunFile::create(&self.path.join(format!(
            "records-{}-{}.jsonl",
            std::process::id(),
            process_nonce()
        )))
    }

    /// Ends a record file of [`RunDir::run_file`]: flushes it, writes its end marker (nothing
    /// of it is missing), and points `latest` at this run.
    pub fn finish(&self, file: &RunFile) -> Result<(), RunDirError> {
        file.sync()?;
        let end = file.path().with_extension("end");
        std::fs::write(&end, b"").map_err(io_err(&end))?;
        if let Some(parent) = self.path.parent() {
            let latest = parent.join("latest");
            crate::source::write_atomically(&latest, self.id.as_bytes())
                .map_err(io_err(&latest))?;
        }
        Ok(())
    }

    /// Reads every record of a run directory (`*.jsonl` record files, and `*.json` single
    /// records), sorted by trial name. A last line without its newline is a write a killed
    /// process never finished, and is left out; any other bad line is an error naming it.
    pub fn read(dir: &Path) -> Result<Vec<TrialRecord>, RunDirError> {
        Self::read_run(dir).map(|(records, _)| records)
    }

    /// [`RunDir::read`], and what a killed process left unfinished, in words: each record
    /// file without its end marker, or whose last line was cut off (empty for a complete
    /// run). Each file is read once for both.
    pub fn read_run(dir: &Path) -> Result<(Vec<TrialRecord>, Vec<String>), RunDirError> {
        let mut out = Vec::new();
        let mut incomplete = Vec::new();
        for p in record_files(dir)? {
            let text = std::fs::read_to_string(&p).map_err(io_err(&p))?;
            let parse = |text: &str, first_line: usize| {
                serde_json::from_str::<TrialRecord>(text).map_err(|e| RunDirError::Parse {
                    path: p.clone(),
                    line: first_line + e.line() - 1,
                    column: e.column(),
                    message: e.to_string(),
                })
            };
            if p.extension().is_some_and(|e| e == "json") {
                out.push(parse(&text, 1)?);
                continue;
            }
            let name = p.file_name().unwrap_or_default().to_string_lossy();
            // The records, up to the end marker where the file has one.
            let mut records = text.as_str();
            if !text.is_empty() && !text.ends_with('\n') {
                incomplete.push(format!("{name}: its last record was cut off"));
            } else {
                // The marker holds the length the process wrote before it: the file's last
                // line, or a file beside it (`.end`: `check`'s run files, earlier versions;
                // empty from an agent-seer that synced the records before writing it).
                let body = text.strip_suffix('\n').unwrap_or_default();
                let last = body.rfind('\n').map_or(0, |i| i + 1);
                let marker = match body[last..].strip_prefix(END) {
                    Some(n) => {
                        records = &text[..last];
                        Some(n.strip_suffix('}').unwrap_or_default().to_owned())
                    }
                    None => std::fs::read_to_string(p.with_extension("end")).ok(),
                };
                match marker {
                    None => incomplete.push(format!(
                        "{name}: the process writing it did not finish (killed, or still running)"
                    )),
                    Some(m) => match m.trim().parse::<usize>() {
                        Ok(wrote) if wrote != records.len() => incomplete.push(format!(
                            "{name}: holds {} bytes of the {wrote} its process wrote (lost in a crash?)",
                            records.len()
                        )),
                        _ => {}
                    },
                }
            }
            let complete = records.rfind('\n').map_or("", |end| &records[..end]);
            for (i, line) in complete.lines().enumerate() {
                // (An end marker before the last line: the process wrote on after it.)
                if !line.trim().is_empty() && !line.starts_with(END) {
                    out.push(parse(line, i + 1)?);
                }
            }
        }
        if out.is_empty() {
            return Err(RunDirError::Empty(dir.to_path_buf()));
        }
        // A trial recorded twice (a nextest retry) counts once: passed if any attempt passed,
        // as nextest counts a flaky test.
        out.sort_by(|a, b| {
            a.name
                .cmp(&b.name)
                .then_with(|| (a.status != Status::Passed).cmp(&(b.status != Status::Passed)))
        });
        out.dedup_by(|later, first| later.name == first.name);
        Ok((out, incomplete))
    }

    /// The run `target/agent-seer/latest` names.
    pub fn latest(target: &Path) -> Result<PathBuf, RunDirError> {
        let base = target.join("agent-seer");
        let pointer = base.join("latest");
        match std::fs::read_to_string(&pointer) {
            // The pointer is data: it names a run directory beside it, nothing else.
            Ok(id) => match crate::source::file_name(id.trim()) {
                Ok(id) => Ok(base.join(id)),
                Err(e) => Err(RunDirError::Io {
                    path: pointer,
                    source: io::Error::new(io::ErrorKind::InvalidData, format!("run id {e}")),
                }),
            },
            Err(e) if e.kind() == io::ErrorKind::NotFound => Err(RunDirError::NoRun(pointer)),
            Err(e) => Err(RunDirError::Io {
                path: pointer,
                source: e,
            }),
        }
    }
}

/// A number unique to this process among those sharing its pid over time (its start in
/// nanoseconds), so a later process given the same pid cannot close an earlier one's file.
pub(super) fn process_nonce() -> u128 {
    static NONCE: OnceLock<u128> = OnceLock::new();
    *NONCE.get_or_init(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos())
    })
}

/// How a record file's end marker line starts (`{"end":1679}`, the bytes written before it):
/// no record's line starts so (a record's first key is `name`).
const END: &str = "{\"end\":";

/// This process's open record files, by run directory: (file, handle, bytes written).
type OpenFiles = HashMap<PathBuf, (PathBuf, std::fs::File, u64)>;
static FILES: Mutex<Option<OpenFiles>> = Mutex::new(None);
/// Set when a record could not be appended: no end marker is written then.
static WRITE_FAILED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// The record files of a run directory (`*.jsonl`, `*.json`), sorted.
fn record_files(dir: &Path) -> Result<Vec<PathBuf>, RunDirError> {
    if !dir.exists() {
        return Err(RunDirError::NoRun(dir.to_path_buf()));
    }
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(io_err(dir))?
        .map(|e| e.map(|e| e.path()))
        .collect::<Result<_, _>>()
        .map_err(io_err(dir))?;
    paths.retain(|p| p.extension().is_some_and(|e| e == "json" || e == "jsonl") && p.is_file());
    paths.sort();
    Ok(paths)
}

/// `YYYYMMDDTHHMMSSZ-<pid>`, in UTC.
pub fn process_run_id() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    format!("{}-{}", utc_stamp(secs), std::process::id())
}

/// Seconds since the epoch as `YYYYMMDDTHHMMSSZ` (proleptic Gregorian, Howard Hinnant's
/// days-to-civil).
pub fn utc_stamp(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}{m:02}{d:02}T{:02}{:02}{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stamps_are_utc_calendar_dates() {
        assert_eq!(utc_stamp(0), "19700101T000000Z");
        // 2026-11-29 15:38:55 UTC.
        assert_eq!(utc_stamp(1_795_966_735), "20261129T153855Z");
        // A leap day.
        assert_eq!(utc_stamp(951_782_400), "20000229T000000Z");
    }

    #[test]
    fn records_round_trip_and_bad_ones_name_their_file() {
        let dir = tempfile::tempdir().unwrap();
        let run = RunDir::new(dir.path(), "r1".into());
        let rec = TrialRecord::new(
            &crate::harness::TrialId::harness("veo"),
            Status::Passed,
            None,
        );
        run.write(&rec).unwrap();
        assert_eq!(RunDir::read(&run.path).unwrap(), vec![rec.clone()]);
        // A retry's second record of the same trial counts once, passed if any attempt was.
        let failed = TrialRecord::new(
            &crate::harness::TrialId::harness("veo"),
            Status::Failed,
            Some("x".into()),
        );
        std::fs::write(
            run.path.join("retry.jsonl"),
            serde_json::to_string(&failed).unwrap() + "\n",
        )
        .unwrap();
        assert_eq!(RunDir::read(&run.path).unwrap(), vec![rec.clone()]);
        std::fs::remove_file(run.path.join("retry.jsonl")).unwrap();
        assert_eq!(RunDir::latest(dir.path()).unwrap(), run.path);
        // A pointer naming a path, not a run beside it, is refused.
        let pointer = dir.path().join("agent-seer/latest");
        let kept = std::fs::read(&pointer).unwrap();
        std::fs::write(&pointer, "../../../etc\n").unwrap();
        let e = RunDir::latest(dir.path()).unwrap_err().to_string();
        assert!(
            e.ends_with("latest: run id `../../../etc` cannot be a file name: it contains a path separator (`/`)"),
            "{e}"
        );
        std::fs::write(&pointer, kept).unwrap();
        // A line a killed process never finished is left out; a bad complete line is not.
        let file = std::fs::read_dir(&run.path)
            .unwrap()
            .next()
            .unwrap()
            .unwrap()
            .path();
        let mut text = std::fs::read_to_string(&file).unwrap();
        text.push_str("{\"name\": \"half");
        std::fs::write(&file, &text).unwrap();
        assert_eq!(RunDir::read(&run.path).unwrap().len(), 1);
        std::fs::write(run.path.join("broken.json"), "{\n  \"name\": 3\n}").unwrap();
        let err = RunDir::read(&run.path).unwrap_err().to_string();
        assert!(err.contains("broken.json:2:"), "{err}");
        assert!(matches!(
            RunDir::read(&dir.path().join("nope")),
            Err(RunDirError::NoRun(_))
        ));
    }

    #[test]
    fn the_end_marker_holds_the_length_written() {
        let dir = tempfile::tempdir().unwrap();
        let run = RunDir::new(dir.path(), "r2".into());
        let rec = |s| TrialRecord::new(&crate::harness::TrialId::harness(s), Status::Passed, None);
        let file = run.write(&rec("a")).unwrap();
        run.write(&rec("b")).unwrap();
        let (_, incomplete) = RunDir::read_run(&run.path).unwrap();
        let name = file.file_name().unwrap().to_string_lossy();
        let unfinished =
            format!("{name}: the process writing it did not finish (killed, or still running)");
        assert_eq!(incomplete, vec![unfinished.clone()]);
        let records = std::fs::read_to_string(&file).unwrap();
        run.close().unwrap();
        let text = std::fs::read_to_string(&file).unwrap();
        assert_eq!(text, format!("{records}{{\"end\":{}}}\n", records.len()));
        let (read, incomplete) = RunDir::read_run(&run.path).unwrap();
        assert_eq!((read.len(), incomplete), (2, vec![]));
        // A crash of the machine kept the marker but lost the second record: whole lines, so
        // only the length tells.
        let first = &records[..records.find('\n').unwrap() + 1];
        let lost = |marker: &str| format!("{first}{marker}");
        std::fs::write(&file, lost(&text[records.len()..])).unwrap();
        let (read, incomplete) = RunDir::read_run(&run.path).unwrap();
        assert_eq!(read.len(), 1);
        let short = format!(
            "{name}: holds {} bytes of the {} its process wrote (lost in a crash?)",
            first.len(),
            records.len()
        );
        assert_eq!(incomplete, vec![short.clone()]);
        // A record written after the marker: the process went on, and did not end again.
        std::fs::write(&file, format!("{text}{}", &records[first.len()..])).unwrap();
        let (read, incomplete) = RunDir::read_run(&run.path).unwrap();
        assert_eq!((read.len(), incomplete), (2, vec![unfinished.clone()]));
        // A marker beside the file (`check`'s run file, earlier versions) ends it alike; an
        // empty one (an agent-seer that synced before writing it) ends a whole file.
        let marker = file.with_extension("end");
        std::fs::write(&file, &records).unwrap();
        std::fs::write(&marker, records.len().to_string()).unwrap();
        assert!(RunDir::read_run(&run.path).unwrap().1.is_empty());
        std::fs::write(&file, first).unwrap();
        assert_eq!(RunDir::read_run(&run.path).unwrap().1, vec![short]);
        std::fs::write(&marker, "").unwrap();
        assert!(RunDir::read_run(&run.path).unwrap().1.is_empty());
    }
}
