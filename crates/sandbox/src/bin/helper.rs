//! `podcode-sandbox-exec`: the sandbox helper as its own small binary, for tests of crates
//! that do not live in the `podcode` binary. Same arguments as `podcode __sandbox-exec`
//! (and the same program as `podcode-sandbox-helper`, which is installed with `podcode`).

fn main() {
    podcode_sandbox::helper_main()
}
