//! `ConfigError`: why a config file could not be used, phrased for the user and always naming
//! the file, and for parse errors the 1-based line, column and (when known) the dotted key.

use std::path::PathBuf;

/// A config file that could not be read or understood. Unknown keys are never errors; they are
/// reported as warnings by `load`.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// TOML syntax error, or a value of the wrong type or an unknown variant.
    #[error("{}:{line}:{column}: {message}{}", file.display(), key_suffix(key))]
    Parse {
        /// The file that failed to parse.
        file: PathBuf,
        /// 1-based line.
        line: usize,
        /// 1-based column, counted in characters.
        column: usize,
        /// Dotted path of the offending key, e.g. `tool_output.max_lines` or
        /// `permission[0].action`; `None` for syntax errors.
        key: Option<String>,
        /// What is wrong, from the TOML/JSON parser or the type check.
        message: String,
    },
    /// A data file Podcode keeps (the credentials store) that cannot be used as it is.
    #[error("{}: {message}", file.display())]
    Invalid {
        /// The file.
        file: PathBuf,
        /// What is wrong with it.
        message: String,
    },
    /// The file exists but could not be read.
    #[error("{}: {source}", file.display())]
    Io {
        /// The file that could not be read.
        file: PathBuf,
        /// The read error.
        #[source]
        source: std::io::Error,
    },
}

fn key_suffix(key: &Option<String>) -> String {
    key.as_ref()
        .map(|k| format!(" (key `{k}`)"))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_with_and_without_key() {
        let with = ConfigError::Parse {
            file: PathBuf::from("/c/config.toml"),
            line: 3,
            column: 13,
            key: Some("tool_output.max_lines".into()),
            message: "invalid type".into(),
        };
        assert_eq!(
            with.to_string(),
            "/c/config.toml:3:13: invalid type (key `tool_output.max_lines`)"
        );
        let without = ConfigError::Parse {
            file: PathBuf::from("c.toml"),
            line: 1,
            column: 2,
            key: None,
            message: "bad".into(),
        };
        assert_eq!(without.to_string(), "c.toml:1:2: bad");
    }
}
