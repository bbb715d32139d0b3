//! Borrowed, lazy views of the payloads: tf.Example, tf.SequenceExample and
//! OneFlow's OFRecord, their feature maps, features and lists.
//!
//! A view is a few words pointing into the record's bytes; nothing is decoded
//! until an accessor asks, and nothing is copied or allocated. The semantics
//! are those of Google's parser (docs/FORMAT.md §3.3): a singular message that appears
//! several times is merged, the last oneof member on the wire wins, a map key
//! that appears twice keeps its last entry, packed and unpacked numeric runs
//! concatenate, and unknown fields are skipped.
//!
//! [`ExampleRef::parse`] (and the others' `parse`) first check the whole
//! record the way `ParseFromString` does, so that every later accessor is
//! known to succeed; [`ExampleRef::new`] skips that check and lets each
//! accessor report the errors it meets.
//!
//! ```
//! use recordwire::view::{ExampleRef, ListRef};
//!
//! // The tf.Example of the seed analysis (testdata/seed_example.xxd: a blog
//! // article's byte-by-byte `xxd -b` dump; docs/FORMAT.md §4.4).
//! let bytes = [
//!     0x0a, 0x66, 0x0a, 0x25, 0x0a, 0x11, b'm', b'a', b's', b'k', b'e', b'd', b'_', b'l',
//!     b'm', b'_', b'w', b'e', b'i', b'g', b'h', b't', b's', 0x12, 0x10, 0x12, 0x0e, 0x0a,
//!     0x0c, 0, 0, 0x80, 0x3f, 0, 0, 0x80, 0x3f, 0, 0, 0, 0, 0x0a, 0x1e, 0x0a, 0x13, b'm',
//!     b'a', b's', b'k', b'e', b'd', b'_', b'l', b'm', b'_', b'p', b'o', b's', b'i', b't',
//!     b'i', b'o', b'n', b's', 0x12, 0x07, 0x1a, 0x05, 0x0a, 0x03, 0x02, 0x0a, 0x00, 0x0a,
//!     0x1d, 0x0a, 0x14, b'n', b'e', b'x', b't', b'_', b's', b'e', b'n', b't', b'e', b'n',
//!     b'c', b'e', b'_', b'l', b'a', b'b', b'e', b'l', b's', 0x12, 0x05, 0x1a, 0x03, 0x0a,
//!     0x01, 0x01,
//! ];
//! let example = ExampleRef::parse(&bytes, 0)?;
//! let positions = example.get("masked_lm_positions")?.unwrap();
//! let Some(ListRef::Int64(list)) = positions.list()? else { panic!("not an int64 list") };
//! let values: Vec<i64> = list.iter().collect::<Result<_, _>>()?;
//! assert_eq!(values, [2, 10, 0]);
//! assert_eq!(example.features().len()?, 3);
//! # Ok::<(), recordwire::DecodeError>(())
//! ```

#[macro_use]
mod payload;

mod dedup;
mod detect;
mod entry;
mod example;
mod feature;
mod features;
mod hash;
mod list;
mod logical;
mod map;
mod notes;
mod ofrecord;
mod schema;
mod sequence_example;
mod shape;

pub(crate) use feature::unknown_field;
use feature::{nested_depth, validate_feature_segment};
pub(crate) use hash::hash_name;
use map::{validate_map, MapRef};

pub use detect::{detect_payload, PayloadSniffer, UnknownField, ELWC, EVENT};
pub use entry::{Entries, Entry};
pub use example::ExampleRef;
pub use feature::{FeatureRef, ListRef};
pub use features::{FeaturesRef, NamedFeature, NamedFeatures};
pub use map::{Effective, FromEntry, Named};
pub use notes::{looks_like, PayloadNotes, RawHint};
pub use ofrecord::OfRecordRef;
pub use payload::{Payload, PayloadKind, PayloadRef};
pub use schema::{Kind, Schema};
pub use sequence_example::{
    FeatureListIter, FeatureListRef, FeatureListsRef, NamedFeatureList, NamedFeatureLists,
    SequenceExampleRef,
};

pub use list::{
    BytesIter, BytesListRef, DoubleListRef, Element, FloatListRef, Int32ListRef, Int64ListRef,
    NumIter, NumList,
};

use crate::wire::DecodeError;
use crate::wire::{FieldReader, Value};

/// Checks a top-level message whose known fields are `known` (each a
/// length-delimited submessage checked by the closure).
fn validate_top<'a>(
    bytes: &'a [u8],
    base: u64,
    strict: bool,
    mut known: impl FnMut(u32, &'a [u8], u64) -> Option<Result<(), DecodeError>>,
) -> Result<(), DecodeError> {
    for f in FieldReader::new(bytes, base, 0) {
        let f = f?;
        let r = match f.value {
            Value::Len(b) => known(f.number, b, f.value_offset),
            _ => None,
        };
        match r {
            Some(r) => r?,
            None if strict => return Err(unknown_field(&f)),
            None => {}
        }
    }
    Ok(())
}

/// Options for validating a record.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DecodeOptions {
    /// Strict mode (docs/FORMAT.md §3.6): also report duplicate keys, unknown fields and
    /// mixed packed/unpacked encodings as errors.
    pub strict: bool,
}

#[cfg(test)]
mod tests;
