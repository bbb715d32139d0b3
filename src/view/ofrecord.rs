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
    /// The features (`OFRecord.feature`).
    pub fn features(&self) -> FeaturesRef<'a> {
        FeaturesRef::new(Logical::root(self.bytes, self.base, 0), Schema::OneFlow)
    }

    /// The feature named `name`.
    pub fn get(&self, name: impl AsRef<[u8]>) -> Result<Option<FeatureRef<'a>>, DecodeError> {
        self.features().get(name)
    }

    /// Checks the record like `ParseFromString` (and more in strict mode):
    /// the body of [`Self::validate`].
    fn check(&self, strict: bool) -> Result<(), DecodeError> {
        // The record is itself the map: validate_map walks its entries and
        // reports unknown top-level fields in strict mode.
        self.features().validate(strict)
    }
}

payload_view!(OfRecordRef, OfRecord, "OneFlow `OFRecord`");
