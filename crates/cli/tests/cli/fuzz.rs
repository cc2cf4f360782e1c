//! A mutation fuzzer over traces (issue 16): structured mutations of synthetic seed traces
//! (and of real ones from `ELTRACE_FUZZ_SEEDS`, a directory of `*.eltrace`), with the
//! chunk checksums recomputed so that the mutations reach the decoders, plus truncations.
//! Each case runs one reader command of the built `eltrace` under an address-space, output
//! and time limit (the `limits` module); the test fails on a panic, an abort (an allocation past
//! the limit aborts), a signal, a hang or an exit code other than 0 and 1, and keeps the
//! failing input in the target's temp directory.
//!
//! ```text
//! seed trace → chunks → mutate (fields, varints, bits, kinds, order, lengths, splices)
//!            → re-checksum (most cases) → maybe truncate → eltrace <cmd> case.eltrace
//! ```
//!
//! `ELTRACE_FUZZ_CASES` (default 2000) and `ELTRACE_FUZZ_SEED` choose the run;
//! scripts/fuzz.sh runs a long one.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use crate::limits::run_limited;
use crate::support::*;
use eltrace_trace::testing::{Function, TraceBuilder, app_info};
use eltrace_trace::{EventKind, ValueStatus};

const MEM: u64 = 1 << 30;
const OUT_MAX: u64 = 320 << 20;
const TIME: Duration = Duration::from_secs(30);

/// xorshift64*: small, deterministic.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
}

fn crc32(parts: &[&[u8]]) -> u32 {
    let mut c = !0u32;
    for &b in parts.iter().flat_map(|p| p.iter()) {
        c ^= u32::from(b);
        for _ in 0..8 {
            c = if c & 1 != 0 {
                (c >> 1) ^ 0xEDB8_8320
            } else {
                c >> 1
            };
        }
    }
    !c
}

/// A trace as its header and chunks (kind, payload); `rest` is what follows the last whole
/// chunk.
struct Chunks {
    header: Vec<u8>,
    chunks: Vec<(u8, Vec<u8>)>,
}

fn split(bytes: &[u8]) -> Chunks {
    let mut chunks = Vec::new();
    let mut at = 12;
    while at + 12 <= bytes.len() {
        let len = u32::from_le_bytes(bytes[at + 4..at + 8].try_into().unwrap()) as usize;
        if at + 12 + len > bytes.len() {
            break;
        }
        chunks.push((bytes[at], bytes[at + 12..at + 12 + len].to_vec()));
        at += 12 + len;
    }
    Chunks {
        header: bytes[..12].to_vec(),
        chunks,
    }
}

fn join(c: &Chunks, rng: &mut Rng, fix_crc: bool) -> Vec<u8> {
    let mut out = c.header.clone();
    for (kind, payload) in &c.chunks {
        let mut head = [0u8; 8];
        head[0] = *kind;
        head[4..8].copy_from_slice(&(payload.len() as u32).to_le_bytes());
        let crc = if fix_crc || rng.chance(80) {
            crc32(&[&head, payload])
        } else {
            rng.next() as u32
        };
        out.extend_from_slice(&head);
        out.extend_from_slice(&crc.to_le_bytes());
        out.extend_from_slice(payload);
    }
    out
}

fn put_uvar(out: &mut Vec<u8>, mut v: u64) {
    loop {
        let b = (v & 0x7F) as u8;
        v >>= 7;
        if v == 0 {
            out.push(b);
            return;
        }
        out.push(b | 0x80);
    }
}

/// The byte ranges of the first `n` varints of `p`.
fn varints(p: &[u8], n: usize) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut at = 0;
    while out.len() < n && at < p.len() {
        let start = at;
        while at < p.len() && p[at] & 0x80 != 0 && at - start < 10 {
            at += 1;
        }
        at += 1;
        out.push((start, at.min(p.len())));
    }
    out
}

/// Values a field of the file should never be trusted with.
fn hostile_value(rng: &mut Rng) -> u64 {
    const V: [u64; 12] = [
        0,
        1,
        2,
        0x7F,
        0xFFFF,
        65_536,
        1 << 31,
        (1 << 31) - 1,
        u32::MAX as u64,
        1 << 40,
        u64::MAX >> 1,
        u64::MAX,
    ];
    if rng.chance(70) {
        V[rng.below(V.len())]
    } else {
        1u64 << rng.below(64)
    }
}

fn mutate(c: &mut Chunks, seeds: &[Chunks], rng: &mut Rng) {
    let n = c.chunks.len();
    if n == 0 {
        return;
    }
    let i = rng.below(n);
    match rng.below(11) {
        // A field (one of the first varints) set to a hostile value.
        0..=3 => {
            let p = &mut c.chunks[i].1;
            let fields = varints(p, 6);
            if let Some(&(a, b)) = fields.get(rng.below(fields.len())) {
                let mut v = Vec::new();
                put_uvar(&mut v, hostile_value(rng));
                p.splice(a..b, v);
            }
        }
        // Bit flips.
        4 => {
            let p = &mut c.chunks[i].1;
            for _ in 0..1 + rng.below(4) {
                if !p.is_empty() {
                    let at = rng.below(p.len());
                    p[at] ^= 1 << rng.below(8);
                }
            }
        }
        // Another kind (known or not).
        5 => c.chunks[i].0 = rng.below(12) as u8,
        // Duplicate, drop, or move a chunk.
        6 => {
            let ch = c.chunks[i].clone();
            let to = rng.below(n + 1);
            c.chunks.insert(to, ch);
        }
        7 => {
            if rng.chance(50) {
                c.chunks.remove(i);
            } else {
                let ch = c.chunks.remove(i);
                let to = rng.below(n);
                c.chunks.insert(to, ch);
            }
        }
        // Cut or extend a payload.
        8 => {
            let p = &mut c.chunks[i].1;
            if rng.chance(50) {
                let keep = rng.below(p.len() + 1);
                p.truncate(keep);
            } else {
                for _ in 0..1 + rng.below(16) {
                    p.push(rng.next() as u8);
                }
            }
        }
        // A chunk from another seed (its indices mean something else here).
        9 => {
            let other = &seeds[rng.below(seeds.len())];
            if !other.chunks.is_empty() {
                let ch = other.chunks[rng.below(other.chunks.len())].clone();
                c.chunks.insert(rng.below(n + 1), ch);
            }
        }
        // A doubling run: the issue's 16 chunks with indices up to 2^31-1.
        _ => {
            let (kind, p) = c.chunks[i].clone();
            if let Some(&(a, b)) = varints(&p, 1).first() {
                for bit in 16..32u32 {
                    let mut q = p.clone();
                    let mut v = Vec::new();
                    put_uvar(&mut v, (1u64 << bit).min((1 << 31) - 1));
                    q.splice(a..b, v);
                    c.chunks.insert(i, (kind, q));
                }
            }
        }
    }
}

/// The seed traces: every record kind, several threads, exceptions, values, drops, waits,
/// state-machine flags, a deep recursion.
fn seeds() -> Vec<Vec<u8>> {
    use EventKind::*;
    let mut all = vec![sample_trace(true), sample_trace(false)];
    let valued = TraceBuilder::new(app_info())
        .functions([("App.dll", "App.P", "Main"), ("App.dll", "App.P", "Add")])
        .function(
            Function::new("App.dll", "App.P+<Work>d__3", "MoveNext")
                .token(0x0600_0003)
                .flags(0x11),
        )
        .function(
            Function::new("App.dll", "App.P", "Work")
                .impl_flags(0x2000)
                .flags(0x45),
        )
        .value(0, ValueStatus::Ok, "a=1, b=2")
        .value(1, ValueStatus::Failed, "0x80131362")
        .named_thread(0, 1001, 1, "Main")
        .events_sp(
            0,
            &[
                (0, Enter, 0, 0x7000),
                (10, Enter, 1, 0x6F00),
                (10, Value, 0, 0x6F00),
                (20, Leave, 1, 0x6F00),
                (20, Value, 1, 0x6F00),
                (25, Enter, 3, 0x6E00),
                (26, Enter, 2, 0x6D00),
                (27, Throw, 2, 0x6D00),
                (28, Unwind, 2, 0x6D00),
                (29, Catch, 3, 0x6E00),
                (30, Leave, 3, 0x6E00),
            ],
        )
        .dropped(0, 5)
        .thread(1, 1002)
        .events(
            1,
            &[
                (5, Enter, 3),
                (6, Tailcall, 3),
                (7, Enter, 2),
                (9, Leave, 2),
            ],
        )
        .waits(1, 3, 1_000)
        .events(0, &[(40, Leave, 0)])
        .end(50);
    all.push(valued);
    let mut deep = vec![(0, Enter, 0)];
    for i in 0..3_000 {
        deep.push((1 + i, Enter, 1));
    }
    for i in 0..3_000 {
        deep.push((5_000 + i, Leave, 1));
    }
    deep.push((9_000, Leave, 0));
    all.push(
        TraceBuilder::new(app_info())
            .functions([("App.dll", "App.P", "Main"), ("App.dll", "App.P", "Rec")])
            .thread(0, 1)
            .events(0, &deep)
            .end(10_000),
    );
    all.push(deep_sampled(200, 50));
    if let Ok(dir) = std::env::var("ELTRACE_FUZZ_SEEDS") {
        for e in std::fs::read_dir(dir).expect("ELTRACE_FUZZ_SEEDS") {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "eltrace") {
                all.push(std::fs::read(p).unwrap());
            }
        }
    }
    all
}

/// A `--timing sampled` trace whose thread goes `depth` frames deep (three functions
/// recursing through each other) and is sampled `samples` times there, 100 µs apart (10 kHz).
fn deep_sampled(depth: u64, samples: u64) -> Vec<u8> {
    use EventKind::*;
    let enters: Vec<(u64, EventKind, u32)> =
        (0..depth).map(|i| (i, Enter, (i % 3) as u32)).collect();
    let leaves: Vec<(u64, EventKind, u32)> = (0..depth)
        .rev()
        .map(|i| (depth + i, Leave, (i % 3) as u32))
        .collect();
    let at: Vec<(u32, u64, u64, Option<u64>)> = (0..=samples)
        .map(|k| {
            (
                0,
                if k == 0 { 0 } else { depth },
                k * 100_000,
                Some(k * 90_000),
            )
        })
        .collect();
    TraceBuilder::new(eltrace_trace::testing::timed_info("sampled", 10_000))
        .functions([
            ("App.dll", "App.P", "A"),
            ("App.dll", "App.P", "B"),
            ("App.dll", "App.P", "C"),
        ])
        .thread(0, 1)
        .samples(&at[..1])
        .events(0, &enters)
        .samples(&at[1..])
        .events(0, &leaves)
        .end(2 * depth)
}

/// Issue 28: a stack 100,000 deep held for 3 s of 10 kHz samples. The sampled analysis
/// credits a sample to the top of the stack only, so its work (counted by the estimator, not
/// timed) stays within a few steps per event and sample, where crediting every frame at every
/// sample took depth × samples = 3·10^9 steps (72.6 s of `report` for the issue's trace); and
/// `eltrace report` on it ends cleanly within the fuzzer's limits.
#[test]
fn a_deep_sampled_stack_costs_events_plus_samples() {
    let (depth, samples) = (100_000u64, 30_000u64);
    let bytes = deep_sampled(depth, samples);
    let a = eltrace_analysis::analyze(&bytes[..], &eltrace_analysis::Options::default())
        .expect("the trace reads");
    let s = a.sampled.as_ref().expect("sampled times");
    let events = 2 * depth;
    let bound = 6 * (events + samples);
    assert!(s.steps() <= bound, "{} steps > {bound}", s.steps());
    assert_eq!(s.samples, samples + 1);
    for f in 0..3 {
        let st = s.function(eltrace_trace::FunctionIdx(f)).expect("sampled");
        assert_eq!((st.samples, st.inclusive_ns), (samples, samples * 100_000));
    }
    let dir = temp_dir("fuzz-deep-sampled");
    let p = save(&dir, "deep.eltrace", &bytes);
    for cmd in [&["report"][..], &["export", "-o", "-", "-f", "html"][..]] {
        let mut args = cmd.to_vec();
        args.push(p.to_str().unwrap());
        let o = run_limited(&args, &dir, MEM, OUT_MAX, TIME);
        assert!(
            o.clean() && o.code == Some(0),
            "eltrace {args:?}: exit {:?}, timed out {}: {}",
            o.code,
            o.timed_out,
            o.stderr
        );
    }
}

const COMMANDS: [&[&str]; 9] = [
    &["dump"],
    &["report"],
    &["report", "--json"],
    &["export", "-o", "-", "-f", "folded"],
    &["export", "-o", "-", "-f", "folded", "--fold-recursion", "0"],
    &["export", "-o", "-", "-f", "chrome"],
    &["export", "-o", "-", "-f", "perfetto"],
    &["export", "-o", "-", "-f", "speedscope"],
    &["export", "-o", "-", "-f", "html"],
];

/// One case: the mutated bytes, from the case number alone.
fn case(n: u64, base: u64, seeds: &[Chunks]) -> Vec<u8> {
    let mut rng = Rng(base ^ n.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let s = &seeds[rng.below(seeds.len())];
    let mut c = Chunks {
        header: s.header.clone(),
        chunks: s.chunks.clone(),
    };
    for _ in 0..1 + rng.below(4) {
        mutate(&mut c, seeds, &mut rng);
    }
    let fix = rng.chance(90);
    let mut bytes = join(&c, &mut rng, fix);
    if rng.chance(20) {
        let keep = rng.below(bytes.len() + 1);
        bytes.truncate(keep);
    }
    bytes
}

#[test]
fn mutated_traces_end_cleanly_within_limits() {
    let cases: u64 = std::env::var("ELTRACE_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2_000);
    let base: u64 = std::env::var("ELTRACE_FUZZ_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0x5EED_0016);
    let root = temp_dir("fuzz");
    let seeds: Vec<Chunks> = seeds().iter().map(|b| split(b)).collect();
    let next = AtomicUsize::new(0);
    let start = Instant::now();
    let workers = 2;
    let failures: Vec<String> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..workers)
            .map(|w| {
                let (seeds, next, root) = (&seeds, &next, &root);
                s.spawn(move || {
                    let dir = root.join(format!("w{w}"));
                    std::fs::create_dir_all(&dir).unwrap();
                    let mut failed = Vec::new();
                    loop {
                        let n = next.fetch_add(1, Ordering::Relaxed) as u64;
                        if n >= cases || failed.len() >= 5 {
                            return failed;
                        }
                        if let Some(f) = run_case(n, base, seeds, &dir, root) {
                            failed.push(f);
                        }
                    }
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    });
    eprintln!(
        "fuzz: {cases} cases (seed {base:#x}) in {:.1} s, {} failed",
        start.elapsed().as_secs_f64(),
        failures.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// Runs case `n`; a description of the failure, with the kept input, if it failed.
fn run_case(n: u64, base: u64, seeds: &[Chunks], dir: &Path, root: &Path) -> Option<String> {
    let bytes = case(n, base, seeds);
    let p = save(dir, "case.eltrace", &bytes);
    let cmd = COMMANDS[(n % COMMANDS.len() as u64) as usize];
    let mut args: Vec<&str> = cmd.to_vec();
    args.push(p.to_str().unwrap());
    let o = run_limited(&args, dir, MEM, OUT_MAX, TIME);
    if o.clean() {
        return None;
    }
    let keep: PathBuf = root.join(format!("failed-{n}.eltrace"));
    std::fs::write(&keep, &bytes).unwrap();
    let err: String = o.stderr.chars().take(1500).collect();
    Some(format!(
        "case {n}: `eltrace {}` on {}: exit {:?}, signal {:?}, timed out {}, {} B out:\n{err}",
        cmd.join(" "),
        keep.display(),
        o.code,
        o.signal,
        o.timed_out,
        o.stdout_bytes
    ))
}
