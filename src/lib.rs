//! Zero-copy reading of TFRecord and OFRecord files, with a hand-written
//! protobuf decoder that gives exactly what Google's parser gives.
//!
//! Records are borrowed from a memory map of the file, and `tf.Example`,
//! `tf.SequenceExample` and OneFlow `OFRecord` payloads are read through lazy
//! views that decode only what you ask for:
//!
//! ```
//! use recordwire::io::{OpenOptions, RecordFile};
//! use recordwire::view::{ExampleRef, ListRef};
//!
//! // Map the file (no copy) and detect its framing (TFRecord here).
//! let file = RecordFile::open("testdata/ref/small.tfrecord", &OpenOptions::default())?;
//! let mut labels = Vec::new();
//! for record in file.records() {
//!     let record = record?; // a truncated frame or a bad CRC is an error here
//!     // Checked the way protobuf's ParseFromString checks it, but not copied.
//!     let example = ExampleRef::parse(record.data, record.data_offset)?;
//!
//!     // One feature by name, without decoding the others.
//!     let label = example.get("label")?.expect("every record has a label");
//!     if let Some(ListRef::Int64(values)) = label.list()? {
//!         for value in values.iter() {
//!             labels.push(value?);
//!         }
//!     }
//!
//!     // Numeric lists copy into your buffer (one memcpy for packed floats).
//!     let bbox = example.get("bbox")?.expect("a bbox").float_list()?.expect("floats");
//!     let mut corners = [0f32; 4];
//!     assert_eq!(bbox.copy_to_slice(&mut corners)?, 4);
//!     assert!(corners.iter().all(|c| (0.0..=1.0).contains(c)));
//! }
//! assert_eq!(labels, [3, 0, 7, 4, 1, 8, 5, 2, 9, 6]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! A training loader wants columns, not views: [`batch`] decodes a batch of
//! records into dense, ragged and bytes columns the way TensorFlow's
//! `tf.io.parse_example` does, into buffers reused from batch to batch:
//!
//! ```
//! use recordwire::batch::{Batch, Decoder, Spec};
//! use recordwire::dataset::Dataset;
//!
//! let dataset = Dataset::open(["testdata/ref/small.tfrecord"], &Default::default())?;
//! // The JSON `recordwire inspect --spec` prints for this file.
//! let spec = Spec::from_json(br#"{"features": {
//!     "label": {"form": "fixed_len", "dtype": "int64", "shape": []},
//!     "image": {"form": "fixed_len", "dtype": "bytes", "shape": [], "borrow": true},
//!     "bbox":  {"form": "fixed_len", "dtype": "float32", "shape": [4]}}}"#)?;
//! let mut batch = Batch::new();
//! Decoder::new(1).decode_ids(&dataset, &[2, 0, 9], &spec, &mut batch)?;
//! assert_eq!(batch.column("label").unwrap().values::<i64>().unwrap(), [7, 3, 6]);
//! assert_eq!(batch.column("bbox").unwrap().shape(), [3, 4]);
//! // Borrowed from the memory map, not copied.
//! assert_eq!(batch.column("image").unwrap().borrowed().unwrap()[0].len(), 64);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! [`io::Source`] is the one entry point for every kind of input: it maps a
//! plain file like [`io::RecordFile`], and streams a GZIP/ZLIB-compressed file
//! or a pipe (`-` for stdin) through a reused buffer, which is not zero-copy.
//! Each record borrows from the source until the next call:
//!
//! ```
//! use recordwire::io::{OpenOptions, Source};
//!
//! let mut source = Source::open("testdata/ref/examples.tfrecord.gz", &OpenOptions::default())?;
//! let mut count = 0;
//! while let Some(record) = source.next_record() {
//!     let record = record?;
//!     assert_eq!(record.id, count);
//!     count += 1;
//! }
//! assert_eq!(count, 40);
//! # Ok::<(), recordwire::Error>(())
//! ```
//!
//! # Layers
//!
//! From the bottom up; each module imports only from the modules above it in
//! this list (`tests/cli/layers.rs` checks it), and [`wire`], [`frame`]
//! and [`view`] work on `&[u8]` and never see a file:
//!
//! - `arch` (private to the crate): the CPU kernels (CRC32C,
//!   packed varints, prefetch), chosen at run time, each beside
//!   its scalar twin. Beside it, `deflate`: a raw DEFLATE decoder that
//!   starts and stops at block boundaries (checkpoints for random access into
//!   GZIP/ZLIB files, as zlib's `zran.c`), and the GZIP/ZLIB header and
//!   trailer pieces, over one input slice at absolute bit positions.
//! - [`names`]: how option values are spelled ([`names::OptionName`], the
//!   `FromStr`/`Display` of every option type) and how names are quoted.
//!   Beside it, `json_text`: any JSON document as a tree of exact values
//!   (re-exported in [`json::read`]).
//! - [`wire`]: varints, tags and fields over `&[u8]`, with the rules of
//!   Google's parser; every error ([`DecodeError`]) carries its absolute byte
//!   offset.
//! - [`error`]: [`Error`], the file-level error.
//! - [`frame`]: TFRecord and OFRecord framing, masked CRC32C, pad frames,
//!   format detection, and the walk over a buffer with the `fail`/`skip`
//!   error policies.
//! - [`view`]: borrowed, lazy views ([`view::ExampleRef`],
//!   [`view::SequenceExampleRef`], [`view::OfRecordRef`], one file each, with
//!   one shape: [`view::Payload`]; [`view::PayloadRef`] is any of them).
//!   `parse` checks a whole record first, so that every accessor then
//!   succeeds; `new` checks nothing and lets each accessor report what it
//!   meets. Beside it, [`io`]: files (memory map or plain read), GZIP/ZLIB
//!   streams, pipes, and the byte-source seam ([`io::ByteSource`]: where a
//!   file's bytes come from, range by range); and [`order`]: epoch orders of
//!   record ids (shuffled, page-aware, split among ranks and workers), pure
//!   arithmetic.
//! - [`batch`]: batched columnar decoding like TensorFlow's `parse_example`:
//!   a feature [`batch::Spec`] (also as JSON), [`batch::decode`] into a
//!   reusable [`batch::Batch`] of Arrow-compatible columns, on one thread or
//!   several ([`batch::Decoder`]), from records or any
//!   [`batch::RecordSource`]: a pure function of records and a spec.
//! - [`index`]: the offset index (record id to frame offset), its native file
//!   used in place from a memory map, the interchange formats, and the
//!   checkpoint indexes of GZIP/ZLIB files.
//! - [`dataset`]: shards ([`dataset::Shard`]) of any kind (plain, GZIP/ZLIB
//!   through checkpoint indexes, remote objects) opened with their indexes,
//!   and datasets ([`dataset::Dataset`]): shards as one id space, with their
//!   orders, handing out records that own their bytes
//!   ([`frame::OwnedRecord`]). Beside it, `arrow` (feature `arrow`, part of
//!   `export`): the one mapping of a decoded batch to an Arrow schema and
//!   record batch, used by `export`'s Parquet and the Python package's
//!   `decode(to="arrow")`.
//! - [`loader`]: batches of an epoch's order read and decoded ahead on
//!   threads, for a training loop.
//! - [`encode`]: owned messages, encoders that write exactly the bytes of
//!   protobuf's `SerializeToString`, and record writers that never leave a
//!   half-written file.
//! - [`json`]: records as JSON Lines (protobuf's JSON mapping), and the reader
//!   of that JSON.
//! - [`dump`]: the annotated wire tree, a function over buffers used by the
//!   command-line tool.
//! - `cli` (feature `cli`, on by default): the `recordwire` commands as
//!   functions over writers.
//! - `__internals` (feature `internals`, hidden, not API): the few entry
//!   points into `arch` and `deflate` that this repository's fuzz targets,
//!   benches and examples drive; no stability promised.
//!
//! Errors are one small type, [`Error`], whose [`ErrorKind`] has a stable
//! name (`truncated_data`, `data_crc_mismatch`, `decode_error`, …) and which
//! says where: file, record id and absolute byte offset. The payload layers
//! return the lighter [`DecodeError`]; [`frame::Record::context`] turns one
//! met in a record into an [`Error`] that names the file and the record.
//!
//! # Guarantees
//!
//! No input, however hostile, makes the library panic, or allocate in
//! proportion to a length it has not checked against the bytes that are
//! really there (the fuzz targets in `fuzz/` check this). The crate has
//! `unsafe` in two places: mapping the file, which is sound only while no
//! other process truncates or rewrites it ([`io::OpenOptions::mmap`],
//! `--no-mmap`, reads the file instead), and the CPU kernels of `arch`,
//! chosen at run time, each tested against its scalar twin.
//!
//! # The contract
//!
//! `docs/FORMAT.md`, in the repository, is the format and behaviour contract
//! that these docs cite as `docs/FORMAT.md §N`: framing, decoding rules, the
//! JSON convention, index files, orders, errors and the command line. Its
//! "Terms" explain the words met here and there: the seeds and the seed dumps
//! (the documents the project started from, and the byte dumps kept from one
//! of them in `testdata/seed_*.xxd`), the thesis, and LIRS.
#![cfg_attr(docsrs, feature(doc_cfg))]

// Internals: the CPU kernels and the DEFLATE decoder behind checkpoint
// indexes. This repository's fuzz targets, benches and examples reach the
// few pieces they drive through `__internals` (feature `internals`).
mod arch;
#[cfg(feature = "arrow")]
pub mod arrow;
pub mod batch;
#[cfg(feature = "cli")]
pub mod cli;
pub mod dataset;
mod deflate;
pub mod dump;
pub mod encode;
pub mod error;
pub mod frame;
pub mod index;
pub mod io;
pub mod json;
mod json_text;
pub mod loader;
pub mod names;
pub mod order;
pub mod schema;
pub mod view;
pub mod wire;

#[cfg(feature = "internals")]
#[doc(hidden)]
#[path = "internals.rs"]
pub mod __internals;

#[cfg(test)]
mod test_util;

pub use error::{DecodeError, DecodeReason, Error, ErrorKind, Result};

/// The owned, shared byte buffer of [`io::RecordFile::record_bytes`] and
/// [`dataset::Shard::get`] (the data of a [`frame::OwnedRecord`]), re-exported so that users need no `bytes`
/// dependency of their own.
pub use bytes::Bytes;
