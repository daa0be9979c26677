//! Markdown files with YAML front matter — agent files, skills, custom commands: the
//! `---` block is split from the body, and the block is read into the caller's settings
//! type. Errors are one line, said for a person fixing the file (`invalid front matter: …
//! at line 2, column 7`, with the file's own line numbers).

use serde::de::DeserializeOwned;

/// `---\n<yaml>\n---\n<body>` as `(yaml, body)`; a file without front matter is all body.
/// A leading byte-order mark is skipped.
pub fn split_front_matter(text: &str) -> Result<(&str, &str), String> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let Some(rest) = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))
    else {
        return Ok(("", text));
    };
    let mut at = 0;
    for line in rest.split_inclusive('\n') {
        if line.trim_end() == "---" {
            return Ok((&rest[..at], &rest[at + line.len()..]));
        }
        at += line.len();
    }
    Err("the front matter opened with `---` is never closed by a `---` line".into())
}

/// Reads a front matter block into `T` (`T::default()` when it is empty).
pub fn parse_front_matter<T: DeserializeOwned + Default>(front: &str) -> Result<T, String> {
    if front.trim().is_empty() {
        return Ok(T::default());
    }
    // A leading newline stands for the opening `---`, so error lines match the file's.
    serde_saphyr::from_str(&format!("\n{front}")).map_err(|e| {
        let plain = e.without_snippet().to_string();
        let plain: Vec<&str> = plain
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect();
        format!("invalid front matter: {}", plain.join("; "))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_and_says_what_is_wrong() {
        assert_eq!(
            split_front_matter("\u{feff}---\r\na: 1\n---\nbody").unwrap(),
            ("a: 1\n", "body")
        );
        assert_eq!(split_front_matter("no block").unwrap(), ("", "no block"));
        assert_eq!(
            split_front_matter("---\na: 1\n").unwrap_err(),
            "the front matter opened with `---` is never closed by a `---` line"
        );
        #[derive(serde::Deserialize, Default, Debug)]
        struct S {
            #[allow(dead_code)]
            a: u32,
        }
        let e = parse_front_matter::<S>("a: x\n").unwrap_err();
        assert!(
            e.starts_with("invalid front matter: ") && e.contains("line 2"),
            "{e}"
        );
        assert!(parse_front_matter::<S>("  \n").is_ok());
    }
}
