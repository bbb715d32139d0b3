//! OneFlow's `OFRecord`: [`OfRecordRef`].

use super::logical::Logical;
use super::*;
use crate::wire::DecodeError;

/// A borrowed OneFlow `OFRecord` (`map<string, Feature> feature = 1`).
#[derive(Debug, Clone, Copy)]
pub struct OfRecordRef<'a> {
    pub(super) bytes: &'a [u8],
    pub(super) base: u64,
    /// The map's effective entries when `parse` found them (see
    /// `MapRef::effective`); 0 when not known.
    pub(super) known: u64,
}

impl<'a> OfRecordRef<'a> {
    /// The features (`OFRecord.feature`).
    pub fn features(&self) -> FeaturesRef<'a> {
        FeaturesRef::new(Logical::root(self.bytes, self.base, 0), Schema::OneFlow).known(self.known)
    }

    /// The feature named `name`.
    pub fn get(&self, name: impl AsRef<[u8]>) -> Result<Option<FeatureRef<'a>>, DecodeError> {
        self.features().get(name)
    }

    /// Checks the record like `ParseFromString` (and more in strict mode):
    /// the body of [`Self::validate`]. Returns the map's effective entries.
    fn check(&self, strict: bool) -> Result<u64, DecodeError> {
        // The record is itself the map: validate_map walks its entries and
        // reports unknown top-level fields in strict mode.
        self.features().check(strict)
    }
}

payload_view!(OfRecordRef, OfRecord, "OneFlow `OFRecord`");
