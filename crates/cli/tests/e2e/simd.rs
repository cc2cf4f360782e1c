//! End-to-end test of vector values and the slow path (docs/abi.md, "Vector values on the slow
//! path"): the `simd` scenario's `Outer128`/`Outer256` tail-call `Negate*` with a Vector128 /
//! Vector256 the JIT holds in XMM0/YMM0 across the Tailcall probe. The runtime's slow-path
//! stubs keep only the low 64 bits of XMM0–7, so a probe there zeroed the vectors' upper
//! halves (measured before the fix: `got <-10, -21, 0, 0>`, 2000 wrong results). On the slow
//! path eltrace now leaves every function passing or returning a wide vector unprobed and names
//! it in the trace's diagnostics; the fast path probes them all.

use crate::common::recording::{Hooks, Mode, record_correct, record_correct_with};
use crate::common::report::uint;
use crate::modes;

const S: &str = "Scenarios.SimdScenario";
const VECTOR_FUNCS: [&str; 6] = [
    "Outer128",
    "Add128",
    "Negate128",
    "Outer256",
    "Add256",
    "Negate256",
];

fn simd(mode: Mode) {
    let (rec, r) = record_correct(mode, "simd", &[]);
    assert_eq!(r.calls(&format!("{S}.Run")), 1);
    let diagnostics: Vec<&str> = r.trace()["diagnostics"]
        .as_array()
        .map(|a| a.iter().filter_map(|d| d.as_str()).collect())
        .unwrap_or_default();
    let unprobed: Vec<&&str> = diagnostics
        .iter()
        .filter(|d| d.starts_with("slow-path-vectors: no probes for Scenarios."))
        .collect();
    match mode.hooks {
        Hooks::Slow => {
            for f in VECTOR_FUNCS {
                let name = format!("{S}.{f}");
                assert!(!r.has_function(&name), "{name} was probed on the slow path");
                assert!(
                    unprobed
                        .iter()
                        .any(|d| d.contains(&format!("no probes for {name} "))),
                    "{name} not reported: {diagnostics:?}"
                );
            }
            assert_eq!(unprobed.len(), VECTOR_FUNCS.len(), "{diagnostics:?}");
            assert!(
                rec.stderr.contains("eltrace: slow-path-vectors:"),
                "{}",
                rec.stderr
            );
        }
        Hooks::Fast | Hooks::FastTrash | Hooks::RecordsTrash => {
            for f in VECTOR_FUNCS {
                let name = format!("{S}.{f}");
                assert_eq!(r.calls(&name), 1000, "{name}");
            }
            assert!(unprobed.is_empty(), "{diagnostics:?}");
            let outer = r.function(&format!("{S}.Outer128"));
            assert_eq!(uint(outer, "tailcalls"), 1000, "{outer}");
        }
    }
}

/// The fast path's fallback keeps the vectors whole: with a 16-event ring nearly every few
/// probes take the stubs' Rust fallback, whose C calls may clear the upper bits of YMM0-7 and
/// ZMM0-7 (glibc's AVX-512 `memmove` copies 16 to 31 bytes through XMM0/XMM1 with VEX stores;
/// the contract test's stubs execute `VZEROUPPER` after the call, see fast.rs `CLOBBER_UPPER`).
/// Before the fallback saved them whole, `Outer256` came back with its upper half zeroed
/// (`got <-3, -5, -7, -9, 0, 0, 0, 0>`) in the contract test, and ASP.NET Core answered some
/// requests with 500 under `--timing none --include '*'` (header validation's vectorized
/// search got a Vector256 back half cleared). Timed and timeless stubs alike.
fn simd_through_the_fallback(mode: Mode) {
    for timing in ["exact", "none"] {
        let (_, r) = record_correct_with(
            mode,
            "simd",
            &["--timing", timing],
            &[("ELTRACE_BUFFER_EVENTS", "16")],
        );
        if mode.hooks != Hooks::Slow {
            assert_eq!(r.calls(&format!("{S}.Outer256")), 1000, "--timing {timing}");
        }
    }
}

modes!(simd, simd_through_the_fallback);
