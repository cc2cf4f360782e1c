//! The CLI's allocator: large blocks (64 KiB to 128 MiB: the analysis's event chunks and
//! queues, the exporters' buffers) come from one region of address space that the kernel
//! backs with 2 MiB pages (`madvise(MADV_HUGEPAGE)`), kept by size class for reuse; anything
//! smaller, larger, or once the region is used up, comes from the system allocator. Memory the
//! analysis touches for the first time costs a page fault per 4 KiB page otherwise, and on a
//! virtual machine a fault costs microseconds: `report` on a 212 M-event trace touches
//! ~300 MiB (docs/performance.md "Analysis speed").
//!
//! ```text
//! alloc 262 KiB    class 320 KiB: a freed block of the class, else the region's next 320 KiB
//! free  262 KiB    the block goes on its class's free list (not back to the kernel)
//! alloc 48 B       the system allocator
//! ```

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};

/// The smallest block the region serves, and the step of the classes up to [`STEPPED`].
const MIN_BLOCK: usize = 64 << 10;
/// Blocks up to 1 MiB come in steps of 64 KiB (16 classes: an event chunk wastes little),
/// larger ones in powers of two from 2 MiB to 128 MiB (7 classes).
const STEPPED: usize = 16;
const CLASSES: usize = STEPPED + 7;
/// Address space reserved for the region (not memory: pages are backed when touched).
const REGION: usize = 16 << 30;
const HUGE_PAGE: usize = 2 << 20;

// The region's state.
const UNSET: u8 = 0;
const SETTING: u8 = 1;
const READY: u8 = 2;
const FAILED: u8 = 3;

/// The allocator (see the module's doc).
pub struct HugeAlloc {
    state: AtomicU8,
    /// The region's first byte (2 MiB aligned) and the next byte never handed out.
    start: AtomicUsize,
    next: AtomicUsize,
    /// Per class, the first freed block; each freed block holds the next one's address in
    /// its first word (no allocation inside the allocator).
    free: Mutex<[usize; CLASSES]>,
}

impl HugeAlloc {
    pub const fn new() -> Self {
        HugeAlloc {
            state: AtomicU8::new(UNSET),
            start: AtomicUsize::new(0),
            next: AtomicUsize::new(0),
            free: Mutex::new([0; CLASSES]),
        }
    }

    /// The class of a block of `size` bytes, `None` outside the classes.
    fn class(size: usize) -> Option<usize> {
        let size = size.max(1);
        if size <= STEPPED * MIN_BLOCK {
            return Some(size.div_ceil(MIN_BLOCK) - 1);
        }
        let block = size.checked_next_power_of_two()?;
        let c = STEPPED - 1
            + (block.trailing_zeros() - (STEPPED * MIN_BLOCK).trailing_zeros()) as usize;
        (c < CLASSES).then_some(c)
    }

    /// The size of the blocks of class `c`.
    fn block_size(c: usize) -> usize {
        if c < STEPPED {
            (c + 1) * MIN_BLOCK
        } else {
            (STEPPED * MIN_BLOCK) << (c + 1 - STEPPED)
        }
    }

    /// The region's start, reserving it the first time; `None` if it could not be.
    fn region(&self) -> Option<usize> {
        match self.state.load(Ordering::Acquire) {
            READY => return Some(self.start.load(Ordering::Relaxed)),
            UNSET => {}
            // Failed, or another thread is reserving it: this block comes from the system.
            _ => return None,
        }
        if self
            .state
            .compare_exchange(UNSET, SETTING, Ordering::AcqRel, Ordering::Acquire)
            .is_err()
        {
            return None;
        }
        let len = REGION + HUGE_PAGE;
        // SAFETY: an anonymous private mapping at an address of the kernel's choosing touches
        // no existing memory; the result is checked before use.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED || p.is_null() {
            self.state.store(FAILED, Ordering::Release);
            return None;
        }
        let p = p as usize;
        let start = p.next_multiple_of(HUGE_PAGE);
        // SAFETY: the range lies inside the mapping just made; the advice only asks for huge
        // pages (its failure leaves ordinary pages, which work the same).
        unsafe { libc::madvise(start as *mut libc::c_void, REGION, libc::MADV_HUGEPAGE) };
        self.start.store(start, Ordering::Relaxed);
        self.next.store(start, Ordering::Relaxed);
        self.state.store(READY, Ordering::Release);
        Some(start)
    }

    /// Whether `p` is a block of the region.
    fn owns(&self, p: *mut u8) -> bool {
        if self.state.load(Ordering::Acquire) != READY {
            return false;
        }
        let start = self.start.load(Ordering::Relaxed);
        (start..start + REGION).contains(&(p as usize))
    }

    /// A block of class `c`: a freed one, else a new one from the region.
    fn take(&self, c: usize) -> Option<*mut u8> {
        let start = self.region()?;
        {
            let mut free = self.free.lock().unwrap_or_else(|e| e.into_inner());
            let head = free[c];
            if head != 0 {
                // SAFETY: `head` is a freed block of the region (at least 64 KiB, 8-byte
                // aligned) whose first word `give_back` wrote.
                free[c] = unsafe { (head as *const usize).read() };
                return Some(head as *mut u8);
            }
        }
        let size = Self::block_size(c);
        let p = self.next.fetch_add(size, Ordering::Relaxed);
        (p + size <= start + REGION).then_some(p as *mut u8)
    }

    /// Puts a block of class `c` back on its class's list.
    fn give_back(&self, p: *mut u8, c: usize) {
        let mut free = self.free.lock().unwrap_or_else(|e| e.into_inner());
        // SAFETY: `p` is a block of the region that its owner gave up (at least 64 KiB,
        // aligned to 64 KiB): its first word is ours to write.
        unsafe { (p as *mut usize).write(free[c]) };
        free[c] = p as usize;
    }
}

impl Default for HugeAlloc {
    fn default() -> Self {
        Self::new()
    }
}

// SAFETY: blocks of the region are handed out once until given back (the free lists and the
// bump pointer are guarded by the lock and an atomic), are at least as large as asked and
// 64 KiB aligned (every class's size is a multiple of 64 KiB; align above 4 KiB goes to the
// system allocator), and are told from the system allocator's blocks by their address.
unsafe impl GlobalAlloc for HugeAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if layout.size() >= MIN_BLOCK && layout.align() <= 4096 {
            if let Some(p) = Self::class(layout.size()).and_then(|c| self.take(c)) {
                return p;
            }
        }
        // SAFETY: the caller's layout is passed on unchanged.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, p: *mut u8, layout: Layout) {
        if self.owns(p) {
            if let Some(c) = Self::class(layout.size()) {
                self.give_back(p, c);
            }
            return;
        }
        // SAFETY: not a block of the region: the system allocator gave it with this layout.
        unsafe { System.dealloc(p, layout) }
    }

    unsafe fn realloc(&self, p: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // A block of the region that the new size fits in the same class stays where it is.
        if self.owns(p)
            && Self::class(new_size).is_some_and(|c| Some(c) == Self::class(layout.size()))
        {
            return p;
        }
        // Elsewhere: a new block, the bytes copied, the old block given back.
        let Ok(new_layout) = Layout::from_size_align(new_size, layout.align()) else {
            return std::ptr::null_mut();
        };
        // SAFETY: `new_layout` has a non-zero size (`new_size` is, by `realloc`'s contract).
        let q = unsafe { self.alloc(new_layout) };
        if !q.is_null() {
            // SAFETY: both blocks are valid for the smaller of the two sizes and distinct.
            unsafe { std::ptr::copy_nonoverlapping(p, q, layout.size().min(new_size)) };
            // SAFETY: `p` was allocated by this allocator with `layout`.
            unsafe { self.dealloc(p, layout) };
        }
        q
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn large_blocks_come_from_the_region_and_are_reused_by_class() {
        let a = HugeAlloc::new();
        let big = Layout::from_size_align(262 << 10, 8).unwrap();
        let small = Layout::from_size_align(48, 8).unwrap();
        // SAFETY: layouts of non-zero size; every block is freed with its own layout.
        unsafe {
            let p = a.alloc(big);
            assert!(a.owns(p));
            std::ptr::write_bytes(p, 0xAB, big.size());
            let s = a.alloc(small);
            assert!(!a.owns(s));
            a.dealloc(s, small);
            // Within its class (320 KiB) a block grows in place; past it, it moves.
            let g = a.realloc(p, big, 300 << 10);
            assert_eq!(g, p);
            let grown = Layout::from_size_align(300 << 10, 8).unwrap();
            let m = a.realloc(g, grown, 600 << 10);
            assert_ne!(m, g);
            assert_eq!(*m.add(1000), 0xAB);
            // The freed 320 KiB block is the next one of its class.
            let q = a.alloc(big);
            assert_eq!(q, p);
            a.dealloc(q, big);
            a.dealloc(m, Layout::from_size_align(600 << 10, 8).unwrap());
            // Over the largest class, or over-aligned: the system allocator.
            let huge = Layout::from_size_align(256 << 20, 8).unwrap();
            let h = a.alloc(huge);
            assert!(!a.owns(h));
            a.dealloc(h, huge);
            let aligned = Layout::from_size_align(1 << 20, 8192).unwrap();
            let al = a.alloc(aligned);
            assert!(!a.owns(al) && al as usize % 8192 == 0);
            a.dealloc(al, aligned);
        }
    }

    #[test]
    fn classes_cover_64_kib_to_128_mib() {
        let class = HugeAlloc::class;
        assert_eq!(class(1), Some(0));
        assert_eq!(class(64 << 10), Some(0));
        assert_eq!(class((64 << 10) + 1), Some(1));
        assert_eq!(class(262 << 10), Some(4));
        assert_eq!(class(1 << 20), Some(15));
        assert_eq!(class((1 << 20) + 1), Some(16));
        assert_eq!(class(2 << 20), Some(16));
        assert_eq!(class(128 << 20), Some(CLASSES - 1));
        assert_eq!(class((128 << 20) + 1), None);
        assert_eq!(class(usize::MAX), None);
        // Every size fits its class's blocks, and the next class down is too small.
        for size in (1..300 << 20).step_by(4099) {
            if let Some(c) = class(size) {
                assert!(HugeAlloc::block_size(c) >= size, "{size}");
                assert!(c == 0 || HugeAlloc::block_size(c - 1) < size, "{size}");
            }
        }
    }
}
