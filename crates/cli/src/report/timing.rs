//! How `eltrace report` shows time for each timing mode of a trace (`record --timing`):
//! measured times (`exact`), none at all (`none`: the time columns are `-` in the table and
//! `null` in the JSON, rows sort by calls), or the sampler's estimates (`sampled`: the
//! inclusive and exclusive columns are estimated wall time, shares are of the sampled time
//! in traced code; mean and maximum per call are not known, so `-`/`null`).

use eltrace_analysis::{Analysis, FunctionIdx, FunctionStats, SampledTimes};
use serde_json::{Value, json};

use crate::util::fmt_ns;

/// The timing of the trace being reported.
#[derive(Clone, Copy)]
pub(super) enum Timing<'a> {
    Exact,
    None,
    Sampled(&'a SampledTimes),
}

impl<'a> Timing<'a> {
    pub fn of(a: &'a Analysis) -> Timing<'a> {
        if a.has_event_times() {
            Timing::Exact
        } else if let Some(s) = &a.sampled {
            Timing::Sampled(s)
        } else {
            Timing::None
        }
    }

    /// Replaces a row's times by what this timing knows: the estimates (sampled) or zero
    /// (none; shown as `-`). The functions `idxs` were merged into the row.
    pub fn adjust(self, s: &mut FunctionStats, idxs: &[FunctionIdx]) {
        match self {
            Timing::Exact => {}
            Timing::None => {
                s.inclusive_ns = 0;
                s.exclusive_ns = 0;
                s.max_ns = 0;
                s.wall_ns = 0;
            }
            Timing::Sampled(st) => {
                (s.inclusive_ns, s.exclusive_ns) = st.row_estimates(idxs);
                s.max_ns = 0;
                s.wall_ns = 0;
            }
        }
    }

    /// The time shares are of: root frames' time (exact), the sampled time in traced code.
    pub fn total(self, a: &Analysis) -> u64 {
        match self {
            Timing::Exact => a.totals.root_ns,
            Timing::None => 0,
            Timing::Sampled(st) => st.wall_ns.saturating_sub(st.outside_ns),
        }
    }

    /// Whether times are known at all.
    pub fn has_times(self) -> bool {
        !matches!(self, Timing::None)
    }

    /// Whether per-call figures (mean, max, per-thread and per-edge times) are known.
    pub fn per_call(self) -> bool {
        matches!(self, Timing::Exact)
    }

    /// A total or estimate in the JSON.
    pub fn json(self, ns: u64) -> Value {
        if self.has_times() {
            json!(ns)
        } else {
            Value::Null
        }
    }

    /// A per-call figure in the JSON.
    pub fn json_per_call(self, ns: u64) -> Value {
        if self.per_call() {
            json!(ns)
        } else {
            Value::Null
        }
    }

    /// A share in the JSON.
    pub fn json_share(self, share: f64) -> Value {
        if self.has_times() {
            json!(share)
        } else {
            Value::Null
        }
    }

    /// A total or estimate in the table.
    pub fn text(self, ns: u64) -> String {
        match self {
            Timing::Exact => fmt_ns(ns),
            Timing::None => "-".into(),
            Timing::Sampled(_) => format!("~{}", fmt_ns(ns)),
        }
    }

    /// A per-call figure in the table.
    pub fn text_per_call(self, ns: u64) -> String {
        if self.per_call() {
            fmt_ns(ns)
        } else {
            "-".into()
        }
    }

    /// A share in the table.
    pub fn text_share(self, share: f64) -> String {
        if self.has_times() {
            format!("{:.1}%", share * 100.0)
        } else {
            "-".into()
        }
    }

    /// The trace-level JSON facts of the timing (with the samples' totals where the trace
    /// has samples, also beside exact timestamps).
    pub fn summary_json(self, a: &Analysis) -> Value {
        let mut v = json!({ "mode": a.info().timing() });
        if let Some(st) = &a.sampled {
            v["sample_hz"] = a.info().sample_hz().map_or(Value::Null, |h| json!(h));
            v["samples"] = json!(st.samples);
            v["unmatched_samples"] = json!(st.unmatched);
            v["wall_ns"] = json!(st.wall_ns);
            v["outside_ns"] = json!(st.outside_ns);
            v["cpu_ns"] = if st.has_cpu {
                json!(st.cpu_ns)
            } else {
                Value::Null
            };
            v["effective_samples"] = json!(st.effective_samples().round() as u64);
            v["effective_cpu_samples"] = st
                .effective_cpu_samples()
                .map_or(Value::Null, |n| json!(n.round() as u64));
        }
        v
    }

    /// A function's sampled facts in the JSON (`None` for a trace without samples): the
    /// estimates, and their share of the sampled time in traced code.
    pub fn function_json(a: &Analysis, idxs: &[FunctionIdx]) -> Option<Value> {
        let st = a.sampled.as_ref()?;
        let (mut n, mut top, mut i, mut e, mut ic, mut ec) = (0, 0, 0, 0, 0, 0);
        for f in idxs.iter().filter_map(|&i| st.function(i)) {
            n += f.samples;
            top += f.top_samples;
            i += f.inclusive_ns;
            e += f.exclusive_ns;
            ic += f.inclusive_cpu_ns;
            ec += f.exclusive_cpu_ns;
        }
        let cpu = |v: u64| if st.has_cpu { json!(v) } else { Value::Null };
        let traced = st.wall_ns.saturating_sub(st.outside_ns).max(1) as f64;
        Some(json!({
            "samples": n,
            "top_samples": top,
            "inclusive_ns": i,
            "exclusive_ns": e,
            "share": i as f64 / traced,
            "inclusive_cpu_ns": cpu(ic),
            "exclusive_cpu_ns": cpu(ec),
        }))
    }

    /// The line the table's header gets (`None` for exact timing).
    pub fn note(self, a: &Analysis) -> Option<String> {
        match self {
            Timing::Exact => None,
            Timing::None => Some(
                "timing none: no timestamps were recorded; counts, call tree and stacks are \
                 exact, times are not known (-); rows sort by calls"
                    .into(),
            ),
            Timing::Sampled(st) => {
                let mut s = format!(
                    "timing sampled: times (~) are estimates from {} samples ({} of wall time \
                     sampled, {} of it outside traced functions); counts are exact",
                    st.samples,
                    fmt_ns(st.wall_ns),
                    fmt_ns(st.outside_ns)
                );
                if st.has_cpu {
                    s.push_str(&format!(
                        "; threads used {} of CPU in the sampled time",
                        fmt_ns(st.cpu_ns)
                    ));
                }
                let _ = a;
                s.push_str(&precision(st.effective_samples()));
                Some(s)
            }
        }
    }
}

/// What the effective number of samples says of a share's precision: two standard errors of
/// a share of one half, the largest (docs/timing.md, "Error bounds").
fn precision(effective: f64) -> String {
    if effective < 1.0 {
        return String::new();
    }
    let points = 100.0 / effective.sqrt();
    format!(
        "; a share of wall time is within about ±{points:.1} points in 95 % of runs ({} \
         effective samples)",
        effective.round() as u64
    )
}
