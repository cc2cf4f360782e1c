//! Tiering and on-stack replacement (issue 13.3): each scenario runs long enough for tiered
//! compilation to replace the methods' code, and the thread pool's dispatch loop to move to
//! OSR code (its resumes then come 0x40 deeper, below suspended segments), with default
//! tiering. Fast path only (hundreds of thousands of events; the slow path adds minutes), on
//! each runtime. No resume is linked by order alone and every count is exact.

use super::{
    assert_balanced, assert_no_pending, assert_none_inferred, css, func, record_async, split,
};
use crate::common::recording::Mode;
use crate::common::report::uint;

/// `name::net10` and `name::net11`: the fast path of `name` on each runtime.
macro_rules! fast_on_each_runtime {
    ($($name:ident),*) => {
        $(
            mod $name {
                use crate::common::recording::Mode;
                use crate::common::runtimes::Runtime;
                #[test]
                #[cfg_attr(eltrace_skip_net10, ignore = "ELTRACE_TEST_RUNTIMES leaves .NET 10 out")]
                fn net10() {
                    super::$name(Mode::Fast);
                }
                #[test]
                #[cfg_attr(eltrace_skip_net11, ignore = "ELTRACE_TEST_RUNTIMES leaves .NET 11 out")]
                fn net11() {
                    super::$name(Mode::Fast.on(Runtime::Net11));
                }
            }
        )*
    };
}
fast_on_each_runtime!(tier_both, tier_caller, tier_callee);

fn tier_both(mode: Mode) {
    let r = record_async(mode, "tier-both").report();
    assert_none_inferred(&r);
    assert_balanced(&r);
    let n = "AsyncScenarios.TierBothScenario.";
    assert_eq!(css(&r, &format!("{n}Loop")), (1, 2001, 2000));
    assert_eq!(css(&r, &format!("{n}Step")), (2000, 16000, 14000));
    assert_eq!(css(&r, &format!("{n}Middle")), (14000, 28000, 14000));
    assert_eq!(css(&r, &format!("{n}Leaf")), (14000, 56000, 42000));
    assert_no_pending(&r);
}

fn tier_caller(mode: Mode) {
    let r = record_async(mode, "tier-caller").report();
    assert_none_inferred(&r);
    assert_balanced(&r);
    let n = "AsyncScenarios.TierCallerScenario.";
    assert_eq!(css(&r, &format!("{n}Loop")), (1, 10001, 10000));
    assert_eq!(css(&r, &format!("{n}Step")), (10000, 20000, 10000));
    assert_eq!(css(&r, &format!("{n}Leaf")), (10000, 40000, 30000));
    assert_no_pending(&r);
}

fn tier_callee(mode: Mode) {
    let r = record_async(mode, "tier-callee").report();
    assert_none_inferred(&r);
    assert_balanced(&r);
    let n = "AsyncScenarios.TierCalleeScenario.";
    assert_eq!(split(&r, &format!("{n}Outer")), (0, 40));
    assert_eq!(css(&r, &format!("{n}Outer")), (40, 120, 80));
    assert_eq!(css(&r, &format!("{n}Spin")), (40, 40040, 40000));
    assert_eq!(css(&r, &format!("{n}Hot")), (40, 120, 80));
    assert_eq!(uint(func(&r, &format!("{n}Work")), "calls"), 400_000);
    assert_no_pending(&r);
}
