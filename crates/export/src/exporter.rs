//! What every exporter shares: the [`Exporter`] trait a format implements and the
//! [`ExportOptions`] it is made with (with their parts: [`FoldedValue`], [`FoldedRecursion`],
//! and the [`OverBudget`] error of an output past its size limit).

use std::io;

use eltrace_analysis::{Analysis, FrameSink, Options};

use crate::labels::ProcessMeta;
use crate::window::TimeWindow;

/// One output format. It takes the processes one after another: `begin_process`, the
/// process's frames and drops (as the [`FrameSink`] of its analysis), `end_process`; then
/// `finish` once.
pub trait Exporter: FrameSink {
    /// Asks the analysis for what the format needs (e.g. the call tree).
    fn configure(&self, _opts: &mut Options) {}
    /// A process begins: the frames and drops that follow are its own.
    fn begin_process(&mut self, process: &ProcessMeta) -> io::Result<()>;
    /// The process's analysis is complete: writes (or keeps) whatever remains of it.
    fn end_process(&mut self, analysis: &Analysis) -> io::Result<()>;
    /// Every process has ended: writes the end of the output.
    fn finish(&mut self) -> io::Result<()>;
}

/// What the folded-stacks value of a stack is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FoldedValue {
    /// Exclusive (self) time of the stack's frames in ns.
    #[default]
    ExclusiveNs,
    /// Number of frames (calls) with exactly this stack.
    Calls,
}

/// Folded stacks: the longest run of one function calling itself directly that is written
/// frame by frame. Deeper frames of the run count as its last written frame (their time and
/// calls add to it, their callees hang below it), so a 100,000-deep recursion gives a few
/// dozen lines, not 100,000 lines of up to 100,000 frames. `FoldedRecursion(0)` keeps every
/// frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FoldedRecursion(pub u32);

impl FoldedRecursion {
    /// The default: runs up to 64 frames are written as they are.
    pub const DEFAULT: FoldedRecursion = FoldedRecursion(64);
}

impl Default for FoldedRecursion {
    fn default() -> Self {
        FoldedRecursion::DEFAULT
    }
}

/// The error (inside an `io::Error`) of an export that would write more than
/// [`ExportOptions::max_output`]: an exporter that builds its output in memory first (folded
/// stacks) stops there, before the memory is spent.
#[derive(Debug)]
pub struct OverBudget;

impl std::fmt::Display for OverBudget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the output would pass its size limit")
    }
}

impl std::error::Error for OverBudget {}

/// Options shared by the exporters.
#[derive(Debug, Clone, Default)]
pub struct ExportOptions {
    /// Export only the threads with these OS tids (`None`: every thread).
    pub threads: Option<Vec<u64>>,
    pub folded_value: FoldedValue,
    /// Export only what overlaps this time window; frames are clipped to it.
    pub window: TimeWindow,
    /// Folded stacks: one root frame per thread (`main_(1234);Main;Run 100`), under the
    /// process's when there are several.
    pub thread_root: bool,
    /// Folded stacks: how deep a run of direct recursion is written (see [`FoldedRecursion`]).
    pub folded_recursion: FoldedRecursion,
    /// The most bytes the output may hold (`None`: no limit); the caller counts what is
    /// written, exporters that buffer check their buffers against it ([`OverBudget`]).
    pub max_output: Option<u64>,
}
