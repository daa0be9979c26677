//! The sandbox tests run with: Podcode's default (`workspace-write`, network off), its
//! helper being the `podcode-sandbox-exec` binary of the `podcode-sandbox` crate, built
//! once per test process with the same cargo and target directory as the tests
//! (`PODCODE_SANDBOX_HELPER` names another helper, e.g. the `podcode` binary).

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use podcode_sandbox::{Mode, Sandbox, Settings};

/// The helper binary, built on first use.
pub fn sandbox_helper() -> PathBuf {
    static HELPER: OnceLock<PathBuf> = OnceLock::new();
    HELPER.get_or_init(build_helper).clone()
}

fn build_helper() -> PathBuf {
    if let Some(path) = std::env::var_os("PODCODE_SANDBOX_HELPER") {
        return PathBuf::from(path);
    }
    // Test binaries live in <target>/<profile>/deps/.
    let exe = std::env::current_exe().expect("test harness: current_exe");
    let profile_dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("test harness: target dir");
    let target_dir = profile_dir.parent().expect("test harness: target dir");
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = std::process::Command::new(cargo);
    cmd.args([
        "build",
        "--quiet",
        "-p",
        "podcode-sandbox",
        "--bin",
        "podcode-sandbox-exec",
    ])
    .arg("--target-dir")
    .arg(target_dir)
    .current_dir(env!("CARGO_MANIFEST_DIR"));
    if profile_dir.file_name().is_some_and(|n| n == "release") {
        cmd.arg("--release");
    }
    let status = cmd
        .status()
        .expect("test harness: running cargo to build the sandbox helper");
    assert!(
        status.success(),
        "test harness: building podcode-sandbox-exec failed"
    );
    profile_dir.join("podcode-sandbox-exec")
}

/// Podcode's default sandbox for tests under `data_dir` (spill dir and temp dirs there).
pub fn default_sandbox(data_dir: &Path, spill_dir: &Path) -> Sandbox {
    Sandbox::new(
        sandbox_helper(),
        Settings {
            mode: Mode::WorkspaceWrite,
            network: false,
        },
    )
    .with_writable([spill_dir.to_path_buf()])
    .with_temp_root(data_dir.join("tmp"))
}
