//! `podcode-sandbox-exec`: the sandbox helper as its own small binary, for tests of crates
//! that do not live in the `podcode` binary. Same arguments as `podcode __sandbox-exec`.

fn main() {
    let mut args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    if args
        .first()
        .is_some_and(|a| a == podcode_sandbox::HELPER_SUBCOMMAND)
    {
        args.remove(0);
    }
    podcode_sandbox::run_helper(&args)
}
