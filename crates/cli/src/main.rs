//! `podcode`: the one binary. Argument parsing and rendering only: each subcommand's module
//! under `commands/` loads the engine (`podcode-core`) and shows what it returns.

mod asker;
mod commands;
mod print;
mod start;
mod trust_prompt;

use std::path::PathBuf;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "podcode",
    version,
    args_conflicts_with_subcommands = true,
    about = "A terminal coding agent whose tools anyone can extend",
    long_about = podcode_core::list_text::MAIN_ABOUT,
    after_help = podcode_core::list_text::MAIN_EXAMPLES
)]
struct Cli {
    /// Run as if podcode was started in DIR.
    #[arg(long, global = true, value_name = "DIR")]
    cwd: Option<PathBuf>,
    /// Bare `podcode` opens the full-screen UI and takes its options (`podcode -c`).
    #[command(flatten)]
    tui: commands::tui::TuiArgs,
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Run the agent on one prompt, non-interactively: `podcode run "fix the failing test"`.
    Run(commands::run::RunArgs),
    /// List stored sessions, or show or export one.
    Sessions(commands::sessions::SessionsArgs),
    /// List the merged tool set exactly as the model sees it, with sources and load problems.
    Tools {
        /// Stable machine-readable output.
        #[arg(long)]
        json: bool,
    },
    /// List plugin and tool files with their status (loaded, failed and why, skipped,
    /// shadowed), each with its load time and whether it came from the manifest cache.
    Plugins {
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
        /// Drop the cached plugin and tool manifests first, so every file is loaded again.
        #[arg(long)]
        refresh: bool,
    },
    /// List agent profiles with their mode and source, and the agent files refused and why.
    #[command(after_help = podcode_core::list_text::AGENTS_HELP)]
    Agents {
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
    },
    /// List agent skills (SKILL.md folders) with where each came from, and the refused ones.
    #[command(after_help = podcode_core::list_text::SKILLS_HELP)]
    Skills,
    /// List custom commands (/name prompts) with where each came from, and the refused ones.
    #[command(after_help = podcode_core::list_text::COMMANDS_HELP)]
    Commands,
    /// List language servers: which files each checks, installed or how to install it.
    #[command(after_help = podcode_core::list_text::LSP_HELP)]
    Lsp,
    /// Sign in to model providers: `podcode auth login [PROVIDER]`, `list`, `logout PROVIDER`.
    Auth {
        #[command(subcommand)]
        command: commands::auth::AuthCommand,
    },
    /// Run one tool by hand through the whole pipeline.
    Tool {
        #[command(subcommand)]
        command: commands::call::ToolCommand,
    },
    /// Show or reset the "always" approvals remembered for this project.
    Permissions {
        #[command(subcommand)]
        command: commands::permissions::PermissionsCommand,
    },
    /// List journaled file changes, or show one as a diff.
    Changes(commands::changes::ChangesArgs),
    /// Undo journaled changes: one change, one call, all since a message, or a whole session.
    Revert(commands::changes::RevertArgs),
    /// Trust this workspace to run its own code: the tools, plugins and agent files in its
    /// .podcode/ and .opencode/ folders, and the npm plugins and MCP servers its
    /// .podcode/config.toml or opencode.json names.
    Trust(commands::trust::TrustArgs),
    /// MCP: `podcode mcp list` (configured servers), `podcode mcp serve` (serve our tools).
    Mcp {
        #[command(subcommand)]
        command: commands::mcp::McpCommand,
    },
    /// The sandbox bash, executable tools and plugins run in: `podcode sandbox status`
    /// (what this kernel enforces), `podcode sandbox run -- CMD` (try a command in it).
    Sandbox {
        #[command(subcommand)]
        command: commands::sandbox::SandboxCommand,
    },
    /// Serve the HTTP + SSE API and the web page: drive sessions from a browser, an editor
    /// or a script. Loopback only unless --host.
    #[command(after_help = commands::serve::SERVE_HELP)]
    Serve(commands::serve::ServeArgs),
    /// `podcode serve --open`: the web page in your browser.
    #[command(after_help = commands::serve::SERVE_HELP)]
    Web(commands::serve::ServeArgs),
    /// The full-screen UI (what bare `podcode` opens on a terminal).
    #[command(after_help = podcode_tui::KEYS_HELP)]
    Tui(commands::tui::TuiArgs),
    /// Serve the Agent Client Protocol on stdio, for editors (Zed, JetBrains, Neovim).
    #[command(after_help = commands::acp::ACP_HELP)]
    Acp(commands::acp::AcpArgs),
}

fn main() -> std::process::ExitCode {
    // The sandbox helper: `podcode __sandbox-exec --policy … -- cmd…` restricts itself and
    // becomes cmd. Checked first, so a sandboxed spawn costs no argument parsing.
    let mut args = std::env::args_os();
    if args
        .nth(1)
        .is_some_and(|a| a == podcode_core::sandbox_helper::HELPER_SUBCOMMAND)
    {
        let rest: Vec<std::ffi::OsString> = args.collect();
        podcode_core::sandbox_helper::run_helper(&rest);
    }
    // Podcode's environment holds the provider keys and the server token: other
    // processes of the user (sandboxed ones included, where no PID namespace hides us)
    // must not read it through /proc.
    podcode_core::sandbox_helper::hide_own_memory();
    let cli = Cli::parse();
    let result = match cli.command {
        Some(Command::Run(args)) => commands::run::run(cli.cwd, args),
        Some(Command::Sessions(args)) => commands::sessions::run(cli.cwd, args),
        Some(Command::Tools { json }) => commands::tools::run(cli.cwd, json),
        Some(Command::Skills) => start::engine(cli.cwd).map(|e| print::lines(e.skill_lines())),
        Some(Command::Commands) => start::engine(cli.cwd).map(|e| print::lines(e.command_lines())),
        Some(Command::Lsp) => start::engine(cli.cwd).map(|e| print::lines(e.lsp_lines())),
        Some(Command::Plugins { json, refresh }) => commands::plugins::run(cli.cwd, json, refresh),
        Some(Command::Agents { json }) => commands::agents::run(cli.cwd, json),
        Some(Command::Auth { command }) => commands::auth::run(cli.cwd, command),
        Some(Command::Tool { command }) => commands::call::run(cli.cwd, command),
        Some(Command::Permissions { command }) => commands::permissions::run(cli.cwd, command),
        Some(Command::Changes(args)) => commands::changes::run_changes(cli.cwd, args),
        Some(Command::Revert(args)) => commands::changes::run_revert(cli.cwd, args),
        Some(Command::Trust(args)) => commands::trust::run(cli.cwd, args),
        Some(Command::Mcp { command }) => commands::mcp::run(cli.cwd, command),
        Some(Command::Sandbox { command }) => commands::sandbox::run(cli.cwd, command),
        Some(Command::Tui(args)) => commands::tui::run(cli.cwd, args),
        Some(Command::Serve(args)) => commands::serve::run(cli.cwd, args),
        Some(Command::Web(args)) => {
            commands::serve::run(cli.cwd, commands::serve::ServeArgs { open: true, ..args })
        }
        Some(Command::Acp(args)) => commands::acp::run(cli.cwd, args),
        None if std::io::IsTerminal::is_terminal(&std::io::stdin())
            && std::io::IsTerminal::is_terminal(&std::io::stdout()) =>
        {
            commands::tui::run(cli.cwd, cli.tui)
        }
        None => {
            use clap::CommandFactory;
            let mut help = Cli::command();
            if std::io::IsTerminal::is_terminal(&std::io::stdout()) {
                let _ = help.print_help();
                Ok(std::process::ExitCode::SUCCESS)
            } else {
                eprintln!("{}", help.render_help());
                Ok(std::process::ExitCode::from(2))
            }
        }
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!(
                "error: {}",
                podcode_protocol::sanitize_for_terminal(&podcode_protocol::error_chain(
                    e.chain().map(|c| c.to_string())
                ))
            );
            std::process::ExitCode::FAILURE
        }
    }
}
