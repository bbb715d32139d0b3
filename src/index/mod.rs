//! Offset index (docs/FORMAT.md §6): record id → frame offset, its file formats,
//! and random access through it. The datasets that open files with their
//! indexes are [`crate::dataset`]'s.
//!
//! An [`Index`] holds, for the `n` records of a data file, the offset of each
//! record's frame and the end of the last one (`n + 1` offsets). With it,
//! counting is O(1), [`Index::get`] fetches record `i` directly, and the
//! offsets feed the epoch orders of [`crate::order`].
//!
//! - **Building** ([`Index::build`], [`Index::build_from_reader`]): one pass
//!   over the frames, 8 bytes of memory per record; CRCs of the data checked
//!   on request; pad frames ([`crate::frame::pad`]) left out.
//! - **The native file** ([`Index::write_native`], [`Index::open_native`]):
//!   binary, little-endian, versioned, its format documented on [`Index`] and
//!   frozen by a test vector (`testdata/index/`). Opened in place from a
//!   memory map: no copy and no parse step, only a fixed amount of checking
//!   (the header, and the data file's size and content fingerprint). Kept
//!   beside the data file as `<data file>.rwindex` ([`sidecar_path`]).
//! - **Interchange** ([`Index::read_dali`], [`Index::write_dali`],
//!   [`Index::read_lirs`], [`Index::write_lirs`]): DALI's and
//!   vahidk/tfrecord's text index, and the thesis's raw table of offsets,
//!   checked against the data when read. (`lirs` is that table: the thesis
//!   applies LIRS, "a lightweight implementation of random shuffling", to
//!   TFRecord, and writes every record's offset beside the file for it;
//!   docs/FORMAT.md, "Terms" and §6.7.)
//! - **Random access** ([`Index::get`], [`Index::get_many`]): a borrowed
//!   [`Record`](crate::frame::Record), its length taken from the frame header
//!   and checked against the index.
//! - **Readahead** ([`Readahead`]): advice to the kernel that follows an order.
//!
//! An index that does not match its data file is never used: the error has
//! kind `stale_index` ([`ErrorKind::StaleIndex`](crate::ErrorKind::StaleIndex))
//! and says what differs. A damaged index file is rejected the same way.
//!
//! ```
//! use bytes::Bytes;
//! use recordwire::frame::{file_of, Framing, ReadOptions};
//! use recordwire::index::Index;
//!
//! let data = file_of(Framing::TfRecord, [&b"zero"[..], b"one", b"two"]);
//! let index = Index::build(&data, Framing::TfRecord, true)?;
//! assert_eq!(index.len(), 3);
//! assert_eq!(index.offsets(), [0, 20, 39, 58]);
//!
//! let record = index.get(&data, 2, &ReadOptions::default())?.unwrap();
//! assert_eq!((record.id, record.offset, record.data), (2, 39, &b"two"[..]));
//!
//! // The native file, used in place.
//! let mut file = Vec::new();
//! index.write_native(&mut file)?;
//! let reopened = Index::open_native(Bytes::from(file), &data)?;
//! assert_eq!(reopened, index);
//!
//! // The data file changes: the index no longer belongs to it.
//! let mut appended = data.clone();
//! appended.extend_from_slice(&recordwire::frame::tfrecord_frame(b"three"));
//! let mut file = Vec::new();
//! index.write_native(&mut file)?;
//! let err = Index::open_native(Bytes::from(file), &appended).unwrap_err();
//! assert_eq!(err.kind().name(), "stale_index");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod access;
mod build;
mod fingerprint;
mod gz;
mod interchange;
mod native;
pub mod pad;
mod readahead;
mod skip;
mod table;

pub(crate) use access::MAX_BATCH;
pub use gz::{
    Checkpoint, GzCache, GzIndex, GzSource, DEFAULT_SPACING, GZ_HEADER_LEN, GZ_MAGIC, GZ_POINT_LEN,
    GZ_VERSION, MIN_SPACING, SPAN_STRIDE,
};
pub use interchange::{index_file_format, IndexFormat, INDEX_SNIFF_LEN};
pub use native::{
    sidecar_path, NATIVE_HEADER_LEN, NATIVE_MAGIC, NATIVE_VERSION, SIDECAR_EXTENSION,
};
pub use pad::is_pad;
pub use readahead::{Access, Advise, Readahead};
pub use skip::Skipped;
pub(crate) use table::stale;
pub use table::Index;

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests;
