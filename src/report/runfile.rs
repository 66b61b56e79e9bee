//! One process's trial records on disk, written as its trials end and read back in name order
//! as often as a renderer needs: how `agent-seer check` reports on a corpus of any size in
//! bounded memory. The main types here are [`RunFile`] (the writer, and the index it keeps)
//! and [`Trials`] (a run's records in name order, from a [`RunFile`] or from memory).
//!
//! The file is a run directory's record file ([`RunDir::run_file`](super::RunDir::run_file):
//! one JSON line per record, the format `agent-seer report` reads), or a temporary one that is
//! removed when dropped (`check --no-save`). Records come in trial order, and mostly in name
//! order (the plan is sorted); a record whose name sorts before one already written (a gate run
//! after its suite's transcripts) is *late*, and the index keeps its name and offset. Reading
//! merges the late records back into place, so the file reads in name order while the index
//! holds one entry per late record and one span per run of a suite's records: a few per suite,
//! whatever the number of transcripts. Each record is parsed when read and dropped after use;
//! reading the 30,000-record file of `bench/memory.sh` (77 MB) once costs about as much as
//! reading its transcripts.

use std::borrow::Cow;
use std::fs::File;
use std::io::{self, BufRead, BufReader, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use super::RunDirError;
use crate::check::TrialRecord;

/// A record file being written in trial order, with the index that reads it in name order.
#[derive(Debug)]
pub struct RunFile {
    path: PathBuf,
    file: File,
    /// Bytes written.
    len: u64,
    /// Records written.
    count: usize,
    /// The name of the last record written in name order.
    last: Option<String>,
    /// Records written after one whose name sorts after theirs: (name, suite, offset), sorted
    /// by name.
    late: Vec<(String, String, u64)>,
    /// Runs of consecutive in-order records of one suite: (suite, start, end offsets). A late
    /// record lies between two spans, never in one.
    spans: Vec<(String, u64, u64)>,
    /// Removed when dropped.
    temporary: bool,
}

impl RunFile {
    /// A new record file at `path` (its directory must exist); an existing file is replaced.
    pub fn create(path: &Path) -> Result<Self, RunDirError> {
        let file = File::options()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(path)
            .map_err(|source| RunDirError::Io {
                path: path.to_path_buf(),
                source,
            })?;
        Ok(Self {
            path: path.to_path_buf(),
            file,
            len: 0,
            count: 0,
            last: None,
            late: Vec::new(),
            spans: Vec::new(),
            temporary: false,
        })
    }

    /// A record file in the system's temporary directory, removed when dropped.
    pub fn temporary() -> Result<Self, RunDirError> {
        use std::sync::atomic::{AtomicU64, Ordering};
        static SEQ: AtomicU64 = AtomicU64::new(0);
        let path = std::env::temp_dir().join(format!(
            "agent-seer-records-{}-{}-{}.jsonl",
            std::process::id(),
            super::rundir::process_nonce(),
            SEQ.fetch_add(1, Ordering::Relaxed)
        ));
        let mut f = Self::create(&path)?;
        f.temporary = true;
        Ok(f)
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// How many records it holds.
    pub fn len(&self) -> usize {
        self.count
    }

    /// Whether it holds no record.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Appends one record as one JSON line, with one `write` (a killed process leaves whole
    /// lines, and at most its last one cut off, as [`RunDir::read_run`](super::RunDir::read_run)
    /// expects).
    pub fn push(&mut self, record: &TrialRecord) -> Result<(), RunDirError> {
        let mut line = serde_json::to_string(record).map_err(|e| self.io(io::Error::other(e)))?;
        line.push('\n');
        self.file
            .write_all(line.as_bytes())
            .map_err(|e| self.io(e))?;
        let (start, end) = (self.len, self.len + line.len() as u64);
        self.len = end;
        self.count += 1;
        if self
            .last
            .as_deref()
            .is_some_and(|last| record.name.as_str() < last)
        {
            // Kept sorted as they come (a few per suite).
            let at = self
                .late
                .partition_point(|(n, ..)| n.as_str() <= record.name.as_str());
            self.late
                .insert(at, (record.name.clone(), record.suite.clone(), start));
            return Ok(());
        }
        self.last = Some(record.name.clone());
        match self.spans.last_mut() {
            Some((suite, _, e)) if *suite == record.suite && *e == start => *e = end,
            _ => self.spans.push((record.suite.clone(), start, end)),
        }
        Ok(())
    }

    /// Flushes what was written to the disk.
    pub fn sync(&self) -> Result<(), RunDirError> {
        self.file.sync_data().map_err(|e| self.io(e))
    }

    /// The records, in name order.
    pub fn trials(&self) -> Trials<'_> {
        Trials::File(self)
    }

    fn io(&self, source: io::Error) -> RunDirError {
        RunDirError::Io {
            path: self.path.clone(),
            source,
        }
    }
}

impl Drop for RunFile {
    fn drop(&mut self) {
        if self.temporary {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// A run's trial records in name order, read as often as a renderer needs: a sorted slice in
/// memory (a [`Report`](super::Report)'s), or a [`RunFile`] read a record at a time.
#[derive(Clone, Copy, Debug)]
pub enum Trials<'a> {
    /// Records in memory, sorted by name.
    Memory(&'a [TrialRecord]),
    /// A record file, read through its index (see [`RunFile::trials`]).
    File(&'a RunFile),
}

impl<'a> Trials<'a> {
    /// Every record, in name order.
    pub fn iter(self) -> Iter<'a> {
        self.of(None)
    }

    /// The records of one suite, in name order.
    pub fn suite(self, suite: &'a str) -> Iter<'a> {
        self.of(Some(suite))
    }

    fn of(self, suite: Option<&'a str>) -> Iter<'a> {
        match self {
            Trials::Memory(records) => Iter::Memory(records.iter(), suite),
            Trials::File(f) => Iter::File(Box::new(FileIter::new(f, suite))),
        }
    }
}

/// The records of [`Trials`], borrowed from memory or read from the file; a file that cannot
/// be read, or a line that is no record, is an error (and ends the iteration).
pub enum Iter<'a> {
    /// From memory, of every suite or one.
    Memory(std::slice::Iter<'a, TrialRecord>, Option<&'a str>),
    /// From a record file.
    File(Box<FileIter<'a>>),
}

impl<'a> Iterator for Iter<'a> {
    type Item = io::Result<Cow<'a, TrialRecord>>;

    fn next(&mut self) -> Option<Self::Item> {
        match self {
            Iter::Memory(it, suite) => it
                .find(|t| suite.is_none_or(|s| t.suite == s))
                .map(|t| Ok(Cow::Borrowed(t))),
            Iter::File(f) => f.next().map(|r| r.map(Cow::Owned)),
        }
    }
}

/// Reads a [`RunFile`]'s spans of in-order records line by line, and merges its late records
/// back in by name.
pub struct FileIter<'a> {
    file: &'a RunFile,
    reader: Option<BufReader<File>>,
    /// The spans still to read: (start, end).
    spans: std::vec::IntoIter<(u64, u64)>,
    /// Where the reader is, and where its span ends.
    at: u64,
    end: u64,
    /// The late records to merge, by name.
    late: std::iter::Peekable<std::vec::IntoIter<(&'a str, u64)>>,
    /// An in-order record read, waiting for the late ones that sort before it.
    held: Option<TrialRecord>,
    line: String,
    done: bool,
}

impl<'a> FileIter<'a> {
    fn new(file: &'a RunFile, suite: Option<&str>) -> Self {
        let spans: Vec<(u64, u64)> = file
            .spans
            .iter()
            .filter(|(s, ..)| suite.is_none_or(|w| w == s))
            .map(|(_, start, end)| (*start, *end))
            .collect();
        let late: Vec<(&str, u64)> = file
            .late
            .iter()
            .filter(|(_, s, _)| suite.is_none_or(|w| w == s))
            .map(|(n, _, o)| (n.as_str(), *o))
            .collect();
        Self {
            file,
            reader: None,
            spans: spans.into_iter(),
            at: 0,
            end: 0,
            late: late.into_iter().peekable(),
            held: None,
            line: String::new(),
            done: false,
        }
    }

    /// The next in-order record.
    fn next_in_order(&mut self) -> io::Result<Option<TrialRecord>> {
        if self.reader.is_none() || self.at >= self.end {
            let Some((start, end)) = self.spans.next() else {
                return Ok(None);
            };
            let reader = match &mut self.reader {
                Some(r) => r,
                None => self.reader.insert(BufReader::with_capacity(
                    1 << 16,
                    File::open(&self.file.path)?,
                )),
            };
            reader.seek(SeekFrom::Start(start))?;
            (self.at, self.end) = (start, end);
        }
        let Some(reader) = self.reader.as_mut() else {
            return Ok(None);
        };
        self.line.clear();
        let n = reader.read_line(&mut self.line)?;
        if n == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!("{}: the record file ends early", self.file.path.display()),
            ));
        }
        let offset = self.at;
        self.at += n as u64;
        parse(&self.file.path, &self.line, offset).map(Some)
    }

    fn step(&mut self) -> io::Result<Option<TrialRecord>> {
        if self.held.is_none() {
            self.held = self.next_in_order()?;
        }
        let late_first = match (self.late.peek(), &self.held) {
            (Some((name, _)), Some(held)) => *name < held.name.as_str(),
            (Some(_), None) => true,
            (None, _) => false,
        };
        if late_first {
            let (_, offset) = self.late.next().expect("peeked");
            return read_at(self.file, offset).map(Some);
        }
        Ok(self.held.take())
    }
}

impl Iterator for FileIter<'_> {
    type Item = io::Result<TrialRecord>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let r = self.step().transpose();
        if !matches!(r, Some(Ok(_))) {
            self.done = true;
        }
        r
    }
}

/// The record whose line starts at `offset`.
fn read_at(file: &RunFile, offset: u64) -> io::Result<TrialRecord> {
    let mut reader = BufReader::new(File::open(&file.path)?);
    reader.seek(SeekFrom::Start(offset))?;
    let mut line = String::new();
    reader.read_line(&mut line)?;
    parse(&file.path, &line, offset)
}

fn parse(path: &Path, line: &str, offset: u64) -> io::Result<TrialRecord> {
    serde_json::from_str(line).map_err(|e| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!(
                "{}: the record at byte {offset} is not a trial record: {e}",
                path.display()
            ),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::Status;
    use crate::harness::TrialId;

    fn names(it: Iter<'_>) -> Vec<String> {
        it.map(|r| r.unwrap().name.clone()).collect()
    }

    #[test]
    fn late_records_read_back_in_name_order() {
        let mut f = RunFile::temporary().unwrap();
        let path = f.path().to_path_buf();
        let ids = [
            TrialId::harness("a"),
            TrialId::transcript("a", "t1"),
            TrialId::transcript("a", "z9"),
            // The gate after its suite's transcripts, though `discrimination` < `z9`.
            TrialId::discrimination("a"),
            TrialId::transcript("b", "t1"),
            TrialId::discrimination("b"),
            TrialId::judge("a", "t1"),
        ];
        for id in &ids {
            f.push(&TrialRecord::new(id, Status::Passed, None)).unwrap();
        }
        assert_eq!(f.len(), ids.len());
        let mut sorted: Vec<String> = ids.iter().map(ToString::to_string).collect();
        sorted.sort();
        let trials = f.trials();
        assert_eq!(names(trials.iter()), sorted);
        assert_eq!(
            names(trials.suite("a")),
            [
                "a::discrimination",
                "a::harness",
                "a::t1",
                "a::z9",
                "judge::a::t1"
            ]
        );
        assert_eq!(names(trials.suite("b")), ["b::discrimination", "b::t1"]);
        assert!(names(trials.suite("c")).is_empty());
        // Twice, the same.
        assert_eq!(names(trials.iter()), sorted);
        drop(f);
        assert!(!path.exists(), "a temporary record file is removed");
    }

    /// `check` renders every report from its record file, read back a record at a time
    /// (issue 31); a [`Report`](super::super::Report) renders from memory. On the shipped
    /// suites (every kind of trial, recorded runs, gates written late as `check` writes them)
    /// both say the same, byte for byte, and the JSON is the report serialised whole.
    #[test]
    fn the_shipped_suites_render_alike_from_the_file_and_from_memory() {
        use super::super::{Report, Summary, Verbosity, View, ci, html, junit, markdown, otlp};
        use crate::check::{HarnessConfig, JudgeSetup, plan};
        use crate::harness::{Layout, TrialKind};
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let config = HarnessConfig {
            root: root.to_path_buf(),
            harnesses: None,
            transcripts: None,
            judge: JudgeSetup::Unset,
            bless: false,
            full_scan_forbidden: false,
            prepared: None,
        };
        let planned = plan(&Layout::under(root), &config);
        let records: Vec<TrialRecord> = planned
            .iter()
            .filter(|t| t.ignored.is_none())
            .map(|t| t.run())
            .collect();
        let mut f = RunFile::temporary().unwrap();
        let gate = |r: &&TrialRecord| r.kind == TrialKind::Discrimination;
        for r in records
            .iter()
            .filter(|r| !gate(r))
            .chain(records.iter().filter(gate))
        {
            f.push(r).unwrap();
        }
        assert!(!f.late.is_empty(), "the gates were written late");
        let report = Report::new("r1", records);
        assert_eq!(
            report.json(),
            serde_json::to_string_pretty(&report).unwrap(),
            "the JSON written a trial at a time is the report serialised whole"
        );
        let summary = Summary::of("r1", f.trials()).unwrap();
        assert_eq!(summary, report.summary());
        let file = View {
            summary: &summary,
            trials: f.trials(),
        };
        let text = |render: &dyn Fn(&mut Vec<u8>) -> io::Result<()>| {
            let mut out = Vec::new();
            render(&mut out).unwrap();
            String::from_utf8(out).unwrap()
        };
        let place = ci::as_written;
        for v in [Verbosity::Quiet, Verbosity::Normal, Verbosity::Verbose] {
            assert_eq!(
                text(&|o| super::super::write_human(file, v, o)),
                report.human(v)
            );
        }
        assert_eq!(text(&|o| super::super::write_json(file, o)), report.json());
        assert_eq!(
            text(&|o| junit::write_junit(file, o)),
            junit::junit(&report)
        );
        assert_eq!(
            markdown::markdown_of(file).unwrap(),
            markdown::markdown(&report)
        );
        assert_eq!(text(&|o| html::write_html(file, o)), html::html(&report));
        assert_eq!(
            text(&|o| ci::write_github(file, &place, o)),
            ci::github(&report, &place)
        );
        assert_eq!(
            text(&|o| ci::write_sarif(file, &place, o)),
            ci::sarif(&report, &place)
        );
        assert_eq!(
            text(&|o| otlp::write_otlp(file, 7, o)),
            otlp::otlp(&report, 7)
        );
    }

    #[test]
    fn a_line_that_is_no_record_is_an_error() {
        let mut f = RunFile::temporary().unwrap();
        f.push(&TrialRecord::new(
            &TrialId::harness("a"),
            Status::Passed,
            None,
        ))
        .unwrap();
        std::fs::write(f.path(), "{\"name\": 3}\n").unwrap();
        let e = f.trials().iter().next().unwrap().unwrap_err().to_string();
        assert!(
            e.contains("the record at byte 0 is not a trial record"),
            "{e}"
        );
    }
}
