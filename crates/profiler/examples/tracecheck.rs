//! Development check: reads a trace and prints per-function counts, per-thread balance,
//! drops and the End record. `cargo run -p eltrace-profiler --example tracecheck -- FILE`

use std::collections::HashMap;

use eltrace_trace::{EventKind, Record, TraceReader};

fn main() {
    let path = std::env::args()
        .nth(1)
        .expect("usage: tracecheck FILE [--all]");
    let all = std::env::args().any(|a| a == "--all");
    let list = std::env::args().any(|a| a == "--functions");
    let file = std::io::BufReader::new(std::fs::File::open(&path).expect("open"));
    let mut r = TraceReader::new(file).expect("header");
    let mut functions = HashMap::new();
    let mut threads = HashMap::new();
    let mut counts: HashMap<(u32, &'static str), u64> = HashMap::new();
    let mut stacks: HashMap<u32, Vec<u32>> = HashMap::new();
    let mut mismatches = 0u64;
    let mut events = 0u64;
    let mut dropped = 0u64;
    let mut sp_zero = 0u64;
    let mut diagnostics = Vec::new();
    let mut end = None;
    let mut hooked = 0;
    while let Some(rec) = r.next_record().expect("record") {
        match rec {
            Record::Info(i) => println!(
                "info: runtime={:?} hook_mode={:?} command={:?} extra={:?}",
                i.runtime, i.hook_mode, i.command, i.extra
            ),
            Record::Function(f) => {
                if list {
                    println!(
                        "fn {} {}!{} hooked={}",
                        f.idx.0,
                        f.module,
                        f.full_name(),
                        f.flags.hooked()
                    );
                }
                if f.flags.hooked() {
                    hooked += 1;
                }
                functions.insert(f.idx.0, f);
            }
            Record::Thread(t) => {
                threads.insert(t.idx.0, t);
            }
            Record::Events { thread, events: ev } => {
                let st = stacks.entry(thread.0).or_default();
                for e in ev {
                    events += 1;
                    if matches!(
                        e.kind,
                        EventKind::Enter | EventKind::Leave | EventKind::Tailcall
                    ) && e.sp == 0
                    {
                        sp_zero += 1;
                    }
                    assert!(
                        e.kind == EventKind::Throw || functions.contains_key(&e.func.0),
                        "event before its function record: {e:?}"
                    );
                    *counts.entry((e.func.0, e.kind.name())).or_default() += 1;
                    match e.kind {
                        EventKind::Enter => st.push(e.func.0),
                        EventKind::Leave | EventKind::Tailcall | EventKind::Unwind => {
                            if st.last() == Some(&e.func.0) {
                                st.pop();
                            } else {
                                mismatches += 1;
                                if let Some(p) = st.iter().rposition(|&f| f == e.func.0) {
                                    st.truncate(p);
                                }
                            }
                        }
                        _ => {}
                    }
                }
            }
            Record::Dropped { count, .. } => dropped += count,
            Record::Diagnostic(d) => diagnostics.push(d),
            Record::End(e) => end = Some(e),
            Record::Value(_) => {}
        }
    }
    let mut rows: Vec<_> = counts
        .iter()
        .filter(|((f, k), _)| {
            *k == "enter" && (all || functions.get(f).is_some_and(|f| !f.flags.framework()))
        })
        .collect();
    rows.sort_by_key(|(_, n)| std::cmp::Reverse(**n));
    for ((f, _), n) in rows.iter().take(40) {
        let func = &functions[f];
        let get = |k| counts.get(&(*f, k)).copied().unwrap_or(0);
        println!(
            "{:>8} enter {:>8} leave {:>4} tail {:>4} unwind {:>4} catch  {}!{}",
            n,
            get("leave"),
            get("tailcall"),
            get("unwind"),
            get("catch"),
            func.module,
            func.full_name()
        );
    }
    let throws = counts
        .iter()
        .filter(|((_, k), _)| *k == "throw")
        .map(|(_, n)| n)
        .sum::<u64>();
    for (t, st) in &stacks {
        let th = &threads[t];
        println!(
            "thread {t} tid={} name={:?} open_at_end={}",
            th.os_tid,
            th.name,
            st.iter()
                .map(|f| functions[f].full_name())
                .collect::<Vec<_>>()
                .join(" > ")
        );
    }
    for d in &diagnostics {
        println!("diagnostic: {d}");
    }
    println!(
        "functions={} hooked={} threads={} events={events} throws={throws} dropped_records={dropped} mismatches={mismatches} sp_zero={sp_zero} truncated={}",
        functions.len(),
        hooked,
        threads.len(),
        r.truncated()
    );
    println!("end: {end:?}");
}
