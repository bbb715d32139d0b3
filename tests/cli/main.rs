//! The command line's own output: the printers (`dump`, `inspect`, `cat`)
//! against golden files, `recordwire bench` end to end, and what `export`
//! writes read back against the library's batch decode.
//!
//! One test binary per layer (`decode`, `files`, `index`, `write`, `cli`),
//! sharing `tests/support/`. Each module was a test binary of its own; its
//! tests keep their names under the module's.

#[path = "../support/mod.rs"]
mod support;

mod bench_cli;
mod builtin_schema;
mod cat_options;
mod dump_unknown;
mod error_paths;
// Parquet is read back with the parquet crate: the output of the `export` feature.
#[cfg(feature = "export")]
mod export;
mod golden;
mod gz_index;
mod import;
mod index_sidecars;
mod inspect_spec;
mod inspect_summary;
mod layers;
mod many_files;
mod mixed_shards;
mod payload_notes;
mod realworld_absent;
#[cfg(feature = "export")]
mod schema_columns;
mod schema_encode;
mod schema_json;
mod threaded_verify;
