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

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let web = manifest.join("web");
    println!("cargo:rerun-if-changed=web");
    let mut found = Vec::new();
    files(&web, &mut found);
    let mut code = String::from("pub static ASSETS: &[(&str, &[u8])] = &[\n");
    for path in &found {
        let rel = path.strip_prefix(&web).expect("under web/");
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
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets it")).join("assets.rs");
    std::fs::write(out, code).expect("OUT_DIR is writable");
}
