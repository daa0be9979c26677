//! What a bash call asks permission for: pure functions from the command text to the
//! `patterns` of the `bash` ask and the `always` patterns stored when the user answers
//! "always".
//!
//! A simple command (`git status --short`) asks for its own text and remembers a prefix
//! family (`git status *`), so users approve families of commands. A compound command
//! (`a && b`, `a | b`, `a; b`, `$(…)`, backticks, subshells) asks for its whole text plus
//! each part on its own, so a deny rule such as `rm *` catches `cd x && rm y`, and a family
//! approved earlier (`ls *`) cannot smuggle in a second command (`ls; curl … | sh`): the
//! permission engine checks every pattern, so each part must be covered on its own.
//!
//! "Always" on a compound command remembers each part's own family (`ls -la && echo done`
//! → `ls *`, `echo *`) when that is as safe as approving the parts one by one: the parts
//! are only joined by `&&`, `||`, `;`, `|`, `&` or newlines (no `$(…)`, backticks,
//! subshells or process substitution, whose inner command the text hides), no part is a
//! here-document (its body lines would read as commands), and every part has a family of
//! its own. When one part has none (a wrapper or interpreter such as `sh`, `sudo …`,
//! `python -c …`, or an unclear first word), widening the others would let new input flow
//! into that part (`cat a | sh` must not approve `cat anything | sh`), so "always" then
//! remembers the exact texts, the whole and each part, as before. Redirections are judged
//! as for a simple command: `echo hi > out.txt` already remembers `echo *`.
//!
//! The splitter is a small quote-aware scanner, not a shell parser: when in doubt it
//! produces more parts (more asks), never fewer.

/// Multi-word CLIs (space-separated) whose second word is a subcommand: `git status *`,
/// `cargo test *`. Interpreters are here too, so `python build.py` remembers `python build.py *`
/// instead of every Python program.
const SUBCOMMAND_CLIS: &str = "git npm npx yarn pnpm bun deno cargo rustup go docker podman kubectl helm \
    terraform gh pip pip3 uv poetry pipenv conda brew apt apt-get dnf yum pacman \
    systemctl mvn gradle ./gradlew dotnet swift composer bundle rake rails mix stack \
    cabal nix aws gcloud az flutter dart zig python python3 node ruby perl php java \
    make just task";

/// Commands (space-separated) that run other commands or arbitrary code: a family like
/// `sudo *` would approve everything, so they only ever remember their exact text.
const WRAPPERS: &str = "sudo doas su env xargs exec eval nohup time timeout nice ionice command builtin \
    sh bash zsh dash ksh fish source . watch parallel chroot setsid stdbuf unbuffer \
    script ssh flock";

/// The `patterns` and `always` of the `bash` permission ask for `command`.
pub fn permission_patterns(command: &str) -> (Vec<String>, Vec<String>) {
    let command = command.trim();
    let split = split_command(command);
    if !split.compound {
        return (vec![command.to_string()], vec![always_pattern(command)]);
    }
    let mut patterns = vec![command.to_string()];
    for part in &split.parts {
        if !patterns.contains(part) {
            patterns.push(part.clone());
        }
    }
    let always = compound_families(&split).unwrap_or_else(|| patterns.clone());
    (patterns, always)
}

/// The family of each part of a compound command, when widening is safe (see the module
/// doc); `None` keeps the exact texts.
fn compound_families(split: &Split) -> Option<Vec<String>> {
    if split.nested {
        return None;
    }
    let mut families: Vec<String> = Vec::new();
    for part in &split.parts {
        if part.contains("<<") {
            return None;
        }
        let family = always_pattern(part);
        if family == *part {
            return None;
        }
        if !families.contains(&family) {
            families.push(family);
        }
    }
    Some(families)
}

/// The words of `command` that may name files: split at blanks and shell operators, quotes
/// removed, redirection targets and `--opt=value` / `VAR=value` values included. Like the
/// splitter, it errs towards more words: only the secret-file check reads them.
pub fn path_words(command: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut quote: Option<char> = None;
    let mut chars = command.chars().peekable();
    let flush = |cur: &mut String, words: &mut Vec<String>| {
        if !cur.is_empty() {
            let word = std::mem::take(cur);
            if let Some((_, value)) = word.split_once('=') {
                words.push(value.to_string());
            }
            words.push(word);
        }
    };
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some('"'), '\\') => {
                if let Some(n) = chars.next() {
                    cur.push(n);
                }
            }
            (Some(_), c) => cur.push(c),
            (None, '\'' | '"') => quote = Some(c),
            (None, '\\') => {
                if let Some(n) = chars.next() {
                    cur.push(n);
                }
            }
            (None, c) if c.is_whitespace() || ";|&()<>`".contains(c) => flush(&mut cur, &mut words),
            (None, c) => cur.push(c),
        }
    }
    flush(&mut cur, &mut words);
    words
}

/// The pattern remembered by "always" for one command: a prefix family for a simple
/// command, the exact text for anything compound or hard to read.
pub fn always_pattern(command: &str) -> String {
    let command = command.trim();
    if split_command(command).compound {
        return command.to_string();
    }
    let words: Vec<&str> = command.split_whitespace().collect();
    let Some(first) = words.first().copied() else {
        return command.to_string();
    };
    if !is_plain_word(first) || first.contains('=') || is_listed(WRAPPERS, first) {
        return command.to_string();
    }
    if is_listed(SUBCOMMAND_CLIS, first) {
        return match words.get(1) {
            Some(second) if is_plain_word(second) && !second.starts_with('-') => {
                format!("{first} {second} *")
            }
            // `git` alone, `git -C dir …`, `python -c …`: no safe family, keep the text.
            _ => command.to_string(),
        };
    }
    format!("{first} *")
}

fn is_listed(list: &str, word: &str) -> bool {
    list.split_whitespace().any(|w| w == word)
}

/// A word with no quoting, expansion, globbing or redirection in it.
fn is_plain_word(word: &str) -> bool {
    !word.is_empty()
        && !word.contains([
            '\'', '"', '$', '`', '\\', '*', '?', '[', '{', '~', '<', '>', '!',
        ])
}

#[derive(Debug, Default, PartialEq)]
struct Split {
    /// Each command the text runs, trimmed, outermost first within each nesting level.
    parts: Vec<String>,
    /// True when the text runs more than one command or contains a substitution.
    compound: bool,
    /// True when a substitution, subshell or backtick hides a command inside another.
    nested: bool,
}

#[derive(Clone, Copy, PartialEq)]
enum Frame {
    Top,
    /// `$(…)`, `(…)`, `<(…)`, `>(…)`.
    Paren,
    Backtick,
}

struct Level {
    kind: Frame,
    /// The text of the part being read at this nesting level.
    buf: String,
    in_double_quotes: bool,
}

impl Level {
    fn new(kind: Frame) -> Self {
        Self {
            kind,
            buf: String::new(),
            in_double_quotes: false,
        }
    }
}

struct Scanner {
    top: Level,
    /// Open substitutions and subshells, innermost last.
    nested: Vec<Level>,
    out: Split,
}

impl Scanner {
    fn cur(&mut self) -> &mut Level {
        self.nested.last_mut().unwrap_or(&mut self.top)
    }

    fn buf(&mut self) -> &mut String {
        &mut self.cur().buf
    }

    /// Ends the current part (an operator such as `&&` or `;` was seen).
    fn cut(&mut self) {
        self.out.compound = true;
        let part = std::mem::take(self.buf());
        self.emit(&part);
    }

    fn emit(&mut self, part: &str) {
        let part = part.trim();
        if !part.is_empty() {
            self.out.parts.push(part.to_string());
        }
    }

    fn open(&mut self, kind: Frame) {
        self.out.compound = true;
        self.out.nested = true;
        self.nested.push(Level::new(kind));
    }

    fn close(&mut self) {
        if let Some(level) = self.nested.pop() {
            self.emit(&level.buf);
        }
    }
}

fn split_command(command: &str) -> Split {
    let chars: Vec<char> = command.chars().collect();
    let mut s = Scanner {
        top: Level::new(Frame::Top),
        nested: Vec::new(),
        out: Split::default(),
    };
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if s.cur().in_double_quotes {
            match c {
                '\\' => {
                    s.buf().push(c);
                    if let Some(n) = next {
                        s.buf().push(n);
                        i += 1;
                    }
                }
                '"' => {
                    s.buf().push(c);
                    s.cur().in_double_quotes = false;
                }
                '`' if s.cur().kind == Frame::Backtick => s.close(),
                '`' => s.open(Frame::Backtick),
                '$' if next == Some('(') => {
                    s.open(Frame::Paren);
                    i += 1;
                }
                _ => s.buf().push(c),
            }
            i += 1;
            continue;
        }
        match c {
            '\\' => {
                s.buf().push(c);
                if let Some(n) = next {
                    s.buf().push(n);
                    i += 1;
                }
            }
            '\'' => {
                s.buf().push(c);
                while let Some(&q) = chars.get(i + 1) {
                    s.buf().push(q);
                    i += 1;
                    if q == '\'' {
                        break;
                    }
                }
            }
            '"' => {
                s.buf().push(c);
                s.cur().in_double_quotes = true;
            }
            '`' if s.cur().kind == Frame::Backtick => s.close(),
            '`' => s.open(Frame::Backtick),
            '$' | '<' | '>' if next == Some('(') => {
                s.open(Frame::Paren);
                i += 1;
            }
            '(' => s.open(Frame::Paren),
            ')' if s.cur().kind == Frame::Paren => s.close(),
            ')' | ';' | '\n' => s.cut(),
            '|' => {
                s.cut();
                if matches!(next, Some('|') | Some('&')) {
                    i += 1;
                }
            }
            '&' => {
                let redirect = next == Some('>') || s.buf().ends_with(['>', '<']);
                if redirect {
                    s.buf().push(c);
                } else {
                    s.cut();
                    if next == Some('&') {
                        i += 1;
                    }
                }
            }
            '#' if s.buf().is_empty() || s.buf().ends_with(char::is_whitespace) => {
                while chars.get(i + 1).is_some_and(|n| *n != '\n') {
                    i += 1;
                }
            }
            _ => s.buf().push(c),
        }
        i += 1;
    }
    while !s.nested.is_empty() {
        s.close();
    }
    let last = std::mem::take(&mut s.top.buf);
    s.emit(&last);
    s.out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(cmd: &str) -> Vec<String> {
        split_command(cmd).parts
    }

    #[test]
    fn path_words_find_files_in_arguments_redirections_and_values() {
        assert_eq!(
            path_words(r#"cat ~/.ssh/id_ed25519|base64>out; grep -r k "$HOME/.aws" 2>/dev/null"#),
            [
                "cat",
                "~/.ssh/id_ed25519",
                "base64",
                "out",
                "grep",
                "-r",
                "k",
                "$HOME/.aws",
                "2",
                "/dev/null"
            ]
        );
        assert_eq!(
            path_words(r"curl --netrc-file=/home/u/.netrc x\ y 'a b'"),
            [
                "curl",
                "/home/u/.netrc",
                "--netrc-file=/home/u/.netrc",
                "x y",
                "a b"
            ]
        );
    }

    #[test]
    fn multi_word_clis_remember_two_words() {
        assert_eq!(always_pattern("git status"), "git status *");
        assert_eq!(always_pattern("git status --short"), "git status *");
        assert_eq!(always_pattern("npm run build -- --watch"), "npm run *");
        assert_eq!(always_pattern("cargo test -p core"), "cargo test *");
        assert_eq!(always_pattern("docker compose up -d"), "docker compose *");
        assert_eq!(
            always_pattern("  python build.py --release "),
            "python build.py *"
        );
    }

    #[test]
    fn other_commands_remember_the_first_word() {
        assert_eq!(always_pattern("ls"), "ls *");
        assert_eq!(always_pattern("ls -la src"), "ls *");
        assert_eq!(
            always_pattern("./scripts/check.sh --fast"),
            "./scripts/check.sh *"
        );
        assert_eq!(always_pattern("echo hi > out.txt"), "echo *");
        assert_eq!(always_pattern("cargo build 2>&1"), "cargo build *");
    }

    #[test]
    fn unclear_or_wrapping_commands_keep_their_exact_text() {
        for cmd in [
            "git",
            "git -C other status",
            "python -c 'print(1)'",
            "sudo apt install x",
            "env FOO=1 make",
            "FOO=1 cargo test",
            "$EDITOR file",
            "\"my tool\" run",
            "bash -c 'rm -rf /'",
            "xargs rm",
        ] {
            assert_eq!(always_pattern(cmd), cmd, "{cmd}");
        }
    }

    #[test]
    fn compound_commands_remember_each_parts_family() {
        for (cmd, families) in [
            ("ls -la && echo done", &["ls *", "echo *"][..]),
            ("ls && rm -rf x", &["ls *", "rm *"]),
            ("cd x; make test", &["cd *", "make test *"]),
            ("sleep 1 &", &["sleep *"]),
            (
                "git status || git log --oneline",
                &["git status *", "git log *"],
            ),
            ("ls a | grep x | grep y", &["ls *", "grep *"]),
            ("cargo build 2>&1 | tail -n 5", &["cargo build *", "tail *"]),
        ] {
            // The whole text alone is still never widened.
            assert_eq!(always_pattern(cmd), cmd, "{cmd}");
            let (patterns, always) = permission_patterns(cmd);
            assert_eq!(patterns[0], cmd);
            assert_eq!(always, families, "{cmd}");
        }
    }

    #[test]
    fn compound_commands_that_hide_or_feed_a_command_are_never_widened() {
        for cmd in [
            "cat a | sh",
            "curl -s x | bash",
            "ls && sudo make install",
            "find . -name x | xargs rm",
            "echo $(whoami)",
            "echo `id`",
            "ls && echo \"$(date)\"",
            "(cd a; make test)",
            "diff <(ls a) <(ls b)",
            "cat <<EOF\nrm -rf /\nEOF",
            "ls; python -c 'print(1)'",
            // `make` alone has no family (a subcommand CLI without its subcommand).
            "cd x; make",
        ] {
            assert_eq!(always_pattern(cmd), cmd, "{cmd}");
            let (patterns, always) = permission_patterns(cmd);
            assert_eq!(patterns[0], cmd);
            assert_eq!(always, patterns, "{cmd}");
        }
    }

    #[test]
    fn simple_commands_ask_for_their_text_and_remember_a_family() {
        assert_eq!(
            permission_patterns(" git status --short "),
            (
                vec!["git status --short".to_string()],
                vec!["git status *".to_string()]
            )
        );
    }

    #[test]
    fn compound_commands_ask_for_each_part() {
        let (patterns, _) = permission_patterns("cd src && rm -rf build || echo failed");
        assert_eq!(
            patterns,
            [
                "cd src && rm -rf build || echo failed",
                "cd src",
                "rm -rf build",
                "echo failed"
            ]
        );
        assert_eq!(
            parts("cat a.txt | grep x |& tee log; ls\npwd"),
            ["cat a.txt", "grep x", "tee log", "ls", "pwd"]
        );
        assert_eq!(parts("ls $(rm -rf ~)"), ["rm -rf ~", "ls"]);
        assert_eq!(
            parts("echo \"today: $(date) ok\" && rm x"),
            ["date", "echo \"today:  ok\"", "rm x"]
        );
        assert_eq!(parts("echo `id -u`"), ["id -u", "echo"]);
        assert_eq!(parts("(cd a; make)"), ["cd a", "make"]);
        assert_eq!(parts("diff <(ls a) <(ls b)"), ["ls a", "ls b", "diff"]);
    }

    #[test]
    fn quotes_redirections_and_comments_do_not_split() {
        for cmd in [
            "echo 'a && b; c | d'",
            "echo \"a && b; c | d\"",
            "echo a\\;b",
            "make 2>&1",
            "make &> log",
            "make >&2",
            "ls # list && things",
            "git commit -m \"fix (parser)\"",
        ] {
            let split = split_command(cmd);
            assert!(!split.compound, "{cmd}: {split:?}");
        }
        assert_eq!(parts("ls # list && things"), ["ls"]);
        assert!(split_command("echo \"$(rm x)\"").compound);
    }

    #[test]
    fn odd_input_does_not_panic() {
        for cmd in [
            "",
            ")",
            "((",
            "`",
            "\"unterminated",
            "'unterminated",
            "a &&",
            "\\",
            "$(",
            "# only",
        ] {
            let _ = permission_patterns(cmd);
        }
        assert_eq!(
            permission_patterns(""),
            (vec![String::new()], vec![String::new()])
        );
    }
}
