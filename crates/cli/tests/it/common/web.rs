//! What the browser tests of `podcode run` share: a small HTTP server on a loopback address
//! that records what it was asked, the user config that points at the scripted model and
//! allows browsing 127.0.0.1, and the run's own TMPDIR, under which its Chromium lives.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use super::Env;

/// Lets the browser open the private address 127.0.0.1 without asking.
pub const LOCAL_PRIVATE: &str = "[[permission]]\npermission = \"browser_private\"\npattern = \"127.0.0.1\"\naction = \"allow\"\n";
/// Lets the browser visit the host 127.0.0.1 without asking.
pub const LOCAL_BROWSER: &str =
    "[[permission]]\npermission = \"browser\"\npattern = \"127.0.0.1\"\naction = \"allow\"\n";

/// Serves on `ip` (a random port), on a thread until the test process ends, recording each
/// request's path (and query); `answer(path, port)` gives the headers and body.
pub fn serve(
    ip: &str,
    answer: fn(&str, u16) -> (String, String),
) -> (u16, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind((ip, 0)).unwrap();
    let port = listener.local_addr().unwrap().port();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let mut reader = BufReader::new(&stream);
            let mut first = String::new();
            let _ = reader.read_line(&mut first);
            // A connection closed without a request line (a speculative preconnect) sent
            // nothing: only requests are recorded.
            let Some(path) = first.split_whitespace().nth(1).map(str::to_string) else {
                continue;
            };
            let mut line = String::new();
            while reader.read_line(&mut line).map(|n| n > 2).unwrap_or(false) {
                line.clear();
            }
            log.lock().unwrap().push(path.clone());
            let (headers, body) = answer(&path, port);
            let mut s = &stream;
            let _ = write!(
                s,
                "HTTP/1.1 200 OK\r\n{headers}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    (port, seen)
}

/// The user config: the scripted model, then `rules`.
pub fn config(env: &Env, rules: &str) {
    env.write_global(&format!(
        "[provider.scripted]\nbase_url = \"{}\"\n{rules}",
        env.server.base_url()
    ));
}

/// A TMPDIR of the test's own for a run (its Chromium profile goes there).
pub fn run_tmp(env: &Env) -> PathBuf {
    let tmp = env.root.path().join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    tmp
}

/// Processes whose command line mentions `dir` (the run's TMPDIR, home of its profile).
pub fn processes_under(dir: &Path) -> Vec<String> {
    let needle = dir.to_string_lossy().to_string();
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
        .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
        .filter(|c| c.contains(&needle))
        .collect()
}
