//! `podcode-sandbox-helper`: the sandbox helper, installed beside `podcode` (which starts
//! it for every sandboxed command instead of re-running itself as `podcode
//! __sandbox-exec`: this small program starts in a fraction of the time). Same arguments
//! as `podcode __sandbox-exec`; it links only the sandbox crate.

fn main() {
    podcode_sandbox::helper_main()
}
