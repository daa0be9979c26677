//! The namespaces a sandboxed command runs in, set up by the helper before it forks:
//!
//! - a new mount namespace in which the policy's protected paths (`.git`, `.podcode`,
//!   `.opencode`, a worktree's git dirs) are bind-mounted read-only over themselves, so
//!   writes there fail with EROFS although Landlock lets the workspace around them be
//!   written (Landlock rules only add rights, they cannot take one back beneath a root),
//!   and the policy's hidden files (credential stores) have `/dev/null` bound over them;
//! - a new PID namespace with its own `/proc` (mounted by the namespace's first process,
//!   `mount_proc`), so the command sees no process outside its sandbox: not Podcode's,
//!   whose environment holds the API keys and the server token, nor any other of the
//!   user's.
//!
//! For the plugin host, a `HomeLayer` too: an overlay over the home directory whose changes
//! land in Podcode's data directory, so a plugin that keeps its state in its own dot-folder
//! works while the real home is never written (the writable roots inside the home are bound
//! back over the overlay: the workspace stays the real one). A kernel that refuses the
//! overlay leaves the home as it was (`Isolation::home_layer` false).
//!
//! Root gets both directly. Other users get them inside a new user namespace that maps
//! their own uid and gid to themselves (so files and `id` look the same and `exec` drops
//! the namespace's capabilities). Where neither works (user namespaces disabled), nothing
//! is isolated and `Isolation::NONE` says so; `KernelSupport` reports it.

use std::io;
use std::path::Path;

/// What `enter` achieved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Isolation {
    /// The next forked child starts a new PID namespace (and must mount `/proc`).
    pub pid: bool,
    /// The protected paths are read-only.
    pub mounts: bool,
    /// The home layer is in place: the home may be written (into the layer).
    pub home_layer: bool,
}

impl Isolation {
    pub const NONE: Isolation = Isolation {
        pid: false,
        mounts: false,
        home_layer: false,
    };
}

fn check(ret: libc::c_int) -> io::Result<()> {
    if ret < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

fn cstr(path: &Path) -> io::Result<std::ffi::CString> {
    use std::os::unix::ffi::OsStrExt;
    std::ffi::CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "path holds a NUL byte"))
}

/// Unshares the mount and PID namespaces (inside a new user namespace when that is what
/// this user may do) and makes every path in `protect` read-only. Call it in the helper
/// before it forks; then hides each file of `hide` that exists. `Ok(Isolation::NONE)`: this system allows no namespaces, nothing
/// changed; an error: isolation was begun but failed, the command must not run.
pub fn enter(
    protect: &[std::path::PathBuf],
    hide: &[std::path::PathBuf],
    layer: Option<(&crate::HomeLayer, &[std::path::PathBuf])>,
) -> io::Result<Isolation> {
    let flags = libc::CLONE_NEWNS | libc::CLONE_NEWPID;
    // SAFETY: unshare only changes this (single-threaded) process's namespaces.
    if unsafe { libc::unshare(flags) } < 0 {
        // SAFETY: as above; getuid/getgid cannot fail.
        let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
        if unsafe { libc::unshare(flags | libc::CLONE_NEWUSER) } < 0 {
            return Ok(Isolation::NONE);
        }
        // An unprivileged user namespace may map only the caller's own ids, and must
        // give up setgroups before it maps a gid.
        std::fs::write("/proc/self/setgroups", "deny")?;
        std::fs::write("/proc/self/uid_map", format!("{uid} {uid} 1"))?;
        std::fs::write("/proc/self/gid_map", format!("{gid} {gid} 1"))?;
    }
    // Mounts made below must not propagate back to the user's namespace.
    let root = cstr(Path::new("/"))?;
    // SAFETY: valid NUL-terminated strings; null fstype/data are allowed for MS_PRIVATE.
    check(unsafe {
        libc::mount(
            std::ptr::null(),
            root.as_ptr(),
            std::ptr::null(),
            libc::MS_REC | libc::MS_PRIVATE,
            std::ptr::null(),
        )
    })?;
    let home_layer = match layer {
        Some((layer, writable)) => lay_home(layer, writable)?,
        None => false,
    };
    for path in protect {
        match read_only_bind(path) {
            // Removed since the policy was made: nothing left to protect.
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            other => other?,
        }
    }
    for path in hide.iter().filter(|p| p.is_file()) {
        empty_bind(path)?;
    }
    Ok(Isolation {
        pid: true,
        mounts: true,
        home_layer,
    })
}

/// Lays `layer` over its home, then binds each of `writable` that lies inside the home back
/// over the overlay (opened before the overlay hid it). `Ok(false)`: no layer (the kernel
/// refused it, or the home itself is a writable root); an error: the layer is in place but
/// a root could not be put back, so the command must not run.
fn lay_home(layer: &crate::HomeLayer, writable: &[std::path::PathBuf]) -> io::Result<bool> {
    use std::os::fd::AsRawFd;
    use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
    let Ok(home) = layer.home.canonicalize() else {
        return Ok(false);
    };
    let mut keep = Vec::new();
    for root in writable {
        let Ok(real) = root.canonicalize() else {
            continue;
        };
        if real == home {
            return Ok(false);
        }
        if real.starts_with(&home) {
            let dir = std::fs::OpenOptions::new()
                .read(true)
                .custom_flags(libc::O_PATH | libc::O_CLOEXEC)
                .open(&real)?;
            keep.push((real, dir));
        }
    }
    let (upper, work) = (layer.dir.join("upper"), layer.dir.join("work"));
    for dir in [&upper, &work] {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)?;
    }
    // Overlay options separate with ',' and ':' (escaping is not worth it here).
    let plain = |p: &Path| !p.to_string_lossy().contains([',', ':', '\\']);
    if ![home.as_path(), &upper, &work].into_iter().all(plain) {
        return Ok(false);
    }
    let options = format!(
        "lowerdir={},upperdir={},workdir={}",
        home.display(),
        upper.display(),
        work.display()
    );
    let (target, fstype, data) = (
        cstr(&home)?,
        cstr(Path::new("overlay"))?,
        cstr(Path::new(&options))?,
    );
    // SAFETY: valid NUL-terminated strings; `data` is the overlay's option string.
    let mounted = unsafe {
        libc::mount(
            fstype.as_ptr(),
            target.as_ptr(),
            fstype.as_ptr(),
            0,
            data.as_ptr().cast(),
        )
    };
    if mounted < 0 {
        return Ok(false);
    }
    for (path, dir) in keep {
        let source = cstr(Path::new(&format!("/proc/self/fd/{}", dir.as_raw_fd())))?;
        let target = cstr(&path)?;
        // SAFETY: valid NUL-terminated strings; the source is an open O_PATH descriptor.
        check(unsafe {
            libc::mount(
                source.as_ptr(),
                target.as_ptr(),
                std::ptr::null(),
                libc::MS_BIND | libc::MS_REC,
                std::ptr::null(),
            )
        })?;
    }
    Ok(true)
}

/// Binds `/dev/null` over file `path`: inside the namespace it reads as empty (and writes
/// to it are lost), so a credential store stays out of the sandbox's reach.
fn empty_bind(path: &Path) -> io::Result<()> {
    let (null, target) = (cstr(Path::new("/dev/null"))?, cstr(path)?);
    // SAFETY: valid NUL-terminated strings for source and target.
    check(unsafe {
        libc::mount(
            null.as_ptr(),
            target.as_ptr(),
            std::ptr::null(),
            libc::MS_BIND,
            std::ptr::null(),
        )
    })
}

/// Bind-mounts `path` over itself, then remounts that bind read-only, keeping the flags
/// the kernel locks in a user namespace (nosuid, nodev, noexec, atime ones).
fn read_only_bind(path: &Path) -> io::Result<()> {
    let c = cstr(path)?;
    // SAFETY: valid NUL-terminated strings for source and target.
    check(unsafe {
        libc::mount(
            c.as_ptr(),
            c.as_ptr(),
            std::ptr::null(),
            libc::MS_BIND | libc::MS_REC,
            std::ptr::null(),
        )
    })?;
    // SAFETY: statvfs fills the zeroed struct for a valid path.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    check(unsafe { libc::statvfs(c.as_ptr(), &mut st) })?;
    let mut flags = libc::MS_BIND | libc::MS_REMOUNT | libc::MS_RDONLY;
    for (st_flag, ms_flag) in [
        (libc::ST_NOSUID, libc::MS_NOSUID),
        (libc::ST_NODEV, libc::MS_NODEV),
        (libc::ST_NOEXEC, libc::MS_NOEXEC),
        (libc::ST_NOATIME, libc::MS_NOATIME),
        (libc::ST_NODIRATIME, libc::MS_NODIRATIME),
        (libc::ST_RELATIME, libc::MS_RELATIME),
    ] {
        if st.f_flag & st_flag != 0 {
            flags |= ms_flag;
        }
    }
    // SAFETY: as above.
    check(unsafe {
        libc::mount(
            std::ptr::null(),
            c.as_ptr(),
            std::ptr::null(),
            flags,
            std::ptr::null(),
        )
    })
}

/// Mounts a fresh `/proc` for the PID namespace this process is the first of, so it lists
/// only the sandbox's own processes.
pub fn mount_proc() -> io::Result<()> {
    let target = cstr(Path::new("/proc"))?;
    let fstype = cstr(Path::new("proc"))?;
    // SAFETY: valid NUL-terminated strings; no data.
    check(unsafe {
        libc::mount(
            fstype.as_ptr(),
            target.as_ptr(),
            fstype.as_ptr(),
            libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
            std::ptr::null(),
        )
    })
}
