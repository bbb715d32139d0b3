//! The peers' tf.Example and tf.SequenceExample types, written the way their code generators write
//! them (prost's derive; quick-protobuf's `pb-rs` output with borrowed
//! fields), so each peer runs its own decoder at its best.

#![allow(dead_code, missing_docs, clippy::enum_variant_names)]

// The prost types of example.proto come from the tests' mirror of the schemas.
#[path = "../../tests/support/prost_mirror.rs"]
mod prost_mirror;

/// prost, owned (`Vec<u8>` bytes, `String` keys): what `prost-build` generates.
pub mod prost_owned {
    super::prost_mirror::tf_messages!(bytes = "vec", Vec<u8>, map = HashMap);
}

/// prost with `bytes::Bytes` fields (`prost-build`'s `.bytes(["."])`):
/// bytes values are slices of the input buffer, not copies.
pub mod prost_bytes {
    super::prost_mirror::tf_messages!(bytes = "bytes", bytes::Bytes, map = HashMap);
}

/// quick-protobuf, borrowed: what `pb-rs` generates for example.proto
/// (`Cow` strings and bytes, packed fixed floats borrowed in place, packed
/// varints into a `Vec`, the map as a `HashMap`).
pub mod quick {
    use quick_protobuf::{BytesReader, MessageRead, Result};
    use std::borrow::Cow;
    use std::collections::HashMap;

    #[derive(Debug, Default, PartialEq, Clone)]
    pub struct BytesList<'a> {
        pub value: Vec<Cow<'a, [u8]>>,
    }
    impl<'a> MessageRead<'a> for BytesList<'a> {
        fn from_reader(r: &mut BytesReader, bytes: &'a [u8]) -> Result<Self> {
            let mut msg = Self::default();
            while !r.is_eof() {
                match r.next_tag(bytes) {
                    Ok(10) => msg.value.push(r.read_bytes(bytes).map(Cow::Borrowed)?),
                    Ok(t) => {
                        r.read_unknown(bytes, t)?;
                    }
                    Err(e) => return Err(e),
                }
            }
            Ok(msg)
        }
    }

    #[derive(Debug, Default, PartialEq, Clone)]
    pub struct FloatList<'a> {
        pub value: Cow<'a, [f32]>,
    }
    impl<'a> MessageRead<'a> for FloatList<'a> {
        fn from_reader(r: &mut BytesReader, bytes: &'a [u8]) -> Result<Self> {
            let mut msg = Self::default();
            while !r.is_eof() {
                match r.next_tag(bytes) {
                    Ok(10) => msg.value = r.read_packed_fixed(bytes)?.into(),
                    Ok(13) => msg.value.to_mut().push(r.read_float(bytes)?),
                    Ok(t) => {
                        r.read_unknown(bytes, t)?;
                    }
                    Err(e) => return Err(e),
                }
            }
            Ok(msg)
        }
    }

    #[derive(Debug, Default, PartialEq, Clone)]
    pub struct Int64List {
        pub value: Vec<i64>,
    }
    impl<'a> MessageRead<'a> for Int64List {
        fn from_reader(r: &mut BytesReader, bytes: &'a [u8]) -> Result<Self> {
            let mut msg = Self::default();
            while !r.is_eof() {
                match r.next_tag(bytes) {
                    Ok(10) => msg.value = r.read_packed(bytes, |r, bytes| r.read_int64(bytes))?,
                    Ok(8) => msg.value.push(r.read_int64(bytes)?),
                    Ok(t) => {
                        r.read_unknown(bytes, t)?;
                    }
                    Err(e) => return Err(e),
                }
            }
            Ok(msg)
        }
    }

    #[derive(Debug, PartialEq, Clone, Default)]
    pub enum Kind<'a> {
        BytesList(BytesList<'a>),
        FloatList(FloatList<'a>),
        Int64List(Int64List),
        #[default]
        None,
    }

    #[derive(Debug, Default, PartialEq, Clone)]
    pub struct Feature<'a> {
        pub kind: Kind<'a>,
    }
    impl<'a> MessageRead<'a> for Feature<'a> {
        fn from_reader(r: &mut BytesReader, bytes: &'a [u8]) -> Result<Self> {
            let mut msg = Self::default();
            while !r.is_eof() {
                match r.next_tag(bytes) {
                    Ok(10) => msg.kind = Kind::BytesList(r.read_message::<BytesList>(bytes)?),
                    Ok(18) => msg.kind = Kind::FloatList(r.read_message::<FloatList>(bytes)?),
                    Ok(26) => msg.kind = Kind::Int64List(r.read_message::<Int64List>(bytes)?),
                    Ok(t) => {
                        r.read_unknown(bytes, t)?;
                    }
                    Err(e) => return Err(e),
                }
            }
            Ok(msg)
        }
    }

    #[derive(Debug, Default, PartialEq, Clone)]
    pub struct Features<'a> {
        pub feature: HashMap<Cow<'a, str>, Feature<'a>>,
    }
    impl<'a> MessageRead<'a> for Features<'a> {
        fn from_reader(r: &mut BytesReader, bytes: &'a [u8]) -> Result<Self> {
            let mut msg = Self::default();
            while !r.is_eof() {
                match r.next_tag(bytes) {
                    Ok(10) => {
                        let (key, value) = r.read_map(
                            bytes,
                            |r, bytes| r.read_string(bytes).map(Cow::Borrowed),
                            |r, bytes| r.read_message::<Feature>(bytes),
                        )?;
                        msg.feature.insert(key, value);
                    }
                    Ok(t) => {
                        r.read_unknown(bytes, t)?;
                    }
                    Err(e) => return Err(e),
                }
            }
            Ok(msg)
        }
    }

    #[derive(Debug, Default, PartialEq, Clone)]
    pub struct Example<'a> {
        pub features: Option<Features<'a>>,
    }
    impl<'a> MessageRead<'a> for Example<'a> {
        fn from_reader(r: &mut BytesReader, bytes: &'a [u8]) -> Result<Self> {
            let mut msg = Self::default();
            while !r.is_eof() {
                match r.next_tag(bytes) {
                    Ok(10) => msg.features = Some(r.read_message::<Features>(bytes)?),
                    Ok(t) => {
                        r.read_unknown(bytes, t)?;
                    }
                    Err(e) => return Err(e),
                }
            }
            Ok(msg)
        }
    }

    #[derive(Debug, Default, PartialEq, Clone)]
    pub struct FeatureList<'a> {
        pub feature: Vec<Feature<'a>>,
    }
    impl<'a> MessageRead<'a> for FeatureList<'a> {
        fn from_reader(r: &mut BytesReader, bytes: &'a [u8]) -> Result<Self> {
            let mut msg = Self::default();
            while !r.is_eof() {
                match r.next_tag(bytes) {
                    Ok(10) => msg.feature.push(r.read_message::<Feature>(bytes)?),
                    Ok(t) => {
                        r.read_unknown(bytes, t)?;
                    }
                    Err(e) => return Err(e),
                }
            }
            Ok(msg)
        }
    }

    #[derive(Debug, Default, PartialEq, Clone)]
    pub struct FeatureLists<'a> {
        pub feature_list: HashMap<Cow<'a, str>, FeatureList<'a>>,
    }
    impl<'a> MessageRead<'a> for FeatureLists<'a> {
        fn from_reader(r: &mut BytesReader, bytes: &'a [u8]) -> Result<Self> {
            let mut msg = Self::default();
            while !r.is_eof() {
                match r.next_tag(bytes) {
                    Ok(10) => {
                        let (key, value) = r.read_map(
                            bytes,
                            |r, bytes| r.read_string(bytes).map(Cow::Borrowed),
                            |r, bytes| r.read_message::<FeatureList>(bytes),
                        )?;
                        msg.feature_list.insert(key, value);
                    }
                    Ok(t) => {
                        r.read_unknown(bytes, t)?;
                    }
                    Err(e) => return Err(e),
                }
            }
            Ok(msg)
        }
    }

    #[derive(Debug, Default, PartialEq, Clone)]
    pub struct SequenceExample<'a> {
        pub context: Option<Features<'a>>,
        pub feature_lists: Option<FeatureLists<'a>>,
    }
    impl<'a> MessageRead<'a> for SequenceExample<'a> {
        fn from_reader(r: &mut BytesReader, bytes: &'a [u8]) -> Result<Self> {
            let mut msg = Self::default();
            while !r.is_eof() {
                match r.next_tag(bytes) {
                    Ok(10) => msg.context = Some(r.read_message::<Features>(bytes)?),
                    Ok(18) => msg.feature_lists = Some(r.read_message::<FeatureLists>(bytes)?),
                    Ok(t) => {
                        r.read_unknown(bytes, t)?;
                    }
                    Err(e) => return Err(e),
                }
            }
            Ok(msg)
        }
    }

    /// Decodes one serialized Example.
    pub fn decode(payload: &[u8]) -> Result<Example<'_>> {
        let mut r = BytesReader::from_bytes(payload);
        Example::from_reader(&mut r, payload)
    }

    /// Decodes one serialized SequenceExample.
    pub fn decode_sequence(payload: &[u8]) -> Result<SequenceExample<'_>> {
        let mut r = BytesReader::from_bytes(payload);
        SequenceExample::from_reader(&mut r, payload)
    }
}
