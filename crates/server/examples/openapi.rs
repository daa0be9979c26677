//! Prints the server's OpenAPI document (what `GET /openapi.json` serves), for CI's
//! validator: `cargo run -q -p podcode-server --example openapi > openapi.json`.
// Test, bench and example code: a failed step panics at that line, as in `#[test]` code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

fn main() -> Result<(), serde_json::Error> {
    println!(
        "{}",
        serde_json::to_string_pretty(&podcode_server::openapi())?
    );
    Ok(())
}
