//! Starting and stopping one Chromium: where the binary is, the flags, the fresh profile
//! directory, the task that pumps the DevTools connection, and the process tree (for a clean
//! close and for the memory figure).
//!
//! Flags: headless, no sandbox (containers), and no GPU, QUIC, background networking,
//! component updates, sync, first-run or default-app work — on a closed network Chromium
//! otherwise waits on connections it opens by itself, and each of them costs start-up
//! time. The default flags of `chromiumoxide` are not used: they disable the popup blocker,
//! and new windows are to be blocked. The process is started by `spawn` (it dies with
//! Podcode) and `chromiumoxide` connects to the DevTools address Chromium prints.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use chromiumoxide::handler::HandlerConfig;
use chromiumoxide::{Browser, Page};
use futures_util::StreamExt;
use podcode_tools::ToolError;
use tokio::task::JoinHandle;

use crate::BrowserSettings;
use crate::{spawn, texts};

const NAMES: [&str; 5] = [
    "chromium",
    "chromium-browser",
    "google-chrome",
    "google-chrome-stable",
    "chrome",
];

/// Switches without their leading `--` (chromiumoxide adds it).
const FLAGS: [&str; 22] = [
    "disable-gpu",
    "disable-software-rasterizer",
    "no-service-autorun",
    "disable-domain-reliability",
    "disable-client-side-phishing-detection",
    "disable-hang-monitor",
    "disable-background-timer-throttling",
    "disable-renderer-backgrounding",
    "disable-backgrounding-occluded-windows",
    "metrics-recording-only",
    "disable-quic",
    "no-first-run",
    "disable-background-networking",
    "disable-component-update",
    "disable-sync",
    "disable-breakpad",
    "disable-default-apps",
    "disable-dev-shm-usage",
    "disable-extensions",
    "no-default-browser-check",
    "password-store=basic",
    "use-mock-keychain",
];

/// How long Chromium may take to print its DevTools address.
const LAUNCH_TIMEOUT: Duration = Duration::from_secs(20);

/// A running Chromium with its one tab.
pub(crate) struct Launched {
    pub(crate) browser: Browser,
    pub(crate) page: Page,
    pub(crate) pid: Option<u32>,
    child: std::process::Child,
    handler: JoinHandle<()>,
    /// Removed (with everything Chromium wrote) when the browser is dropped after closing.
    _profile: tempfile::TempDir,
}

/// The binary to start: the configured one, or the first usual name on `PATH` (past a
/// distribution's wrapper script, see `spawn::skip_wrapper`).
pub(crate) fn find_executable(settings: &BrowserSettings) -> Result<PathBuf, ToolError> {
    if let Some(exe) = &settings.executable {
        if exe.is_file() {
            return Ok(exe.clone());
        }
        return Err(ToolError::failed(texts::not_installed(&format!(
            "[browser] executable = \"{}\" does not exist",
            exe.display()
        ))));
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    for dir in std::env::split_paths(&path) {
        for name in NAMES {
            let candidate = dir.join(name);
            if is_executable(&candidate) {
                return Ok(spawn::skip_wrapper(&candidate));
            }
        }
    }
    Err(ToolError::failed(texts::not_installed(&format!(
        "looked for {} on PATH",
        NAMES.join(", ")
    ))))
}

pub(crate) fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path)
        .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}

/// Chromium's command line: our flags, headless, the fresh profile, a free DevTools port.
fn arguments(profile: &Path) -> Vec<OsString> {
    let mut args: Vec<OsString> = FLAGS.iter().map(|f| format!("--{f}").into()).collect();
    for flag in [
        "--headless",
        "--hide-scrollbars",
        "--mute-audio",
        // Containers have no user namespaces for Chromium's own sandbox.
        "--no-sandbox",
        "--disable-setuid-sandbox",
        "--disable-features=Translate,MediaRouter,OptimizationHints,AutofillServerCommunication,CertificateTransparencyComponentUpdater",
        "--remote-debugging-port=0",
    ] {
        args.push(flag.into());
    }
    let mut dir = OsString::from("--user-data-dir=");
    dir.push(profile);
    args.push(dir);
    args
}

/// Starts Chromium with a fresh profile and opens its tab.
pub(crate) async fn launch(settings: &BrowserSettings) -> Result<Launched, ToolError> {
    let exe = find_executable(settings)?;
    let shown = exe.display().to_string();
    let failed =
        |e: &dyn std::fmt::Display| ToolError::failed(texts::launch_failed(&shown, &e.to_string()));
    let profile = tempfile::Builder::new()
        .prefix("podcode-browser-")
        .tempdir()
        .map_err(|e| failed(&e))?;
    let mut child = spawn::spawn(&exe, &arguments(profile.path()))
        .await
        .map_err(|e| failed(&e))?;
    let Some(stderr) = child.stderr.take() else {
        stop(&mut child).await;
        return Err(failed(&"its stderr could not be read"));
    };
    let url = match tokio::time::timeout(LAUNCH_TIMEOUT, spawn::devtools_url(stderr)).await {
        Ok(Ok(Ok(url))) => url,
        Ok(Ok(Err(tail))) => {
            stop(&mut child).await;
            return Err(failed(&texts::exited_at_start(&tail)));
        }
        Ok(Err(_)) => {
            stop(&mut child).await;
            return Err(failed(&"its output could not be read"));
        }
        Err(_) => {
            stop(&mut child).await;
            return Err(failed(&texts::NO_DEVTOOLS_ADDRESS));
        }
    };
    let config = HandlerConfig {
        viewport: None,
        // A navigation waits while the user answers a permission prompt; the tool's own
        // timeout and abort bound every call.
        request_timeout: Duration::from_secs(600),
        ..HandlerConfig::default()
    };
    let (browser, mut handler) = match Browser::connect_with_config(url, config).await {
        Ok(connected) => connected,
        Err(e) => {
            stop(&mut child).await;
            return Err(failed(&e));
        }
    };
    let handler = tokio::spawn(async move {
        // Invalid messages are ignored by the handler; any error it reports is the
        // connection going away (the browser closed or died).
        while let Some(event) = handler.next().await {
            if event.is_err() {
                break;
            }
        }
    });
    let pid = Some(child.id());
    let page = match browser.new_page("about:blank").await {
        Ok(page) => page,
        Err(e) => {
            handler.abort();
            stop(&mut child).await;
            return Err(failed(&e));
        }
    };
    Ok(Launched {
        browser,
        page,
        pid,
        child,
        handler,
        _profile: profile,
    })
}

/// Kills `child` and reaps it.
async fn stop(child: &mut std::process::Child) {
    let _ = child.kill();
    let _ = exited_within(child, Duration::from_secs(2)).await;
}

/// Whether `child` exited (and was reaped) within `limit`.
async fn exited_within(child: &mut std::process::Child, limit: Duration) -> bool {
    let start = std::time::Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(_)) | Err(_) => return true,
            Ok(None) if start.elapsed() < limit => {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            Ok(None) => return false,
        }
    }
}

impl Launched {
    /// False once the process exited or the DevTools connection is gone.
    pub(crate) fn alive(&mut self) -> bool {
        !self.handler.is_finished() && matches!(self.child.try_wait(), Ok(None))
    }

    /// `alive`, and answering a DevTools call (a killed browser can look alive until its
    /// connection is noticed closed).
    pub(crate) async fn responds(&mut self) -> bool {
        self.alive()
            && matches!(
                tokio::time::timeout(Duration::from_secs(3), self.browser.version()).await,
                Ok(Ok(_))
            )
    }

    /// Asks Chromium to close, waits a little, then kills what is left of its process tree.
    pub(crate) async fn close(mut self) {
        let tree = self.pid.map(process_tree).unwrap_or_default();
        if self.alive() {
            let _ = tokio::time::timeout(Duration::from_secs(2), self.browser.close()).await;
        }
        if !exited_within(&mut self.child, Duration::from_secs(3)).await {
            stop(&mut self.child).await;
        }
        self.handler.abort();
        // Helpers (renderer, zygote) normally exit with the browser; make sure.
        for pid in tree.into_iter().skip(1) {
            if let Ok(pid) = i32::try_from(pid) {
                // SAFETY: kill(2) has no memory effects; a pid that is gone yields ESRCH.
                unsafe {
                    libc::kill(pid, libc::SIGKILL);
                }
            }
        }
    }
}

impl Drop for Launched {
    /// A browser dropped without `close` (a panic, a cancelled launch) is killed, not
    /// left running.
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// `root` and its descendants (Linux `/proc`; elsewhere just `root`).
pub(crate) fn process_tree(root: u32) -> Vec<u32> {
    let mut parents: Vec<(u32, u32)> = Vec::new();
    if let Ok(dir) = std::fs::read_dir("/proc") {
        for entry in dir.flatten() {
            let Some(pid) = entry
                .file_name()
                .to_str()
                .and_then(|s| s.parse::<u32>().ok())
            else {
                continue;
            };
            if let Some(ppid) = parent_of(pid) {
                parents.push((pid, ppid));
            }
        }
    }
    let mut tree = vec![root];
    let mut i = 0;
    while i < tree.len() {
        let p = tree[i];
        tree.extend(parents.iter().filter(|(_, pp)| *pp == p).map(|(c, _)| *c));
        i += 1;
    }
    tree
}

fn parent_of(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name is in parentheses and may hold spaces: parse after the last ')'.
    let rest = &stat[stat.rfind(')')? + 2..];
    rest.split(' ').nth(1)?.parse().ok()
}

/// Memory of `pids` in bytes: the proportional set size (shared pages split between the
/// processes sharing them, Linux `/proc/<pid>/smaps_rollup`), or the resident size where
/// that is not readable.
pub(crate) fn resident_bytes(pids: &[u32]) -> u64 {
    let field = |text: &str, name: &str| {
        text.lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|kb| kb.parse::<u64>().ok())
    };
    pids.iter()
        .filter_map(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/smaps_rollup"))
                .ok()
                .and_then(|s| field(&s, "Pss:"))
                .or_else(|| {
                    std::fs::read_to_string(format!("/proc/{pid}/status"))
                        .ok()
                        .and_then(|s| field(&s, "VmRSS:"))
                })
        })
        .sum::<u64>()
        * 1024
}
