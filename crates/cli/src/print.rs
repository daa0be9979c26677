//! Printing helpers the commands share: JSON and lines on stdout.

use std::process::ExitCode;

/// `value` as pretty JSON on stdout, with terminal control characters escaped.
pub fn json(value: &impl serde::Serialize) -> anyhow::Result<ExitCode> {
    let text = serde_json::to_string_pretty(value)?;
    println!("{}", podcode_protocol::sanitize_json(&text));
    Ok(ExitCode::SUCCESS)
}

/// Each line on stdout.
pub fn lines(lines: impl IntoIterator<Item = String>) -> ExitCode {
    for line in lines {
        println!("{line}");
    }
    ExitCode::SUCCESS
}
