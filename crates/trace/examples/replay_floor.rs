//! The floor under the analysis's speed (docs/performance.md "Analysis speed"): how long
//! reading and decoding a trace takes on one thread, and how long with the plainest replay
//! added (a stack per thread, events in file order, calls and inclusive/exclusive time per
//! function and per caller→callee edge; no reorder across threads, no async rules, no
//! recursion flags). What `eltrace report` does beyond this is what exactness costs.
//!
//! ```text
//! cargo run --release -p eltrace-trace --example replay_floor -- TRACE          # read only
//! cargo run --release -p eltrace-trace --example replay_floor -- TRACE replay   # and replay
//! ```

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::time::Instant;

use eltrace_trace::{EventKind, Record, TraceReader};

/// What the plain replay sums per function.
#[derive(Default, Clone, Copy)]
struct Sums {
    calls: u64,
    inclusive_ns: u64,
    exclusive_ns: u64,
}

/// An open frame: function, start, time in callees.
type Open = (u32, u64, u64);

/// A multiply-rotate hash for integer keys (as the analysis uses).
#[derive(Default)]
struct IntHash(u64);

impl Hasher for IntHash {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }
    fn write_u64(&mut self, i: u64) {
        self.0 = (self.0.rotate_left(5) ^ i).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
    fn finish(&self) -> u64 {
        self.0.rotate_left(26)
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let path = args.next().ok_or("usage: replay_floor TRACE [replay]")?;
    let replay = args.next().as_deref() == Some("replay");
    let start = Instant::now();
    let file = std::io::BufReader::new(std::fs::File::open(&path)?);
    let mut reader = TraceReader::new(file)?;
    let mut events = 0u64;
    let mut stacks: Vec<Vec<Open>> = Vec::new();
    // By function index, as the trace's indices are dense.
    let mut functions: Vec<Sums> = Vec::new();
    let mut edges: HashMap<u64, (u64, u64), BuildHasherDefault<IntHash>> = HashMap::default();
    while let Some(rec) = reader.next_record()? {
        let Record::Events {
            thread,
            events: chunk,
        } = rec
        else {
            continue;
        };
        events += chunk.len() as u64;
        if replay {
            let t = thread.0 as usize;
            if stacks.len() <= t {
                stacks.resize(t + 1, Vec::new());
            }
            let stack = &mut stacks[t];
            for e in &chunk {
                match e.kind {
                    EventKind::Enter => stack.push((e.func.0, e.ts, 0)),
                    EventKind::Leave | EventKind::Tailcall | EventKind::Unwind => {
                        while let Some((f, s, children)) = stack.pop() {
                            let dur = e.ts.saturating_sub(s);
                            let caller = stack.last().map_or(u32::MAX, |p| p.0);
                            if let Some(p) = stack.last_mut() {
                                p.2 += dur;
                            }
                            if functions.len() <= f as usize {
                                functions.resize(f as usize + 1, Sums::default());
                            }
                            let fs = &mut functions[f as usize];
                            fs.calls += 1;
                            fs.inclusive_ns += dur;
                            fs.exclusive_ns += dur.saturating_sub(children);
                            let es = edges
                                .entry(u64::from(caller) << 32 | u64::from(f))
                                .or_default();
                            es.0 += 1;
                            es.1 += dur;
                            if f == e.func.0 {
                                break;
                            }
                        }
                    }
                    _ => {}
                }
            }
        }
        reader.recycle(chunk);
    }
    let s = start.elapsed().as_secs_f64();
    let what = if replay { "read and replayed" } else { "read" };
    let calls: u64 = functions.iter().map(|f| f.calls).sum();
    println!(
        "{what} {events} events in {s:.2} s ({:.1} M events/s); {calls} calls, {} functions, {} edges",
        events as f64 / s / 1e6,
        functions.iter().filter(|f| f.calls > 0).count(),
        edges.len()
    );
    Ok(())
}
