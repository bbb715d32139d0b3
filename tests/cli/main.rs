//! The command line's own output: the printers (`dump`, `inspect`, `cat`)
//! against golden files, and `recordwire bench` end to end.
//!
//! One test binary per layer (`decode`, `files`, `index`, `write`, `cli`),
//! sharing `tests/support/`. Each module was a test binary of its own; its
//! tests keep their names under the module's.

#[path = "../support/mod.rs"]
mod support;

mod bench_cli;
mod cat_options;
mod error_paths;
mod golden;
mod layers;
mod many_files;
mod payload_notes;
