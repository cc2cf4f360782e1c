//! A ring's consumer lock and what its holder does (the protocol is outbox.rs's module doc):
//! [`Consumer::encode`] turns the ring's records into whole chunks in the outbox through the
//! ring's [`Encoder`], reading them in place ([`Records`]), and [`Consumer::seal`] hands the
//! buffer being filled to the writer.

use std::sync::atomic::Ordering;

use eltrace_trace::EventKind;
use eltrace_trace::chunks;

use super::outbox::{Encoder, Outbox};
use super::pairs::{equal_pairs, timed_heads_avx2};
use super::{KIND_DROPPED, RawRecord, Ring, extend48};
use crate::clock;

/// The highest event kind code a record may hold (higher: a drop marker or unknown).
const MAX_KIND: u32 = EventKind::Continuation.code() as u32;

/// A run of a ring's records, as the chunk builder reads them (`j` counts from `tail`).
struct Records {
    records: *mut RawRecord,
    mask: u64,
    tail: u64,
    /// The time (ns) after every record was written: the record times' high bits.
    now: u64,
    /// Timeless records: times spread evenly, `from` for the run's first, `step` apart.
    timeless: bool,
    from: u64,
    step: u64,
}

impl Records {
    #[inline(always)]
    fn get(&self, j: usize) -> RawRecord {
        let at = self.tail + j as u64;
        // SAFETY: the encoder asks only for `j < upto - tail` with `upto <= head` (published
        // with Release, read with Acquire by the caller), so the slot holds a whole record the
        // producer will not touch until `tail` moves past it; `at & mask` indexes the buffer.
        unsafe { self.records.add((at & self.mask) as usize).read() }
    }
}

impl chunks::RunSource for Records {
    #[inline(always)]
    fn event(&mut self, j: usize) -> Option<(u8, u32, u64)> {
        let r = self.get(j);
        let kind = r.kind();
        // A drop marker or an unknown kind: the encoder's own loop handles it.
        (kind <= MAX_KIND).then(|| (kind as u8, r.func(), r.sp()))
    }

    #[inline(always)]
    fn leaf(&mut self, j: usize, _func: u32, _sp: u64) -> bool {
        self.get(j + 1).is_leave_of(self.get(j))
    }

    #[inline(always)]
    fn same_pair(&mut self, j: usize, k: usize) -> bool {
        self.get(j).same_event(self.get(k)) && self.get(j + 1).same_event(self.get(k + 1))
    }

    #[inline(always)]
    fn repeats(&mut self, j: usize, max: usize) -> usize {
        let cap = self.mask as usize + 1;
        let mut m = 0;
        while m < max {
            let k = j + 2 * m;
            let at = ((self.tail + k as u64) & self.mask) as usize;
            if at >= 2 && at + 2 <= cap {
                // The pairs from `k` on and the one before them lie in one piece of the ring.
                let span = ((cap - at) / 2).min(max - m);
                // SAFETY: records `at - 2 .. at + 2 * span` are inside the ring's buffer
                // (`at + 2 * span <= cap`) and are events `k - 2 .. k + 2 * span` of this run,
                // all published (`k + 2 * span <= j + 2 * max`, which the encoder keeps within
                // the records it was given).
                let n = unsafe { equal_pairs(self.records.add(at - 2), span) };
                m += n;
                if n < span {
                    break;
                }
            } else if self.same_pair(k, k - 2) {
                m += 1;
            } else {
                break;
            }
        }
        m
    }

    #[inline(always)]
    unsafe fn timed_pair_heads(
        &mut self,
        from: usize,
        to: usize,
        prev_ts: &mut u64,
        p: *mut u8,
    ) -> (usize, usize) {
        if self.timeless || !std::is_x86_feature_detected!("avx2") {
            return (0, 0);
        }
        let at = ((self.tail + from as u64) & self.mask) as usize;
        // The events' records in one piece of the ring.
        let n = (to - from).min(self.mask as usize + 1 - at);
        // SAFETY: records `at .. at + n` are inside the ring's buffer and are events
        // `from .. from + n` of this run, published (`to` is within the records the encoder was
        // given); the caller's promise for `p`; AVX2 was detected just now.
        unsafe { timed_heads_avx2(self.records.add(at), n, self.now, prev_ts, p) }
    }

    #[inline(always)]
    fn ts(&mut self, j: usize) -> u64 {
        if self.timeless {
            self.from + self.step * j as u64
        } else {
            extend48(self.get(j).time48(), self.now)
        }
    }
}

/// What one [`Consumer::encode`] did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Encoded {
    /// Records taken out of the ring.
    pub records: u64,
    /// Buffers sealed for the writer.
    pub sealed: u64,
    /// It stopped early: every outbox buffer waits for the writer.
    pub blocked: bool,
}

/// The consumer lock of a ring, held ([`Ring::try_consume`]); released on drop, waking a
/// producer that waits for room.
pub struct Consumer<'a> {
    ring: &'a Ring,
}

impl Ring {
    /// Takes the consumer lock unless another thread holds it.
    #[inline]
    pub fn try_consume(&self) -> Option<Consumer<'_>> {
        // `then`, not `then_some`: a guard built for a failed attempt would release the
        // holder's lock when dropped.
        self.consumer
            .compare_exchange(0, 1, Ordering::Acquire, Ordering::Relaxed)
            .is_ok()
            .then(|| Consumer { ring: self })
    }

    /// Whether some thread holds the consumer lock.
    pub fn is_consumed(&self) -> bool {
        self.consumer.load(Ordering::Relaxed) != 0
    }

    /// The ring's outbox.
    pub fn outbox(&self) -> &Outbox {
        &self.outbox
    }
}

impl Drop for Consumer<'_> {
    fn drop(&mut self) {
        self.ring.consumer.store(0, Ordering::Release);
        core::sync::atomic::fence(Ordering::SeqCst);
        if self.ring.waiting_word().load(Ordering::Relaxed) != 0 {
            self.ring.wake_producer();
        }
    }
}

impl Consumer<'_> {
    fn encoder(&mut self) -> &mut Encoder {
        // SAFETY: the consumer lock is held by this guard, so no other thread touches the
        // encoder, and `&mut self` keeps this reference unique on this thread.
        unsafe { &mut *self.ring.encoder.get() }
    }

    /// Encodes the records `[tail, upto)` (`upto` a value [`Ring::published`] returned) into
    /// the outbox, as far as its buffers allow, and frees their ring slots.
    pub fn encode(&mut self, upto: u64) -> Encoded {
        let ring = self.ring;
        let mut tail = ring.tail.load(Ordering::Relaxed);
        let mut done = Encoded::default();
        if upto <= tail || ring.capacity == 0 {
            return done;
        }
        let total = upto - tail;
        if self.encoder().discard {
            return self.discard(tail, upto);
        }
        let enc = self.encoder();
        // How the records get their `ts`: their 48 bits of ns extended from the time now
        // (every record was written before it), or, for timeless records, times spread evenly
        // between the last encode and now (an ordering estimate: docs/trace-format.md).
        let now = clock::to_ns(clock::now());
        let (from, step) = if enc.timeless {
            let to = now.max(enc.anchor_ns);
            let from = enc.anchor_ns;
            enc.anchor_ns = to;
            (from, (to - from) / total)
        } else {
            (0, 0)
        };
        let mut i = 0u64;
        'buffers: while tail < upto {
            // SAFETY: this guard holds the consumer lock.
            let Some(slot) = (unsafe { ring.outbox.current() }) else {
                done.blocked = true;
                break;
            };
            let buf = &mut slot.bytes;
            debug_assert!(
                enc.builder
                    .open_at()
                    .is_none_or(|at| at + chunks::RESERVE <= buf.len()),
                "open chunk at {:?} but the buffer holds {} bytes (sealed {} written {})",
                enc.builder.open_at(),
                buf.len(),
                ring.outbox.sealed.load(Ordering::Relaxed),
                ring.outbox.written.load(Ordering::Relaxed)
            );
            while tail < upto {
                // The ordinary records, as one run through the builder's loop.
                let mut src = Records {
                    records: ring.records,
                    mask: ring.mask,
                    tail,
                    now,
                    timeless: enc.timeless,
                    from: from + step * (i + 1),
                    step,
                };
                let taken = enc.builder.push_run(buf, (upto - tail) as usize, &mut src) as u64;
                tail += taken;
                i += taken;
                if tail == upto {
                    break;
                }
                // SAFETY: as above, for `tail < upto`.
                let r = unsafe { ring.records.add((tail & ring.mask) as usize).read() };
                let kind = r.kind();
                if kind == KIND_DROPPED {
                    slot.events += enc.builder.close(buf);
                    if !chunks::put_dropped(buf, enc.thread, r.sp()) {
                        break; // the buffer is full: seal it and go on in the next
                    }
                    ring.note_marked_drops(r.sp());
                } else if kind > MAX_KIND {
                    enc.bad += 1;
                } else if enc.builder.is_open() {
                    // Refused by the open chunk (its limits): close it, go on in a new one.
                    slot.events += enc.builder.close(buf);
                    continue;
                } else {
                    break; // the buffer is full
                }
                tail += 1;
                i += 1;
            }
            if tail < upto {
                debug_assert!(
                    enc.builder.open_at().is_none(),
                    "sealed with an open chunk (encode)"
                );
                ring.outbox.seal();
                done.sealed += 1;
                continue 'buffers;
            }
        }
        done.records = i;
        if i > 0 {
            ring.release(tail);
        }
        done
    }

    /// Benchmark only ([`Ring::discarding`]): the records `[tail, upto)` counted in a DROPPED
    /// chunk instead of encoded (the builder never opens a chunk in such a ring).
    fn discard(&mut self, tail: u64, upto: u64) -> Encoded {
        let ring = self.ring;
        let thread = self.encoder().thread;
        let records = upto - tail;
        let mut done = Encoded::default();
        loop {
            // SAFETY: this guard holds the consumer lock.
            let Some(slot) = (unsafe { ring.outbox.current() }) else {
                done.blocked = true;
                return done;
            };
            if chunks::put_dropped(&mut slot.bytes, thread, records) {
                break;
            }
            ring.outbox.seal();
            done.sealed += 1;
        }
        done.records = records;
        ring.release(upto);
        done
    }

    /// Closes the open chunk and hands the buffer being filled to the writer, if it holds
    /// anything (a flush: the writer's periodic one, or the end).
    pub fn seal(&mut self) -> bool {
        let ring = self.ring;
        let enc = self.encoder();
        // SAFETY: this guard holds the consumer lock.
        let Some(slot) = (unsafe { ring.outbox.current() }) else {
            return false;
        };
        slot.events += enc.builder.close(&mut slot.bytes);
        if slot.bytes.is_empty() {
            return false;
        }
        debug_assert!(
            enc.builder.open_at().is_none(),
            "sealed with an open chunk (seal)"
        );
        ring.outbox.seal();
        true
    }

    /// Records of an unknown kind skipped so far (then reset).
    pub fn take_bad(&mut self) -> u64 {
        std::mem::take(&mut self.encoder().bad)
    }
}
