//! An in-process loader: batches of an epoch's order read and decoded
//! ahead on threads, delivered in order, in a pool of reused buffers.
//!
//! [`Loader`] is an iterator of owned, decoded batches ([`LoadedBatch`]) for
//! a training loop in Rust (a burn or candle user's), and the engine under
//! the Python package's `recordwire.Loader`. The pipeline:
//!
//! 1. the [`Order`](crate::order::Order) of the epoch gives the ids, cut
//!    into batches of `batch_size` (this rank's part; the last batch
//!    shorter unless `drop_last`);
//! 2. `readers` threads each claim the next batch not yet claimed, read its
//!    records (borrowed from a file's memory; read by
//!    [`Dataset::get_many`](crate::dataset::Dataset::get_many), which
//!    coalesces ranged reads of a remote object and inflates each span of a
//!    compressed one once) and decode
//!    them (at most `threads` decodes at once) into a batch from the pool;
//! 3. decoded batches wait in a reorder window; the consumer takes them in
//!    batch order, whichever thread finished first. At most `prefetch`
//!    batches are decoded ahead of the consumer (plus those being
//!    decoded), so the threads stop when the consumer stops taking.
//!
//! Errors arrive in order, at the batch they belong to: the batches before
//! it are delivered first. An error ends the run (the threads stop), and
//! the position moves past the failed batch: the next call to
//! [`next`](Iterator::next) starts a new run there.
//!
//! The iterator yields one epoch, then `None` once, and moves to the next
//! epoch: `for batch in &mut loader` is one epoch, and the next loop the
//! next one (whose shuffle differs), unless [`Loader::set_epoch`] says
//! otherwise. [`Loader::state`] and [`Loader::resume`] stop and resume
//! mid-epoch exactly.
//!
//! # Memory
//! A delivered batch returns to the pool when it is dropped (or when the
//! last numpy array over it dies, in Python). The pool keeps up to
//! `prefetch + readers + 2` free batches; when none is free (the consumer
//! holds many), a new batch is made rather than making the decoder wait,
//! and a batch returned to a full pool is dropped. So memory stays flat
//! over an epoch, at about `prefetch + readers + held` batches, and a warm
//! epoch allocates no new batch memory when every batch fits the memory
//! its buffers already have ([`PoolStats`] counts it).
//!
//! # Threads and processes
//! The threads live as long as a run: [`Loader::close`], dropping the
//! loader, [`set_epoch`](Loader::set_epoch), [`resume`](Loader::resume) and
//! the end of an epoch stop them and wait for them. A process forked while
//! a run is going has none of its threads: the loader in the child refuses
//! to go on (an `io_error` that says so) instead of waiting forever.
//!
//! ```
//! use std::sync::Arc;
//! use recordwire::batch::{DType, FeatureSpec, Spec};
//! use recordwire::encode::{Example, Feature, Features, RecordWriter, WriterOptions};
//! use recordwire::dataset::Dataset;
//! use recordwire::loader::{Loader, LoaderOptions};
//!
//! # let dir = tempfile::tempdir()?;
//! # let path = dir.path().join("train.tfrecord");
//! # let mut w = RecordWriter::create(&path, WriterOptions::new(recordwire::frame::Framing::TfRecord))?;
//! # for i in 0..10i64 {
//! #     let f: Features = [("label", Feature::Int64(vec![i]))].into_iter().collect();
//! #     w.write_record(&Example::with_features(f).to_bytes()?)?;
//! # }
//! # w.finish()?;
//! let dataset = Arc::new(Dataset::open(&[&path], &Default::default())?);
//! let spec = Spec::example(vec![FeatureSpec::fixed_len("label", DType::Int64, &[])])?;
//! let mut loader = Loader::new(dataset, spec, LoaderOptions::new(4).threads(2))?;
//! assert_eq!(loader.len(), 3); // 4 + 4 + 2
//! let mut seen = Vec::new();
//! for batch in &mut loader {
//!     let batch = batch?;
//!     let labels = batch.column("label").unwrap().values::<i64>().unwrap();
//!     assert_eq!(labels.len(), batch.ids().len());
//!     seen.extend_from_slice(labels);
//! }
//! seen.sort();
//! assert_eq!(seen, (0..10).collect::<Vec<i64>>());
//! assert_eq!(loader.state().epoch, 1); // the next loop is epoch 1
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod handle;
mod loaded;
mod options;
mod pool;
mod run;
#[cfg(test)]
mod tests;

pub use handle::Loader;
pub use loaded::LoadedBatch;
pub use options::{LoaderError, LoaderOptions, LoaderState};
pub use pool::PoolStats;
