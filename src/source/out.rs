//! The one writer of the files a verb creates in an output folder (`-o`): `import trace`,
//! `import adk`, `import bfcl` and `serve --proxy` all hand their files to an [`OutDir`].
//!
//! It keeps three promises (issue 32, items 2 and 3):
//!
//! - **No link out of the folder is followed.** A symbolic link at a target, dangling or not,
//!   or at a folder on the way to it, that leads outside the output folder is refused; a link
//!   that stays inside it is written through (it stays a link), and only with `force`.
//! - **Nothing is replaced without `force`.** Every target is checked before anything is
//!   written, and without `force` a file is moved into place by a hard link, which the kernel
//!   refuses when the name exists, so a file (or link) that appears after the check is not
//!   replaced either.
//! - **All or nothing, as far as a file system allows.** Every file is first staged (written
//!   and synced) to a hidden temporary file beside its target; only when all are staged are
//!   they moved into place, each by one rename or link. A failure while staging leaves nothing
//!   behind.
//!
//! The main type is [`OutDir`], built with [`OutDir::new`], filled with [`OutDir::add`] and
//! written by [`OutDir::commit`]. (`generate` stages its own way, in a folder it can load and
//! verify before the move: see `generate::write`.)

use std::path::{Component, Path, PathBuf};

use super::SourceError;

/// The files a verb writes into one output folder, checked and written together.
#[derive(Debug)]
pub struct OutDir {
    root: PathBuf,
    force: bool,
    files: Vec<(PathBuf, Vec<u8>)>,
    /// The paths of `files`, to refuse a second file at one in constant time (a recorded
    /// file may hold thousands of runs).
    added: std::collections::HashSet<PathBuf>,
}

/// Where a checked file goes.
struct Placed {
    // The name the user sees (under the root).
    path: PathBuf,
    // Where the bytes land: `path`, or the end of a link inside the root when forced.
    target: PathBuf,
    // Whether a file may be replaced there.
    replace: bool,
}

impl OutDir {
    /// An empty set of files for the folder `root`; `force` lets existing files (and links
    /// that stay inside `root`) be replaced.
    pub fn new(root: &Path, force: bool) -> Self {
        Self {
            root: root.to_path_buf(),
            force,
            files: Vec::new(),
            added: Default::default(),
        }
    }

    /// Adds a file, `path` being `root` joined with plain names (no `..`, not absolute: every
    /// name from data goes through [`super::file_name`] first). Two files at one path are
    /// refused.
    pub fn add(&mut self, path: PathBuf, bytes: impl Into<Vec<u8>>) -> Result<(), SourceError> {
        let inside = path.strip_prefix(&self.root).is_ok_and(|rel| {
            rel.components().count() > 0
                && rel.components().all(|c| matches!(c, Component::Normal(_)))
        });
        if !inside {
            return Err(SourceError::about(
                &path,
                format!("is not inside the output folder {}", self.root.display()),
            ));
        }
        if !self.added.insert(path.clone()) {
            return Err(SourceError::about(
                &path,
                "two files would be written here; nothing was written",
            ));
        }
        self.files.push((path, bytes.into()));
        Ok(())
    }

    /// Whether a file was added at `path`.
    pub fn contains(&self, path: &Path) -> bool {
        self.added.contains(path)
    }

    /// Checks every file without writing: the first refusal (a link out of the folder, a file
    /// that exists without `force`, a folder where a file goes) is the error.
    pub fn check(&self) -> Result<(), SourceError> {
        let root = self.canonical_root()?;
        for (path, _) in &self.files {
            self.place(&root, path)?;
        }
        Ok(())
    }

    /// Checks every file, stages them all, then moves them into place; gives the paths
    /// written, in order.
    pub fn commit(self) -> Result<Vec<PathBuf>, SourceError> {
        let root = self.canonical_root()?;
        let placed = self
            .files
            .iter()
            .map(|(p, _)| self.place(&root, p))
            .collect::<Result<Vec<_>, _>>()?;
        let mut staged: Vec<PathBuf> = Vec::new();
        let cleanup = |staged: &[PathBuf]| {
            for t in staged {
                let _ = std::fs::remove_file(t);
            }
        };
        for (p, (_, bytes)) in placed.iter().zip(&self.files) {
            match stage(&p.target, bytes) {
                Ok(tmp) => staged.push(tmp),
                Err(e) => {
                    cleanup(&staged);
                    return Err(cannot_write(&p.path, &e));
                }
            }
        }
        for (k, (p, tmp)) in placed.iter().zip(&staged).enumerate() {
            if let Err(e) = settle(tmp, &p.target, p.replace) {
                cleanup(&staged[k..]);
                return Err(if e.kind() == std::io::ErrorKind::AlreadyExists {
                    exists(&p.path)
                } else {
                    cannot_write(&p.path, &e)
                });
            }
        }
        Ok(placed.into_iter().map(|p| p.path).collect())
    }

    /// The root as the file system names it (a link the user gave as `-o` is followed: it is
    /// their choice of folder); the nearest existing ancestor's, when it does not exist yet.
    fn canonical_root(&self) -> Result<PathBuf, SourceError> {
        canonical_prefix(&self.root).map_err(|e| cannot_write(&self.root, &e))
    }

    /// Where `path` goes, or why it may not.
    fn place(&self, root: &Path, path: &Path) -> Result<Placed, SourceError> {
        // The folders on the way: a link among them must stay inside the root.
        let rel = path.strip_prefix(&self.root).unwrap_or(path);
        let mut at = self.root.clone();
        let mut parts: Vec<&std::ffi::OsStr> = rel.iter().collect();
        let name = parts.pop();
        for part in parts {
            at.push(part);
            match std::fs::symlink_metadata(&at) {
                Err(_) => break, // created when written, inside the root
                Ok(m) if m.file_type().is_symlink() => {
                    let to = std::fs::canonicalize(&at).map_err(|_| {
                        SourceError::about(
                            &at,
                            "is a symbolic link to nothing, where a folder goes; nothing was written",
                        )
                    })?;
                    if !to.starts_with(root) {
                        return Err(out_of(&at, &to, &self.root));
                    }
                    if !to.is_dir() {
                        return Err(not_folder(&at));
                    }
                }
                Ok(m) if !m.is_dir() => return Err(not_folder(&at)),
                Ok(_) => {}
            }
        }
        debug_assert!(name.is_some(), "add keeps a file name");
        let Ok(meta) = std::fs::symlink_metadata(path) else {
            return Ok(Placed {
                path: path.to_path_buf(),
                target: path.to_path_buf(),
                replace: false,
            });
        };
        if meta.file_type().is_symlink() {
            let end = link_end(path).map_err(|e| cannot_write(path, &e))?;
            let parent = end.parent().unwrap_or(Path::new("."));
            let within = canonical_prefix(parent).is_ok_and(|p| p.starts_with(root));
            if !within {
                return Err(out_of(path, &end, &self.root));
            }
            if !self.force {
                return Err(exists(path));
            }
            if end.is_dir() {
                return Err(SourceError::about(
                    path,
                    "is a link to a folder, where a file goes; nothing was written",
                ));
            }
            return Ok(Placed {
                path: path.to_path_buf(),
                target: end,
                replace: true,
            });
        }
        if meta.is_dir() {
            return Err(SourceError::about(
                path,
                "is a folder, where a file goes; nothing was written",
            ));
        }
        if !self.force {
            return Err(exists(path));
        }
        Ok(Placed {
            path: path.to_path_buf(),
            target: path.to_path_buf(),
            replace: true,
        })
    }
}

fn exists(path: &Path) -> SourceError {
    SourceError::about(path, "exists; nothing was written (--force replaces it)")
}

fn not_folder(path: &Path) -> SourceError {
    SourceError::about(
        path,
        "is not a folder, where a folder goes; nothing was written",
    )
}

fn out_of(path: &Path, to: &Path, root: &Path) -> SourceError {
    SourceError::about(
        path,
        format!(
            "is a symbolic link to {}, outside the output folder {}; nothing was written",
            to.display(),
            root.display()
        ),
    )
}

fn cannot_write(path: &Path, e: &std::io::Error) -> SourceError {
    SourceError::about(path, format!("cannot write: {e}"))
}

/// `path` canonicalized, or (when it does not exist yet) its nearest existing ancestor's
/// canonical form joined with the rest.
fn canonical_prefix(path: &Path) -> std::io::Result<PathBuf> {
    let mut rest = Vec::new();
    let mut at = if path.as_os_str().is_empty() {
        Path::new(".")
    } else {
        path
    };
    loop {
        match std::fs::canonicalize(at) {
            Ok(c) => {
                let mut c = c;
                c.extend(rest.iter().rev());
                return Ok(c);
            }
            // A dangling link is not "missing": it names somewhere.
            Err(e) if std::fs::symlink_metadata(at).is_ok_and(|m| m.file_type().is_symlink()) => {
                return Err(e);
            }
            Err(_) => match (at.parent(), at.file_name()) {
                (Some(p), Some(n)) => {
                    rest.push(n.to_owned());
                    at = if p.as_os_str().is_empty() {
                        Path::new(".")
                    } else {
                        p
                    };
                }
                _ => return Err(std::io::Error::other("no existing folder above it")),
            },
        }
    }
}

/// Where a chain of links starting at `path` ends (possibly at nothing yet).
fn link_end(path: &Path) -> std::io::Result<PathBuf> {
    let mut current = path.to_path_buf();
    // The kernel's own bound on a chain of links (Linux: 40).
    for _ in 0..40 {
        match std::fs::symlink_metadata(&current) {
            Ok(m) if m.file_type().is_symlink() => {
                let to = std::fs::read_link(&current)?;
                current = match current.parent() {
                    Some(dir) if to.is_relative() => dir.join(to),
                    _ => to,
                };
            }
            _ => return Ok(current),
        }
    }
    Err(std::io::Error::other("too many levels of symbolic links"))
}

/// Writes `bytes` to a fresh hidden file beside `target` (creating its folder), synced.
fn stage(target: &Path, bytes: &[u8]) -> std::io::Result<PathBuf> {
    use std::io::Write;
    use std::sync::atomic::{AtomicU64, Ordering};
    static SEQ: AtomicU64 = AtomicU64::new(0);
    let dir = match target.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    std::fs::create_dir_all(dir)?;
    let tmp = dir.join(format!(
        ".{}.{}.{}.tmp",
        target
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("file"),
        std::process::id(),
        SEQ.fetch_add(1, Ordering::Relaxed)
    ));
    let result = (|| {
        // `create_new`: never through a link someone planted at the temporary name.
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()
    })();
    match result {
        Ok(()) => Ok(tmp),
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            Err(e)
        }
    }
}

/// Moves a staged file into place: a rename when it may replace, else a hard link (refused
/// by the kernel when the name exists, even as a dangling link) and the staged name removed.
fn settle(tmp: &Path, target: &Path, replace: bool) -> std::io::Result<()> {
    if replace {
        return std::fs::rename(tmp, target);
    }
    match std::fs::hard_link(tmp, target) {
        Ok(()) => std::fs::remove_file(tmp),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Err(e),
        // A file system without hard links: the name was checked just before.
        Err(_) if std::fs::symlink_metadata(target).is_err() => std::fs::rename(tmp, target),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(p: &Path) -> String {
        std::fs::read_to_string(p).unwrap()
    }

    #[cfg(unix)]
    #[test]
    fn a_dangling_link_out_of_the_folder_is_refused_with_or_without_force() {
        let t = tempfile::tempdir().unwrap();
        let out = t.path().join("o");
        let outside = t.path().join("outside.yaml");
        std::fs::create_dir(&out).unwrap();
        std::os::unix::fs::symlink(&outside, out.join("a.yaml")).unwrap();
        for force in [false, true] {
            let mut d = OutDir::new(&out, force);
            d.add(out.join("a.yaml"), "x").unwrap();
            let e = d.commit().unwrap_err().to_string();
            assert!(e.contains("outside the output folder"), "{e}");
            assert!(!outside.exists());
        }
    }

    #[cfg(unix)]
    #[test]
    fn an_existing_link_out_is_never_written_through() {
        let t = tempfile::tempdir().unwrap();
        let out = t.path().join("o");
        let outside = t.path().join("x.yaml");
        std::fs::create_dir(&out).unwrap();
        std::fs::write(&outside, "mine").unwrap();
        std::os::unix::fs::symlink(&outside, out.join("a.yaml")).unwrap();
        let mut d = OutDir::new(&out, true);
        d.add(out.join("a.yaml"), "theirs").unwrap();
        assert!(d.commit().is_err());
        assert_eq!(read(&outside), "mine");
    }

    #[cfg(unix)]
    #[test]
    fn a_folder_link_out_is_refused_and_one_inside_is_followed() {
        let t = tempfile::tempdir().unwrap();
        let out = t.path().join("o");
        let elsewhere = t.path().join("elsewhere");
        std::fs::create_dir_all(out.join("real")).unwrap();
        std::fs::create_dir(&elsewhere).unwrap();
        std::os::unix::fs::symlink(&elsewhere, out.join("harnesses")).unwrap();
        let mut d = OutDir::new(&out, true);
        d.add(out.join("harnesses").join("s.yaml"), "x").unwrap();
        assert!(d.commit().is_err());
        assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0);

        std::os::unix::fs::symlink(out.join("real"), out.join("inside")).unwrap();
        let mut d = OutDir::new(&out, false);
        d.add(out.join("inside").join("s.yaml"), "x").unwrap();
        d.commit().unwrap();
        assert_eq!(read(&out.join("real/s.yaml")), "x");
    }

    #[test]
    fn nothing_is_replaced_without_force_and_nothing_is_written_then() {
        let t = tempfile::tempdir().unwrap();
        let out = t.path().to_path_buf();
        std::fs::write(out.join("b"), "old").unwrap();
        let mut d = OutDir::new(&out, false);
        d.add(out.join("a"), "new a").unwrap();
        d.add(out.join("b"), "new b").unwrap();
        let e = d.commit().unwrap_err().to_string();
        assert!(e.contains("exists; nothing was written"), "{e}");
        assert!(!out.join("a").exists());
        assert_eq!(read(&out.join("b")), "old");
        // No staged file is left behind.
        assert_eq!(std::fs::read_dir(&out).unwrap().count(), 1);

        let mut d = OutDir::new(&out, true);
        d.add(out.join("a"), "new a").unwrap();
        d.add(out.join("sub").join("b"), "new b").unwrap();
        d.add(out.join("b"), "new b").unwrap();
        d.commit().unwrap();
        assert_eq!(read(&out.join("b")), "new b");
        assert_eq!(read(&out.join("sub/b")), "new b");
    }

    #[test]
    fn a_path_outside_or_twice_is_refused_when_added() {
        let mut d = OutDir::new(Path::new("o"), false);
        assert!(d.add(PathBuf::from("p/a"), "").is_err());
        assert!(d.add(PathBuf::from("o/../a"), "").is_err());
        assert!(d.add(PathBuf::from("o"), "").is_err());
        d.add(PathBuf::from("o/a"), "").unwrap();
        // The same path however written.
        for twice in ["o/a", "o//a", "o/./a", "o/a/"] {
            assert!(d.add(PathBuf::from(twice), "").is_err(), "{twice}");
        }
        d.add(PathBuf::from("o/b"), "").unwrap();
        assert_eq!(d.files.len(), 2);
        assert!(d.contains(Path::new("o/./b")) && !d.contains(Path::new("o/c")));
    }

    #[test]
    fn a_file_on_the_way_is_no_folder() {
        let t = tempfile::tempdir().unwrap();
        std::fs::write(t.path().join("f"), "").unwrap();
        let mut d = OutDir::new(t.path(), true);
        d.add(t.path().join("f").join("a"), "").unwrap();
        let e = d.commit().unwrap_err().to_string();
        assert!(e.contains("is not a folder"), "{e}");
    }
}
