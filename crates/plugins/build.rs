//! Embeds the JS plugin host (everything under `js/` except tests and node_modules) into
//! the binary as `(relative path, bytes)` pairs, so the installed `podcode` is self-contained.

use std::hash::{DefaultHasher, Hash, Hasher};
use std::path::{Path, PathBuf};

fn collect(dir: &Path, root: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name();
        if name == "node_modules" || name == "test" || name.to_string_lossy().starts_with('.') {
            continue;
        }
        if path.is_dir() {
            collect(&path, root, out);
        } else if let Ok(rel) = path.strip_prefix(root) {
            out.push(rel.to_path_buf());
        }
    }
}

/// Cargo sets both variables for every build script; a missing one (or an unwritable
/// `OUT_DIR`) fails the build with the error instead of a panic.
fn main() -> Result<(), Box<dyn std::error::Error>> {
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR")?).join("js");
    println!("cargo:rerun-if-changed=js");
    let mut files = Vec::new();
    collect(&root, &root, &mut files);
    files.sort();
    let mut code = String::from(
        "/// The JS plugin host's files, embedded at build time.\npub const HOST_FILES: &[(&str, &[u8])] = &[\n",
    );
    // Their version, hashed here: hashing ~900 KB at every start sat on the path to the
    // first model request.
    let mut version = DefaultHasher::new();
    for rel in &files {
        let abs = root.join(rel);
        println!("cargo:rerun-if-changed={}", abs.display());
        rel.to_string_lossy().hash(&mut version);
        std::fs::read(&abs)?.hash(&mut version);
        code.push_str(&format!(
            "    ({:?}, include_bytes!({:?})),\n",
            rel.to_string_lossy(),
            abs.to_string_lossy()
        ));
    }
    code.push_str("];\n");
    code.push_str(&format!(
        "/// A hash of `HOST_FILES` (names and bytes).\npub const HOST_VERSION: u64 = {:#018x};\n",
        version.finish()
    ));
    let out = PathBuf::from(std::env::var("OUT_DIR")?).join("host_files.rs");
    std::fs::write(out, code)?;
    Ok(())
}
