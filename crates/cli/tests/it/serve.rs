//! `podcode serve` from the binary: it prints where it listens and a sign-in link (and the
//! token only when it made it), answers the API with the token (and 401 without), drives a
//! prompt to the scripted model, refuses a non-loopback host without a strong chosen token,
//! refuses requests naming a foreign `Host`, closes connections that never finish their
//! headers and stays reachable under a small descriptor limit, drives another
//! project's session in that project's directory under its rules, lets tokens expire (`--token-ttl`: the next one printed, the old one
//! refused with how to get a new one), and stops cleanly on SIGTERM.
// Test, bench and example code: a failed step panics at that line, as in `#[test]` code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::Stdio;
use std::time::{Duration, Instant};

use common::Env;
use podcode_providers::testing::Reply;
use serde_json::Value;

/// One HTTP/1.1 request over a fresh connection; returns the status and the body.
fn http(addr: &str, method: &str, path: &str, token: Option<&str>, body: &str) -> (u16, String) {
    http_as(addr, addr, method, path, token, body)
}

/// The same, naming `host` in the `Host` header.
fn http_as(
    addr: &str,
    host: &str,
    method: &str,
    path: &str,
    token: Option<&str>,
    body: &str,
) -> (u16, String) {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(120))).unwrap();
    let auth = token
        .map(|t| format!("Authorization: Bearer {t}\r\n"))
        .unwrap_or_default();
    write!(
        s,
        "{method} {path} HTTP/1.1\r\nHost: {host}\r\n{auth}Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut raw = String::new();
    s.read_to_string(&mut raw).unwrap();
    let status = raw[9..12].parse().unwrap();
    let body = raw.split_once("\r\n\r\n").map(|(_, b)| b).unwrap_or("");
    (status, body.to_string())
}

#[test]
fn serve_prints_its_url_and_a_sign_in_link_never_the_chosen_token_and_stops_on_sigterm() {
    let env = Env::new(vec![Reply::new().text("Hello from the server")]);
    let mut child = env
        .cmd(&["serve"])
        .env("PODCODE_SERVER_TOKEN", "chosen-token-123")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut next = || lines.next().unwrap().unwrap();
    let listening = next();
    let url = listening
        .strip_prefix("Podcode server on ")
        .unwrap_or_else(|| panic!("{listening}"))
        .to_string();
    assert!(url.starts_with("http://127.0.0.1:"), "{url}");
    // A token the user chose is never echoed: not as the token, not in the link.
    assert_eq!(next(), "Token: the one in PODCODE_SERVER_TOKEN");
    let open = next();
    assert!(!open.contains("chosen-token-123"), "{open}");
    let code = open
        .strip_prefix(&format!("Open: {url}/#code="))
        .unwrap_or_else(|| panic!("{open}"));
    assert!(code.len() >= 43, "{open}");
    let addr = url.trim_start_matches("http://").to_string();

    assert_eq!(http(&addr, "GET", "/api/sessions", None, "").0, 401);
    assert_eq!(
        http(&addr, "GET", "/api/sessions", Some("chosen-token-123"), ""),
        (200, "[]".to_string())
    );
    let (status, created) = http(
        &addr,
        "POST",
        "/api/sessions",
        Some("chosen-token-123"),
        "{}",
    );
    assert_eq!(status, 201, "{created}");
    let id = serde_json::from_str::<Value>(&created).unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();
    let (status, _) = http(
        &addr,
        "POST",
        &format!("/api/sessions/{id}/prompt"),
        Some("chosen-token-123"),
        r#"{"text":"hello"}"#,
    );
    assert_eq!(status, 202);
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let (_, detail) = http(
            &addr,
            "GET",
            &format!("/api/sessions/{id}"),
            Some("chosen-token-123"),
            "",
        );
        let v: Value = serde_json::from_str(&detail).unwrap();
        if v["transcript"][1]["text"] == "Hello from the server" {
            break;
        }
        assert!(Instant::now() < deadline, "the answer is stored: {v}");
        std::thread::sleep(Duration::from_millis(50));
    }

    let killed = std::process::Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let status = child.wait().unwrap();
    assert!(status.success(), "{status:?}");
}

#[test]
fn serve_on_a_public_address_without_a_chosen_token_refuses_to_start() {
    let env = Env::new(vec![]);
    let out = env
        .cmd(&["serve", "--host", "0.0.0.0"])
        .env_remove("PODCODE_SERVER_TOKEN")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("warning: --host 0.0.0.0 makes the server reachable"),
        "{err}"
    );
    assert!(
        err.contains("error: refusing to listen on 0.0.0.0:"),
        "{err}"
    );
    assert!(err.contains("PODCODE_SERVER_TOKEN"), "{err}");
    assert!(out.stdout.is_empty(), "no URL, no token printed");
}

#[test]
fn serve_help_teaches_the_token_and_the_api() {
    let env = Env::new(vec![]);
    let out = env.run(&["serve", "--help"]);
    let help = String::from_utf8_lossy(&out.stdout);
    for needle in [
        "--port",
        "--host",
        "--open",
        "PODCODE_SERVER_TOKEN",
        "/openapi.json",
    ] {
        assert!(help.contains(needle), "{needle} in {help}");
    }
    let web = String::from_utf8_lossy(&env.run(&["web", "--help"]).stdout).into_owned();
    assert!(web.contains("the web page in your browser"), "{web}");
}

/// Starts `podcode serve` (through `sh`, so `prefix` can set a limit first) and returns the
/// child and `host:port` from its first line.
fn start_serve(env: &Env, prefix: &str) -> (std::process::Child, String) {
    let exe = env!("CARGO_BIN_EXE_podcode");
    let mut child = env
        .cmd(&[])
        .env("PODCODE_SERVER_TOKEN", "chosen-token-123")
        .spawn_with_program("sh", &["-c", &format!("{prefix} exec \"$0\" serve"), exe]);
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let first = lines.next().unwrap().unwrap();
    let addr = first
        .strip_prefix("Podcode server on http://")
        .unwrap_or_else(|| panic!("{first}"))
        .to_string();
    // Keep reading stdout so the server never blocks on a full pipe.
    std::thread::spawn(move || for _ in lines {});
    (child, addr)
}

trait SpawnWith {
    fn spawn_with_program(&mut self, program: &str, args: &[&str]) -> std::process::Child;
}

impl SpawnWith for std::process::Command {
    /// Spawns `program args` with this command's environment and directory.
    fn spawn_with_program(&mut self, program: &str, args: &[&str]) -> std::process::Child {
        let mut cmd = std::process::Command::new(program);
        cmd.args(args);
        for (k, v) in self.get_envs() {
            match v {
                Some(v) => cmd.env(k, v),
                None => cmd.env_remove(k),
            };
        }
        if let Some(dir) = self.get_current_dir() {
            cmd.current_dir(dir);
        }
        cmd.stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap()
    }
}

fn stop(mut child: std::process::Child) {
    let _ = std::process::Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status();
    let _ = child.wait();
}

#[test]
fn requests_naming_a_foreign_host_are_refused_and_loopback_names_are_served() {
    let env = Env::new(vec![]);
    let (child, addr) = start_serve(&env, "");
    let port = addr.rsplit_once(':').unwrap().1;
    for host in [
        format!("evil.example:{port}"),
        "evil.example".to_string(),
        format!("127.0.0.1.nip.example:{port}"),
        format!("localhost.evil.example:{port}"),
    ] {
        for path in ["/api/sessions", "/", "/openapi.json"] {
            let (status, body) = http_as(&addr, &host, "GET", path, Some("chosen-token-123"), "");
            assert_eq!(status, 421, "{host} {path}: {body}");
            assert!(
                body.contains("this server answers only to localhost and loopback addresses"),
                "{body}"
            );
        }
    }
    for host in [
        format!("localhost:{port}"),
        format!("127.0.0.1:{port}"),
        format!("[::1]:{port}"),
        addr.clone(),
    ] {
        let (status, body) = http_as(
            &addr,
            &host,
            "GET",
            "/api/sessions",
            Some("chosen-token-123"),
            "",
        );
        assert_eq!(status, 200, "{host}: {body}");
    }
    stop(child);
}

#[test]
fn serve_on_a_public_address_refuses_a_short_or_regular_token() {
    let env = Env::new(vec![]);
    for (token, why) in [
        (
            "chosen-token-123",
            "it has 16 characters; at least 32 are needed",
        ),
        (&"ab".repeat(20) as &str, "it looks too regular"),
    ] {
        let out = env
            .cmd(&["serve", "--host", "0.0.0.0"])
            .env("PODCODE_SERVER_TOKEN", token)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{token}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("error: refusing to listen on 0.0.0.0:")
                && err.contains("with a weak token"),
            "{err}"
        );
        assert!(err.contains(why), "{err}");
        assert!(err.contains("openssl rand -base64 32"), "{err}");
        assert!(!err.contains(token), "the token is not echoed: {err}");
        assert!(out.stdout.is_empty());
    }
}

/// Opens `n` connections that send half a request line and never finish it.
fn stalled(addr: &str, n: usize) -> Vec<TcpStream> {
    (0..n)
        .map(|_| {
            let mut s = TcpStream::connect(addr).unwrap();
            s.write_all(b"GET /api/sessions HTTP/1.1\r\nHost: ")
                .unwrap();
            s
        })
        .collect()
}

#[test]
fn connections_that_never_finish_their_headers_are_closed_and_do_not_lock_others_out() {
    let env = Env::new(vec![]);
    // 256 descriptors, as in the report: 370 stalled connections used to exhaust them.
    let (child, addr) = start_serve(&env, "ulimit -n 256 &&");
    let mut idle = stalled(&addr, 370);
    // A real request still gets its answer (once stalled ones have been closed to make room).
    let (status, body) = http(&addr, "GET", "/api/sessions", Some("chosen-token-123"), "");
    assert_eq!(status, 200, "{body}");
    // And a stalled connection is closed by the server: reading ends (EOF or a reset).
    let first = &mut idle[0];
    first
        .set_read_timeout(Some(Duration::from_secs(120)))
        .unwrap();
    let mut buf = Vec::new();
    match first.read_to_end(&mut buf) {
        Ok(_) => {}
        Err(e) => assert!(
            !matches!(
                e.kind(),
                std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
            ),
            "the stalled connection is still open after 120 s"
        ),
    }
    drop(idle);
    stop(child);
}

#[test]
fn another_projects_session_runs_in_its_own_directory_under_its_own_rules() {
    let read_b = Reply::new().tool_call(
        "r1",
        "read",
        serde_json::json!({"filePath": "only_in_b.txt"}).to_string(),
    );
    let write_b = Reply::new().tool_call(
        "w1",
        "write",
        serde_json::json!({"filePath": "note.txt", "content": "x\n"}).to_string(),
    );
    let env = Env::new(vec![
        Reply::new().text("done elsewhere"),
        read_b,
        write_b,
        Reply::new().text("finished in b"),
    ]);
    // Project B denies edits; the server's project (A) does not.
    let other = env.repo().parent().unwrap().join("other");
    std::fs::create_dir_all(other.join(".git")).unwrap();
    std::fs::create_dir_all(other.join(".podcode")).unwrap();
    std::fs::write(
        other.join(".podcode/config.toml"),
        "model = \"scripted/test\"\n[[permission]]\npermission = \"edit\"\npattern = \"*\"\naction = \"deny\"\n",
    )
    .unwrap();
    std::fs::write(other.join("only_in_b.txt"), "content-of-project-b\n").unwrap();
    let out = env
        .cmd(&["run", "hi"])
        .current_dir(&other)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let (child, addr) = start_serve(&env, "");
    let (status, list) = http(&addr, "GET", "/api/sessions", Some("chosen-token-123"), "");
    assert_eq!(status, 200, "{list}");
    let list: Value = serde_json::from_str(&list).unwrap();
    let theirs = &list[0];
    let home = std::fs::canonicalize(&other).unwrap().display().to_string();
    assert_eq!(theirs["other_project"], home.as_str(), "{list}");
    let id = theirs["id"].as_str().unwrap();
    let (status, answer) = http(
        &addr,
        "POST",
        &format!("/api/sessions/{id}/prompt"),
        Some("chosen-token-123"),
        r#"{"text":"read and write"}"#,
    );
    assert_eq!(status, 202, "{answer}");
    let requests = wait_for_requests(&env, 4);
    // The relative read found B's file: the tools ran in B, not in the server's directory.
    let after_read = requests[2].to_string();
    assert!(after_read.contains("content-of-project-b"), "{after_read}");
    // B's deny rule held for the write, in B and in A.
    let after_write = requests[3].to_string();
    assert!(
        after_write.contains("a rule in the user's configuration denies edit"),
        "{after_write}"
    );
    assert!(!other.join("note.txt").exists());
    assert!(!env.repo().join("note.txt").exists());
    stop(child);
}

/// The model requests once there are `n` of them (120 s at most).
fn wait_for_requests(env: &Env, n: usize) -> Vec<Value> {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    loop {
        let requests = env.requests();
        if requests.len() >= n {
            return requests;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{} model requests after 120 s, expected {n}",
            requests.len()
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// The `error` text of a JSON error body.
fn error_text(body: &str) -> String {
    serde_json::from_str::<Value>(body).unwrap()["error"]
        .as_str()
        .unwrap()
        .to_string()
}

#[test]
fn a_token_the_server_made_expires_and_the_next_one_is_printed_in_its_place() {
    let env = Env::new(vec![]);
    let mut child = env
        .cmd(&["serve", "--token-ttl", "3s"])
        .env_remove("PODCODE_SERVER_TOKEN")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut next = move || lines.next().unwrap().unwrap();
    let addr = next()
        .strip_prefix("Podcode server on http://")
        .unwrap()
        .to_string();
    let first = next().strip_prefix("Token: ").unwrap().to_string();
    assert!(next().starts_with("Open: "));
    // The first token works until the server prints the next one…
    let mut current = first.clone();
    let mut renewed = 0;
    while renewed < 2 {
        let line = next();
        let (token, rest) = line
            .strip_prefix("Token: ")
            .and_then(|l| l.split_once(' '))
            .unwrap_or_else(|| panic!("{line}"));
        assert_eq!(rest, "(the previous one expired; this one lasts 3s)");
        assert_ne!(token, current);
        current = token.to_string();
        renewed += 1;
        // …the new one works (unless it expired already on a slow machine: then the next
        // line brings a newer one and this is checked again)…
        let (status, body) = http(&addr, "GET", "/api/sessions", Some(&current), "");
        if status == 200 {
            break;
        }
        assert_eq!(status, 401, "{body}");
    }
    // …and the first one is refused, saying why and where the new one is.
    let (status, body) = http(&addr, "GET", "/api/sessions", Some(&first), "");
    assert_eq!(status, 401, "{body}");
    assert_eq!(
        error_text(&body),
        "the token expired: the server's tokens last 3s (`podcode serve --token-ttl`); use the newest token `podcode serve` printed in its terminal"
    );
    // A token that never was one is still just unauthorized.
    let (status, body) = http(&addr, "GET", "/api/sessions", Some("not-a-token"), "");
    assert_eq!((status, error_text(&body).as_str()), (401, "unauthorized"));
    stop(child);
}

#[test]
fn a_chosen_token_lasts_only_as_long_as_asked_and_then_says_to_restart() {
    let env = Env::new(vec![]);
    let mut child = env
        .cmd(&["serve", "--token-ttl", "1s"])
        .env("PODCODE_SERVER_TOKEN", "chosen-token-123")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap()).lines();
    let addr = out
        .next()
        .unwrap()
        .unwrap()
        .strip_prefix("Podcode server on http://")
        .unwrap()
        .to_string();
    std::thread::spawn(move || for _ in out {});
    let expired = "the token expired: the token in PODCODE_SERVER_TOKEN lasts 1s here (`podcode serve --token-ttl`); restart `podcode serve` with a new one";
    // The server says so on its terminal when it happens…
    let mut err = BufReader::new(child.stderr.take().unwrap()).lines();
    let line = err
        .find(|l| l.as_ref().is_ok_and(|l| l.contains("token expired")))
        .unwrap()
        .unwrap();
    assert_eq!(line, format!("warning: {expired}"));
    // …and to the client that still sends it.
    let (status, body) = http(&addr, "GET", "/api/sessions", Some("chosen-token-123"), "");
    assert_eq!((status, error_text(&body)), (401, expired.to_string()));
    stop(child);

    // A lifetime must be a duration of at least a second.
    let o = env.run(&["serve", "--token-ttl", "0s"]);
    let text = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(
        text.contains(
            "invalid value '0s' for '--token-ttl <DURATION>': a token must last at least 1s"
        ),
        "{text}"
    );
}
