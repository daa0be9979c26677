//! `podcode auth`: signing in to a model provider, listing and removing what is stored.
//!
//! A login runs a plugin's `auth` methods as opencode's `auth login` does — pick a method,
//! answer its prompts one at a time (the plugin decides which apply and checks each answer),
//! then either an API key comes back, or an OAuth login shows a URL and waits for the
//! plugin's callback (with a pasted code when the plugin asks for one). A provider no plugin
//! signs in for gets Podcode's own method: its API key. What a login returns is stored in
//! opencode's shapes in `<data>/auth.json`. The front end only asks and shows
//! ([`LoginPrompter`]; [`TerminalPrompter`] on stdin/stderr, keys typed unechoed); every
//! text of the flow is here.

use podcode_plugins::{AuthPrompt, AuthStep, PluginHooks};
use serde_json::{Value, json};

use crate::{Engine, EngineError};

/// What a login asks of the person at the terminal.
pub trait LoginPrompter {
    /// Picks one of `choices` (an index); `None` cancels.
    fn choose(&mut self, question: &str, choices: &[String]) -> Option<usize>;
    /// Asks for a line of text; `secret` answers are not echoed. `None` cancels.
    fn ask(&mut self, question: &str, secret: bool) -> Option<String>;
    /// Shows a line.
    fn say(&mut self, text: &str);
}

/// One provider `podcode auth list` shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuthListing {
    /// The provider's name.
    pub provider: String,
    /// What is stored: `api`, `oauth`, `wellknown`; `None` when nothing is.
    pub stored: Option<String>,
    /// The plugin file that signs in for it, when one does.
    pub plugin: Option<String>,
}

fn cancelled() -> EngineError {
    EngineError::Login("login cancelled; nothing was stored".into())
}

/// `podcode auth list` when nothing is stored and no plugin signs in anywhere.
pub const NOTHING_STORED: &str = "No credentials are stored and no plugin signs in to a provider. `podcode auth login PROVIDER` signs in (or stores an API key).";

/// What `podcode auth` was asked to do.
pub enum AuthAction {
    /// Sign in to a provider (asked when `None`) with a plugin method's label (asked when
    /// several).
    Login(Option<String>, Option<String>),
    /// Stored credentials and the providers plugins sign in for.
    List,
    /// Forget a provider's credentials.
    Logout(String),
}

impl Engine {
    /// Does `action` (a login asks on the terminal); returns the lines to show.
    pub async fn auth_command(&self, action: AuthAction) -> Result<Vec<String>, EngineError> {
        let out = match action {
            AuthAction::Login(provider, method) => self
                .login(
                    provider.as_deref(),
                    method.as_deref(),
                    &mut TerminalPrompter,
                )
                .await
                .map(|done| vec![done]),
            AuthAction::List => self.auth_listing().await.map(|all| {
                if all.is_empty() {
                    return vec![NOTHING_STORED.to_string()];
                }
                all.iter().map(crate::list_text::auth_line).collect()
            }),
            AuthAction::Logout(provider) => self.logout(&provider).map(|done| vec![done]),
        };
        self.shutdown().await;
        out
    }

    async fn auth_hooks(&self) -> Option<std::sync::Arc<PluginHooks>> {
        self.tool_sets().await.plugins()?.state()?.hooks.clone()
    }

    /// Stored credentials and the providers plugins sign in for, by provider name.
    pub async fn auth_listing(&self) -> Result<Vec<AuthListing>, EngineError> {
        let stored = self.auth_store().all()?;
        let mut out: Vec<AuthListing> = stored
            .iter()
            .map(|(provider, entry)| AuthListing {
                provider: provider.clone(),
                stored: entry
                    .get("type")
                    .and_then(Value::as_str)
                    .map(str::to_string),
                plugin: None,
            })
            .collect();
        if let Some(hooks) = self.auth_hooks().await {
            for (file, hook) in hooks.auth_hooks() {
                let path = file.file.path.display().to_string();
                match out.iter_mut().find(|l| l.provider == hook.provider) {
                    Some(l) => l.plugin = l.plugin.clone().or(Some(path)),
                    None => out.push(AuthListing {
                        provider: hook.provider.clone(),
                        stored: None,
                        plugin: Some(path),
                    }),
                }
            }
        }
        Ok(out)
    }

    /// Removes what is stored for `provider`; says what happened.
    pub fn logout(&self, provider: &str) -> Result<String, EngineError> {
        Ok(if self.auth_store().remove(provider)? {
            format!("removed the credentials stored for {provider}")
        } else {
            format!("nothing is stored for {provider} (`podcode auth list` shows what is)")
        })
    }

    /// Signs in to `provider` (asked when `None`) with the method labelled `method` (asked
    /// when the plugin has several); returns what was stored, for the user.
    pub async fn login(
        &self,
        provider: Option<&str>,
        method: Option<&str>,
        p: &mut dyn LoginPrompter,
    ) -> Result<String, EngineError> {
        let hooks = self.auth_hooks().await;
        let provider = match provider {
            Some(name) => name.to_string(),
            None => self.pick_provider(hooks.as_deref(), p)?,
        };
        let plugin = hooks.as_ref().and_then(|h| {
            h.auth_hooks()
                .into_iter()
                .find(|(_, a)| a.provider == provider)
                .map(|(_, a)| a.clone())
        });
        let (Some(hooks), Some(auth)) = (hooks.as_ref(), plugin) else {
            if method.is_some() {
                return Err(EngineError::Login(format!(
                    "no plugin signs in for {provider}, so it has no login methods; leave out --method to store an API key"
                )));
            }
            return self.store_key(&provider, p);
        };
        let labels: Vec<String> = auth.methods.iter().map(|m| m.label.clone()).collect();
        let index = match method {
            Some(want) => labels
                .iter()
                .position(|l| l.eq_ignore_ascii_case(want))
                .ok_or_else(|| {
                    EngineError::Login(format!(
                        "unknown method \"{want}\" for {provider}. Available: {}",
                        labels.join(", ")
                    ))
                })?,
            None if labels.len() <= 1 => 0,
            None => p.choose("Login method", &labels).ok_or_else(cancelled)?,
        };
        if labels.is_empty() {
            return self.store_key(&provider, p);
        }
        let mut inputs = serde_json::Map::new();
        loop {
            let step = hooks
                .auth_step(&provider, index, &inputs)
                .await
                .map_err(|e| EngineError::Login(format!("the {provider} login failed: {e}")))?;
            match step {
                AuthStep::Prompt { prompt, error } => {
                    if let Some(error) = error {
                        p.say(&format!("{}: {error}", prompt.message));
                    }
                    let answer = ask_prompt(&prompt, p).ok_or_else(cancelled)?;
                    inputs.insert(prompt.key.clone(), Value::String(answer));
                }
                AuthStep::Result(result) => return self.store_result(&provider, result, p),
                AuthStep::OAuth {
                    id,
                    url,
                    instructions,
                    method,
                } => {
                    if !url.is_empty() {
                        p.say(&format!("Go to: {url}"));
                    }
                    if !instructions.is_empty() {
                        p.say(&instructions);
                    }
                    let code = if method == "code" {
                        Some(
                            p.ask("Paste the authorization code here", false)
                                .ok_or_else(cancelled)?,
                        )
                    } else {
                        p.say("Waiting for authorization…");
                        None
                    };
                    let result = hooks
                        .auth_callback(&provider, &id, code.as_deref())
                        .await
                        .map_err(|e| {
                            EngineError::Login(format!("the {provider} login failed: {e}"))
                        })?;
                    return self.store_result(&provider, result, p);
                }
            }
        }
    }

    fn pick_provider(
        &self,
        hooks: Option<&PluginHooks>,
        p: &mut dyn LoginPrompter,
    ) -> Result<String, EngineError> {
        let mut names: Vec<String> = hooks
            .map(|h| {
                h.auth_hooks()
                    .iter()
                    .map(|(_, a)| a.provider.clone())
                    .collect()
            })
            .unwrap_or_default();
        let others = podcode_providers::BUILTIN_PROVIDERS
            .iter()
            .filter(|b| b.api_key_env.is_some())
            .map(|b| b.name.to_string())
            .chain(self.config().provider.keys().cloned());
        for name in others {
            if !names.contains(&name) {
                names.push(name);
            }
        }
        let i = p.choose("Provider", &names).ok_or_else(cancelled)?;
        Ok(names[i].clone())
    }

    fn store_key(&self, provider: &str, p: &mut dyn LoginPrompter) -> Result<String, EngineError> {
        let key = p
            .ask(&format!("API key for {provider}"), true)
            .map(|k| k.trim().to_string())
            .filter(|k| !k.is_empty())
            .ok_or_else(cancelled)?;
        self.store_credentials(provider, json!({"type": "api", "key": key}))?;
        Ok(format!(
            "stored an API key for {provider} in {}",
            self.auth_store().file().display()
        ))
    }

    /// Stores a method's result as opencode does: OAuth tokens, or a key.
    fn store_result(
        &self,
        provider: &str,
        result: Value,
        p: &mut dyn LoginPrompter,
    ) -> Result<String, EngineError> {
        let target = result
            .get("provider")
            .and_then(Value::as_str)
            .unwrap_or(provider)
            .to_string();
        match result.get("type").and_then(Value::as_str) {
            Some("success") if result.get("refresh").is_some() => {
                let mut entry = result.clone();
                if let Some(o) = entry.as_object_mut() {
                    o.remove("provider");
                    o.insert("type".into(), json!("oauth"));
                }
                self.store_credentials(&target, entry)?;
                Ok(format!(
                    "signed in to {target} (OAuth tokens stored in {})",
                    self.auth_store().file().display()
                ))
            }
            Some("success") if result.get("key").is_some_and(Value::is_string) => {
                let mut entry = json!({"type": "api", "key": result["key"]});
                if let Some(m) = result.get("metadata") {
                    entry["metadata"] = m.clone();
                }
                self.store_credentials(&target, entry)?;
                Ok(format!(
                    "stored an API key for {target} in {}",
                    self.auth_store().file().display()
                ))
            }
            Some("key") => self.store_key(&target, p),
            _ => Err(EngineError::Login(format!(
                "the plugin says the {provider} login failed; nothing was stored"
            ))),
        }
    }

    fn store_credentials(&self, provider: &str, entry: Value) -> Result<(), EngineError> {
        Ok(self.auth_store().set(provider, entry)?)
    }
}

fn ask_prompt(prompt: &AuthPrompt, p: &mut dyn LoginPrompter) -> Option<String> {
    if prompt.kind == "select" && !prompt.options.is_empty() {
        let labels: Vec<String> = prompt
            .options
            .iter()
            .map(|o| match &o.hint {
                Some(h) => format!("{} ({h})", o.label),
                None => o.label.clone(),
            })
            .collect();
        let i = p.choose(&prompt.message, &labels)?;
        return Some(prompt.options[i].value.clone());
    }
    let question = match &prompt.placeholder {
        Some(example) => format!("{} (e.g. {example})", prompt.message),
        None => prompt.message.clone(),
    };
    p.ask(&question, false)
}

/// Asks on stderr and reads answers from stdin, one line each (numbers pick a choice); a
/// secret is read with the terminal's echo off.
pub struct TerminalPrompter;

impl TerminalPrompter {
    fn line(question: &str, secret: bool) -> Option<String> {
        use std::io::{BufRead, Write};
        eprint!("{question}: ");
        let _ = std::io::stderr().flush();
        let echo_off = secret.then(EchoOff::new).flatten();
        let mut line = String::new();
        let read = std::io::stdin().lock().read_line(&mut line);
        if echo_off.is_some() {
            eprintln!();
        }
        drop(echo_off);
        match read {
            Ok(0) | Err(_) => {
                // End of input: the question's line is finished before whatever follows.
                eprintln!();
                None
            }
            Ok(_) => Some(line.trim().to_string()),
        }
    }
}

impl LoginPrompter for TerminalPrompter {
    fn choose(&mut self, question: &str, choices: &[String]) -> Option<usize> {
        eprintln!("{question}:");
        for (i, c) in choices.iter().enumerate() {
            eprintln!("  {}. {c}", i + 1);
        }
        loop {
            let answer = Self::line(&format!("number (1-{})", choices.len()), false)?;
            match answer.parse::<usize>() {
                Ok(n) if (1..=choices.len()).contains(&n) => return Some(n - 1),
                _ => match choices.iter().position(|c| c.eq_ignore_ascii_case(&answer)) {
                    Some(i) => return Some(i),
                    None => eprintln!("\"{answer}\" is not one of the choices"),
                },
            }
        }
    }

    fn ask(&mut self, question: &str, secret: bool) -> Option<String> {
        Self::line(question, secret)
    }

    fn say(&mut self, text: &str) {
        eprintln!("{text}");
    }
}

/// The terminal's echo switched off while it lives (stdin a terminal only).
struct EchoOff(libc::termios);

impl EchoOff {
    fn new() -> Option<Self> {
        // SAFETY: tcgetattr fills the struct it is given; a non-terminal fails with ENOTTY.
        let mut saved: libc::termios = unsafe { std::mem::zeroed() };
        if unsafe { libc::tcgetattr(libc::STDIN_FILENO, &mut saved) } != 0 {
            return None;
        }
        let mut quiet = saved;
        quiet.c_lflag &= !libc::ECHO;
        // SAFETY: sets stdin's attributes from a struct tcgetattr filled.
        (unsafe { libc::tcsetattr(libc::STDIN_FILENO, libc::TCSANOW, &quiet) } == 0)
            .then_some(Self(saved))
    }
}

impl Drop for EchoOff {
    fn drop(&mut self) {
        // SAFETY: restores the attributes read in `new`.
        unsafe {
            libc::tcsetattr(libc::STDIN_FILENO, libc::TCSANOW, &self.0);
        }
    }
}
