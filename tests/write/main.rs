//! The writing layer: the owned messages and their encoders (properties,
//! and differential against prost), the JSON round trip, and the write path
//! end to end (`pack`, `encode`, `convert`, atomic replacement, the framing
//! taken from the output's name).
//!
//! One test binary per layer (`decode`, `files`, `index`, `write`, `cli`),
//! sharing `tests/support/`. Each module was a test binary of its own; its
//! tests keep their names under the module's.

// Installs the per-thread counting allocator of `encode_properties`.
#[path = "../support/counting_alloc.rs"]
mod counting_alloc;
#[path = "../support/mod.rs"]
mod support;

mod encode_properties;
mod output_framing;
mod write_path;
