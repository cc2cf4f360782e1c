//! What the analysis hands out while it runs: every frame as it closes, to a [`FrameSink`]
//! (children before their parents), and every drop of events where the replay meets it; why
//! it stopped when it fails ([`AnalysisError`]).
//!
//! ```text
//! t=0   enter  A          the sink gets, in this order:
//! t=10  enter  B            B  10..30  depth 1  parent A
//! t=30  leave  B            A   0..50  depth 0  no parent
//! t=50  leave  A
//! ```

use std::fmt;
use std::io;

use eltrace_trace::{ReadError, ThreadIdx, TraceInfo};

use crate::model::{Frame, Tables};

/// Receives every frame once, when it closes (children before their parents), during the pass.
pub trait FrameSink {
    /// `tables` holds the function and thread records read so far.
    fn frame(&mut self, tables: &Tables, thread: ThreadIdx, frame: &Frame) -> io::Result<()>;

    /// The trace's INFO record was read: it comes before any frame of the trace.
    fn info(&mut self, _info: &TraceInfo) -> io::Result<()> {
        Ok(())
    }

    /// `count` events of `thread` were dropped after its event at `at_ns` (the time the frames
    /// the drop closed end, handed over just before).
    fn dropped(
        &mut self,
        _tables: &Tables,
        _thread: ThreadIdx,
        _at_ns: u64,
        _count: u64,
    ) -> io::Result<()> {
        Ok(())
    }

    /// Whether the frames must come in time order across threads. A sink that says no (one
    /// that keeps nothing of the order) lets the replay take a thread's ordinary frames ahead
    /// of the other threads' events where that changes nothing but the order in which frames
    /// close (`replay::Replay::run`).
    fn ordered(&self) -> bool {
        true
    }
}

/// A sink that ignores frames.
#[derive(Debug, Default, Clone, Copy)]
pub struct NullSink;

impl FrameSink for NullSink {
    fn frame(&mut self, _: &Tables, _: ThreadIdx, _: &Frame) -> io::Result<()> {
        Ok(())
    }

    fn ordered(&self) -> bool {
        false
    }
}

/// Why an analysis failed.
#[derive(Debug)]
pub enum AnalysisError {
    /// The trace could not be read (not a trace, corrupt, I/O error).
    Read(ReadError),
    /// The frame sink failed (an exporter could not write its output).
    Sink(io::Error),
}

impl fmt::Display for AnalysisError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AnalysisError::Read(e) => write!(f, "{e}"),
            AnalysisError::Sink(e) => write!(f, "writing the output failed: {e}"),
        }
    }
}

impl std::error::Error for AnalysisError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            AnalysisError::Read(e) => Some(e),
            AnalysisError::Sink(e) => Some(e),
        }
    }
}

impl From<ReadError> for AnalysisError {
    fn from(e: ReadError) -> Self {
        AnalysisError::Read(e)
    }
}

#[cfg(test)]
mod tests {
    use eltrace_trace::EventKind::{Enter, Leave};
    use eltrace_trace::TraceInfo;
    use eltrace_trace::testing::TraceBuilder;

    use super::*;
    use crate::{EndKind, Options, analyze_with};

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
}
