//! What the three payload views share: the [`Payload`] trait, [`PayloadRef`]
//! (any payload, as one type) and [`PayloadKind`] (which message a payload is).

use super::{
    DecodeOptions, ExampleRef, FeatureListsRef, FeaturesRef, OfRecordRef, SequenceExampleRef,
};
use crate::names::OptionName;
use crate::wire::DecodeError;

/// The shape shared by [`ExampleRef`], [`SequenceExampleRef`] and
/// [`OfRecordRef`]: a lazy view over a payload's bytes, which can be checked
/// the way `ParseFromString` checks it.
///
/// Each view has the same methods inherently, so this trait is needed only
/// by code generic over the message:
///
/// ```
/// use recordwire::view::{ExampleRef, OfRecordRef, Payload};
///
/// fn features_in<'a, P: Payload<'a>>(bytes: &'a [u8]) -> Result<usize, recordwire::DecodeError> {
///     let view = P::parse(bytes, 0)?;
///     match view.into_ref().features() {
///         Some(features) => features.len(),
///         None => Ok(0),
///     }
/// }
///
/// // `OFRecord { feature { key: "a" value { bytes_list { value: "hi" } } } }`
/// let bytes = [0x0a, 0x0b, 0x0a, 0x01, b'a', 0x12, 0x06, 0x0a, 0x04, 0x0a, 0x02, b'h', b'i'];
/// assert_eq!(features_in::<OfRecordRef>(&bytes)?, 1);
/// // The same bytes are not a valid tf.Example: its field 1 is a `Features`,
/// // whose first entry would then be the bytes `a`, a truncated field.
/// assert!(features_in::<ExampleRef>(&bytes).is_err());
/// # Ok::<(), recordwire::DecodeError>(())
/// ```
pub trait Payload<'a>: Copy + Sized {
    /// Which message this view reads.
    const KIND: PayloadKind;

    /// A lazy view of `bytes` (first byte at absolute offset `base`); no check.
    fn new(bytes: &'a [u8], base: u64) -> Self;

    /// Checks the record like `ParseFromString`, and more with
    /// [`DecodeOptions::strict`].
    fn validate(&self, options: DecodeOptions) -> Result<(), DecodeError>;

    /// The serialized bytes.
    fn bytes(&self) -> &'a [u8];

    /// The absolute offset of the first byte.
    fn base(&self) -> u64;

    /// This view as a [`PayloadRef`].
    fn into_ref(self) -> PayloadRef<'a>;

    /// A view of `bytes`, checked the way `ParseFromString` checks it.
    fn parse(bytes: &'a [u8], base: u64) -> Result<Self, DecodeError> {
        Self::parse_with(bytes, base, DecodeOptions::default())
    }

    /// A view of `bytes`, checked with `options`.
    fn parse_with(bytes: &'a [u8], base: u64, options: DecodeOptions) -> Result<Self, DecodeError> {
        let view = Self::new(bytes, base);
        view.validate(options)?;
        Ok(view)
    }
}

/// Gives a view struct `{ bytes, base, known }` with a `check(&self, strict)`
/// method returning what it found out (`known`, kept by `parse`)
/// the inherent `new`/`parse`/`parse_with`/`validate`/`bytes` and the
/// [`Payload`] implementation, so that the three views cannot drift apart.
macro_rules! payload_view {
    ($view:ident, $kind:ident, $msg:literal) => {
        impl<'a> $view<'a> {
            #[doc = concat!("A lazy view of `bytes` as a ", $msg, " (first byte at absolute offset `base`); no check.")]
            pub fn new(bytes: &'a [u8], base: u64) -> Self {
                $view {
                    bytes,
                    base,
                    known: Default::default(),
                }
            }

            /// A view of `bytes`, checked the way `ParseFromString` checks it.
            pub fn parse(bytes: &'a [u8], base: u64) -> Result<Self, DecodeError> {
                <Self as $crate::view::Payload>::parse(bytes, base)
            }

            /// A view of `bytes`, checked with `options`.
            pub fn parse_with(
                bytes: &'a [u8],
                base: u64,
                options: DecodeOptions,
            ) -> Result<Self, DecodeError> {
                let mut view = Self::new(bytes, base);
                // What the check found out about the maps (their
                // effective entries) is kept, so that iterating them
                // does not walk them again to find it.
                view.known = view.check(options.strict)?;
                Ok(view)
            }

            /// Checks the record like `ParseFromString`, and more with
            /// [`DecodeOptions::strict`].
            pub fn validate(&self, options: DecodeOptions) -> Result<(), DecodeError> {
                self.check(options.strict).map(drop)
            }

            /// The serialized bytes.
            pub fn bytes(&self) -> &'a [u8] {
                self.bytes
            }
        }

        impl<'a> $crate::view::Payload<'a> for $view<'a> {
            const KIND: $crate::view::PayloadKind = $crate::view::PayloadKind::$kind;

            fn new(bytes: &'a [u8], base: u64) -> Self {
                $view::new(bytes, base)
            }

            fn validate(&self, options: DecodeOptions) -> Result<(), DecodeError> {
                self.check(options.strict).map(drop)
            }

            fn parse_with(
                bytes: &'a [u8],
                base: u64,
                options: DecodeOptions,
            ) -> Result<Self, DecodeError> {
                $view::parse_with(bytes, base, options)
            }

            fn bytes(&self) -> &'a [u8] {
                self.bytes
            }

            fn base(&self) -> u64 {
                self.base
            }

            fn into_ref(self) -> $crate::view::PayloadRef<'a> {
                $crate::view::PayloadRef::$kind(self)
            }
        }

        impl<'a> From<$view<'a>> for $crate::view::PayloadRef<'a> {
            fn from(view: $view<'a>) -> Self {
                $crate::view::PayloadRef::$kind(view)
            }
        }
    };
}

/// Any payload: one of the three views, or raw bytes. Code that handles
/// "whatever the file holds" (printing, checking, statistics) matches on this
/// once instead of on a [`PayloadKind`] and building the view itself.
///
/// ```
/// use recordwire::io::{OpenOptions, RecordFile};
/// use recordwire::view::{PayloadKind, PayloadRef};
///
/// let file = RecordFile::open("testdata/ref/sequence_examples.tfrecord", &OpenOptions::default())?;
/// let record = file.records().next().unwrap()?;
/// let payload = PayloadRef::parse(PayloadKind::SequenceExample, record.data, record.data_offset)
///     .map_err(|e| record.context(e))?;
/// assert_eq!(payload.kind(), PayloadKind::SequenceExample);
/// // The context of a SequenceExample, the features of the other two.
/// assert!(payload.features().is_some());
/// assert!(payload.feature_lists().is_some());
/// # Ok::<(), recordwire::Error>(())
/// ```
#[derive(Debug, Clone, Copy)]
pub enum PayloadRef<'a> {
    /// A `tf.Example`.
    Example(ExampleRef<'a>),
    /// A `tf.SequenceExample`.
    SequenceExample(SequenceExampleRef<'a>),
    /// A OneFlow `OFRecord`.
    OfRecord(OfRecordRef<'a>),
    /// Bytes not decoded as any message.
    Raw(&'a [u8]),
}

impl<'a> PayloadRef<'a> {
    /// A lazy view of `bytes` as a payload of `kind`; no check.
    pub fn new(kind: PayloadKind, bytes: &'a [u8], base: u64) -> Self {
        match kind {
            PayloadKind::Example => PayloadRef::Example(ExampleRef::new(bytes, base)),
            PayloadKind::SequenceExample => {
                PayloadRef::SequenceExample(SequenceExampleRef::new(bytes, base))
            }
            PayloadKind::OfRecord => PayloadRef::OfRecord(OfRecordRef::new(bytes, base)),
            PayloadKind::Raw => PayloadRef::Raw(bytes),
        }
    }

    /// A view of `bytes` as a payload of `kind`, checked the way
    /// `ParseFromString` checks it (raw bytes need no check).
    pub fn parse(kind: PayloadKind, bytes: &'a [u8], base: u64) -> Result<Self, DecodeError> {
        Self::parse_with(kind, bytes, base, DecodeOptions::default())
    }

    /// A view of `bytes` as a payload of `kind`, checked with `options`.
    pub fn parse_with(
        kind: PayloadKind,
        bytes: &'a [u8],
        base: u64,
        options: DecodeOptions,
    ) -> Result<Self, DecodeError> {
        let view = Self::new(kind, bytes, base);
        view.validate(options)?;
        Ok(view)
    }

    /// Which message this is.
    pub fn kind(&self) -> PayloadKind {
        match self {
            PayloadRef::Example(_) => PayloadKind::Example,
            PayloadRef::SequenceExample(_) => PayloadKind::SequenceExample,
            PayloadRef::OfRecord(_) => PayloadKind::OfRecord,
            PayloadRef::Raw(_) => PayloadKind::Raw,
        }
    }

    /// The serialized bytes.
    pub fn bytes(&self) -> &'a [u8] {
        match self {
            PayloadRef::Example(v) => v.bytes(),
            PayloadRef::SequenceExample(v) => v.bytes(),
            PayloadRef::OfRecord(v) => v.bytes(),
            PayloadRef::Raw(b) => b,
        }
    }

    /// Checks the payload like `ParseFromString`, and more with
    /// [`DecodeOptions::strict`]; raw bytes are always valid.
    pub fn validate(&self, options: DecodeOptions) -> Result<(), DecodeError> {
        match self {
            PayloadRef::Example(v) => v.validate(options),
            PayloadRef::SequenceExample(v) => v.validate(options),
            PayloadRef::OfRecord(v) => v.validate(options),
            PayloadRef::Raw(_) => Ok(()),
        }
    }

    /// The feature map: an Example's or an OFRecord's features, a
    /// SequenceExample's context; `None` for raw bytes.
    pub fn features(&self) -> Option<FeaturesRef<'a>> {
        match self {
            PayloadRef::Example(v) => Some(v.features()),
            PayloadRef::SequenceExample(v) => Some(v.context()),
            PayloadRef::OfRecord(v) => Some(v.features()),
            PayloadRef::Raw(_) => None,
        }
    }

    /// A SequenceExample's feature lists; `None` for the other payloads.
    pub fn feature_lists(&self) -> Option<FeatureListsRef<'a>> {
        match self {
            PayloadRef::SequenceExample(v) => Some(v.feature_lists()),
            _ => None,
        }
    }
}

/// Which message a record's payload is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PayloadKind {
    /// `tf.Example`
    Example,
    /// `tf.SequenceExample`
    SequenceExample,
    /// OneFlow `OFRecord`
    OfRecord,
    /// Not decoded: the bytes as they are.
    Raw,
}

impl PayloadKind {
    /// The name used on the command line.
    pub fn name(self) -> &'static str {
        match self {
            PayloadKind::Example => "example",
            PayloadKind::SequenceExample => "sequence_example",
            PayloadKind::OfRecord => "ofrecord",
            PayloadKind::Raw => "raw",
        }
    }

    /// The message's name in messages: `tf.Example`, `tf.SequenceExample`,
    /// `OFRecord`, or `raw bytes`.
    pub fn message(self) -> &'static str {
        match self {
            PayloadKind::Example => "tf.Example",
            PayloadKind::SequenceExample => "tf.SequenceExample",
            PayloadKind::OfRecord => "OFRecord",
            PayloadKind::Raw => "raw bytes",
        }
    }

    /// Checks `bytes` as this kind of payload ([`PayloadRef::validate`]).
    pub fn validate(
        self,
        bytes: &[u8],
        base: u64,
        options: DecodeOptions,
    ) -> Result<(), DecodeError> {
        PayloadRef::new(self, bytes, base).validate(options)
    }
}

/// `example`, `sequence_example` (or `sequence-example`), `ofrecord` or `raw`.
impl OptionName for PayloadKind {
    const WHAT: &'static str = "payload";
    const ALL: &'static [Self] = &[
        PayloadKind::Example,
        PayloadKind::SequenceExample,
        PayloadKind::OfRecord,
        PayloadKind::Raw,
    ];
    const ALIASES: &'static [(&'static str, Self)] =
        &[("sequence-example", PayloadKind::SequenceExample)];
    fn name(self) -> &'static str {
        PayloadKind::name(self)
    }
}

crate::option_names!(PayloadKind);
