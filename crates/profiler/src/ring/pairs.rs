//! The scan behind a hot loop's runs (consumer.rs `Records::repeats`): how many pairs of ring
//! records in a row repeat a reference pair word for word, time bits aside. A loop's leaf calls
//! fill the ring with such pairs, and every one of them passes through this scan, so it
//! compares four pairs per step: with AVX2 (detected at run time) one 32-byte load per pair,
//! otherwise SSE2 (part of x86-64) two 16-byte loads. And, for a timed run, the heads of its
//! events four at a time with AVX2 ([`timed_heads_avx2`]): their times' deltas, as varints.

use core::arch::x86_64::{
    __m128i, __m256i, _mm_and_si128, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8,
    _mm_or_si128, _mm_set_epi64x, _mm_setzero_si128, _mm_xor_si128, _mm256_loadu_si256,
    _mm256_or_si256, _mm256_set_epi64x, _mm256_testz_si256, _mm256_xor_si256,
};

use eltrace_trace::chunks::PREDICTED_LEAVE;

use super::{LOW48, RawRecord};

/// The bits [`RawRecord::same_event`] compares in a record's first word: the key's half (the
/// second word is compared whole).
const TIME_FREE: i64 = !LOW48 as i64;

/// Pairs compared per step of the block loops.
const BLOCK: usize = 4;

/// How many of the `n` pairs of records after the pair at `prev` (records `prev + 2, prev + 3`,
/// then `prev + 4, prev + 5`, …) each repeat the pair before them word for word
/// ([`RawRecord::same_event`]: kind, function and SP; the time may differ). Equality being
/// transitive, that is how many in a row equal the pair at `prev` itself, which the scan
/// keeps in registers.
///
/// # Safety
/// `prev` must be valid for reads of `2 * n + 2` records.
#[inline(always)]
pub(super) unsafe fn equal_pairs(prev: *const RawRecord, n: usize) -> usize {
    if n >= BLOCK && std::is_x86_feature_detected!("avx2") {
        // SAFETY: the caller's promise; AVX2 was detected just now.
        unsafe { equal_pairs_avx2(prev, n) }
    } else {
        // SAFETY: the caller's promise.
        unsafe { equal_pairs_sse2(prev, n) }
    }
}

/// [`equal_pairs`] with SSE2.
///
/// # Safety
/// As [`equal_pairs`].
#[inline(always)]
unsafe fn equal_pairs_sse2(prev: *const RawRecord, n: usize) -> usize {
    let load = |i: usize| {
        // SAFETY: the caller's promise covers records `0 .. 2 * n + 2`; unaligned loads.
        unsafe { _mm_loadu_si128(prev.add(i).cast::<__m128i>()) }
    };
    // SAFETY: SSE2 is part of x86-64 (the profiler is x86-64 only: clock.rs, fast.rs).
    unsafe {
        let keep = _mm_set_epi64x(-1, TIME_FREE);
        let zero = _mm_setzero_si128();
        let (r0, r1) = (load(0), load(1));
        let differs = |i: usize| {
            _mm_or_si128(
                _mm_xor_si128(load(2 * i + 2), r0),
                _mm_xor_si128(load(2 * i + 3), r1),
            )
        };
        let is_zero =
            |v: __m128i| _mm_movemask_epi8(_mm_cmpeq_epi8(_mm_and_si128(v, keep), zero)) == 0xFFFF;
        leading_equal(n, differs, |a, b| _mm_or_si128(a, b), is_zero)
    }
}

/// [`equal_pairs`] with AVX2: a pair is one 32-byte load.
///
/// # Safety
/// As [`equal_pairs`], and the CPU must have AVX2.
#[target_feature(enable = "avx2")]
unsafe fn equal_pairs_avx2(prev: *const RawRecord, n: usize) -> usize {
    let load = |i: usize| {
        // SAFETY: the caller's promise covers records `0 .. 2 * n + 2`; a pair of records is
        // 32 contiguous bytes (RawRecord is 16 bytes, unpadded); unaligned loads.
        unsafe { _mm256_loadu_si256(prev.add(2 * i).cast::<__m256i>()) }
    };
    // Lanes low to high: record 0's first word (its key half), its second word, then record 1's.
    let keep = _mm256_set_epi64x(-1, TIME_FREE, -1, TIME_FREE);
    let reference = load(0);
    let differs = |i: usize| _mm256_xor_si256(load(i + 1), reference);
    let is_zero = |v: __m256i| _mm256_testz_si256(v, keep) == 1;
    leading_equal(n, differs, |a, b| _mm256_or_si256(a, b), is_zero)
}

/// The scan of both versions: how many of pairs `0 .. n` in a row have `differs(i)` zero by
/// `is_zero`, the pairs' differences combined with `or` a block at a time, then the last
/// pairs, or the block that holds the first pair that differs, one by one.
#[inline(always)]
fn leading_equal<V: Copy>(
    n: usize,
    differs: impl Fn(usize) -> V,
    or: impl Fn(V, V) -> V,
    is_zero: impl Fn(V) -> bool,
) -> usize {
    let mut i = 0;
    while i + BLOCK <= n {
        let any = or(
            or(differs(i), differs(i + 1)),
            or(differs(i + 2), differs(i + 3)),
        );
        if !is_zero(any) {
            break;
        }
        i += BLOCK;
    }
    while i < n && is_zero(differs(i)) {
        i += 1;
    }
    i
}

/// The heads of a timed run's first `n` events at most (`records`: repeated leaf calls, an
/// Enter first), four events per step, as the chunk builder's `timed_pairs` writes them: each
/// its time's delta from the time before it, above the repeat (Enter) or predicted (Leave) bit,
/// as a varint. A step takes its four events only when the varints are all two bytes long and
/// the times need no care: each time is at most 2^47 - 1 ns before `now`, so `extend48` gives
/// `now` minus its distance, and each delta from the one before (from `prev_ts` for the
/// first) is 8 to 1023 ns, so neither the saturation nor the running maximum of the builder's
/// deltas changes it. Returns the events taken (a multiple of four) and the bytes written, and
/// moves `prev_ts` on to the last time taken.
///
/// # Safety
/// `records` must be valid for reads of `n` records, `p` for writes of 2 bytes per event plus
/// 8 (each step stores 8 bytes), and the CPU must have AVX2.
#[target_feature(enable = "avx2")]
pub(super) unsafe fn timed_heads_avx2(
    records: *const RawRecord,
    n: usize,
    now: u64,
    prev_ts: &mut u64,
    p: *mut u8,
) -> (usize, usize) {
    use core::arch::x86_64::{
        _mm_storel_epi64, _mm_unpacklo_epi32, _mm256_and_si256, _mm256_blend_epi32,
        _mm256_castsi256_si128, _mm256_cmpgt_epi64, _mm256_extract_epi64, _mm256_extracti128_si256,
        _mm256_permute4x64_epi64, _mm256_set_epi8, _mm256_set1_epi64x, _mm256_setzero_si256,
        _mm256_shuffle_epi8, _mm256_slli_epi64, _mm256_sub_epi64, _mm256_unpacklo_epi64,
    };
    let load = |i: usize| {
        // SAFETY: the caller's promise covers records `0 .. n` (`i + 2 <= n`); unaligned loads.
        unsafe { _mm256_loadu_si256(records.add(i).cast::<__m256i>()) }
    };
    let set = _mm256_set1_epi64x;
    let (low48, nowv, zero) = (set(LOW48 as i64), set(now as i64), _mm256_setzero_si256());
    // The four heads' low bits: an Enter's repeat bit, then a Leave's code and predicted bit.
    let leave = PREDICTED_LEAVE as i64;
    let bits = _mm256_set_epi64x(leave, 1, leave, 1);
    // Each 64-bit lane's two low bytes to the front of its 128-bit half.
    #[rustfmt::skip]
    let front = _mm256_set_epi8(
        -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 9, 8, 1, 0,
        -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 9, 8, 1, 0,
    );
    let mut prev = set(*prev_ts as i64);
    let (mut i, mut len) = (0, 0);
    while i + 4 <= n {
        // The four records' first words, in order: (r0, r2 | r1, r3) -> r0, r1, r2, r3.
        let w0 = _mm256_permute4x64_epi64(_mm256_unpacklo_epi64(load(i), load(i + 2)), 0xD8);
        let behind = _mm256_and_si256(_mm256_sub_epi64(nowv, _mm256_and_si256(w0, low48)), low48);
        let ts = _mm256_sub_epi64(nowv, behind);
        // The time before each: the previous step's last, then this step's first three.
        let before = _mm256_blend_epi32(_mm256_permute4x64_epi64(ts, 0x90), prev, 0b11);
        let delta = _mm256_sub_epi64(ts, before);
        let off = _mm256_sub_epi64(delta, set(8));
        let bad = _mm256_or_si256(
            _mm256_or_si256(
                _mm256_cmpgt_epi64(zero, off),
                _mm256_cmpgt_epi64(off, set(1015)),
            ),
            // `extend48`'s rule: at most half the 48-bit range behind is before `now`.
            _mm256_cmpgt_epi64(behind, set((LOW48 / 2) as i64)),
        );
        if _mm256_testz_si256(bad, bad) == 0 {
            break;
        }
        // Two-byte varints: the low seven bits with the continuation bit, then the next seven.
        let head = _mm256_or_si256(_mm256_slli_epi64(delta, 4), bits);
        let two = _mm256_or_si256(
            _mm256_or_si256(
                _mm256_and_si256(head, set(0x7f)),
                _mm256_slli_epi64(_mm256_and_si256(head, set(0x3f80)), 1),
            ),
            set(0x80),
        );
        let packed = _mm256_shuffle_epi8(two, front);
        let eight = _mm_unpacklo_epi32(
            _mm256_castsi256_si128(packed),
            _mm256_extracti128_si256(packed, 1),
        );
        // SAFETY: the caller's promise: 8 bytes at `len`, below 2 per event taken plus 8.
        unsafe { _mm_storel_epi64(p.add(len).cast::<__m128i>(), eight) };
        prev = _mm256_permute4x64_epi64(ts, 0xFF);
        i += 4;
        len += 8;
    }
    *prev_ts = _mm256_extract_epi64(prev, 0) as u64;
    (i, len)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `timed_pairs`' bytes and `prev_ts` for `records`, by its definition: per event the
    /// extended time's saturated delta from the running maximum, above the Enter's repeat or the
    /// Leave's predicted bits, as a varint; and whether each event could be taken in a block
    /// (its time at most 2^47 - 1 before `now`, its delta from the time before 8 to 1023).
    fn timed_by_definition(
        records: &[RawRecord],
        now: u64,
        mut prev: u64,
    ) -> Vec<(Vec<u8>, u64, bool)> {
        records
            .iter()
            .enumerate()
            .map(|(k, r)| {
                let ts = super::super::extend48(r.time48(), now);
                let delta = ts.saturating_sub(prev);
                let fits = ts <= now && now - ts < 1 << 47 && ts >= prev + 8 && ts - prev < 1024;
                prev = prev.max(ts);
                let mut head = (delta << 4) | if k % 2 == 0 { 1 } else { 3 };
                let mut bytes = Vec::new();
                while head >= 0x80 {
                    bytes.push(head as u8 | 0x80);
                    head >>= 7;
                }
                bytes.push(head as u8);
                (bytes, prev, fits)
            })
            .collect()
    }

    #[test]
    fn timed_heads_in_blocks_are_the_heads_one_by_one() {
        if !std::is_x86_feature_detected!("avx2") {
            return;
        }
        let mut next = super::super::tests::xorshift(0x9E37_79B9_7F4A_7C15);
        let now = 0x0123_4567_89ab_cdefu64;
        for round in 0..3000 {
            let n = next(40) as usize;
            // Every tenth round about 2^47 ns before `now`, where `extend48` turns to after it.
            let back = if round % 10 == 0 {
                (1 << 47) - 5000
            } else {
                1 << 20
            };
            let prev0 = now - back - next(10_000);
            let mut ts = prev0 + next(40);
            let records: Vec<RawRecord> = (0..n)
                .map(|k| {
                    // Mostly deltas that fit, then every way of not fitting: too small, too
                    // large, backwards, far behind `now`, after `now`.
                    ts = match next(60) {
                        0 => ts + next(8),
                        1 => ts + 1024 + next(5000),
                        2 => ts - next(100),
                        3 => now - (1 << 47) - next(1000),
                        4 => now + next(1000),
                        5 => ts + 1023,
                        6 => ts + 1024,
                        7 => ts + 8,
                        8 => ts + 7,
                        _ => ts + 8 + next(300),
                    };
                    RawRecord::new(ts, 0x7ffd_0000_1000, 42, (k % 2) as u32)
                })
                .collect();
            let want = timed_by_definition(&records, now, prev0);
            let mut out = vec![0u8; 2 * n + 8];
            let mut prev = prev0;
            // SAFETY: `records` holds `n` records and `out` 2 * n + 8 bytes; AVX2 is here.
            let (taken, len) =
                unsafe { timed_heads_avx2(records.as_ptr(), n, now, &mut prev, out.as_mut_ptr()) };
            assert_eq!(taken % 4, 0, "round {round}");
            // The longest run of whole blocks whose every event fits.
            let fitting = want.iter().take_while(|w| w.2).count() / 4 * 4;
            assert_eq!(taken, fitting.min(n / 4 * 4), "round {round}");
            let bytes: Vec<u8> = want[..taken].iter().flat_map(|w| w.0.clone()).collect();
            assert_eq!(&out[..len], &bytes[..], "round {round}");
            assert_eq!(
                prev,
                if taken == 0 { prev0 } else { want[taken - 1].1 },
                "round {round}"
            );
        }
    }

    /// The scan's answer by the definition: pairs in a row equal to the one before them.
    fn by_definition(recs: &[RawRecord], n: usize) -> usize {
        (0..n)
            .take_while(|&i| {
                recs[2 * i + 2].same_event(recs[2 * i])
                    && recs[2 * i + 3].same_event(recs[2 * i + 1])
            })
            .count()
    }

    #[test]
    fn every_scan_stops_at_the_first_pair_that_differs_in_any_compared_bit() {
        let enter = RawRecord::new(1000, 0x7ffd_1234_5670, 42, 0);
        let leave = RawRecord::new(1010, 0x7ffd_1234_5670, 42, 1);
        let avx2 = std::is_x86_feature_detected!("avx2");
        for n in 0..13 {
            // Time bits differ everywhere (ignored); then one compared bit at pair `at`.
            for at in 0..=n {
                for (word, bit) in [(0, 5), (0, 48), (0, 63), (1, 0), (1, 47), (1, 48), (1, 63)] {
                    for second in [false, true] {
                        let mut recs: Vec<RawRecord> = (0..=n)
                            .flat_map(|i| {
                                let t = 37 * i as u64;
                                [
                                    RawRecord {
                                        w0: enter.w0 ^ t,
                                        ..enter
                                    },
                                    RawRecord {
                                        w0: leave.w0 ^ (t + 5),
                                        ..leave
                                    },
                                ]
                            })
                            .collect();
                        if at < n {
                            let r = &mut recs[2 * at + 2 + usize::from(second)];
                            if word == 0 {
                                r.w0 ^= 1 << bit
                            } else {
                                r.w1 ^= 1 << bit
                            }
                        }
                        let want = by_definition(&recs, n);
                        let ignored = word == 0 && bit < 48;
                        assert_eq!(want, if at < n && !ignored { at } else { n });
                        // SAFETY: `recs` holds 2 * n + 2 records.
                        unsafe {
                            assert_eq!(
                                equal_pairs_sse2(recs.as_ptr(), n),
                                want,
                                "sse2 n {n} at {at}"
                            );
                            if avx2 {
                                assert_eq!(
                                    equal_pairs_avx2(recs.as_ptr(), n),
                                    want,
                                    "avx2 n {n} at {at}"
                                );
                            }
                            assert_eq!(equal_pairs(recs.as_ptr(), n), want);
                        }
                    }
                }
            }
        }
    }
}
