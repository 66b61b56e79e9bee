//! Prepared suites: a stamp, kept under `<target>/agent-seer/prepared/`, of the files a suite
//! loaded clean from with this build, with a snapshot of what each YAML file parsed to — so
//! that a process grading one transcript (nextest runs each trial in its own) neither parses
//! YAML nor compiles what it does not grade. A suite loaded through its stamp
//! ([`super::Suite::load_prepared`]) reads its harness and matrices from their JSON snapshots
//! ([`crate::source::spanned`]) and compiles each regex and each tool's JSON Schema at its
//! first use instead of at load, where an invalid one would have been an error. Both were most
//! of a one-trial process: serde-saphyr reads some 100 ns a byte (a 7 KB matrix with aliases
//! took 1.6 ms), and compiling a harness's SQL regexes took 10 ms.
//! The main type is [`Prepared`], made by [`Prepared::at`].
//!
//! A stamp names the build (the running executable's path, size, modification time and
//! inode: a rebuilt harness, or another version of this crate, loads afresh) and holds every
//! file the suite read, byte for byte; it is used only when every one of those files is on
//! disk as the stamp holds it, so no edit, however small, reuses it. A snapshot is kept only
//! when it reads back as the very value the YAML parsed to. A stamp torn by a crash or by two
//! writers at once fails to read, and the load is the full one, which writes it again.
//!
//! A stamp is trusted as the build beside it is (whoever can write `target/` can replace the
//! test binary), and still checked where that is cheap: a regex or schema it vouched for that
//! does not compile is caught at its use, and the trial runs again on the suite loaded in
//! full (`plan`'s `PlannedTrial::run`); a suite's harness trial always loads it in full, so a
//! run over a broken stamp never passes. A stamp this build wrote changes no record (a test
//! holds both loads to the same records on every shipped suite).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use crate::source::SourceFile;

const HEADER: &str = "agent-seer prepared suite 2\n";

/// Where stamps are kept, for this build.
#[derive(Clone, Debug)]
pub(crate) struct Prepared {
    dir: PathBuf,
    build: &'static str,
}

/// One file a suite read, and the snapshot of what it parsed to (a harness or a matrix).
#[derive(Clone, Debug)]
pub(crate) struct Entry {
    file: SourceFile,
    snapshot: Option<String>,
}

/// A stamp that holds: its files (the harness first) as they are on disk.
#[derive(Debug)]
pub(crate) struct Kept {
    entries: Vec<Entry>,
}

impl Prepared {
    /// Stamps under `dir`; `None` when the running executable cannot be identified (every
    /// load is then the full one).
    pub(crate) fn at(dir: PathBuf) -> Option<Self> {
        static BUILD: OnceLock<Option<String>> = OnceLock::new();
        let build = BUILD.get_or_init(build_identity).as_deref()?;
        Some(Self { dir, build })
    }

    /// The stamp of the suite whose harness is `harness`, when it holds: written by this
    /// build, for this very harness, and every other file it names still what it holds.
    pub(crate) fn kept(&self, harness: &SourceFile) -> Option<Kept> {
        let bytes = std::fs::read(self.path(&harness.path)).ok()?;
        let kept = self.read(&bytes)?;
        let first = kept.entries.first()?;
        if first.file.path != harness.path || first.file.text != harness.text {
            return None;
        }
        for e in &kept.entries[1..] {
            let on_disk = std::fs::read(&e.file.path).ok()?;
            if on_disk != e.file.text.as_bytes() {
                return None;
            }
        }
        Some(kept)
    }

    /// Keeps the stamp of a suite that loaded clean from `entries` (the harness first).
    /// Best effort: without it the next process loads in full again. Written beside and
    /// renamed, never synced: a stamp lost or torn by a crash is no stamp.
    pub(crate) fn keep(&self, entries: &[Entry]) {
        let Some(harness) = entries.first() else {
            return;
        };
        let path = self.path(&harness.file.path);
        let tmp = self.dir.join(format!(
            ".{}.{}.tmp",
            path.file_name().unwrap_or_default().to_string_lossy(),
            std::process::id()
        ));
        // A new file, never one found there (a link left at the temporary name is not
        // written through: `create_new` refuses anything that exists, links included).
        let _ = std::fs::remove_file(&tmp);
        let written = std::fs::create_dir_all(&self.dir)
            .and_then(|()| {
                use std::io::Write;
                let mut f = std::fs::OpenOptions::new()
                    .write(true)
                    .create_new(true)
                    .open(&tmp)?;
                f.write_all(&self.write(entries))
            })
            .and_then(|()| std::fs::rename(&tmp, &path));
        if written.is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
    }

    /// Removes the stamp of the suite whose harness is at `harness`: the next load is the full
    /// one. Best effort, as keeping it is.
    pub(crate) fn forget(&self, harness: &Path) {
        let _ = std::fs::remove_file(self.path(harness));
    }

    /// `<dir>/<suite>-<hash of the harness's absolute path>.stamp`: suites of two projects
    /// sharing a target directory keep two stamps.
    fn path(&self, harness: &Path) -> PathBuf {
        let absolute = std::path::absolute(harness).unwrap_or_else(|_| harness.to_path_buf());
        // The name hasher: only a name; what the stamp holds decides.
        let hash = {
            use std::hash::Hasher;
            let mut h = crate::hash::NameHasher::default();
            h.write(absolute.to_string_lossy().as_bytes());
            h.finish()
        };
        let suite = harness.file_stem().unwrap_or_default().to_string_lossy();
        self.dir.join(format!("{suite}-{hash:016x}.stamp"))
    }

    /// The header, the build, then each file: `file <bytes> <path bytes> <path>`, its text,
    /// and `snapshot <bytes>` with its JSON, or `snapshot -`.
    fn write(&self, entries: &[Entry]) -> Vec<u8> {
        let size: usize = entries
            .iter()
            .map(|e| e.file.text.len() + e.snapshot.as_ref().map_or(0, String::len) + 128)
            .sum();
        let mut out = Vec::with_capacity(size + 256);
        out.extend_from_slice(HEADER.as_bytes());
        let _ = writeln!(out, "build {}", self.build);
        for e in entries {
            let path = e.file.path.to_string_lossy();
            let _ = writeln!(out, "file {} {} {path}", e.file.text.len(), path.len());
            out.extend_from_slice(e.file.text.as_bytes());
            match &e.snapshot {
                Some(json) => {
                    let _ = writeln!(out, "\nsnapshot {}", json.len());
                    out.extend_from_slice(json.as_bytes());
                    out.push(b'\n');
                }
                None => out.extend_from_slice(b"\nsnapshot -\n"),
            }
        }
        out
    }

    /// What [`Prepared::write`] wrote, when this build wrote it; `None` for anything else.
    fn read(&self, bytes: &[u8]) -> Option<Kept> {
        let mut r = Reader(bytes);
        r.literal(HEADER.as_bytes())?;
        r.literal(b"build ")?;
        if r.line()? != self.build.as_bytes() {
            return None;
        }
        let mut entries = Vec::new();
        while !r.0.is_empty() {
            r.literal(b"file ")?;
            let head = std::str::from_utf8(r.line()?).ok()?;
            let (len, rest) = head.split_once(' ')?;
            let (path_len, path) = rest.split_once(' ')?;
            if path.len() != path_len.parse::<usize>().ok()? {
                return None;
            }
            let text = std::str::from_utf8(r.take(len.parse().ok()?)?).ok()?;
            r.literal(b"\nsnapshot ")?;
            let snapshot = match r.line()? {
                b"-" => None,
                n => {
                    let n = std::str::from_utf8(n).ok()?.parse().ok()?;
                    let json = std::str::from_utf8(r.take(n)?).ok()?.to_owned();
                    r.literal(b"\n")?;
                    Some(json)
                }
            };
            entries.push(Entry {
                file: SourceFile::from_text(path, text),
                snapshot,
            });
        }
        Some(Kept { entries })
    }
}

impl Kept {
    /// An entry of a stamp to keep.
    pub(crate) fn entry(file: SourceFile, snapshot: Option<String>) -> Entry {
        Entry { file, snapshot }
    }

    /// The stamp's file at `path` (its text is the file's on disk).
    pub(crate) fn file(&self, path: &Path) -> Result<&SourceFile, crate::source::SourceError> {
        self.entry_at(path)
            .map(|e| &e.file)
            .ok_or_else(|| crate::source::SourceError::about(path, "not among the stamp's files"))
    }

    /// The snapshot of what the file at `path` parsed to, when the stamp has one.
    pub(crate) fn snapshot(&self, path: &Path) -> Option<&str> {
        self.entry_at(path)?.snapshot.as_deref()
    }

    fn entry_at(&self, path: &Path) -> Option<&Entry> {
        self.entries.iter().find(|e| &*e.file.path == path)
    }
}

/// The rest of a stamp, read from the front.
struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn literal(&mut self, s: &[u8]) -> Option<()> {
        self.0 = self.0.strip_prefix(s)?;
        Some(())
    }

    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let (head, rest) = (self.0.get(..n)?, self.0.get(n..)?);
        self.0 = rest;
        Some(head)
    }

    /// Up to the next newline, which is consumed.
    fn line(&mut self) -> Option<&'a [u8]> {
        let end = self.0.iter().position(|&b| b == b'\n')?;
        let line = &self.0[..end];
        self.0 = &self.0[end + 1..];
        Some(line)
    }
}

/// This crate's version and the running executable's path, size, modification time and (on
/// Unix) device and inode.
fn build_identity() -> Option<String> {
    let exe = std::env::current_exe().ok()?;
    let meta = std::fs::metadata(&exe).ok()?;
    let modified = meta
        .modified()
        .ok()?
        .duration_since(std::time::UNIX_EPOCH)
        .ok()?
        .as_nanos();
    #[cfg(unix)]
    let node = {
        use std::os::unix::fs::MetadataExt;
        format!(" {}:{}", meta.dev(), meta.ino())
    };
    #[cfg(not(unix))]
    let node = String::new();
    let identity = format!(
        "{} {} {modified}{node} {}",
        env!("CARGO_PKG_VERSION"),
        meta.len(),
        exe.display()
    );
    // One line of the stamp.
    (!identity.contains('\n')).then_some(identity)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stamp_holds_while_its_files_are_as_it_holds_them() {
        let dir = tempfile::tempdir().unwrap();
        let write = |name: &str, text: &str| {
            let p = dir.path().join(name);
            std::fs::write(&p, text).unwrap();
            SourceFile::read(&p).unwrap()
        };
        let harness = write("veo.yaml", "suite: veo\n");
        let tools = write("veo.tools.json", "[]");
        let matrix = write("caps.yaml", "server: x\n");
        let prepared = Prepared::at(dir.path().join("prepared")).unwrap();
        let entries = [
            Kept::entry(harness.clone(), Some("{\"suite\":1}".into())),
            Kept::entry(tools.clone(), None),
            Kept::entry(matrix.clone(), Some("{}\nsnapshot -\n".into())),
        ];
        assert!(prepared.kept(&harness).is_none(), "nothing kept yet");
        prepared.keep(&entries);
        let kept = prepared.kept(&harness).unwrap();
        assert_eq!(kept.snapshot(&harness.path), Some("{\"suite\":1}"));
        assert_eq!(kept.snapshot(&tools.path), None);
        assert_eq!(kept.snapshot(&matrix.path), Some("{}\nsnapshot -\n"));
        assert_eq!(&*kept.file(&tools.path).unwrap().text, "[]");
        // An edit of any file, however small, and the stamp is no longer used.
        let edited = write("veo.yaml", "suite: veo\n ");
        assert!(prepared.kept(&edited).is_none());
        write("veo.yaml", "suite: veo\n");
        assert!(prepared.kept(&harness).is_some());
        write("caps.yaml", "server: y\n");
        assert!(prepared.kept(&harness).is_none());
        write("caps.yaml", "server: x\n");
        std::fs::remove_file(dir.path().join("veo.tools.json")).unwrap();
        assert!(prepared.kept(&harness).is_none());
        write("veo.tools.json", "[]");
        assert!(prepared.kept(&harness).is_some());
        // Another build's stamp, or a torn one, is no stamp.
        let other = Prepared {
            dir: dir.path().join("prepared"),
            build: "0.0.0 1 2 /elsewhere",
        };
        assert!(other.kept(&harness).is_none());
        let stamp = prepared.path(&harness.path);
        let whole = std::fs::read(&stamp).unwrap();
        for cut in [1, 2, whole.len() / 2, whole.len() - 1] {
            std::fs::write(&stamp, &whole[..whole.len() - cut]).unwrap();
            assert!(prepared.kept(&harness).is_none(), "cut {cut}");
        }
    }
}
