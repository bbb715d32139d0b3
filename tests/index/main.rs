//! The index layer: building and reading offset indexes (native, DALI and
//! the `tfrecord` package's), the index commands end to end, stale indexes
//! refused, the epoch orders, and the readahead that follows them.
//!
//! One test binary per layer (`decode`, `files`, `index`, `write`, `cli`),
//! sharing `tests/support/`. Each module was a test binary of its own; its
//! tests keep their names under the module's (`index::frozen_native_vectors`).

#[path = "../support/mod.rs"]
mod support;

mod index;
mod index_cli;
mod index_files;
mod loader_example;
mod orders;
mod readahead;
mod stale_index;
mod train_loop;
