//! The thread-side encoder's benchmark (`scripts/bench-encode.sh`) and its byte check: the
//! events of a recorded trace turned back into the raw records the rings held, pushed and
//! encoded as a program thread does; the time per event, and a digest of the bytes encoded
//! (timed and timeless) to compare two builds of the encoder.

use super::*;
use std::hash::{DefaultHasher, Hasher};
use std::time::Instant;

use eltrace_trace::{Record, ThreadIdx, TraceReader};

/// Each thread's records in the trace at `path`, as the raw records its ring held.
fn raw_threads(path: &str) -> Vec<(ThreadIdx, Vec<RawRecord>)> {
    let f = std::io::BufReader::new(std::fs::File::open(path).unwrap());
    let mut r = TraceReader::new(f).unwrap();
    let mut threads: Vec<(ThreadIdx, Vec<RawRecord>)> = Vec::new();
    while let Some(rec) = r.next_record().unwrap() {
        if let Record::Events { thread, events } = rec {
            let i = match threads.iter().position(|(t, _)| *t == thread) {
                Some(i) => i,
                None => {
                    threads.push((thread, Vec::new()));
                    threads.len() - 1
                }
            };
            threads[i].1.extend(
                events
                    .iter()
                    .map(|e| RawRecord::new(e.ts, e.sp, e.func.0, u32::from(e.kind.code()))),
            );
        }
    }
    threads
}

/// The writer's part without the copy: empties the sealed buffers, returns their bytes.
fn empty_sealed(r: &Ring) -> usize {
    let outbox = r.outbox();
    let mut bytes = 0;
    for i in outbox.written()..outbox.sealed() {
        // SAFETY: one thread plays the writer here, and `i` is in [written, sealed).
        let slot = unsafe { outbox.sealed_slot(i) };
        bytes += slot.bytes.len();
        slot.bytes.clear();
        slot.events = 0;
        outbox.mark_written(i);
    }
    bytes
}

/// As [`empty_sealed`], adding the sealed bytes to `h` first.
fn hash_sealed(r: &Ring, h: &mut DefaultHasher) -> usize {
    let outbox = r.outbox();
    for i in outbox.written()..outbox.sealed() {
        // SAFETY: as in `empty_sealed`.
        h.write(&unsafe { outbox.sealed_slot(i) }.bytes);
    }
    empty_sealed(r)
}

/// Pushes each thread's records into its ring `reps` times, 2048 at a time, encoding them
/// as the thread does when its ring is half full, then seals; `take` plays the writer.
/// Returns the bytes `take` reported.
#[inline(always)]
fn push_and_encode(
    threads: &[(ThreadIdx, Vec<RawRecord>)],
    rings: &[Ring],
    reps: usize,
    mut take: impl FnMut(&Ring) -> usize,
) -> usize {
    let mut out = 0usize;
    for ((_, raw), ring) in threads.iter().zip(rings) {
        for piece in (0..reps).flat_map(|_| raw.chunks(2048)) {
            for &rec in piece {
                assert!(ring.try_push(rec));
            }
            let mut c = ring.try_consume().unwrap();
            let done = c.encode(ring.published());
            drop(c);
            if done.sealed > 0 {
                out += take(ring);
            }
        }
        let mut c = ring.try_consume().unwrap();
        c.seal();
        drop(c);
        out += take(ring);
    }
    out
}

/// The digest of the bytes fresh rings encode from `threads` (`reps` times over), timed or
/// timeless, and their length.
fn digest(threads: &[(ThreadIdx, Vec<RawRecord>)], reps: usize, timeless: bool) -> (u64, usize) {
    let rings: Vec<Ring> = threads
        .iter()
        .map(|(thread, _)| Ring::for_thread(4096, *thread, timeless, BUFFERS, 0))
        .collect();
    let mut h = DefaultHasher::new();
    let bytes = push_and_encode(threads, &rings, reps, |r| hash_sealed(r, &mut h));
    (h.finish(), bytes)
}

/// The thread-side encoder's benchmark: the events of a recorded trace turned back into the
/// raw records the rings held, pushed into a ring 2048 at a time (as a thread's stubs fill
/// half its default ring) and encoded by its consumer, the sealed buffers taken as the writer
/// takes them; on one core, next to a plain copy of the same 16-byte records. Then, untimed,
/// a digest of the bytes encoded, timed and timeless. Ignored by default:
/// `ELTRACE_BENCH_TRACE=t.eltrace cargo test --release -p eltrace-profiler bench_encode --
/// --ignored --nocapture`.
#[test]
#[ignore = "a benchmark, run by scripts/bench-encode.sh"]
fn bench_encode() {
    let path = std::env::var("ELTRACE_BENCH_TRACE").expect("ELTRACE_BENCH_TRACE=trace");
    // ELTRACE_BENCH_TIMELESS=1: encode as a `--timing none` recording does.
    let timeless = std::env::var_os("ELTRACE_BENCH_TIMELESS").is_some_and(|v| v == "1");
    let mut threads = raw_threads(&path);
    // A thread's ring holds what it wrote moments ago: records from the cache, not from
    // memory. So each thread's first 2^16 records (1 MiB) are pushed again and again, up to
    // 10^7 records in all, instead of streaming a long trace from memory.
    const WINDOW: usize = 1 << 16;
    let total: usize = threads.iter().map(|(_, r)| r.len().min(WINDOW)).sum();
    let reps = (10_000_000 / total.max(1)).max(1);
    for (_, raw) in &mut threads {
        raw.truncate(WINDOW);
    }
    let n: usize = reps * total;
    assert!(n > 0, "{path} holds no events");
    let (mut best_enc, mut best_copy, mut best_push, mut bytes) = (f64::MAX, f64::MAX, f64::MAX, 0);
    let mut copy: Vec<RawRecord> = Vec::with_capacity(total);
    // One ring per thread, made (and its outbox's pages touched) before the timed rounds, as a
    // thread's ring is after its warm-up.
    let rings: Vec<Ring> = threads
        .iter()
        .map(|(thread, _)| Ring::for_thread(4096, *thread, timeless, BUFFERS, 0))
        .collect();
    for _ in 0..8 {
        copy.clear();
        let t = Instant::now();
        for _ in 0..reps {
            copy.clear();
            for (_, raw) in &threads {
                for piece in raw.chunks(2048) {
                    copy.extend_from_slice(piece);
                }
            }
        }
        best_copy = best_copy.min(t.elapsed().as_secs_f64());
        std::hint::black_box(&copy);
        // What the thread pays: the writer's copy of the sealed bytes is left out (the
        // buffers are only emptied), so this times the push and the encoding alone.
        let t = Instant::now();
        let out = push_and_encode(&threads, &rings, reps, empty_sealed);
        best_enc = best_enc.min(t.elapsed().as_secs_f64());
        // The push alone (the records freed unread), to tell it from the encoding.
        let t = Instant::now();
        for ((_, raw), ring) in threads.iter().zip(&rings) {
            for piece in (0..reps).flat_map(|_| raw.chunks(2048)) {
                for &rec in piece {
                    assert!(ring.try_push(rec));
                }
                ring.release(ring.published());
            }
        }
        best_push = best_push.min(t.elapsed().as_secs_f64());
        bytes = out;
    }
    let m = |s: f64| n as f64 / s / 1e6;
    println!(
        "encode_bench events {n} bytes_out {bytes} bytes_per_event {:.2}",
        bytes as f64 / n as f64
    );
    println!(
        "encode_bench push+encode {:.1} M events/s ({:.2} ns/event; the push alone {:.2}); copy of the 16-byte records {:.1} M events/s ({:.2} GB/s)",
        m(best_enc),
        best_enc * 1e9 / n as f64,
        best_push * 1e9 / n as f64,
        m(best_copy),
        (n * 16) as f64 / best_copy / 1e9
    );
    let ((timed, timed_len), (none, none_len)) =
        (digest(&threads, reps, false), digest(&threads, reps, true));
    println!(
        "encode_bench digest timed {timed:016x} ({timed_len} bytes) timeless {none:016x} ({none_len} bytes)"
    );
}
