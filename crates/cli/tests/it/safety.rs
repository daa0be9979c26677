//! The installed binary under the everyday accidents of issue 12: `kill -9` at random
//! moments during `write`, `edit` and `apply_patch` of large files (every file is old or
//! new afterwards, never torn; the next start settles the journal so it agrees with the
//! disk; revert works), and full disks (a full workspace and a full data folder leave the
//! old contents intact and say why). Real SQLite, real processes, real tmpfs mounts.
// Test, bench and example code: a failed step panics at that line, as in `#[test]` code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

struct Env {
    root: tempfile::TempDir,
}

impl Env {
    fn new() -> Self {
        let root = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(root.path().join("repo")).unwrap();
        Self { root }
    }
    fn repo(&self) -> PathBuf {
        self.root.path().join("repo")
    }
    fn data(&self) -> PathBuf {
        self.root.path().join("data")
    }
    fn cmd(&self, args: &[&str]) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_podcode"));
        c.args(args)
            .current_dir(self.repo())
            .env("HOME", self.root.path().join("home"))
            .env("PODCODE_CONFIG_DIR", self.root.path().join("config"))
            .env("PODCODE_DATA_DIR", self.data())
            .env_remove("XDG_CONFIG_HOME")
            .env_remove("XDG_DATA_HOME")
            .stdin(Stdio::null());
        c
    }
    fn run(&self, args: &[&str]) -> Output {
        self.cmd(args).output().unwrap()
    }
    /// `podcode tool call <tool> - --yes` with the arguments on stdin.
    fn spawn_call(&self, tool: &str, args: &Value) -> std::process::Child {
        let mut child = self
            .cmd(&["tool", "call", tool, "-", "--yes"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        let body = args.to_string();
        // A killed child closes the pipe; the broken write is expected then.
        std::thread::spawn(move || {
            let _ = stdin.write_all(body.as_bytes());
        });
        child
    }
    fn call(&self, tool: &str, args: &Value) -> Output {
        self.spawn_call(tool, args).wait_with_output().unwrap()
    }
    fn db(&self) -> rusqlite::Connection {
        rusqlite::Connection::open(self.data().join("podcode.db")).unwrap()
    }
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// A large file's text at `version`: a header naming the version and numbered lines, a few
/// of which carry the version too (so versions differ in a handful of lines only, which
/// keeps the diffs shown to the user cheap).
fn content(bytes: usize, version: u32) -> String {
    let mut s = format!("version {version}\n");
    let mut i = 0;
    while s.len() < bytes {
        if i % 50_000 == 0 {
            s.push_str(&format!("marker {i} of v{version}\n"));
        } else {
            s.push_str(&format!(
                "{i:08} the quick brown fox jumps over the lazy dog, line after line\n"
            ));
        }
        i += 1;
    }
    s
}

/// A small deterministic generator, so a failing run can be repeated from its seed.
struct Lcg(u64);
impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
}

const FILE_BYTES: usize = 12 * 1024 * 1024;
const ITERATIONS: u32 = 40;

#[test]
fn kill_9_during_large_writes_never_tears_a_file_and_the_journal_follows_the_disk() {
    let env = Env::new();
    let a = env.repo().join("a.txt");
    let b = env.repo().join("b.txt");
    let initial = content(FILE_BYTES, 0);
    let mut disk_a = initial.clone();
    let mut disk_b = content(FILE_BYTES, 0);
    std::fs::write(&a, &disk_a).unwrap();
    std::fs::write(&b, &disk_b).unwrap();
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64;
    println!("seed {seed}");
    let mut rng = Lcg(seed);
    // How long a whole call takes, per tool, measured on the first uninterrupted runs.
    let mut full: [Option<Duration>; 3] = [None; 3];
    let (mut killed, mut landed, mut rolled_back, mut completed) = (0, 0, 0, 0);

    for i in 0..ITERATIONS {
        let v = i + 1;
        let which = (i % 3) as usize;
        let (tool, args, new_a, new_b) = match which {
            0 => {
                let new = content(FILE_BYTES, v);
                (
                    "write",
                    json!({"filePath": "a.txt", "content": new}),
                    new,
                    disk_b.clone(),
                )
            }
            1 => {
                let first = disk_a.lines().next().unwrap().to_string();
                let new = disk_a.replacen(&first, &format!("version {v}"), 1);
                (
                    "edit",
                    json!({"filePath": "a.txt", "oldString": format!("{first}\n"), "newString": format!("version {v}\n")}),
                    new,
                    disk_b.clone(),
                )
            }
            _ => {
                let fa = disk_a.lines().next().unwrap().to_string();
                let fb = disk_b.lines().next().unwrap().to_string();
                let patch = format!(
                    "*** Begin Patch\n*** Update File: a.txt\n@@\n-{fa}\n+version {v}\n*** Update File: b.txt\n@@\n-{fb}\n+version {v}\n*** End Patch"
                );
                (
                    "apply_patch",
                    json!({"patch": patch}),
                    disk_a.replacen(&fa, &format!("version {v}"), 1),
                    disk_b.replacen(&fb, &format!("version {v}"), 1),
                )
            }
        };
        let started = Instant::now();
        let mut child = env.spawn_call(tool, &args);
        match full[which] {
            None => {
                let status = child.wait().unwrap();
                assert!(status.success(), "{tool} failed on an uninterrupted run");
                full[which] = Some(started.elapsed());
            }
            Some(d) => {
                // The write itself (journal, stage, rename) comes at the end of the call:
                // aim most kills at the second half, some past the end.
                let delay = d.mul_f64(0.4 + (rng.next() % 1000) as f64 / 1400.0);
                while started.elapsed() < delay {
                    if child.try_wait().unwrap().is_some() {
                        break;
                    }
                    std::thread::sleep(Duration::from_millis(1));
                }
                child.kill().unwrap_or(()); // SIGKILL
                child.wait().unwrap();
                killed += 1;
            }
        }

        // The next start settles the interrupted write.
        let out = env.run(&["changes", "--call", "none", "--json"]);
        assert!(out.status.success(), "{}", text(&out.stderr));
        let notes = text(&out.stderr);
        rolled_back += notes
            .matches("an interrupted write was rolled back")
            .count();
        completed += notes.matches("an interrupted write was completed").count();

        let now_a = std::fs::read_to_string(&a).unwrap();
        let now_b = std::fs::read_to_string(&b).unwrap();
        let a_new = now_a == new_a;
        assert!(
            a_new || now_a == disk_a,
            "iteration {i} ({tool}): a.txt is torn ({} bytes)",
            now_a.len()
        );
        let b_new = now_b == new_b && new_b != disk_b;
        assert!(
            b_new || now_b == disk_b,
            "iteration {i} ({tool}): b.txt is torn"
        );
        if tool == "apply_patch" {
            assert_eq!(a_new, b_new, "iteration {i}: the patch is half applied");
        }
        landed += usize::from(a_new);
        disk_a = now_a;
        disk_b = now_b;

        // The journal agrees with the disk: no intent is left, the newest change of each
        // file holds what is on disk, and no temp file is left beside the files.
        let db = env.db();
        let pending: i64 = db
            .query_row(
                "SELECT count(*) FROM changes WHERE state = 'pending'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(pending, 0, "iteration {i}");
        for (file, now) in [(&a, &disk_a), (&b, &disk_b)] {
            let newest: Option<String> = db
                .query_row(
                    "SELECT new_content FROM changes WHERE file = ?1 AND state = 'done' ORDER BY rowid DESC LIMIT 1",
                    [file.canonicalize().unwrap().to_string_lossy()],
                    |r| r.get(0),
                )
                .ok();
            if let Some(newest) = newest {
                assert!(
                    newest == *now,
                    "iteration {i}: the journal disagrees with {}",
                    file.display()
                );
            } else {
                assert!(*now == initial, "iteration {i}: unjournaled change");
            }
        }
        let names: Vec<String> = std::fs::read_dir(env.repo())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names.len(), 2, "iteration {i}: stray files {names:?}");
    }
    println!(
        "{killed} calls killed, {landed} of {ITERATIONS} writes landed; recovery rolled back {rolled_back} and completed {completed} interrupted writes"
    );

    // Revert works after all this: undo the newest change of a.txt.
    let db = env.db();
    let (id, old): (String, String) = db
        .query_row(
            "SELECT id, old_content FROM changes WHERE file = ?1 AND state = 'done' ORDER BY rowid DESC LIMIT 1",
            [a.canonicalize().unwrap().to_string_lossy()],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    let out = env.run(&["revert", &id]);
    assert!(
        out.status.success(),
        "{}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    assert_eq!(std::fs::read_to_string(&a).unwrap(), old);
}

/// A tmpfs mounted for the test, unmounted when dropped.
struct Tmpfs(PathBuf);

impl Tmpfs {
    /// Mounts a tmpfs of `mb` MiB on `dir`; `None` (with the reason printed) when this
    /// process may not mount (not root, or no mount permission in this container).
    fn mount(dir: &Path, mb: u32) -> Option<Tmpfs> {
        std::fs::create_dir_all(dir).unwrap();
        let out = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={mb}m"), "tmpfs"])
            .arg(dir)
            .output();
        match out {
            Ok(o) if o.status.success() => Some(Tmpfs(dir.to_path_buf())),
            Ok(o) => {
                println!(
                    "skipped: cannot mount a tmpfs (needs root): {}",
                    text(&o.stderr).trim()
                );
                None
            }
            Err(e) => {
                println!("skipped: cannot run mount: {e}");
                None
            }
        }
    }

    /// Fills the file system until only `leave` bytes are free.
    fn fill(&self, leave: u64) {
        let out = Command::new("df")
            .args(["-B1", "--output=avail"])
            .arg(&self.0)
            .output()
            .unwrap();
        let avail: u64 = text(&out.stdout)
            .lines()
            .nth(1)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        let mut f = std::fs::File::create(self.0.join("filler")).unwrap();
        let chunk = vec![b'x'; 64 * 1024];
        let mut left = avail.saturating_sub(leave);
        while left > 0 {
            let n = left.min(chunk.len() as u64) as usize;
            if f.write_all(&chunk[..n]).is_err() {
                break;
            }
            left -= n as u64;
        }
        let _ = f.sync_all();
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
    }
}

#[test]
fn a_full_workspace_disk_leaves_the_old_file_intact_and_says_why() {
    let env = Env::new();
    let Some(fs) = Tmpfs::mount(&env.repo(), 8) else {
        return;
    };
    let old = content(1024 * 1024, 0);
    std::fs::write(env.repo().join("big.txt"), &old).unwrap();
    fs.fill(256 * 1024);
    let patch = "*** Begin Patch\n*** Update File: big.txt\n@@\n-version 0\n+version 1\n*** Add File: new.txt\n+new\n*** End Patch";
    for (tool, args) in [
        (
            "write",
            json!({"filePath": "big.txt", "content": content(1024 * 1024, 1)}),
        ),
        (
            "edit",
            json!({"filePath": "big.txt", "oldString": "version 0\n", "newString": "version 1\n"}),
        ),
        ("apply_patch", json!({"patch": patch})),
    ] {
        let out = env.call(tool, &args);
        let all = format!("{}{}", text(&out.stdout), text(&out.stderr));
        assert!(!out.status.success(), "{tool}: {all}");
        let expected = if tool == "apply_patch" {
            "could not write big.txt: No space left on device (os error 28). The files the patch had already changed were restored, so nothing was applied."
        } else {
            "could not write big.txt: No space left on device (os error 28). The file was not changed."
        };
        assert!(all.contains(expected), "{tool}: {all}");
        assert_eq!(
            std::fs::read_to_string(env.repo().join("big.txt")).unwrap(),
            old,
            "{tool}"
        );
        let mut names: Vec<String> = std::fs::read_dir(env.repo())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(
            names,
            ["big.txt", "filler"],
            "{tool}: no temp or half-made file left"
        );
    }
    let out = env.run(&["changes", "--json"]);
    assert_eq!(
        text(&out.stdout).trim(),
        "[]",
        "nothing journaled: {}",
        text(&out.stderr)
    );
}

#[test]
fn a_full_data_folder_fails_the_edit_before_the_file_is_touched() {
    let env = Env::new();
    let Some(fs) = Tmpfs::mount(&env.data(), 8) else {
        return;
    };
    // Creates the database before the disk fills up.
    assert!(env.run(&["changes", "--json"]).status.success());
    let old = content(1024 * 1024, 0);
    std::fs::write(env.repo().join("big.txt"), &old).unwrap();
    fs.fill(256 * 1024);
    let out = env.call(
        "edit",
        &json!({"filePath": "big.txt", "oldString": "version 0\n", "newString": "version 1\n"}),
    );
    let all = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert!(!out.status.success(), "{all}");
    assert!(
        all.contains("could not journal the change to big.txt (store: sqlite: database or disk is full), so the file was not touched."),
        "{all}"
    );
    assert_eq!(
        std::fs::read_to_string(env.repo().join("big.txt")).unwrap(),
        old
    );
}
