//! The chunks built in place are byte for byte those `TraceWriter::write_events` writes for
//! the same events split at the same places, and read back as the same events.

use super::*;
use crate::model::{Event, EventKind, FunctionIdx, TraceInfo};
use crate::protocol::{info_key, timing};
use crate::{ReadError, Record, TraceReader, TraceWriter};

/// A small xorshift generator (deterministic per seed).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// Random events of one thread: nested calls (mostly balanced), unwinds, tail calls, values,
/// catches and throws, repeated calls of one function at one SP, times that sometimes repeat
/// and (rarely) go back.
fn events(rng: &mut Rng, n: usize) -> Vec<Event> {
    let mut out = Vec::with_capacity(n);
    let mut stack: Vec<(u32, u64)> = Vec::new();
    let mut ts = 1_000 + rng.below(1 << 40);
    while out.len() < n {
        ts = match rng.below(20) {
            0 => ts.saturating_sub(rng.below(5)),
            1 => ts + rng.below(1 << 30),
            _ => ts + rng.below(200),
        };
        if rng.below(40) == 0 && out.len() + 2 < n {
            // A loop calling one leaf function: the same frame entered and left again and again.
            let sp = stack.last().map_or(0x7fff_0000_0000, |&(_, s)| s - 16);
            let f = rng.below(4) as u32;
            for _ in 0..rng.below(3000).min(((n - out.len()) / 2) as u64) {
                for kind in [EventKind::Enter, EventKind::Leave] {
                    out.push(Event {
                        ts,
                        kind,
                        func: FunctionIdx(f),
                        sp,
                    });
                    // Mostly a few ns apart; now and then a long pause, or a step back (a
                    // thread moved to a core whose clock is behind).
                    ts = match rng.below(64) {
                        0 => ts + rng.below(1 << 24),
                        1 => ts.saturating_sub(rng.below(40)),
                        _ => ts + rng.below(30),
                    };
                }
            }
            continue;
        }
        let r = rng.below(16);
        let (kind, func, sp) = if stack.is_empty() || r < 6 {
            let sp = stack
                .last()
                .map_or(0x7fff_0000_0000, |&(_, s)| s - 16 - rng.below(4) * 8);
            let f = if rng.below(3) == 0 {
                7
            } else {
                rng.below(300) as u32
            };
            stack.push((f, sp));
            (EventKind::Enter, f, sp)
        } else if r < 12 {
            let (f, s) = stack.pop().unwrap();
            (EventKind::Leave, f, s)
        } else if r == 12 {
            let (f, s) = stack.pop().unwrap();
            let k = if rng.below(2) == 0 {
                EventKind::Unwind
            } else {
                EventKind::Tailcall
            };
            (k, f, s)
        } else if r == 13 {
            // A frame-ending event that is not the top's.
            let i = rng.below(stack.len() as u64) as usize;
            let (f, s) = stack[i];
            stack.truncate(i);
            (EventKind::Leave, f, s)
        } else if r == 14 {
            (
                EventKind::Value,
                rng.below(1000) as u32,
                stack.last().unwrap().1,
            )
        } else {
            let k = if rng.below(2) == 0 {
                EventKind::Catch
            } else {
                EventKind::Throw
            };
            (k, rng.below(300) as u32, stack.last().unwrap().1)
        };
        out.push(Event {
            ts,
            kind,
            func: FunctionIdx(func),
            sp,
        });
    }
    out
}

/// Builds `events` into chunks in buffers of `buf_bytes`, closing a chunk also at random
/// places; returns the bytes of every buffer in order and the events per chunk.
fn build(
    rng: &mut Rng,
    ev: &[Event],
    timeless: bool,
    buf_bytes: usize,
    random_closes: bool,
) -> (Vec<u8>, Vec<usize>) {
    let mut b = ChunkBuilder::new(ThreadIdx(3), timeless);
    let mut all = Vec::new();
    let mut splits = Vec::new();
    let mut buf: Vec<u8> = Vec::with_capacity(buf_bytes);
    for e in ev {
        loop {
            let cap = buf.capacity();
            if b.push(&mut buf, e.ts, e.kind.code(), e.func.0, e.sp) {
                assert_eq!(buf.capacity(), cap, "push grew the buffer");
                break;
            }
            if b.is_open() {
                splits.push(b.close(&mut buf) as usize);
            } else {
                all.extend_from_slice(&buf);
                buf.clear();
            }
        }
        if random_closes && rng.below(500) == 0 {
            splits.push(b.close(&mut buf) as usize);
        }
    }
    if b.is_open() {
        splits.push(b.close(&mut buf) as usize);
    }
    all.extend_from_slice(&buf);
    (all, splits)
}

fn info(timeless: bool) -> TraceInfo {
    let mut info = TraceInfo::new(1);
    if timeless {
        info.extra
            .push((info_key::TIMING.into(), timing::NONE.into()));
    }
    info
}

/// The records of chunks built here, read back behind a writer's header and INFO.
fn read_back(chunks: &[u8], timeless: bool) -> Vec<Record> {
    let mut bytes = Vec::new();
    drop(TraceWriter::new(&mut bytes, &info(timeless)).unwrap());
    bytes.extend_from_slice(chunks);
    let mut r = TraceReader::new(&bytes[..]).unwrap();
    let mut out = Vec::new();
    while let Some(rec) = r.next_record().unwrap() {
        out.push(rec);
    }
    out
}

fn reference(ev: &[Event], splits: &[usize], timeless: bool) -> Vec<u8> {
    let info = info(timeless);
    let mut head = Vec::new();
    drop(TraceWriter::new(&mut head, &info).unwrap());
    let mut bytes = Vec::new();
    let mut w = TraceWriter::new(&mut bytes, &info).unwrap();
    let mut at = 0;
    for &n in splits {
        w.write_events(ThreadIdx(3), &ev[at..at + n]).unwrap();
        at += n;
    }
    assert_eq!(at, ev.len());
    drop(w);
    bytes[head.len()..].to_vec()
}

#[test]
fn the_same_bytes_as_the_writer() {
    for seed in 1..200u64 {
        let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        let n = 1 + rng.below(3000) as usize;
        let ev = events(&mut rng, n);
        for timeless in [false, true] {
            let buf_bytes = [RESERVE + MAX_EVENT_BYTES, 200, 4096, 1 << 16][rng.below(4) as usize];
            let (built, splits) = build(&mut rng, &ev, timeless, buf_bytes, true);
            assert!(splits.iter().all(|&n| n > 0));
            assert_eq!(
                built,
                reference(&ev, &splits, timeless),
                "seed {seed} timeless {timeless} buffer {buf_bytes}"
            );
        }
    }
}

/// Events of a slice as a run, `None` from `stop` on.
struct Slice<'a> {
    ev: &'a [Event],
    stop: usize,
}

impl RunSource for Slice<'_> {
    fn event(&mut self, j: usize) -> Option<(u8, u32, u64)> {
        (j < self.stop).then(|| {
            let e = &self.ev[j];
            (e.kind.code(), e.func.0, e.sp)
        })
    }

    fn ts(&mut self, j: usize) -> u64 {
        assert!(
            j < self.stop,
            "asked for the time of event {j}, past the run"
        );
        self.ev[j].ts
    }
}

/// [`build`] through `push_run`: random runs, some cut short by a `None`.
fn build_runs(
    rng: &mut Rng,
    ev: &[Event],
    timeless: bool,
    buf_bytes: usize,
) -> (Vec<u8>, Vec<usize>) {
    let mut b = ChunkBuilder::new(ThreadIdx(3), timeless);
    let mut all = Vec::new();
    let mut splits = Vec::new();
    let mut buf: Vec<u8> = Vec::with_capacity(buf_bytes);
    let mut at = 0;
    while at < ev.len() {
        let n = (1 + rng.below(600) as usize).min(ev.len() - at);
        let stop = if rng.below(4) == 0 {
            rng.below(n as u64) as usize
        } else {
            n
        };
        let cap = buf.capacity();
        let taken = b.push_run(
            &mut buf,
            n,
            &mut Slice {
                ev: &ev[at..],
                stop,
            },
        );
        assert_eq!(buf.capacity(), cap, "push_run grew the buffer");
        assert!(taken <= stop);
        at += taken;
        if taken < stop {
            // Refused: close, or move to a new buffer.
            if b.is_open() {
                splits.push(b.close(&mut buf) as usize);
            } else {
                all.extend_from_slice(&buf);
                buf.clear();
            }
        }
    }
    if b.is_open() {
        splits.push(b.close(&mut buf) as usize);
    }
    all.extend_from_slice(&buf);
    (all, splits)
}

#[test]
fn runs_make_the_same_bytes_as_single_pushes() {
    let (mut built_bytes, mut reference_bytes) = (0, 0);
    for seed in 1..150u64 {
        let mut rng = Rng(seed.wrapping_mul(0xD1B5_4A32_D192_ED03));
        let n = 1 + rng.below(5000) as usize;
        let ev = events(&mut rng, n);
        for timeless in [false, true] {
            let buf_bytes = [RESERVE + MAX_EVENT_BYTES, 300, 4096, 1 << 16][rng.below(4) as usize];
            let (built, splits) = build_runs(&mut rng, &ev, timeless, buf_bytes);
            assert_eq!(splits.iter().sum::<usize>(), ev.len());
            let reference = reference(&ev, &splits, timeless);
            if timeless {
                // Repeated leaf calls become runs: other bytes, the same events.
                assert!(built.len() <= reference.len());
                if buf_bytes >= 4096 {
                    // (A smaller buffer takes few events per batch, and a run ends with its batch.)
                    (built_bytes, reference_bytes) =
                        (built_bytes + built.len(), reference_bytes + reference.len());
                }
                assert_eq!(
                    read_back(&built, timeless),
                    read_back(&reference, timeless),
                    "seed {seed} buffer {buf_bytes}"
                );
            } else {
                assert_eq!(
                    built, reference,
                    "seed {seed} timeless {timeless} buffer {buf_bytes}"
                );
            }
        }
    }
    assert!(
        built_bytes * 2 < reference_bytes,
        "runs of repeated leaf calls: {built_bytes} bytes against {reference_bytes}"
    );
}

#[test]
fn a_deep_stack_closes_the_chunk_and_reads_back() {
    // More nested Enters than the prediction stack holds: chunks close early, events survive.
    let mut ev = Vec::new();
    let depth = SHADOW_CAP * 2 + 10;
    for i in 0..depth {
        ev.push(Event {
            ts: i as u64,
            kind: EventKind::Enter,
            func: FunctionIdx(1),
            sp: 1 << 40,
        });
    }
    for i in 0..depth {
        ev.push(Event {
            ts: (depth + i) as u64,
            kind: EventKind::Leave,
            func: FunctionIdx(1),
            sp: 1 << 40,
        });
    }
    let mut rng = Rng(5);
    let (built, splits) = build(&mut rng, &ev, false, 1 << 20, false);
    assert!(splits.len() >= 3, "{splits:?}");
    assert_eq!(
        splits[..2],
        [SHADOW_CAP, SHADOW_CAP],
        "closed when the stack was full"
    );
    assert_eq!(built, reference(&ev, &splits, false));
    let mut file = Vec::new();
    drop(TraceWriter::new(&mut file, &TraceInfo::new(1)).unwrap());
    file.extend_from_slice(&built);
    let mut r = TraceReader::new(&file[..]).unwrap();
    let mut back = Vec::new();
    while let Some(rec) = r.next_record().unwrap() {
        if let Record::Events { events, .. } = rec {
            back.extend(events);
        }
    }
    assert_eq!(back, ev);
}

#[test]
fn dropped_chunks_as_the_writer_writes_them() {
    let mut buf = Vec::with_capacity(DROPPED_BYTES);
    assert!(put_dropped(&mut buf, ThreadIdx(9), u64::MAX));
    assert!(!put_dropped(&mut buf, ThreadIdx(9), 1), "no room left");
    let info = TraceInfo::new(1);
    let mut head = Vec::new();
    drop(TraceWriter::new(&mut head, &info).unwrap());
    let mut reference = Vec::new();
    let mut w = TraceWriter::new(&mut reference, &info).unwrap();
    w.write_dropped(ThreadIdx(9), u64::MAX).unwrap();
    drop(w);
    assert_eq!(&reference[head.len()..], &buf[..]);
}

#[test]
fn a_run_that_claims_too_much_or_follows_nothing_is_corruption() {
    // Enter f, Leave f, then the same call 9 more times: one run of 9.
    let mut ev = Vec::new();
    for i in 0..20 {
        ev.push(Event {
            ts: 1000 + i,
            kind: if i % 2 == 0 {
                EventKind::Enter
            } else {
                EventKind::Leave
            },
            func: FunctionIdx(5),
            sp: 0x7fff_0000_1000,
        });
    }
    let (built, splits) = build_runs(&mut Rng(1), &ev, true, 1 << 12);
    assert_eq!(splits, [20]);
    let back = read_back(&built, true);
    assert!(
        matches!(&back[..], [Record::Info(_), Record::Events { events, .. }] if events.len() == 20),
        "{back:?}"
    );
    let run = built
        .windows(2)
        .rposition(|w| w == [0x20, 9])
        .expect("a run of 9 pairs");
    // Chunk head 12, prefix 6 (thread, count, first and last time), the first Enter 9 (head,
    // function, SP), its Leave 1, the run 2 (head, 9).
    assert_eq!(built.len(), 12 + 6 + 9 + 1 + 2, "{built:02x?}");
    let read = |bytes: &[u8]| -> Result<usize, ReadError> {
        let mut all = Vec::new();
        drop(TraceWriter::new(&mut all, &info(true)).unwrap());
        all.extend_from_slice(bytes);
        let mut r = TraceReader::new(&all[..])?;
        let mut n = 0;
        while r.next_record()?.is_some() {
            n += 1;
        }
        Ok(n)
    };
    // Rewrite the run's length (and the CRC) and read again.
    for (n, ok) in [(9u8, true), (10, false), (0, false), (0x7f, false)] {
        let mut b = built.clone();
        b[run + 1] = n;
        let crc = crate::crc::crc32_parts(&[&b[..8], &b[12..]]);
        b[8..12].copy_from_slice(&crc.to_le_bytes());
        assert_eq!(read(&b).is_ok(), ok, "run of {n}");
    }
}
