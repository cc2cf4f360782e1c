//! `record --include '*'` on .NET 11, whose CoreLib is itself compiled runtime-async: CoreLib's
//! async helpers are recorded as logical calls, and the recording stays balanced.

use serde_json::Value;

use super::{css, nested_delays_suspended};
use crate::common::apps::async_dll;
use crate::common::recording::{Mode, record_app};
use crate::common::report::{string, uint};
use crate::common::runtimes::Runtime;

/// Issue 14.3: `record --include '*'` on .NET 11 probes CoreLib, which is itself compiled
/// runtime-async there. The recording stays balanced (0 mismatched frames, 0 unmatched Leaves,
/// 0 vanished frames; frames of threads still inside the runtime's loops at exit stay open),
/// the user code counts as without CoreLib, and CoreLib's runtime-async helpers are logical
/// calls with segments.
#[test]
#[cfg_attr(
    eltrace_skip_net11,
    ignore = "ELTRACE_TEST_RUNTIMES leaves .NET 11 out"
)]
fn corelib_included_on_net11() {
    let rec = record_app(
        Mode::Fast.on(Runtime::Net11),
        async_dll(),
        "nested",
        &["--include", "*"],
        &[],
    );
    assert_eq!(rec.exit(), 0, "stderr:\n{}", rec.stderr);
    let r = rec.report();
    for field in ["mismatched_frames", "unmatched_leaves", "vanished_frames"] {
        assert_eq!(r.trace_uint(field), 0, "{field}: {}", r.trace());
    }
    assert_eq!(r.trace_uint("dropped_events"), 0, "{}", r.trace());
    // CoreLib's await helpers are generic (`TransparentAwait<T>`), and so are the async
    // variants of `Task.WhenAll<T>` and `Task.ContinueWith<T>` that StreamReader and
    // WhenAll reach: their frames suspend, none vanishes.
    for scenario in ["stream-read", "configureawait", "generic"] {
        let rec = record_app(
            Mode::Fast.on(Runtime::Net11),
            async_dll(),
            scenario,
            &["--include", "*"],
            &[],
        );
        assert_eq!(rec.exit(), 0, "{scenario} stderr:\n{}", rec.stderr);
        let r = rec.report();
        for field in ["mismatched_frames", "unmatched_leaves", "vanished_frames"] {
            assert_eq!(r.trace_uint(field), 0, "{scenario} {field}: {}", r.trace());
        }
    }
    let n = "AsyncScenarios.NestedScenario.";
    assert_eq!(css(&r, &format!("{n}L1")), (3, 6, 3));
    assert_eq!(css(&r, &format!("{n}L2")), (3, 6, 3));
    let delays = nested_delays_suspended(&r);
    assert_eq!(css(&r, &format!("{n}L3")), (3, 9 + delays, 6 + delays));
    assert_eq!(css(&r, &format!("{n}L4")), (3, 3, 0));
    let corelib: Vec<&Value> = r
        .functions()
        .iter()
        .filter(|f| string(f, "module").starts_with("System.Private.CoreLib"))
        .filter(|f| f["async"]["kind"] == "runtime")
        .collect();
    assert!(
        corelib
            .iter()
            .any(|f| string(f, "name") == "System.Threading.Tasks.Task.Delay"),
        "CoreLib's runtime-async rows: {corelib:?}"
    );
    for f in &corelib {
        assert!(
            uint(f, "calls") > 0 && uint(f, "segments") >= uint(f, "calls"),
            "{f}"
        );
    }
}
