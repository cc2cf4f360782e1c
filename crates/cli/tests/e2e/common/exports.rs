//! Checks of the exports: Chrome trace JSON (valid, one name per thread, nested slices) and
//! folded stacks (well-formed lines, no stack twice).

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::report::string;

/// Checks a Chrome trace export: valid JSON; one `thread_name` metadata event per thread
/// that has complete (`X`) events; on every thread the X events nest properly. Returns the
/// X events per name and the thread names.
pub fn check_chrome(text: &str) -> ChromeSummary {
    let json: Value = serde_json::from_str(text).expect("the Chrome export is valid JSON");
    let events = match &json {
        Value::Array(a) => a.clone(),
        Value::Object(o) => o
            .get("traceEvents")
            .and_then(Value::as_array)
            .expect("a Chrome trace object has traceEvents")
            .clone(),
        _ => panic!("a Chrome trace is an array or an object"),
    };
    let key = |e: &Value| {
        (
            e.get("pid").and_then(Value::as_u64).unwrap_or(0),
            e.get("tid")
                .and_then(Value::as_u64)
                .expect("event has a tid"),
        )
    };
    let mut names: BTreeMap<(u64, u64), Vec<String>> = BTreeMap::new();
    let mut spans: BTreeMap<(u64, u64), Vec<(f64, f64)>> = BTreeMap::new();
    let mut x_by_name: BTreeMap<String, u64> = BTreeMap::new();
    for e in &events {
        match e.get("ph").and_then(Value::as_str) {
            Some("M") if e.get("name").and_then(Value::as_str) == Some("thread_name") => {
                let name = e
                    .pointer("/args/name")
                    .and_then(Value::as_str)
                    .expect("thread_name has args.name");
                names.entry(key(e)).or_default().push(name.to_string());
            }
            Some("X") => {
                let ts = e.get("ts").and_then(Value::as_f64).expect("X has ts");
                let dur = e.get("dur").and_then(Value::as_f64).expect("X has dur");
                assert!(dur >= 0.0, "negative duration: {e}");
                spans.entry(key(e)).or_default().push((ts, ts + dur));
                *x_by_name.entry(string(e, "name").to_string()).or_default() += 1;
            }
            _ => {}
        }
    }
    for (thread, list) in &names {
        assert_eq!(
            list.len(),
            1,
            "thread {thread:?} has {} thread_name events",
            list.len()
        );
    }
    // Timestamps are in µs; allow for their rounding to the ns.
    const EPS: f64 = 0.0015;
    for (thread, list) in spans.iter_mut() {
        assert!(
            names.contains_key(thread),
            "thread {thread:?} has X events but no thread_name"
        );
        // Sort by start, longer first; a span must end within the innermost span that is
        // still open when it starts.
        list.sort_by(|a, b| a.0.total_cmp(&b.0).then(b.1.total_cmp(&a.1)));
        let mut stack: Vec<(f64, f64)> = Vec::new();
        for &(start, end) in list.iter() {
            while stack
                .last()
                .is_some_and(|&(_, top_end)| top_end <= start + EPS)
            {
                stack.pop();
            }
            if let Some(&(top_start, top_end)) = stack.last() {
                assert!(
                    end <= top_end + EPS,
                    "thread {thread:?}: span [{start}, {end}] overlaps [{top_start}, {top_end}]"
                );
            }
            stack.push((start, end));
        }
    }
    ChromeSummary {
        thread_names: names.into_values().flatten().collect(),
        x_by_name,
    }
}

/// What [`check_chrome`] found.
pub struct ChromeSummary {
    pub thread_names: Vec<String>,
    pub x_by_name: BTreeMap<String, u64>,
}

/// Checks a folded-stacks export: every line is `frame;frame;… N` with N an integer, and no
/// stack is listed twice. Returns the stacks as (frames, N).
pub fn check_folded(text: &str) -> Vec<(Vec<String>, u64)> {
    let stacks = parse_folded(text);
    let mut seen = BTreeSet::new();
    for (frames, _) in &stacks {
        assert!(
            seen.insert(frames.clone()),
            "stack listed twice: {frames:?}"
        );
    }
    stacks
}

fn parse_folded(text: &str) -> Vec<(Vec<String>, u64)> {
    assert!(!text.trim().is_empty(), "the folded export is empty");
    text.lines()
        .map(|line| {
            let (stack, n) = line
                .rsplit_once(' ')
                .unwrap_or_else(|| panic!("folded line without a count: {line:?}"));
            let n: u64 = n
                .parse()
                .unwrap_or_else(|_| panic!("folded line's count is not a number: {line:?}"));
            let frames: Vec<String> = stack.split(';').map(str::to_string).collect();
            assert!(
                frames.iter().all(|f| !f.is_empty()),
                "folded line with an empty frame: {line:?}"
            );
            (frames, n)
        })
        .collect()
}
