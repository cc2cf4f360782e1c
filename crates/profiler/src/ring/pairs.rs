//! The scan behind a hot loop's runs (consumer.rs `Records::repeats`): how many pairs of ring
//! records in a row repeat a reference pair word for word, time bits aside. A loop's leaf calls
//! fill the ring with such pairs, and every one of them passes through this scan, so it
//! compares four pairs per step: with AVX2 (detected at run time) one 32-byte load per pair,
//! otherwise SSE2 (part of x86-64) two 16-byte loads.

use core::arch::x86_64::{
    __m128i, __m256i, _mm_and_si128, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8,
    _mm_or_si128, _mm_set_epi64x, _mm_setzero_si128, _mm_xor_si128, _mm256_loadu_si256,
    _mm256_or_si256, _mm256_set_epi64x, _mm256_testz_si256, _mm256_xor_si256,
};

use super::RawRecord;

/// The bits [`RawRecord::same_event`] compares in a record's first word: the key's half (the
/// second word is compared whole).
const TIME_FREE: i64 = (u64::MAX << 48) as i64;

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
        let mut i = 0;
        while i + BLOCK <= n {
            let any = _mm_or_si128(
                _mm_or_si128(differs(i), differs(i + 1)),
                _mm_or_si128(differs(i + 2), differs(i + 3)),
            );
            if !is_zero(any) {
                break;
            }
            i += BLOCK;
        }
        // The last pairs, or the block that holds the first pair that differs.
        while i < n && is_zero(differs(i)) {
            i += 1;
        }
        i
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
    let mut i = 0;
    while i + BLOCK <= n {
        let any = _mm256_or_si256(
            _mm256_or_si256(differs(i), differs(i + 1)),
            _mm256_or_si256(differs(i + 2), differs(i + 3)),
        );
        if !is_zero(any) {
            break;
        }
        i += BLOCK;
    }
    // The last pairs, or the block that holds the first pair that differs.
    while i < n && is_zero(differs(i)) {
        i += 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

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
