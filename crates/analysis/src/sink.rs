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
