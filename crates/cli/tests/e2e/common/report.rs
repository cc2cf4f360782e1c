//! The parsed `eltrace report --json` ([`Report`]): lookups by function, edge and thread, and
//! the invariants every recording must satisfy whatever it ran.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::apps::MODULE;

/// The parsed output of `eltrace report --json`.
pub struct Report {
    pub json: Value,
}

/// Reads a non-negative integer field, failing the test with the field's name otherwise.
pub fn uint(v: &Value, field: &str) -> u64 {
    v.get(field)
        .and_then(Value::as_u64)
        .unwrap_or_else(|| panic!("field {field:?} is not a non-negative integer in {v}"))
}

pub fn string<'a>(v: &'a Value, field: &str) -> &'a str {
    v.get(field)
        .and_then(Value::as_str)
        .unwrap_or_else(|| panic!("field {field:?} is not a string in {v}"))
}

impl Report {
    pub fn trace(&self) -> &Value {
        self.json.get("trace").expect("report has \"trace\"")
    }

    pub fn trace_uint(&self, field: &str) -> u64 {
        uint(self.trace(), field)
    }

    pub fn functions(&self) -> &[Value] {
        self.json
            .get("functions")
            .and_then(Value::as_array)
            .expect("report has a \"functions\" array")
    }

    pub fn threads(&self) -> &[Value] {
        self.json
            .get("threads")
            .and_then(Value::as_array)
            .expect("report has a \"threads\" array")
    }

    pub fn edges(&self) -> &[Value] {
        self.json
            .get("edges")
            .and_then(Value::as_array)
            .expect("report has an \"edges\" array")
    }

    /// The entry of the function `name` in Scenarios.dll; there must be exactly one.
    pub fn function(&self, name: &str) -> &Value {
        let found: Vec<&Value> = self
            .functions()
            .iter()
            .filter(|f| string(f, "name") == name && string(f, "module") == MODULE)
            .collect();
        match found.as_slice() {
            [one] => one,
            [] => panic!(
                "no function {name:?} of {MODULE} in the report; it has: {:?}",
                self.names()
            ),
            many => panic!(
                "{} entries for {name:?} of {MODULE} (one expected): {many:?}",
                many.len()
            ),
        }
    }

    /// Whether the report lists `name` (in any module).
    pub fn has_function(&self, name: &str) -> bool {
        self.functions().iter().any(|f| string(f, "name") == name)
    }

    pub fn calls(&self, name: &str) -> u64 {
        uint(self.function(name), "calls")
    }

    /// The names of every listed function.
    pub fn names(&self) -> BTreeSet<String> {
        self.functions()
            .iter()
            .map(|f| string(f, "name").to_string())
            .collect()
    }

    /// The calls of the edge caller → callee (caller "" for roots); 0 if there is none.
    pub fn edge_calls(&self, caller: &str, callee: &str) -> u64 {
        let found: Vec<&Value> = self
            .edges()
            .iter()
            .filter(|e| string(e, "caller") == caller && string(e, "callee") == callee)
            .collect();
        assert!(found.len() <= 1, "edge {caller} -> {callee} listed twice");
        found.first().map_or(0, |e| uint(e, "calls"))
    }

    /// The root edges (caller "") as callee → calls.
    pub fn roots(&self) -> BTreeMap<String, u64> {
        self.edges()
            .iter()
            .filter(|e| string(e, "caller").is_empty())
            .map(|e| (string(e, "callee").to_string(), uint(e, "calls")))
            .collect()
    }

    /// Every edge whose callee is `callee`, as (caller, calls).
    pub fn callers_of(&self, callee: &str) -> BTreeMap<String, u64> {
        self.edges()
            .iter()
            .filter(|e| string(e, "callee") == callee)
            .map(|e| (string(e, "caller").to_string(), uint(e, "calls")))
            .collect()
    }

    /// The threads named `name`; there must be exactly one.
    pub fn thread(&self, name: &str) -> &Value {
        let found: Vec<&Value> = self
            .threads()
            .iter()
            .filter(|t| t.get("name").and_then(Value::as_str) == Some(name))
            .collect();
        match found.as_slice() {
            [one] => one,
            _ => panic!(
                "{} threads named {name:?} (one expected); threads: {}",
                found.len(),
                Value::from(self.threads().to_vec())
            ),
        }
    }

    /// The threads that have events (ran selected code).
    pub fn active_threads(&self) -> Vec<&Value> {
        self.threads()
            .iter()
            .filter(|t| uint(t, "events") > 0)
            .collect()
    }

    /// The sum of the threads' events.
    pub fn sum_of_thread_events(&self) -> u64 {
        self.threads().iter().map(|t| uint(t, "events")).sum()
    }

    /// The checks every recording must pass, whatever it ran (`open_expected` frames may be
    /// open at the end; `complete`: the trace must have its end record).
    pub fn check_invariants(&self, open_expected: u64, complete: bool) {
        let t = self.trace();
        assert_eq!(
            self.trace_uint("dropped_events"),
            0,
            "events were dropped: {t}"
        );
        assert_eq!(
            self.trace_uint("mismatched_frames"),
            0,
            "mismatched frames: {t}"
        );
        assert_eq!(
            self.trace_uint("unmatched_leaves"),
            0,
            "unmatched leaves: {t}"
        );
        if complete {
            assert_eq!(
                t.get("truncated").and_then(Value::as_bool),
                Some(false),
                "the trace is truncated: {t}"
            );
        }
        assert_eq!(
            self.trace_uint("open_frames_at_end"),
            open_expected,
            "open frames at end: {t}"
        );

        // Per function: inclusive >= exclusive >= 0, and open_at_end adds up.
        let mut open_sum = 0;
        for f in self.functions() {
            // Frames: `calls` counts logical calls of async methods, `segments` their frames.
            let calls = uint(f, "segments");
            let inclusive = ns(f, "inclusive_ns");
            let exclusive = ns(f, "exclusive_ns");
            assert!(calls > 0, "a listed function has no calls: {f}");
            assert!(
                inclusive >= exclusive,
                "inclusive < exclusive for {}: {f}",
                string(f, "name")
            );
            assert!(
                uint(f, "open_at_end") <= calls,
                "more open frames than calls: {f}"
            );
            assert!(
                uint(f, "unwound") <= calls,
                "more unwound frames than calls: {f}"
            );
            open_sum += uint(f, "open_at_end");
        }
        assert_eq!(
            open_sum, open_expected,
            "functions' open_at_end do not add up"
        );
        let thread_open: u64 = self
            .threads()
            .iter()
            .map(|th| uint(th, "open_frames_at_end"))
            .sum();
        assert_eq!(
            thread_open, open_expected,
            "threads' open frames do not add up"
        );
        assert_eq!(
            self.sum_of_thread_events(),
            self.trace_uint("events"),
            "threads' events do not add up to the trace's"
        );

        self.check_edges();
    }

    /// Edges agree with the functions: every function's calls are the sum of its incoming
    /// edges' calls, and (for functions not in a cycle through other functions) a caller's
    /// inclusive time is at least the sum of its other callees' inclusive times (a direct
    /// recursion's own edge is left out: its time holds callees counted at their own edges).
    fn check_edges(&self) {
        let mut by_name: BTreeMap<&str, (u64, u64)> = BTreeMap::new();
        for f in self.functions() {
            let e = by_name.entry(string(f, "name")).or_default();
            e.0 += uint(f, "segments");
            e.1 += ns(f, "inclusive_ns");
        }
        let mut incoming: BTreeMap<&str, u64> = BTreeMap::new();
        let mut outgoing: BTreeMap<&str, u64> = BTreeMap::new();
        let mut graph: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
        for e in self.edges() {
            let caller = string(e, "caller");
            let callee = string(e, "callee");
            assert!(uint(e, "calls") > 0, "an edge without calls: {e}");
            *incoming.entry(callee).or_default() += uint(e, "calls");
            if !caller.is_empty() {
                if caller != callee {
                    *outgoing.entry(caller).or_default() += ns(e, "inclusive_ns");
                    graph.entry(caller).or_default().insert(callee);
                }
                assert!(by_name.contains_key(caller), "edge from unknown {caller:?}");
            }
            assert!(by_name.contains_key(callee), "edge to unknown {callee:?}");
        }
        for (name, (calls, _)) in &by_name {
            assert_eq!(
                incoming.get(name).copied().unwrap_or(0),
                *calls,
                "the edges into {name} do not add up to its segments (frames)"
            );
        }
        for (caller, callees_ns) in &outgoing {
            if in_cycle(&graph, caller) {
                continue;
            }
            let inclusive = by_name[caller].1;
            assert!(
                inclusive >= *callees_ns,
                "{caller}: inclusive {inclusive} ns < its callees' {callees_ns} ns"
            );
        }
    }
}

/// A time of the report (ns); `null` (a trace with no such time: `--timing none|sampled`
/// edges, `none` functions) counts as 0, so the time checks hold trivially there.
fn ns(v: &Value, key: &str) -> u64 {
    if v[key].is_null() { 0 } else { uint(v, key) }
}

/// Whether `start` reaches itself through at least one other function.
fn in_cycle(graph: &BTreeMap<&str, BTreeSet<&str>>, start: &str) -> bool {
    let mut seen = BTreeSet::new();
    let mut todo: Vec<&str> = graph.get(start).into_iter().flatten().copied().collect();
    while let Some(n) = todo.pop() {
        if n == start {
            return true;
        }
        if seen.insert(n) {
            todo.extend(graph.get(n).into_iter().flatten().copied());
        }
    }
    false
}
