//! The counting allocator of the allocation tests: a global allocator that
//! forwards every call to `System` and counts allocations (and reallocations)
//! per thread.
//!
//! Declaring this module installs the allocator (it holds the
//! `#[global_allocator]`), so [`count_allocations`] cannot be called in a
//! binary where nothing counts. The counts are per thread because the test
//! harness runs each test on its own thread, in parallel with the binary's
//! other tests: a test counts only its own allocations, whatever the others
//! do meanwhile. Allocations made for a measured closure on another thread
//! are not seen.

// The one unsafe block of the test tree: forwarding the allocator to `System`.
#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

struct Counting;

thread_local! {
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
    /// Bytes allocated on this thread and not yet freed (frees of memory
    /// allocated on another thread make it drift, so compare within a test).
    static LIVE: Cell<i64> = const { Cell::new(0) };
    /// The highest `LIVE` since the last [`peak_bytes`] reset.
    static PEAK: Cell<i64> = const { Cell::new(0) };
}

fn bump() {
    let _ = ALLOCATIONS.try_with(|c| c.set(c.get() + 1));
}

fn grow(bytes: usize) {
    let _ = LIVE.try_with(|live| {
        let now = live.get().saturating_add(bytes as i64);
        live.set(now);
        let _ = PEAK.try_with(|peak| peak.set(peak.get().max(now)));
    });
}

fn shrink(bytes: usize) {
    let _ = LIVE.try_with(|live| live.set(live.get().saturating_sub(bytes as i64)));
}

// SAFETY: every call is forwarded unchanged to `System`, which upholds the
// `GlobalAlloc` contract; counting touches a const-initialised thread-local
// `Cell<u64>` (no destructor, no allocation).
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        bump();
        grow(layout.size());
        System.alloc(layout)
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        bump();
        grow(layout.size());
        System.alloc_zeroed(layout)
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        bump();
        grow(new_size);
        shrink(layout.size());
        System.realloc(ptr, layout, new_size)
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        shrink(layout.size());
        System.dealloc(ptr, layout)
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// The allocations made on this thread so far.
pub fn allocations_so_far() -> u64 {
    ALLOCATIONS.with(Cell::get)
}

/// Runs `f`; returns its result and the number of allocations it made on
/// this thread.
pub fn count_allocations<T>(f: impl FnOnce() -> T) -> (T, u64) {
    let before = allocations_so_far();
    let out = f();
    let after = allocations_so_far();
    (out, after - before)
}

/// Runs `f`; returns its result and the most bytes it held allocated at once
/// on this thread (above what was live when it started).
#[allow(dead_code)]
pub fn peak_bytes<T>(f: impl FnOnce() -> T) -> (T, u64) {
    let start = LIVE.with(Cell::get);
    PEAK.with(|p| p.set(start));
    let out = f();
    let peak = PEAK.with(Cell::get);
    (out, u64::try_from(peak - start).unwrap_or(0))
}
