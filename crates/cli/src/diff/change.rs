//! One function on both sides of a diff: its values in each trace ([`Side`]) and the
//! [`Change`] between them, which the table, the JSON and the gates (gate.rs) read.

/// One function's values in one trace (zeros when absent).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Side {
    pub calls: u64,
    pub inclusive_ns: u64,
    pub exclusive_ns: u64,
    pub present: bool,
}

/// One function in both traces.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// The command line of its processes (empty when both sessions have one command).
    pub process: String,
    pub name: String,
    pub module: String,
    pub base: Side,
    pub new: Side,
}

impl Change {
    pub fn status(&self) -> &'static str {
        match (self.base.present, self.new.present) {
            (false, _) => "new",
            (_, false) => "gone",
            _ if self.base == self.new => "same",
            _ => "changed",
        }
    }

    pub fn calls_delta(&self) -> i128 {
        i128::from(self.new.calls) - i128::from(self.base.calls)
    }

    pub fn time_delta(&self) -> i128 {
        i128::from(self.new.inclusive_ns) - i128::from(self.base.inclusive_ns)
    }
}
