//! `podcode auth login|list|logout`: provider credentials (`<data>/auth.json`), signed in with
//! a plugin's login methods (opencode's `auth` hook) or as an API key.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Subcommand;
use podcode_core::AuthAction;

#[derive(Subcommand)]
pub enum AuthCommand {
    /// Sign in to PROVIDER with the login of the plugin that signs in for it, else store its key.
    Login {
        /// anthropic, openai, a [provider.NAME], one a plugin signs in for (asked if left out).
        provider: Option<String>,
        /// The plugin's login method, by its label (asked when it has several).
        #[arg(long)]
        method: Option<String>,
    },
    /// Providers with stored credentials, and the providers plugins sign in for.
    List,
    /// Forget what is stored for PROVIDER.
    Logout { provider: String },
}

pub fn run(cwd: Option<PathBuf>, command: AuthCommand) -> anyhow::Result<ExitCode> {
    let action = match command {
        AuthCommand::Login { provider, method } => AuthAction::Login(provider, method),
        AuthCommand::List => AuthAction::List,
        AuthCommand::Logout { provider } => AuthAction::Logout(provider),
    };
    let engine = crate::start::engine(cwd)?;
    let lines = crate::start::tokio_runtime()?.block_on(engine.auth_command(action))?;
    Ok(crate::print::lines(lines))
}
