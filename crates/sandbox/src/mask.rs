//! Secrets: the values of the environment variables that hold provider API keys. They are
//! removed from sandboxed commands' and plugins' environments (`Sandbox::hidden_env`) and
//! masked in every tool output before the model sees it (`mask_secrets`, called by the
//! pipeline's output stage), so a key that leaks anyway (a script reading a dotfile, a
//! command run with `full`) still never reaches the model.

use std::borrow::Cow;

/// Makes this process non-dumpable: its `/proc/<pid>/environ`, `mem` and the like become
/// readable only with CAP_SYS_PTRACE, and it cannot be traced by other processes of the
/// user. The second line of defense for the keys and the server token in Podcode's own
/// environment and memory, for systems where the sandbox gets no PID namespace (the first
/// line). Children are unaffected (`exec` resets it).
pub fn hide_own_memory() {
    // SAFETY: prctl with plain integer arguments.
    unsafe { libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0) };
}

/// Values shorter than this are not masked: they would match ordinary text.
pub const MIN_SECRET_LEN: usize = 8;

/// A secret as it is masked: the variable's name and its value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Secret {
    /// The environment variable the secret came from (named in the mask).
    pub name: String,
    /// The secret value to find in output.
    pub value: String,
}

impl Secret {
    /// What replaces the value in output.
    pub fn placeholder(&self) -> String {
        format!("[{} hidden]", self.name)
    }
}

/// The current values of `names` that are set and long enough to mask.
pub fn secrets_from_env<'a>(names: impl IntoIterator<Item = &'a str>) -> Vec<Secret> {
    let mut out: Vec<Secret> = Vec::new();
    for name in names {
        if let Ok(value) = std::env::var(name)
            && value.trim().len() >= MIN_SECRET_LEN
            && !out.iter().any(|s| s.value == value)
        {
            out.push(Secret {
                name: name.to_string(),
                value: value.trim().to_string(),
            });
        }
    }
    out
}

/// `text` with every secret value replaced by its placeholder.
pub fn mask_secrets<'t>(text: &'t str, secrets: &[Secret]) -> Cow<'t, str> {
    let mut out = Cow::Borrowed(text);
    for s in secrets {
        if s.value.len() >= MIN_SECRET_LEN && out.contains(&s.value) {
            out = Cow::Owned(out.replace(&s.value, &s.placeholder()));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_replaced_by_the_variable_name() {
        let secrets = vec![Secret {
            name: "OPENAI_API_KEY".into(),
            value: "sk-test-1234567890".into(),
        }];
        assert_eq!(
            mask_secrets("OPENAI_API_KEY=sk-test-1234567890\nok", &secrets),
            "OPENAI_API_KEY=[OPENAI_API_KEY hidden]\nok"
        );
        assert!(matches!(
            mask_secrets("nothing here", &secrets),
            Cow::Borrowed(_)
        ));
        let short = vec![Secret {
            name: "X".into(),
            value: "a".into(),
        }];
        assert_eq!(mask_secrets("banana", &short), "banana");
    }
}
