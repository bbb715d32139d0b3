//! The CPU kernels of recordwire (`src/arch/`) against their scalar twins on
//! any bytes, at every alignment (see `recordwire_fuzz::targets::arch_kernels`,
//! shared with `tests/files/fuzz_regressions.rs`).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| recordwire_fuzz::targets::arch_kernels(data));
