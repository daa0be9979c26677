//! `webfetch`'s gate through the real pipeline, against the local server of `webfetch`: a
//! private address (127.0.0.1, localhost, ::1) is the `webfetch_private` permission for its
//! origin — asked like every other gate (once, always, reject), a rule for the origin or
//! the bare host deciding — and a deny rule refuses, naming the rules that would allow the
//! fetch as TOML to paste; every redirect target passes the same gate; non-HTTP URLs are
//! refused (a typed `file:` URL read only with a rule); a public host asks `webfetch`.
// Test, bench and example code: a failed step panics at that line, as in `#[test]` code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use podcode_protocol::{PermissionAction, PermissionReply, PermissionRule};
use podcode_tools::{CallStatus, rejected_text};
use serde_json::json;

use super::webfetch::{allow, fetch, serve, serve_on, setup};

fn deny(permission: &str, pattern: &str) -> PermissionRule {
    PermissionRule::new(permission, pattern, PermissionAction::Deny)
}

/// The TOML a refusal names for `(permission, pattern)` pairs, as `allow_rules` prints it.
fn toml(rules: &[(&str, &str)]) -> String {
    rules
        .iter()
        .map(|(permission, pattern)| {
            format!(
                "\n[[permission]]\npermission = \"{permission}\"\npattern = \"{pattern}\"\naction = \"allow\"\n"
            )
        })
        .collect()
}

#[tokio::test]
async fn redirects_pass_the_same_gate() {
    let addr = serve().await;
    let other = serve().await;
    let origin = format!("http://{addr}");
    let to = format!("http://{other}");
    // The first origin is allowed; the redirect target, another origin on the same private
    // host, is asked about on its own, and the answer lets the redirect through.
    let h = setup(
        vec![allow("webfetch_private", &origin)],
        vec![PermissionReply::Once],
    );
    let url = format!("{origin}/to/{}", other.port());
    let (status, text) = fetch(&h, json!({ "url": url })).await;
    assert_eq!(status, CallStatus::Completed, "{text}");
    assert_eq!(
        text,
        format!("(Redirected to {to}/plain)\n\nhello\nworld\n")
    );
    let asks = h.user.asks();
    assert_eq!(asks.len(), 1);
    assert_eq!(asks[0].request.permission, "webfetch_private");
    assert_eq!(asks[0].request.patterns, vec![to.clone()]);
    assert_eq!(asks[0].request.metadata["url"], format!("{to}/plain"));
    // Rejected: the redirect is not followed.
    let (status, text) = fetch(&h, json!({ "url": url })).await;
    assert_eq!(status, CallStatus::Denied);
    assert_eq!(
        text,
        rejected_text("webfetch_private", std::slice::from_ref(&to))
    );
    // A deny rule for the target refuses the redirect without asking, naming the rule. An
    // IPv6 origin's brackets are escaped in it (a bracket starts a character class in a
    // pattern), so the rule pasted as printed matches, and the redirect is followed.
    let rules = vec![
        deny("webfetch_private", "*"),
        allow("webfetch_private", &origin),
    ];
    let h = setup(rules.clone(), vec![PermissionReply::Always]);
    let loopback6 = json!({"url": format!("{origin}/to-loopback6")});
    let (status, text) = fetch(&h, loopback6.clone()).await;
    assert_eq!(status, CallStatus::Denied);
    assert_eq!(
        text,
        "http://[::1]:9/plain was not fetched: [::1] is a private, loopback or link-local address (::1). A permission rule in the user's configuration denies it. To allow it, the user can add to their config.toml:\n\n[[permission]]\npermission = \"webfetch_private\"\npattern = \"http://\\\\[::1\\\\]:9\"\naction = \"allow\"\n"
    );
    assert!(h.user.asks().is_empty());
    let mut pasted = rules;
    pasted.push(allow("webfetch_private", "http://\\[::1\\]:9"));
    let h = setup(pasted, vec![]);
    let (_, text) = fetch(&h, loopback6).await;
    // Nothing listens on port 9: the gate let the request go out.
    assert!(
        text.starts_with(
            "The webfetch tool failed: could not connect to [::1] for http://[::1]:9/plain ("
        ),
        "{text}"
    );
    assert!(h.user.asks().is_empty());
    // A redirect to a local file is never followed, whatever the rules say.
    let h = setup(
        vec![
            allow("webfetch_private", "127.0.0.1"),
            allow("webfetch_private", "file://*"),
        ],
        vec![],
    );
    let (status, text) = fetch(&h, json!({"url": format!("{origin}/to-file")})).await;
    assert_eq!(status, CallStatus::Failed);
    assert_eq!(
        text,
        "The webfetch tool failed: file:///etc/hostname was not fetched: only http:// and https:// URLs are fetched from the network, not file: URLs. Use the read tool for local files."
    );
}

#[tokio::test]
async fn a_private_address_is_asked_about_for_its_origin() {
    let addr = serve().await;
    let origin = format!("http://{addr}");
    let url = format!("{origin}/plain");
    // Asked once for the origin, allowed once: fetched, and no `webfetch` question follows.
    let h = setup(vec![], vec![PermissionReply::Once]);
    let (status, text) = fetch(&h, json!({ "url": url })).await;
    assert_eq!(status, CallStatus::Completed, "{text}");
    let asks = h.user.asks();
    assert_eq!(asks.len(), 1);
    assert_eq!(asks[0].request.permission, "webfetch_private");
    assert_eq!(asks[0].request.patterns, vec![origin.clone()]);
    assert_eq!(asks[0].request.always, vec![origin.clone()]);
    assert_eq!(asks[0].request.metadata["url"], url);
    assert_eq!(asks[0].request.metadata["address"], "127.0.0.1");
    // "Once" is for that call: the next one asks again, and a rejection refuses it.
    let (status, text) = fetch(&h, json!({ "url": url })).await;
    assert_eq!(status, CallStatus::Denied);
    assert_eq!(
        text,
        rejected_text("webfetch_private", std::slice::from_ref(&origin))
    );
    assert_eq!(h.user.asks().len(), 2);

    // "Always" is remembered for the origin; localhost, another origin resolving to
    // loopback by name, is asked about on its own.
    let h = setup(vec![], vec![PermissionReply::Always]);
    let (status, _) = fetch(&h, json!({ "url": url })).await;
    assert_eq!(status, CallStatus::Completed);
    let (status, _) = fetch(&h, json!({"url": format!("{origin}/json")})).await;
    assert_eq!(status, CallStatus::Completed);
    assert_eq!(h.user.asks().len(), 1);
    let named = format!("http://localhost:{}", addr.port());
    let (status, text) = fetch(&h, json!({"url": format!("{named}/plain")})).await;
    assert_eq!(status, CallStatus::Denied);
    assert_eq!(text, rejected_text("webfetch_private", &[named]));
}

#[tokio::test]
async fn always_for_an_ipv6_origin_is_remembered_as_that_origin() {
    let addr = serve_on("[::1]:0").await;
    let origin = format!("http://{addr}");
    let h = setup(vec![], vec![PermissionReply::Always]);
    let (status, text) = fetch(&h, json!({ "url": format!("{origin}/plain") })).await;
    assert_eq!(status, CallStatus::Completed, "{text}");
    let asks = h.user.asks();
    assert_eq!(asks[0].request.patterns, vec![origin.clone()]);
    // Remembered as a pattern matching exactly the origin, brackets and all.
    assert_eq!(
        asks[0].request.always,
        vec![format!("http://\\[::1\\]:{}", addr.port())]
    );
    let (status, text) = fetch(&h, json!({ "url": format!("{origin}/json") })).await;
    assert_eq!(status, CallStatus::Completed, "{text}");
    assert_eq!(h.user.asks().len(), 1, "always must not ask again");
}

#[tokio::test]
async fn a_deny_rule_refuses_a_private_address_naming_the_rules_that_would_allow_it() {
    let addr = serve().await;
    let origin = format!("http://{addr}");
    let url = format!("{origin}/plain");
    let refusal = |rules: &[(&str, &str)]| {
        format!(
            "{url} was not fetched: 127.0.0.1 is a private, loopback or link-local address (127.0.0.1). A permission rule in the user's configuration denies it. To allow it, the user can add to their config.toml:\n{}",
            toml(rules)
        )
    };
    // A deny rule for the bare host: refused without asking, naming the origin's rule.
    let h = setup(
        vec![deny("webfetch_private", "127.0.0.1")],
        vec![PermissionReply::Always],
    );
    let (status, text) = fetch(&h, json!({ "url": url })).await;
    assert_eq!(status, CallStatus::Denied);
    assert_eq!(text, refusal(&[("webfetch_private", &origin)]));
    assert!(h.user.asks().is_empty());
    // A `webfetch` rule denying the host refuses too, and both rules are named.
    let h = setup(
        vec![
            allow("webfetch_private", &origin),
            deny("webfetch", "127.0.0.1"),
        ],
        vec![PermissionReply::Always],
    );
    let (status, text) = fetch(&h, json!({ "url": url })).await;
    assert_eq!(status, CallStatus::Denied);
    assert_eq!(
        text,
        refusal(&[("webfetch_private", &origin), ("webfetch", "127.0.0.1")])
    );
    assert!(h.user.asks().is_empty());
    // The named rule, added after the deny, takes effect: an origin rule wins over one for
    // the bare host.
    let h = setup(
        vec![
            deny("webfetch_private", "127.0.0.1"),
            allow("webfetch_private", &origin),
        ],
        vec![],
    );
    let (status, text) = fetch(&h, json!({ "url": url })).await;
    assert_eq!(status, CallStatus::Completed, "{text}");
    assert!(h.user.asks().is_empty());
}

#[tokio::test]
async fn non_http_schemes_are_blocked_unless_explicitly_allowed() {
    let h = setup(vec![], vec![]);
    let (status, text) = fetch(&h, json!({"url": "ftp://example.com/file.txt"})).await;
    assert_eq!(status, CallStatus::Failed);
    assert_eq!(
        text,
        "The webfetch tool failed: ftp://example.com/file.txt was not fetched: only http:// and https:// URLs are fetched from the network, not ftp: URLs. Use the read tool for local files."
    );
    let page = h.work().join("page.html");
    std::fs::write(&page, "<h1>Local</h1><p>file</p>").unwrap();
    let url = format!("file://{}", page.display());
    let (status, text) = fetch(&h, json!({ "url": url })).await;
    assert_eq!(status, CallStatus::Failed);
    assert_eq!(
        text,
        format!(
            "The webfetch tool failed: {url} was not fetched: a file: URL is only read when the user allowed it with a webfetch_private rule for the URL. Use the read tool for local files, or the user can add to their config.toml:\n{}",
            toml(&[("webfetch_private", &url)])
        )
    );
    let h = setup(vec![allow("webfetch_private", "file://*")], vec![]);
    std::fs::write(h.work().join("page.html"), "<h1>Local</h1><p>file</p>").unwrap();
    let url = format!("file://{}", h.work().join("page.html").display());
    let (status, text) = fetch(&h, json!({"url": url})).await;
    assert_eq!(status, CallStatus::Completed, "{text}");
    assert_eq!(text, "# Local\n\nfile");
    let (_, text) = fetch(&h, json!({"url": "not a url"})).await;
    assert_eq!(
        text,
        "The webfetch tool failed: \"not a url\" is not a valid URL (relative URL without a base). Pass a full URL such as https://example.com/page."
    );
}

#[tokio::test]
async fn a_public_host_is_asked_about_and_always_is_remembered() {
    // 192.0.2.1 (TEST-NET-1, reserved for documentation) is a public address nobody
    // answers on: the question comes before any connection, which then fails or times out.
    let url = "http://192.0.2.1:9/page";
    let h = setup(vec![], vec![PermissionReply::Always]);
    fetch(&h, json!({"url": url, "timeout": 1})).await;
    let asks = h.user.asks();
    assert_eq!(asks.len(), 1);
    assert_eq!(asks[0].request.permission, "webfetch");
    assert_eq!(asks[0].request.patterns, vec!["192.0.2.1".to_string()]);
    assert_eq!(asks[0].request.always, vec!["192.0.2.1".to_string()]);
    assert_eq!(asks[0].request.metadata["url"], url);
    // Remembered: the next fetch from the host does not ask again.
    fetch(&h, json!({"url": "http://192.0.2.1:9/other", "timeout": 1})).await;
    assert_eq!(h.user.asks().len(), 1);

    let h = setup(vec![], vec![]);
    let (status, text) = fetch(&h, json!({ "url": url })).await;
    assert_eq!(status, CallStatus::Denied);
    assert_eq!(text, rejected_text("webfetch", &["192.0.2.1".to_string()]));
}
