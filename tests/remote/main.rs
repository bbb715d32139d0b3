//! Remote shards (feature `remote`) against real servers on 127.0.0.1 that
//! the tests start themselves (`tests/support/servers.rs`): moto's S3
//! server, an HTTP server that honours `Range`, and a counting,
//! fault-injecting proxy in front of either. A server that cannot start
//! fails the test with the reason.

// Helpers outside #[test] functions unwrap too (clippy.toml allows it in tests).
#![allow(clippy::unwrap_used)]

#[path = "../support/mod.rs"]
mod support;

mod cli;
mod epoch_bytes;
mod library;
mod loader;
mod network;
mod scattered;
mod timeouts;
mod urls;
