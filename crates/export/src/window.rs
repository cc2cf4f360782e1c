//! The time window of an export (`--from`, `--to`): which frames it keeps and where it cuts
//! them.

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
