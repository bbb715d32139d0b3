//! prost's view of the schemas (docs/FORMAT.md §2): the messages declared by hand with
//! `#[derive(prost::Message)]`, the way `prost-build` would generate them,
//! plus the wire-equivalent forms the tests need. The one mirror of the
//! schemas, used by the prost differential tests, the encoder's properties
//! and the benchmarks (`benches/common/peers.rs`, through [`tf_messages`]).

#![allow(dead_code, missing_docs)]

/// TensorFlow's feature.proto / example.proto (proto3): the messages of
/// tf.Example and tf.SequenceExample, with bytes values of the given prost
/// representation and Rust type (`bytes = "vec", Vec<u8>` or `bytes =
/// "bytes", bytes::Bytes`) and maps of the given prost kind and Rust type
/// (`btree_map = BTreeMap` or `map = HashMap`, what `prost-build` makes by
/// default).
macro_rules! tf_messages {
    (bytes = $repr:tt, $bytes:ty, $map:ident = $map_ty:ident) => {
        #[allow(unused_imports)]
        use std::collections::{BTreeMap, HashMap};

        #[derive(Clone, PartialEq, prost::Message)]
        pub struct BytesList {
            #[prost(bytes = $repr, repeated, tag = "1")]
            pub value: Vec<$bytes>,
        }

        #[derive(Clone, PartialEq, prost::Message)]
        pub struct FloatList {
            #[prost(float, repeated, tag = "1")]
            pub value: Vec<f32>,
        }

        #[derive(Clone, PartialEq, prost::Message)]
        pub struct Int64List {
            #[prost(int64, repeated, tag = "1")]
            pub value: Vec<i64>,
        }

        // Named after the proto fields (bytes_list, float_list, ...).
        #[allow(clippy::enum_variant_names)]
        #[derive(Clone, PartialEq, prost::Oneof)]
        pub enum Kind {
            #[prost(message, tag = "1")]
            BytesList(BytesList),
            #[prost(message, tag = "2")]
            FloatList(FloatList),
            #[prost(message, tag = "3")]
            Int64List(Int64List),
        }

        #[derive(Clone, PartialEq, prost::Message)]
        pub struct Feature {
            #[prost(oneof = "Kind", tags = "1, 2, 3")]
            pub kind: Option<Kind>,
        }

        #[derive(Clone, PartialEq, prost::Message)]
        pub struct Features {
            #[prost($map = "string, message", tag = "1")]
            pub feature: $map_ty<String, Feature>,
        }

        #[derive(Clone, PartialEq, prost::Message)]
        pub struct Example {
            #[prost(message, optional, tag = "1")]
            pub features: Option<Features>,
        }

        #[derive(Clone, PartialEq, prost::Message)]
        pub struct FeatureList {
            #[prost(message, repeated, tag = "1")]
            pub feature: Vec<Feature>,
        }

        #[derive(Clone, PartialEq, prost::Message)]
        pub struct FeatureLists {
            #[prost($map = "string, message", tag = "1")]
            pub feature_list: $map_ty<String, FeatureList>,
        }

        #[derive(Clone, PartialEq, prost::Message)]
        pub struct SequenceExample {
            #[prost(message, optional, tag = "1")]
            pub context: Option<Features>,
            #[prost(message, optional, tag = "2")]
            pub feature_lists: Option<FeatureLists>,
        }
    };
}
pub(crate) use tf_messages;

/// TensorFlow's feature.proto / example.proto (proto3), the maps as
/// `BTreeMap`s; plus the maps as repeated entries whose key and value are
/// `optional` fields, which prost writes whenever they are `Some` (Google's
/// `SerializeToString` always writes both; prost's `map` encoder leaves out an
/// empty key and a default value).
pub mod tf {
    super::tf_messages!(bytes = "vec", Vec<u8>, btree_map = BTreeMap);

    /// A `map<string, Feature>` entry, key and value always written.
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct FeatureEntry {
        #[prost(string, optional, tag = "1")]
        pub key: Option<String>,
        #[prost(message, optional, tag = "2")]
        pub value: Option<Feature>,
    }

    #[derive(Clone, PartialEq, prost::Message)]
    pub struct FeaturesE {
        #[prost(message, repeated, tag = "1")]
        pub feature: Vec<FeatureEntry>,
    }

    #[derive(Clone, PartialEq, prost::Message)]
    pub struct ExampleE {
        #[prost(message, optional, tag = "1")]
        pub features: Option<FeaturesE>,
    }

    /// A `map<string, FeatureList>` entry, key and value always written.
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct FeatureListEntry {
        #[prost(string, optional, tag = "1")]
        pub key: Option<String>,
        #[prost(message, optional, tag = "2")]
        pub value: Option<FeatureList>,
    }

    #[derive(Clone, PartialEq, prost::Message)]
    pub struct FeatureListsE {
        #[prost(message, repeated, tag = "1")]
        pub feature_list: Vec<FeatureListEntry>,
    }

    #[derive(Clone, PartialEq, prost::Message)]
    pub struct SequenceExampleE {
        #[prost(message, optional, tag = "1")]
        pub context: Option<FeaturesE>,
        #[prost(message, optional, tag = "2")]
        pub feature_lists: Option<FeatureListsE>,
    }
}

/// OneFlow's record.proto (proto2): the map as `btree_map<string, Feature>`,
/// what prost generates (UTF-8 names only), and as its wire equivalent,
/// repeated entries with bytes keys (proto2 does not require UTF-8 names, and
/// prost's `String` map keys would).
pub mod of {
    use std::collections::BTreeMap;

    #[derive(Clone, PartialEq, prost::Message)]
    pub struct BytesList {
        #[prost(bytes = "vec", repeated, tag = "1")]
        pub value: Vec<Vec<u8>>,
    }

    #[derive(Clone, PartialEq, prost::Message)]
    pub struct FloatList {
        #[prost(float, repeated, packed = "true", tag = "1")]
        pub value: Vec<f32>,
    }

    #[derive(Clone, PartialEq, prost::Message)]
    pub struct DoubleList {
        #[prost(double, repeated, packed = "true", tag = "1")]
        pub value: Vec<f64>,
    }

    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Int32List {
        #[prost(int32, repeated, packed = "true", tag = "1")]
        pub value: Vec<i32>,
    }

    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Int64List {
        #[prost(int64, repeated, packed = "true", tag = "1")]
        pub value: Vec<i64>,
    }

    // Named after the proto fields (bytes_list, float_list, ...).
    #[allow(clippy::enum_variant_names)]
    #[derive(Clone, PartialEq, prost::Oneof)]
    pub enum Kind {
        #[prost(message, tag = "1")]
        BytesList(BytesList),
        #[prost(message, tag = "2")]
        FloatList(FloatList),
        #[prost(message, tag = "3")]
        DoubleList(DoubleList),
        #[prost(message, tag = "4")]
        Int32List(Int32List),
        #[prost(message, tag = "5")]
        Int64List(Int64List),
    }

    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Feature {
        #[prost(oneof = "Kind", tags = "1, 2, 3, 4, 5")]
        pub kind: Option<Kind>,
    }

    /// A `map<string, Feature>` entry with the key as bytes, key and value
    /// written whenever they are `Some` (a missing key reads as `None`, which
    /// means the empty name).
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Entry {
        #[prost(bytes = "vec", optional, tag = "1")]
        pub key: Option<Vec<u8>>,
        #[prost(message, optional, tag = "2")]
        pub value: Option<Feature>,
    }

    /// `OFRecord { map<string, Feature> feature = 1; }` as its wire
    /// equivalent, `repeated Entry feature = 1;`.
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct OfRecordE {
        #[prost(message, repeated, tag = "1")]
        pub feature: Vec<Entry>,
    }

    /// `OFRecord` as prost generates it from record.proto (string keys).
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct OfRecord {
        #[prost(btree_map = "string, message", tag = "1")]
        pub feature: BTreeMap<String, Feature>,
    }
}
