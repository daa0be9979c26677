//! Embeds the web page: every file under `web/` becomes an entry of `ASSETS` (path relative
//! to `web/`, bytes), so the page ships inside the binary with no step at install and a new
//! file needs no Rust change.

use std::path::{Path, PathBuf};

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.flatten().map(|e| e.path()).collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            files(&path, out);
        } else if path.is_file() {
            out.push(path);
        }
    }
}

/// Cargo sets both variables for every build script; a missing one (or an unwritable
/// `OUT_DIR`) fails the build with the error instead of a panic.
fn main() -> Result<(), Box<dyn std::error::Error>> {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR")?);
    let web = manifest.join("web");
    println!("cargo:rerun-if-changed=web");
    let mut found = Vec::new();
    files(&web, &mut found);
    let mut code = String::from(
        "/// The web page's files: path relative to `web/`, and bytes.\npub static ASSETS: &[(&str, &[u8])] = &[\n",
    );
    for path in &found {
        let rel = path.strip_prefix(&web)?;
        let rel = rel.to_string_lossy().replace('\\', "/");
        if rel.split('/').any(|seg| seg.starts_with('.')) {
            continue;
        }
        code.push_str(&format!(
            "    ({:?}, include_bytes!({:?})),\n",
            rel,
            path.display().to_string()
        ));
    }
    code.push_str("];\n");
    let out = PathBuf::from(std::env::var("OUT_DIR")?).join("assets.rs");
    std::fs::write(out, code)?;
    Ok(())
}
