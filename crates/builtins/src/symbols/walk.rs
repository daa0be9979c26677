//! Collecting symbols from files: one file, or a folder walked in parallel with the same
//! `ignore` walker the search tools use (ignore files honoured, `.git` never entered).
//!
//! Each walker thread keeps its own parsers. For every file it reads the metadata the walk
//! already has, asks the cache for `(path, mtime, size)` and only on a miss reads and
//! parses the file, putting the result back into the cache. Files in other languages and
//! files over `MAX_FILE_BYTES` (generated or minified code) are counted, not parsed.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use ignore::{DirEntry, ParallelVisitor, ParallelVisitorBuilder, WalkState};
use tokio_util::sync::CancellationToken;

use super::cache::{Stamp, SymbolCache};
use super::lang::{Lang, Parsers, Symbol};
use ignore::WalkBuilder;

/// Files larger than this are skipped (and counted).
pub(crate) const MAX_FILE_BYTES: u64 = 1024 * 1024;

/// What became of one file.
pub(crate) enum FileOutcome {
    Symbols {
        symbols: Arc<Vec<Symbol>>,
        parsed: bool,
    },
    Unsupported,
    TooLarge,
    Unreadable,
}

/// Reads one file's symbols, from the cache when its stamp is unchanged.
pub(crate) fn file_symbols(
    path: &Path,
    meta: &std::fs::Metadata,
    parsers: &mut Parsers,
    cache: &SymbolCache,
) -> FileOutcome {
    let Some(lang) = Lang::from_path(path) else {
        return FileOutcome::Unsupported;
    };
    if meta.len() > MAX_FILE_BYTES {
        return FileOutcome::TooLarge;
    }
    let stamp = Stamp::of(meta);
    if let Some(symbols) = stamp.and_then(|s| cache.get(path, s)) {
        return FileOutcome::Symbols {
            symbols,
            parsed: false,
        };
    }
    let Ok(source) = std::fs::read(path) else {
        return FileOutcome::Unreadable;
    };
    let Some(symbols) = parsers.extract(lang, &source) else {
        return FileOutcome::Unreadable;
    };
    let symbols = Arc::new(symbols);
    if let Some(stamp) = stamp {
        cache.put(path.to_path_buf(), stamp, symbols.clone());
    }
    FileOutcome::Symbols {
        symbols,
        parsed: true,
    }
}

/// Everything a folder walk found.
#[derive(Default)]
pub(crate) struct Scan {
    /// Files with at least one symbol, sorted by path.
    pub(crate) files: Vec<(PathBuf, Arc<Vec<Symbol>>)>,
    /// Every file in a supported language, with symbols or not.
    pub(crate) seen: HashSet<PathBuf>,
    pub(crate) unsupported: usize,
    pub(crate) too_large: usize,
    pub(crate) parsed: usize,
}

impl Scan {
    fn absorb(&mut self, other: Scan) {
        self.files.extend(other.files);
        self.seen.extend(other.seen);
        self.unsupported += other.unsupported;
        self.too_large += other.too_large;
        self.parsed += other.parsed;
    }
}

pub(crate) fn scan_folder(
    walk: WalkBuilder,
    cache: &SymbolCache,
    abort: &CancellationToken,
) -> Scan {
    let shared = Mutex::new(Scan::default());
    let mut builder = Builder {
        cache,
        abort,
        shared: &shared,
    };
    walk.build_parallel().visit(&mut builder);
    let mut scan = shared.into_inner().unwrap_or_else(|p| p.into_inner());
    scan.files.sort_by(|a, b| a.0.cmp(&b.0));
    scan
}

struct Builder<'a> {
    cache: &'a SymbolCache,
    abort: &'a CancellationToken,
    shared: &'a Mutex<Scan>,
}

impl<'s> ParallelVisitorBuilder<'s> for Builder<'s> {
    fn build(&mut self) -> Box<dyn ParallelVisitor + 's> {
        Box::new(Visitor {
            cache: self.cache,
            abort: self.abort,
            shared: self.shared,
            parsers: Parsers::default(),
            scan: Scan::default(),
        })
    }
}

struct Visitor<'a> {
    cache: &'a SymbolCache,
    abort: &'a CancellationToken,
    shared: &'a Mutex<Scan>,
    parsers: Parsers,
    scan: Scan,
}

impl ParallelVisitor for Visitor<'_> {
    fn visit(&mut self, entry: Result<DirEntry, ignore::Error>) -> WalkState {
        if self.abort.is_cancelled() {
            return WalkState::Quit;
        }
        let Ok(entry) = entry else {
            return WalkState::Continue;
        };
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            return WalkState::Continue;
        }
        let Ok(meta) = entry.metadata() else {
            return WalkState::Continue;
        };
        match file_symbols(entry.path(), &meta, &mut self.parsers, self.cache) {
            FileOutcome::Symbols { symbols, parsed } => {
                self.scan.parsed += usize::from(parsed);
                let path = entry.into_path();
                self.scan.seen.insert(path.clone());
                if !symbols.is_empty() {
                    self.scan.files.push((path, symbols));
                }
            }
            FileOutcome::Unsupported => self.scan.unsupported += 1,
            FileOutcome::TooLarge => self.scan.too_large += 1,
            FileOutcome::Unreadable => {}
        }
        WalkState::Continue
    }
}

impl Drop for Visitor<'_> {
    fn drop(&mut self) {
        let scan = std::mem::take(&mut self.scan);
        if let Ok(mut shared) = self.shared.lock() {
            shared.absorb(scan);
        }
    }
}
