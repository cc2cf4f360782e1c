//! `eltrace diff --fail-on`: the gates a CI job puts on a diff. A gate is
//! `METRIC>+LIMIT[:GLOB]`: `calls`, `inclusive` or `exclusive` grew by more than `LIMIT`
//! (`5%` relative to the base; `0` or `100` calls; `2ms` of time) in a function whose name
//! matches `GLOB` (every function without one). A function new in the second trace grew by
//! all of its value (by an infinite share of a base of 0).

use eltrace_trace::glob;

use super::change::Change;

/// What a gate measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Metric {
    Calls,
    Inclusive,
    Exclusive,
}

impl Metric {
    /// A time, which timeless traces do not have.
    pub fn is_time(self) -> bool {
        self != Metric::Calls
    }

    /// The (base, new) values of `c`.
    pub fn of(self, c: &Change) -> (u64, u64) {
        match self {
            Metric::Calls => (c.base.calls, c.new.calls),
            Metric::Inclusive => (c.base.inclusive_ns, c.new.inclusive_ns),
            Metric::Exclusive => (c.base.exclusive_ns, c.new.exclusive_ns),
        }
    }
}

/// How much growth a gate allows.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Limit {
    /// A share of the base value, in percent.
    Percent(f64),
    /// An absolute amount (calls, or ns for times).
    Amount(u64),
}

/// One `--fail-on` gate.
#[derive(Debug, Clone, PartialEq)]
pub struct Gate {
    pub text: String,
    pub metric: Metric,
    pub limit: Limit,
    pub glob: Option<String>,
}

impl Gate {
    /// Parses `METRIC>+LIMIT[:GLOB]` (see the module doc).
    pub fn parse(text: &str) -> Result<Gate, String> {
        let bad = |why: &str| {
            format!(
                "--fail-on '{text}': {why} (expected METRIC>+LIMIT[:GLOB], e.g. 'calls>+0%', \
                 'calls>+5%:MyApp.*', 'exclusive>+20%', 'inclusive>+2ms')"
            )
        };
        let (rule, glob) = match text.split_once(':') {
            Some((r, g)) if !g.is_empty() => (r, Some(g.to_string())),
            Some(_) => return Err(bad("an empty function pattern after ':'")),
            None => (text, None),
        };
        let (metric, limit) = rule
            .split_once('>')
            .ok_or_else(|| bad("no '>' between the metric and the limit"))?;
        let metric = match metric.trim() {
            "calls" => Metric::Calls,
            "inclusive" => Metric::Inclusive,
            "exclusive" => Metric::Exclusive,
            m => {
                return Err(bad(&format!(
                    "unknown metric '{m}' (calls, inclusive, exclusive)"
                )));
            }
        };
        let limit = limit.trim();
        let limit = limit.strip_prefix('+').unwrap_or(limit);
        let limit = if let Some(p) = limit.strip_suffix('%') {
            let v: f64 = p
                .parse()
                .map_err(|_| bad(&format!("'{p}' is not a number")))?;
            if !(v.is_finite() && v >= 0.0) {
                return Err(bad("a negative or infinite share"));
            }
            Limit::Percent(v)
        } else if metric.is_time() {
            Limit::Amount(parse_duration(limit).ok_or_else(|| {
                bad(&format!(
                    "'{limit}' is neither a share (N%) nor a time (ns, us, ms, s)"
                ))
            })?)
        } else {
            Limit::Amount(limit.parse().map_err(|_| {
                bad(&format!(
                    "'{limit}' is neither a share (N%) nor a number of calls"
                ))
            })?)
        };
        Ok(Gate {
            text: text.to_string(),
            metric,
            limit,
            glob,
        })
    }

    /// Whether change `c` breaks this gate.
    pub fn broken_by(&self, c: &Change) -> bool {
        if let Some(g) = &self.glob {
            if !glob::matches(g, &c.name) {
                return false;
            }
        }
        let (base, new) = self.metric.of(c);
        if new <= base {
            return false;
        }
        let grew = new - base;
        match self.limit {
            Limit::Amount(a) => grew > a,
            // A base of 0 grew by an infinite share.
            Limit::Percent(p) => base == 0 || grew as f64 * 100.0 > p * base as f64,
        }
    }
}

/// `250ns`, `3us`/`3µs`, `2ms`, `1.5s`, or a plain number of ns.
fn parse_duration(s: &str) -> Option<u64> {
    let (num, scale) = [
        ("ns", 1.0),
        ("us", 1e3),
        ("µs", 1e3),
        ("ms", 1e6),
        ("s", 1e9),
    ]
    .iter()
    .find_map(|(unit, scale)| s.strip_suffix(unit).map(|n| (n, *scale)))
    .unwrap_or((s, 1.0));
    let v: f64 = num.trim().parse().ok()?;
    (v.is_finite() && v >= 0.0).then(|| (v * scale).round() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diff::change::{Change, Side};

    fn change(name: &str, base: u64, new: u64) -> Change {
        Change {
            process: String::new(),
            name: name.into(),
            module: "App.dll".into(),
            base: Side {
                calls: base,
                inclusive_ns: base * 1000,
                exclusive_ns: base * 100,
                present: base > 0,
            },
            new: Side {
                calls: new,
                inclusive_ns: new * 1000,
                exclusive_ns: new * 100,
                present: new > 0,
            },
        }
    }

    #[test]
    fn gates_parse_and_judge() {
        let g = Gate::parse("calls>+0%").unwrap();
        assert!(g.broken_by(&change("App.A", 10, 11)));
        assert!(!g.broken_by(&change("App.A", 10, 10)));
        assert!(!g.broken_by(&change("App.A", 10, 9)));
        assert!(g.broken_by(&change("App.New", 0, 1)), "a new function grew");
        let g = Gate::parse("calls>+5%:App.B*").unwrap();
        assert!(!g.broken_by(&change("App.A", 10, 20)), "not matched");
        assert!(!g.broken_by(&change("App.B", 100, 105)), "5% is allowed");
        assert!(g.broken_by(&change("App.B", 100, 106)));
        let g = Gate::parse("calls>+3").unwrap();
        assert!(!g.broken_by(&change("App.A", 10, 13)));
        assert!(g.broken_by(&change("App.A", 10, 14)));
        let g = Gate::parse("exclusive>+20%").unwrap();
        assert!(g.metric.is_time());
        assert!(g.broken_by(&change("App.A", 10, 13)));
        let g = Gate::parse("inclusive>+2ms").unwrap();
        assert_eq!(g.limit, Limit::Amount(2_000_000));
        assert!(!g.broken_by(&change("App.A", 1000, 2000)), "+1 ms");
        assert!(g.broken_by(&change("App.A", 1000, 4000)), "+3 ms");
        for bad in [
            "calls",
            "calls>",
            "calls>+x%",
            "time>+1%",
            "calls>+1%:",
            "calls>+-1%",
            "inclusive>+2parsecs",
        ] {
            assert!(Gate::parse(bad).is_err(), "{bad}");
        }
    }
}
