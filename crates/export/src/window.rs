//! The time window of an export (`--from`, `--to`): which frames it keeps and where it cuts
//! them; and [`SelfTimes`], a frame's own time inside it (folded stacks, pprof).

use std::collections::HashMap;

use eltrace_analysis::{Frame, ThreadIdx};

/// A time window in ns since the trace's origin (the times `report` and the exports use):
/// `[from, to)`; the default is everything.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TimeWindow {
    pub from: u64,
    pub to: u64,
}

impl Default for TimeWindow {
    fn default() -> Self {
        TimeWindow {
            from: 0,
            to: u64::MAX,
        }
    }
}

impl TimeWindow {
    /// The part of `[start, end]` inside the window, `None` if nothing is. A frame of zero
    /// length is inside when `from <= start < to`.
    pub fn clip(&self, start: u64, end: u64) -> Option<(u64, u64)> {
        let inside = if start == end {
            self.from <= start && start < self.to
        } else {
            start < self.to && end > self.from
        };
        inside.then(|| (start.max(self.from), end.min(self.to)))
    }

    /// Whether this is the whole trace.
    pub fn is_all(&self) -> bool {
        *self == TimeWindow::default()
    }
}

/// Each thread's closed frames' times by depth, to give a frame its exclusive time inside a
/// window as it closes: frames close children first, so a frame's children are the frames one
/// deeper that closed on its thread since the previous frame at its own depth.
#[derive(Default)]
pub struct SelfTimes {
    children: HashMap<ThreadIdx, Vec<u64>>,
}

impl SelfTimes {
    /// `frame` of `thread` closed: its time inside `window` (frame times plus `offset`, the
    /// process's start on the export's timeline) minus its children's, `None` when it lies
    /// outside the window.
    pub fn close(
        &mut self,
        window: &TimeWindow,
        offset: u64,
        thread: ThreadIdx,
        frame: &Frame,
    ) -> Option<u64> {
        let depth = frame.depth as usize;
        let acc = self.children.entry(thread).or_default();
        if acc.len() < depth + 2 {
            acc.resize(depth + 2, 0);
        }
        let children = std::mem::take(&mut acc[depth + 1]);
        let (start, end) = window.clip(frame.start_ns + offset, frame.end_ns + offset)?;
        acc[depth] += end - start;
        Some((end - start).saturating_sub(children))
    }

    /// Forgets every thread (a new process begins).
    pub fn clear(&mut self) {
        self.children.clear();
    }
}
