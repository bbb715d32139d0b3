//! The decoding layer: the wire decoder and the views against prost, a naive
//! reference decoder and the seed article's byte dumps; strict mode; reading
//! without allocating; and the JSON text of floats against MessageToDict.
//!
//! One test binary per layer (`decode`, `files`, `index`, `write`, `cli`),
//! sharing `tests/support/`. Each module was a test binary of its own; its
//! tests keep their names under the module's (`no_alloc::counter_sees_allocations`).

// Installs the per-thread counting allocator of `no_alloc`.
#[path = "../support/counting_alloc.rs"]
mod counting_alloc;
#[path = "../support/mod.rs"]
mod support;

mod batch_alloc;
mod count_memory;
mod float_text;
mod no_alloc;
mod owned_batch;
mod payload_detect;
mod prost_differential;
mod reference_decoder;
mod schema_view;
mod seed_dumps;
mod strict_mode;
mod tf_parse;
