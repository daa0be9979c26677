//! File-system primitives for writes that must never tear a file or leave the path the user
//! approved. Every directory on the way to a file is opened from `/` one component at a
//! time with `O_NOFOLLOW`, so a folder swapped for a symbolic link while a prompt was open
//! stops the write (`ELOOP`) instead of redirecting it. A new file is staged as a temp file
//! in the target's own folder (written, given the old file's mode and owner, fsynced), then
//! renamed over the target and the folder fsynced: readers and crashes see the old file or
//! the new one, never a mix. `journaled` builds the journal-first protocol on top.

use std::ffi::{CStr, CString, OsStr};
use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use podcode_protocol::FileContent;

fn cstr(s: &OsStr) -> io::Result<CString> {
    CString::new(s.as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "the path contains a NUL byte"))
}

fn check(ret: libc::c_int) -> io::Result<libc::c_int> {
    if ret < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(ret)
    }
}

fn invalid(what: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, what.to_string())
}

/// True for the error a no-follow open gives on a symbolic link.
pub(crate) fn is_symlink_error(e: &io::Error) -> bool {
    e.raw_os_error() == Some(libc::ELOOP)
}

fn open_at(
    dir: libc::c_int,
    name: &CStr,
    flags: libc::c_int,
    mode: libc::c_uint,
) -> io::Result<OwnedFd> {
    // SAFETY: `name` is a valid C string; the returned descriptor is owned by the caller.
    let fd = check(unsafe { libc::openat(dir, name.as_ptr(), flags | libc::O_CLOEXEC, mode) })?;
    // SAFETY: `fd` was just opened and nothing else owns it.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Opens the absolute directory `dir` without following any symbolic link on the way.
/// With `create`, missing folders are made (and pushed onto `created`, shallowest first).
pub(crate) fn open_dir(
    dir: &Path,
    create: bool,
    created: &mut Vec<PathBuf>,
) -> io::Result<OwnedFd> {
    if !dir.is_absolute() {
        return Err(invalid("the path is not absolute"));
    }
    let flags = libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW;
    let mut fd = open_at(libc::AT_FDCWD, c"/", libc::O_RDONLY | libc::O_DIRECTORY, 0)?;
    let mut at = PathBuf::from("/");
    for comp in dir.components() {
        let name = match comp {
            Component::RootDir | Component::CurDir | Component::Prefix(_) => continue,
            Component::ParentDir => return Err(invalid("the path contains `..`")),
            Component::Normal(name) => name,
        };
        at.push(name);
        let c = cstr(name)?;
        let next = match open_at(fd.as_raw_fd(), &c, flags, 0) {
            Err(e) if create && e.kind() == io::ErrorKind::NotFound => {
                // SAFETY: valid descriptor and C string.
                match check(unsafe { libc::mkdirat(fd.as_raw_fd(), c.as_ptr(), 0o777) }) {
                    Ok(_) => created.push(at.clone()),
                    Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
                    Err(e) => return Err(e),
                }
                open_at(fd.as_raw_fd(), &c, flags, 0)?
            }
            Err(e) if e.raw_os_error() == Some(libc::ENOTDIR) => {
                // O_DIRECTORY is checked on the link itself: tell a link from a file.
                return match stat_at(&fd, &c)? {
                    Some(st) if is_kind(&st, libc::S_IFLNK) => {
                        Err(io::Error::from_raw_os_error(libc::ELOOP))
                    }
                    _ => Err(e),
                };
            }
            other => other?,
        };
        fd = next;
    }
    Ok(fd)
}

/// `lstat` of `name` in `dir`; `None` when it does not exist.
fn stat_at(dir: &OwnedFd, name: &CStr) -> io::Result<Option<libc::stat>> {
    // SAFETY: an all-zero `stat` is a valid value for the kernel to fill in.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: valid descriptor, C string and out pointer.
    let ret = unsafe {
        libc::fstatat(
            dir.as_raw_fd(),
            name.as_ptr(),
            &mut st,
            libc::AT_SYMLINK_NOFOLLOW,
        )
    };
    match check(ret) {
        Ok(_) => Ok(Some(st)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

fn is_kind(st: &libc::stat, kind: libc::mode_t) -> bool {
    st.st_mode & libc::S_IFMT == kind
}

fn split(file: &Path) -> io::Result<(&Path, CString)> {
    match (file.parent(), file.file_name()) {
        (Some(parent), Some(name)) => Ok((parent, cstr(name)?)),
        _ => Err(invalid("the path has no file name")),
    }
}

/// The bytes of `file` read without following symbolic links anywhere on its path; `None`
/// when it (or a folder on its path) does not exist.
#[cfg(test)]
pub(crate) fn read_nofollow(file: &Path) -> io::Result<Option<Vec<u8>>> {
    Ok(read_with_mode(file)?.map(|(bytes, _)| bytes))
}

/// Whether `file` holds journal content `stored` (`None`: the file is absent): the same
/// bytes, and the same permission bits when the content records them.
pub(crate) fn holds(file: &Path, stored: Option<&str>) -> io::Result<bool> {
    let now = read_with_mode(file)?;
    Ok(match (now, stored) {
        (None, None) => true,
        (Some((bytes, mode)), Some(stored)) => {
            FileContent::decode(stored).matches(&bytes, Some(mode))
        }
        _ => false,
    })
}

/// The journal content `stored` decoded for writing: bytes and permission bits.
pub(crate) fn decoded(stored: Option<&str>) -> Option<FileContent> {
    stored.map(FileContent::decode)
}

/// `read_nofollow` with the file's permission bits.
pub(crate) fn read_with_mode(file: &Path) -> io::Result<Option<(Vec<u8>, u32)>> {
    let (parent, name) = split(file)?;
    let dir = match open_dir(parent, false, &mut Vec::new()) {
        Ok(d) => d,
        Err(e)
            if e.kind() == io::ErrorKind::NotFound || e.raw_os_error() == Some(libc::ENOTDIR) =>
        {
            return Ok(None);
        }
        Err(e) => return Err(e),
    };
    // O_NONBLOCK: a FIFO put in the file's place must not hang the call.
    let flags = libc::O_RDONLY | libc::O_NOFOLLOW | libc::O_NONBLOCK;
    let fd = match open_at(dir.as_raw_fd(), &name, flags, 0) {
        Ok(fd) => fd,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    let mut file = File::from(fd);
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(invalid("not a regular file"));
    }
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes)?;
    Ok(Some((bytes, meta.permissions().mode() & 0o7777)))
}

/// A temp-file name beside `file`, unique within this process; chosen before the intent
/// is journaled so recovery knows what to clean up.
pub(crate) fn temp_path_for(file: &Path) -> PathBuf {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let name: String = file
        .file_name()
        .map(|n| n.to_string_lossy().chars().take(64).collect())
        .unwrap_or_default();
    let temp = format!(".{name}.podcode-{}-{n}.tmp", std::process::id());
    file.with_file_name(temp)
}

/// A file write prepared but not yet visible: the new content in a synced temp file beside
/// the target (or, for a deletion, only the open folder).
pub(crate) struct Staged {
    dir: OwnedFd,
    name: CString,
    temp: Option<CString>,
}

/// Stages `content` for `file` in `temp` (same folder), or a deletion for `None`. Missing
/// folders are created for a write (recorded in `created`). The target must be a regular
/// file or absent; the temp file gets its mode (or `mode`, when given) and, where
/// permitted, its owner.
pub(crate) fn stage(
    file: &Path,
    temp: &Path,
    content: Option<&[u8]>,
    mode: Option<u32>,
    created: &mut Vec<PathBuf>,
) -> io::Result<Staged> {
    let wanted = mode;
    let (parent, name) = split(file)?;
    let dir = open_dir(parent, content.is_some(), created)?;
    let existing = stat_at(&dir, &name)?;
    if let Some(st) = &existing {
        if is_kind(st, libc::S_IFLNK) {
            return Err(io::Error::from_raw_os_error(libc::ELOOP));
        }
        if is_kind(st, libc::S_IFDIR) {
            return Err(io::Error::from_raw_os_error(libc::EISDIR));
        }
    }
    let Some(content) = content else {
        return Ok(Staged {
            dir,
            name,
            temp: None,
        });
    };
    let temp_name = cstr(temp.file_name().ok_or_else(|| invalid("bad temp name"))?)?;
    let mode = wanted.unwrap_or_else(|| existing.as_ref().map_or(0o666, |st| st.st_mode & 0o7777));
    let flags = libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW;
    let fd = open_at(dir.as_raw_fd(), &temp_name, flags, mode)?;
    let staged = Staged {
        dir,
        name,
        temp: Some(temp_name),
    };
    let mut out = File::from(fd);
    let written = (|| {
        out.write_all(content)?;
        if existing.is_some() || wanted.is_some() {
            // The umask shaped the create mode; the replacement keeps the old one (or the
            // journaled one) exactly.
            // SAFETY: `out` is an open descriptor.
            check(unsafe { libc::fchmod(out.as_raw_fd(), mode) })?;
        }
        if let Some(st) = &existing {
            // Only root may give a file away; for anyone else the file is theirs already.
            // SAFETY: as above.
            let _ = unsafe { libc::fchown(out.as_raw_fd(), st.st_uid, st.st_gid) };
        }
        out.sync_all()
    })();
    match written {
        Ok(()) => Ok(staged),
        Err(e) => {
            staged.discard();
            Err(e)
        }
    }
}

impl Staged {
    /// Makes the write visible: renames the temp file over the target (or removes the
    /// target for a deletion) and syncs the folder so the rename survives a power loss.
    pub(crate) fn commit(&self) -> io::Result<()> {
        let d = self.dir.as_raw_fd();
        match &self.temp {
            // SAFETY: valid descriptor and C strings.
            Some(temp) => {
                check(unsafe { libc::renameat(d, temp.as_ptr(), d, self.name.as_ptr()) })?
            }
            // SAFETY: as above.
            None => match check(unsafe { libc::unlinkat(d, self.name.as_ptr(), 0) }) {
                Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e),
                _ => 0,
            },
        };
        // SAFETY: valid descriptor.
        check(unsafe { libc::fsync(d) })?;
        Ok(())
    }

    /// Removes the temp file of a write that will not happen.
    pub(crate) fn discard(&self) {
        if let Some(temp) = &self.temp {
            // SAFETY: valid descriptor and C string; a failure leaves a stray temp file only.
            unsafe { libc::unlinkat(self.dir.as_raw_fd(), temp.as_ptr(), 0) };
        }
    }
}

/// Writes `content` to `file` atomically (or removes it for `None`), creating folders.
#[cfg(test)]
pub(crate) fn replace(file: &Path, content: Option<&[u8]>) -> io::Result<()> {
    let temp = temp_path_for(file);
    let staged = stage(file, &temp, content, None, &mut Vec::new())?;
    staged.commit().inspect_err(|_| staged.discard())
}

/// `replace` with journal content: its bytes, and its permission bits when it records them.
pub(crate) fn put(file: &Path, stored: Option<&str>) -> io::Result<()> {
    let content = decoded(stored);
    let temp = temp_path_for(file);
    let staged = stage(
        file,
        &temp,
        content.as_ref().map(|c| c.bytes.as_slice()),
        content.as_ref().and_then(|c| c.mode),
        &mut Vec::new(),
    )?;
    staged.commit().inspect_err(|_| staged.discard())
}

/// Removes a leftover temp file (recovery); it never follows a link.
pub(crate) fn remove_temp(temp: &Path) {
    if let Ok((parent, name)) = split(temp)
        && let Ok(dir) = open_dir(parent, false, &mut Vec::new())
    {
        // SAFETY: valid descriptor and C string.
        unsafe { libc::unlinkat(dir.as_raw_fd(), name.as_ptr(), 0) };
    }
}

/// Removes folders a failed write created, deepest first; folders that are not empty stay.
pub(crate) fn remove_created(created: &[PathBuf]) {
    for dir in created.iter().rev() {
        let _ = std::fs::remove_dir(dir);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn replace_keeps_the_mode_and_leaves_no_temp_file() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("run.sh");
        std::fs::write(&file, "old").unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o751)).unwrap();
        replace(&file, Some(b"new")).unwrap();
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "new");
        let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o7777;
        assert_eq!(mode, 0o751);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
        replace(&file, None).unwrap();
        assert!(!file.exists());
        replace(&dir.path().join("a/b/c.txt"), Some(b"deep")).unwrap();
        assert_eq!(
            read_nofollow(&dir.path().join("a/b/c.txt"))
                .unwrap()
                .unwrap(),
            b"deep"
        );
        assert_eq!(read_nofollow(&dir.path().join("x/y")).unwrap(), None);
    }

    #[test]
    fn symbolic_links_on_the_path_are_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let outside = dir.path().join("outside");
        std::fs::create_dir(&outside).unwrap();
        std::fs::write(outside.join("f"), "secret").unwrap();
        std::os::unix::fs::symlink(&outside, dir.path().join("sub")).unwrap();
        std::os::unix::fs::symlink(outside.join("f"), dir.path().join("link")).unwrap();
        let err = replace(&dir.path().join("sub/f"), Some(b"x")).unwrap_err();
        assert!(is_symlink_error(&err), "{err}");
        let err = replace(&dir.path().join("link"), Some(b"x")).unwrap_err();
        assert!(is_symlink_error(&err), "{err}");
        let err = read_nofollow(&dir.path().join("link")).unwrap_err();
        assert!(is_symlink_error(&err), "{err}");
        assert_eq!(
            std::fs::read_to_string(outside.join("f")).unwrap(),
            "secret"
        );
    }
}
