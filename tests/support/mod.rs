//! Test support shared by the integration-test binaries, one copy of each
//! helper; every `tests/<layer>/main.rs` declares it as `mod support`:
//!
//! - [`cli`]: runs the command line, in-process or as the built binary;
//! - [`common`]: the wire-level AST and its encoder, the proptest generators
//!   of records with all of docs/FORMAT.md §3's quirks, and the observers that read a
//!   record through every accessor of the views;
//! - [`prost_mirror`]: prost's view of the schemas (also used by the
//!   benchmarks);
//! - [`realworld`]: the real files beside the repository
//!   (`RECORDWIRE_REALWORLD`), or a `SKIP:` line without them.
//!
//! The counting allocator, `counting_alloc.rs`, is not declared here:
//! declaring it installs it as the binary's global allocator, so only the
//! binaries whose tests count allocations declare it, beside this module.

#![allow(dead_code)]

pub mod cli;
pub mod common;
pub mod prost_mirror;
pub mod realworld;
pub mod servers;
