//! OneFlow's `OFRecord`: [`OfRecordRef`].

use super::logical::Logical;
use super::*;
use crate::wire::DecodeError;

/// A borrowed OneFlow `OFRecord` (`map<string, Feature> feature = 1`).
#[derive(Debug, Clone, Copy)]
pub struct OfRecordRef<'a> {
    pub(super) bytes: &'a [u8],
    pub(super) base: u64,
}

impl<'a> OfRecordRef<'a> {
    /// A lazy view of `bytes` (first byte at absolute offset `base`); no check.
    pub fn new(bytes: &'a [u8], base: u64) -> Self {
        OfRecordRef { bytes, base }
    }

    /// A view of `bytes`, checked the way `ParseFromString` checks it.
    pub fn parse(bytes: &'a [u8], base: u64) -> Result<Self, DecodeError> {
        Self::parse_with(bytes, base, DecodeOptions::default())
    }

    /// A view of `bytes`, checked with `options`.
    pub fn parse_with(
        bytes: &'a [u8],
        base: u64,
        options: DecodeOptions,
    ) -> Result<Self, DecodeError> {
        let v = OfRecordRef::new(bytes, base);
        v.validate(options.strict)?;
        Ok(v)
    }

    /// The serialized bytes.
    pub fn bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// The features (`OFRecord.feature`).
    pub fn features(&self) -> FeaturesRef<'a> {
        FeaturesRef::new(Logical::root(self.bytes, self.base, 0), Schema::OneFlow)
    }

    /// The feature named `name`.
    pub fn get(&self, name: impl AsRef<[u8]>) -> Result<Option<FeatureRef<'a>>, DecodeError> {
        self.features().get(name)
    }

    /// Checks the record like `ParseFromString` (and more in strict mode).
    pub fn validate(&self, strict: bool) -> Result<(), DecodeError> {
        // The record is itself the map: validate_map walks its entries and
        // reports unknown top-level fields in strict mode.
        self.features().validate(strict)
    }
}
