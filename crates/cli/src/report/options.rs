//! What `eltrace report` is asked for: the traces and processes, the threads kept, the rows
//! shown and their order, text or JSON.

use std::path::PathBuf;

/// The sort key of the function list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SortBy {
    Inclusive,
    Exclusive,
    Calls,
}

#[derive(Debug, Clone)]
pub struct ReportOptions {
    /// The traces given (each one expands to its recording session's traces).
    pub paths: Vec<PathBuf>,
    /// Only the processes with these pids (`None`: every process).
    pub pids: Option<Vec<u32>>,
    /// The trace being reported (set per process).
    pub path: PathBuf,
    /// Rows to show (default: 25 in the table, all in JSON).
    pub top: Option<usize>,
    pub by: SortBy,
    /// OS tids to keep (`None`: all threads).
    pub threads: Option<Vec<u64>>,
    pub json: bool,
    /// Add the logical call tree (report/logical.rs).
    pub logical: bool,
}
