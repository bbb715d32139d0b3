//! `tf.Example`: [`ExampleRef`].

use super::logical::Logical;
use super::*;
use crate::wire::DecodeError;
use crate::wire::{FieldReader, Value};

/// A borrowed `tf.Example`.
#[derive(Debug, Clone, Copy)]
pub struct ExampleRef<'a> {
    pub(super) bytes: &'a [u8],
    pub(super) base: u64,
    /// The feature map's effective entries when `parse` found them (see
    /// `MapRef::effective`); 0 when not known.
    pub(super) known: u64,
}

impl<'a> ExampleRef<'a> {
    /// The features (`Example.features.feature`), merged over every
    /// occurrence of `Example.features`.
    pub fn features(&self) -> FeaturesRef<'a> {
        FeaturesRef::new(
            Logical::root(self.bytes, self.base, 0).child_collapsed(1),
            Schema::TensorFlow,
        )
        .known(self.known)
    }

    /// The feature named `name`.
    pub fn get(&self, name: impl AsRef<[u8]>) -> Result<Option<FeatureRef<'a>>, DecodeError> {
        self.features().get(name)
    }

    /// Whether the record has an `Example.features` field at all.
    pub fn has_features(&self) -> Result<bool, DecodeError> {
        for f in FieldReader::new(self.bytes, self.base, 0) {
            let f = f?;
            if let (1, Value::Len(_)) = (f.number, f.value) {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Checks the record like `ParseFromString` (and more in strict mode):
    /// the body of [`Self::validate`]. Returns the feature map's effective
    /// entries when the record has one `features` field (the map is then
    /// that field's entries, in the same order), else 0.
    fn check(&self, strict: bool) -> Result<u64, DecodeError> {
        let (mut segments, mut effective) = (0, 0);
        validate_top(self.bytes, self.base, strict, |n, b, off| {
            (n == 1).then(|| {
                let features = FeaturesRef::new(Logical::root(b, off, 1), Schema::TensorFlow);
                // Each Features segment is checked as its own message here;
                // strict cross-segment checks run below.
                segments += 1;
                effective = features.check(false)?;
                Ok(())
            })
        })?;
        let known = if segments == 1 { effective } else { 0 };
        if strict {
            self.features().validate(true)?;
        }
        Ok(known)
    }
}

payload_view!(ExampleRef, Example, "`tf.Example`");
