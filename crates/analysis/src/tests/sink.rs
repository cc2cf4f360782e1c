//! What the sink gets, in which order: frames as they close, drops at their time.

use std::io;

use eltrace_trace::EventKind::{Enter, Leave};
use eltrace_trace::TraceInfo;
use eltrace_trace::testing::TraceBuilder;

use crate::model::{Frame, Tables};
use crate::{EndKind, FrameSink, Options, ThreadIdx, analyze_with};

/// Frames and drops in the order the sink gets them.
#[derive(Default)]
struct Seen(Vec<String>);

impl FrameSink for Seen {
    fn frame(&mut self, _: &Tables, t: ThreadIdx, f: &Frame) -> io::Result<()> {
        let lost = if f.end == EndKind::Lost { " lost" } else { "" };
        self.0.push(format!("T{} frame @{}{lost}", t.0, f.end_ns));
        Ok(())
    }
    fn dropped(&mut self, _: &Tables, t: ThreadIdx, at: u64, n: u64) -> io::Result<()> {
        self.0.push(format!("T{} dropped {n} @{at}", t.0));
        Ok(())
    }
}

/// A drop reaches the sink at its thread's last event before it, after the frames it
/// closed; also a drop while no frame was open.
#[test]
fn drops_reach_the_sink_at_their_time() {
    let trace = TraceBuilder::new(TraceInfo::new(7))
        .methods("App.dll", "Ns.T", &["Main", "Work"])
        .thread(0, 100)
        .thread(1, 101)
        .events(0, &[(10, Enter, 0), (20, Enter, 1)])
        .dropped(0, 7)
        .events(1, &[(30, Enter, 1), (40, Leave, 1)])
        .dropped(1, 3)
        .events(1, &[(90, Enter, 1), (95, Leave, 1)])
        .end(100);
    let mut seen = Seen::default();
    analyze_with(&trace[..], &Options::default(), &mut seen).unwrap();
    assert_eq!(
        seen.0,
        [
            "T0 frame @20 lost",
            "T0 frame @20 lost",
            "T0 dropped 7 @20",
            "T1 frame @40",
            "T1 dropped 3 @40",
            "T1 frame @95",
        ]
    );
}
