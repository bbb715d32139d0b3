//! TFRecord and OFRecord framing, and the masked CRC32C (docs/FORMAT.md §1, §8).
//!
//! This layer knows nothing of files: it works on `&[u8]`, never allocates per
//! record, never panics, and checks every length against the bytes that are
//! really there before slicing.
//!
//! - [`parse_frame`] / [`parse_header`]: the pure parser of one frame, which
//!   answers [`Status::Incomplete`] ("need more bytes") instead of failing, so
//!   that both the slice iterator and the streaming reader
//!   ([`crate::io::StreamRecords`]) can use it;
//! - [`records`] / [`records_at`]: the iterator over a whole buffer, with the
//!   error policy of [`ReadOptions`];
//! - [`detect`]: TFRecord, OFRecord or compressed, from the first bytes;
//!   [`detect_with_hint`]: the same with the framing a file's name suggests
//!   (docs/FORMAT.md §1.6);
//! - [`pad`]: pad frames, valid frames that hold no record (docs/FORMAT.md §7.5):
//!   [`is_pad`] recognises one, [`pad::pad_frame`] and friends build one of
//!   an exact size;
//! - [`masked_crc32c`], [`mask`], [`unmask`];
//! - [`tfrecord_frame`], [`ofrecord_frame`] and friends: tiny builders for
//!   tests and examples.
//!
//! ```
//! use recordwire::frame::{records, write_tfrecord_frame, ErrorPolicy, Framing, ReadOptions};
//!
//! let mut file = Vec::new();
//! write_tfrecord_frame(&mut file, b"good");
//! write_tfrecord_frame(&mut file, b"damaged");
//! write_tfrecord_frame(&mut file, b"good again");
//! file[20 + 12] ^= 1; // flip a bit in the second record's data
//!
//! // Skip damaged records, but report them.
//! let opts = ReadOptions::default().with_policy(ErrorPolicy::skip());
//! let mut it = records(&file, Framing::TfRecord, opts);
//! let mut good = Vec::new();
//! while let Some(item) = it.next() {
//!     match item {
//!         Ok(record) => good.push(record.data),
//!         Err(err) => {
//!             assert_eq!(err.kind().name(), "data_crc_mismatch");
//!             assert_eq!((err.record(), err.offset()), (Some(1), Some(20)));
//!             assert_eq!(it.skipped(), Some((20, 43)));
//!         }
//!     }
//! }
//! assert_eq!(good, [&b"good"[..], b"good again"]);
//! assert_eq!(it.errors(), 1);
//! ```

mod build;
mod crc;
mod detect;
mod options;
pub mod pad;
mod parse;
mod records;

pub use build::{
    file_of, ofrecord_frame, tfrecord_frame, write_frame, write_ofrecord_frame,
    write_tfrecord_frame,
};
pub use crc::{mask, masked_crc32c, masked_crc32c_u64, unmask, MASK_DELTA};
pub use detect::{detect, detect_with_hint, Detected};
pub use options::{ErrorPolicy, ReadOptions};
pub use pad::is_pad;
pub use parse::{
    find_tfrecord_header, is_tfrecord_header, parse_frame, parse_header, Frame, FrameError,
    Framing, Header, Incomplete, Status, OFRECORD_HEADER_LEN, TFRECORD_FOOTER_LEN,
    TFRECORD_HEADER_LEN,
};

pub(crate) use detect::{explain_first_frame, Basis};
pub use records::{records, records_at, OwnedRecord, Record, Records};

pub(crate) use records::split::{walk_split, PartEnd, PartVisitor, Split};
// Used by the command line only.
#[cfg(feature = "cli")]
pub(crate) use records::split::shift_record;
pub(crate) use records::{Step, Walker};
