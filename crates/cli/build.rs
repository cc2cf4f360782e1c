//! Which .NET runtimes the end-to-end tests (tests/e2e) run on, decided when they are built:
//! `ELTRACE_TEST_RUNTIMES` (a comma-separated list of majors: `10`, `11`, `10,11`; unset or
//! empty means every runtime). A runtime left out gets the cfg `eltrace_skip_net<major>`, and
//! the tests on it are compiled with `#[ignore]`, so that `cargo test` reports them as ignored
//! (with the reason), not as passed. Changing the variable rebuilds this package. The eltrace
//! binary itself uses none of this.

use std::env;

/// The runtimes the tests know (crates/cli/tests/e2e/common/runtimes.rs: `Runtime`).
const RUNTIMES: [u32; 2] = [10, 11];

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-env-changed=ELTRACE_TEST_RUNTIMES");
    for major in RUNTIMES {
        println!("cargo::rustc-check-cfg=cfg(eltrace_skip_net{major})");
    }
    let var = env::var("ELTRACE_TEST_RUNTIMES").unwrap_or_default();
    if var.trim().is_empty() {
        return;
    }
    let mut selected = Vec::new();
    for s in var.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        match s.trim_start_matches("net").parse::<u32>() {
            Ok(m) if RUNTIMES.contains(&m) => selected.push(m),
            // A typo must not skip everything silently.
            _ => panic!("ELTRACE_TEST_RUNTIMES={var}: {s:?} is not a runtime (10, 11)"),
        }
    }
    for major in RUNTIMES {
        if !selected.contains(&major) {
            println!("cargo::rustc-cfg=eltrace_skip_net{major}");
        }
    }
}
