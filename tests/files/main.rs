//! The file layer: framing and compression of record files, read through the
//! library and the command line: the reference files TensorFlow wrote,
//! detection with file names as hints and inputs that are no record file,
//! damaged and hostile files, faults (files that grow while read, killed
//! writers, damaged indexes), page-aware padding, and the fuzz targets' checks
//! over their saved inputs.
//!
//! One test binary per layer (`decode`, `files`, `index`, `write`, `cli`),
//! sharing `tests/support/`. Each module was a test binary of its own; its
//! tests keep their names under the module's.

#[path = "../support/mod.rs"]
mod support;

mod bad_files;
mod bounded_memory;
mod detection;
mod faults;
mod fuzz_regressions;
mod hostile;
mod padding;
mod reference_files;
