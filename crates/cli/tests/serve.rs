//! `podcode serve` from the binary: it prints where it listens and its token, answers the
//! API with the token (and 401 without), drives a prompt to the scripted model, refuses a
//! non-loopback host without a chosen token, and stops cleanly on SIGTERM.

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::Stdio;
use std::time::{Duration, Instant};

use common::Env;
use podcode_providers::testing::Reply;
use serde_json::Value;

/// One HTTP/1.1 request over a fresh connection; returns the status and the body.
fn http(addr: &str, method: &str, path: &str, token: Option<&str>, body: &str) -> (u16, String) {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let auth = token
        .map(|t| format!("Authorization: Bearer {t}\r\n"))
        .unwrap_or_default();
    write!(
        s,
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\n{auth}Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
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
fn serve_prints_its_url_and_token_answers_with_the_token_and_stops_on_sigterm() {
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
    assert_eq!(next(), "Token: chosen-token-123");
    assert_eq!(next(), format!("Open: {url}/#token=chosen-token-123"));
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
    let deadline = Instant::now() + Duration::from_secs(30);
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
