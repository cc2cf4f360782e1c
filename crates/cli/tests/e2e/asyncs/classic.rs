//! A classic async method (a C# compiler's state machine, tests/apps/Scenarios' `classic-work`):
//! its `MoveNext` row counts the logical calls, segments and suspensions of the user method it
//! names.

use super::assert_balanced;
use crate::common::recording::{Mode, record_in};
use crate::common::report::{string, uint};
use crate::modes;

modes!(classic_work);

fn classic_work(mode: Mode) {
    let rec = record_in(mode, "classic-work", &[]);
    assert_eq!(rec.exit(), 0, "stderr:\n{}", rec.stderr);
    let r = rec.report();
    assert_balanced(&r);
    let mn = r
        .functions()
        .iter()
        .find(|f| {
            string(f, "name").ends_with("+<Work>d__4.MoveNext") || {
                let n = string(f, "name");
                n.contains("<Work>d__") && n.ends_with(".MoveNext")
            }
        })
        .expect("Work's state machine");
    // 5 calls, each 1 + 4 segments; the row names the user method.
    assert_eq!(uint(mn, "calls"), 5, "{mn}");
    assert_eq!(uint(mn, "segments"), 25, "{mn}");
    assert_eq!(uint(mn, "suspensions"), 20, "{mn}");
    assert_eq!(mn["async"]["kind"].as_str(), Some("state_machine"), "{mn}");
    assert!(
        mn["async"]["method"]
            .as_str()
            .is_some_and(|m| m.ends_with(".Work")),
        "{mn}"
    );
}
