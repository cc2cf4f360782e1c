//! The HTML report of a large synthetic trace: its size stays within the node budget however
//! many events there are. In the normal suite it writes 300,000 events, which already make
//! several times more call-tree nodes than the report keeps (2-3 s in a debug build);
//! `ELTRACE_HTML_EVENTS` asks for more, best in release mode:
//!
//! ```sh
//! ELTRACE_HTML_EVENTS=200000000 cargo test --release -p eltrace-export --test export \
//!     -- html_large:: --nocapture
//! ```
//!
//! `ELTRACE_E2E_KEEP=1` keeps the trace and the page (target/tmp/html-large.{eltrace,html}).
//!
//! The program it pretends to trace: 16 threads run requests; a request enters one of 20
//! entry points and calls down a random tree (up to 3 callees per call, picked from 6 per
//! function, 3,000 functions, depth up to 14), each event 5 to 200 ns after the previous.
//! That gives far more distinct call paths than the report holds.

use std::fs::File;
use std::io::BufWriter;
use std::path::PathBuf;
use std::time::Instant;

use eltrace_export::{ExportOptions, Format, HTML_MAX_NODES, export};
use eltrace_trace::testing::app_info;
use eltrace_trace::{
    EndReason, EndRecord, Event, EventKind, FunctionIdx, FunctionRecord, ThreadIdx, ThreadRecord,
    TraceWriter,
};

const FUNCTIONS: u32 = 3_000;
const THREADS: u32 = 16;
const CHUNK: usize = 1 << 16;

/// xorshift64*: the same trace every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// One thread's generator: a stack of (function, callees left to make).
struct Thread {
    rng: Rng,
    ts: u64,
    stack: Vec<(u32, u32)>,
}

impl Thread {
    /// Appends the thread's next events to `out` until it holds `n`.
    fn events(&mut self, out: &mut Vec<Event>, n: usize) {
        while out.len() < n {
            self.ts += 5 + self.rng.below(196);
            let depth = self.stack.len() as u64;
            let (kind, func) = match self.stack.last_mut() {
                None => {
                    let f = self.rng.below(20) as u32;
                    let calls = 1 + self.rng.below(3) as u32;
                    self.stack.push((f, calls));
                    (EventKind::Enter, f)
                }
                Some((f, left)) if *left > 0 && depth < 14 => {
                    *left -= 1;
                    let caller = *f;
                    let k = self.rng.below(6) as u32;
                    let callee =
                        (caller.wrapping_mul(2_654_435_761) ^ k.wrapping_mul(40_503)) % FUNCTIONS;
                    let calls = self.rng.below(4 + depth) as u32;
                    let calls = if calls < 3 { calls + 1 } else { 0 };
                    self.stack.push((callee, calls));
                    (EventKind::Enter, callee)
                }
                Some(&mut (f, _)) => {
                    self.stack.pop();
                    (EventKind::Leave, f)
                }
            };
            out.push(Event {
                ts: self.ts,
                kind,
                func: FunctionIdx(func),
                sp: 0,
            });
        }
    }
}

#[test]
fn large_synthetic_trace() {
    let events: u64 = std::env::var("ELTRACE_HTML_EVENTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(300_000);
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let trace = dir.join("html-large.eltrace");
    let html = dir.join("html-large.html");

    let start = Instant::now();
    let file = BufWriter::with_capacity(1 << 20, File::create(&trace).unwrap());
    let mut w = TraceWriter::new(file, &app_info()).unwrap();
    for f in 0..FUNCTIONS {
        w.write_function(&FunctionRecord {
            module: "App.dll".into(),
            type_name: format!("App.Area{}.Type{}", f % 37, f / 37),
            method: format!("Method{f}"),
            ..FunctionRecord::new(FunctionIdx(f))
        })
        .unwrap();
    }
    let mut threads: Vec<Thread> = (0..THREADS)
        .map(|t| {
            w.write_thread(&ThreadRecord::new(ThreadIdx(t), 1000 + u64::from(t)))
                .unwrap();
            Thread {
                rng: Rng(0x9e37_79b9_7f4a_7c15 ^ u64::from(t + 1)),
                ts: 0,
                stack: Vec::new(),
            }
        })
        .collect();
    let mut written = 0u64;
    // Small runs write in smaller rounds, so that the threads still interleave.
    let chunk = CHUNK.min((events / u64::from(THREADS)).max(1) as usize);
    let mut buf = Vec::with_capacity(chunk);
    while written < events {
        for (t, th) in threads.iter_mut().enumerate() {
            buf.clear();
            th.events(&mut buf, chunk);
            w.write_events(ThreadIdx(t as u32), &buf).unwrap();
            written += buf.len() as u64;
        }
    }
    // Close what is open so the trace ends balanced.
    for (t, th) in threads.iter_mut().enumerate() {
        buf.clear();
        while let Some((f, _)) = th.stack.pop() {
            th.ts += 10;
            buf.push(Event {
                ts: th.ts,
                kind: EventKind::Leave,
                func: FunctionIdx(f),
                sp: 0,
            });
        }
        w.write_events(ThreadIdx(t as u32), &buf).unwrap();
        written += buf.len() as u64;
    }
    let end_ts = threads.iter().map(|t| t.ts).max().unwrap_or(0);
    w.write_end(&EndRecord {
        reason: EndReason::Shutdown,
        ts: end_ts,
        events_written: written,
        ..EndRecord::default()
    })
    .unwrap();
    drop(w);
    let trace_size = std::fs::metadata(&trace).unwrap().len();
    eprintln!(
        "wrote {written} events ({trace_size} bytes) in {:.1} s",
        start.elapsed().as_secs_f64()
    );

    let start = Instant::now();
    let mut out = BufWriter::new(File::create(&html).unwrap());
    let a = export(
        Format::Html,
        File::open(&trace).unwrap(),
        &mut out,
        &ExportOptions::default(),
    )
    .unwrap();
    drop(out);
    let size = std::fs::metadata(&html).unwrap().len();
    let page = std::fs::read_to_string(&html).unwrap();
    let total: usize = page
        .split("\"tree_cap\":")
        .nth(1)
        .and_then(|s| s.split("\"total\":").nth(1))
        .and_then(|s| s.split([',', '}']).next())
        .and_then(|s| s.trim().parse().ok())
        .expect("the page's tree_cap.total");
    eprintln!(
        "html report: {size} bytes for {} events, {} frames, {total} call-tree nodes \
         (at most {HTML_MAX_NODES} kept), in {:.1} s",
        a.totals.events,
        a.totals.frames,
        start.elapsed().as_secs_f64()
    );
    if std::env::var_os("ELTRACE_E2E_KEEP").is_none() {
        let _ = std::fs::remove_file(&trace);
        let _ = std::fs::remove_file(&html);
    }
    assert_eq!(a.totals.events, written);
    // The trace has more call paths than the page keeps, so the budget was applied.
    assert!(total > HTML_MAX_NODES, "{total} call-tree nodes");
    assert!(size < 4_000_000, "{size} bytes");
}
