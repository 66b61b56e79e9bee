//! Prepared suites: the proof, kept under `<target>/agent-seer/prepared/`, that a suite's files
//! loaded clean with this build — so that a process grading one transcript (nextest runs each
//! trial in its own) need not compile what it does not grade. A suite loaded through its stamp
//! ([`super::Suite::load_prepared`]) compiles each regex and each tool's JSON Schema at its
//! first use instead of at load, where an invalid one would have been an error: compiling
//! every one of them was most of a one-trial process (a 20 KB harness of SQL regexes: 20 ms).
//! The main type is [`Prepared`], made by [`Prepared::at`].
//!
//! A stamp is the build's identity (the running executable's path, size, modification time and
//! inode: a rebuilt harness, or another version of this crate, checks afresh) followed by every
//! file the suite read, byte for byte. It holds only when it is equal to what the process read,
//! so no edit, however small, reuses it; a stamp torn by a crash or by two writers at once is
//! equal to nothing. A load that is not stamped is the full one, and writes the stamp when it
//! succeeds.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use crate::source::SourceFile;

/// Where stamps are kept, for this build.
#[derive(Clone, Debug)]
pub(crate) struct Prepared {
    dir: PathBuf,
    build: &'static str,
}

impl Prepared {
    /// Stamps under `dir`; `None` when the running executable cannot be identified (every
    /// load is then the full one).
    pub(crate) fn at(dir: PathBuf) -> Option<Self> {
        static BUILD: OnceLock<Option<String>> = OnceLock::new();
        let build = BUILD.get_or_init(build_identity).as_deref()?;
        Some(Self { dir, build })
    }

    /// The stamp of a suite whose harness is `files[0]` and which read the rest, in order.
    pub(crate) fn stamp(&self, files: &[SourceFile]) -> Stamp {
        let size: usize = files.iter().map(|f| f.text.len() + 64).sum();
        let mut bytes = Vec::with_capacity(size + 128);
        bytes.extend_from_slice(b"agent-seer prepared suite 1\nbuild ");
        bytes.extend_from_slice(self.build.as_bytes());
        for f in files {
            let path = f.path.to_string_lossy();
            let _ = write!(bytes, "\nfile {} {} {path}\n", f.text.len(), path.len());
            bytes.extend_from_slice(f.text.as_bytes());
        }
        let harness = files.first().map(|f| f.path.as_ref()).unwrap_or(Path::new(""));
        Stamp {
            path: self.dir.join(stamp_name(harness)),
            bytes,
        }
    }
}

/// What a suite's files and this build make, and where it is kept.
pub(crate) struct Stamp {
    path: PathBuf,
    bytes: Vec<u8>,
}

impl Stamp {
    /// Whether the stamp on disk is this one: the same build read the same files.
    pub(crate) fn holds(&self) -> bool {
        std::fs::read(&self.path).is_ok_and(|on_disk| on_disk == self.bytes)
    }

    /// Keeps the stamp, after a full load of its files succeeded. Best effort: without it the
    /// next process loads in full again. Written beside and renamed, never synced: a stamp
    /// lost or torn by a crash holds for nothing.
    pub(crate) fn keep(&self) {
        let Some(dir) = self.path.parent() else {
            return;
        };
        let name = self.path.file_name().unwrap_or_default().to_string_lossy();
        let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
        let written = std::fs::create_dir_all(dir)
            .and_then(|()| std::fs::write(&tmp, &self.bytes))
            .and_then(|()| std::fs::rename(&tmp, &self.path));
        if written.is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
    }
}

/// `<suite>-<hash of the harness's absolute path>.stamp`: suites of two projects sharing a
/// target directory keep two stamps.
fn stamp_name(harness: &Path) -> String {
    let absolute = std::path::absolute(harness).unwrap_or_else(|_| harness.to_path_buf());
    // FNV-1a: only a name; the stamp's content decides.
    let hash = absolute
        .to_string_lossy()
        .bytes()
        .fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
        });
    let suite = harness.file_stem().unwrap_or_default().to_string_lossy();
    format!("{suite}-{hash:016x}.stamp")
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
    Some(format!(
        "{} {} {modified}{node} {}",
        env!("CARGO_PKG_VERSION"),
        meta.len(),
        exe.display()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(path: &str, text: &str) -> SourceFile {
        SourceFile::from_text(path, text)
    }

    #[test]
    fn a_stamp_holds_for_the_same_files_only() {
        let dir = tempfile::tempdir().unwrap();
        let prepared = Prepared::at(dir.path().to_path_buf()).unwrap();
        let files = [file("h/veo.yaml", "suite: veo\n"), file("h/veo.tools.json", "[]")];
        let stamp = prepared.stamp(&files);
        assert!(!stamp.holds(), "nothing kept yet");
        stamp.keep();
        assert!(stamp.holds());
        assert!(prepared.stamp(&files).holds());
        // One byte more in any file, a file renamed, one left out or added: another stamp.
        let edited = [file("h/veo.yaml", "suite: veo\n "), files[1].clone()];
        assert!(!prepared.stamp(&edited).holds());
        let renamed = [files[0].clone(), file("h/veo2.tools.json", "[]")];
        assert!(!prepared.stamp(&renamed).holds());
        assert!(!prepared.stamp(&files[..1]).holds());
        let more = [files[0].clone(), files[1].clone(), file("c.yaml", "")];
        assert!(!prepared.stamp(&more).holds());
        // Another build's stamp, or a torn one, holds for nothing.
        let other = Prepared {
            dir: dir.path().to_path_buf(),
            build: "0.0.0 1 2 /elsewhere",
        };
        assert!(!other.stamp(&files).holds());
        let kept = std::fs::read(&stamp.path).unwrap();
        std::fs::write(&stamp.path, &kept[..kept.len() - 1]).unwrap();
        assert!(!stamp.holds());
        // Moving content between files is a change too: the lengths are in the stamp.
        let a = [file("a", "xy"), file("b", "")];
        let b = [file("a", "x"), file("b", "y")];
        assert_ne!(prepared.stamp(&a).bytes, prepared.stamp(&b).bytes);
    }
}
