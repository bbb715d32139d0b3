//! Shared by `prost_differential`, `reference_decoder` and `encode_properties`:
//!
//! * a wire-level AST ([`F`]) and its encoder, able to write every encoding
//!   Google's parser accepts (overlong varints, tags and lengths, unpacked and
//!   mixed numeric runs, unknown fields of every wire type, groups, ...), not
//!   only the canonical one;
//! * proptest strategies that generate tf.Example, tf.SequenceExample and
//!   OFRecord payloads in that AST, with all of docs/FORMAT.md §3's quirks;
//! * comparable owned forms ([`Rec`], [`RecObs`]) and observers that read a
//!   record through *every* accessor of recordwire's views, checking that the
//!   accessors agree with each other on the way.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::fmt::Write as _;

use proptest::prelude::*;
use proptest::sample::Index;
use proptest::strategy::Union;
use recordwire::view::{
    Element, Entry, ExampleRef, FeatureListsRef, FeatureRef, FeaturesRef, Kind, ListRef, NumList,
    OfRecordRef, PayloadKind, Schema, SequenceExampleRef,
};
use recordwire::DecodeError;

// ---------------------------------------------------------------------------
// Hex, test configuration
// ---------------------------------------------------------------------------

/// Lower-case hex of `bytes`, space-separated, for failure messages.
pub fn hex(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(bytes.len() * 3);
    for (i, b) in bytes.iter().enumerate() {
        if i > 0 {
            s.push(' ');
        }
        let _ = write!(s, "{b:02x}");
    }
    s
}

/// Number of proptest cases: `PROPTEST_CASES` when set, else `default`.
pub fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

/// A proptest configuration with `cases` cases and no regression files
/// written into the source tree.
pub fn config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// Absolute offset of the first byte of the record in every test: far from
/// zero, so that a view that forgets its base is caught by the offset checks.
pub const BASE: u64 = (1 << 40) + 3;

/// The three payload kinds.
pub const KINDS: [PayloadKind; 3] = [
    PayloadKind::Example,
    PayloadKind::SequenceExample,
    PayloadKind::OfRecord,
];

// ---------------------------------------------------------------------------
// The wire AST and its encoder
// ---------------------------------------------------------------------------

/// How a varint is written: `pad` extra (overlong) bytes, and for a 10-byte
/// varint, garbage in the 7 high bits of the 10th byte (`dirty`; Google drops
/// bits past the 64th).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct VEnc {
    pub pad: u8,
    pub dirty: u8,
}

/// One field (or raw bytes) of a message. `tp` / `lp` are extra overlong bytes
/// of the tag / length (clipped so that tags and lengths stay at most 5 bytes).
#[derive(Clone, Debug, PartialEq)]
pub enum F {
    Varint {
        n: u32,
        tp: u8,
        v: u64,
        e: VEnc,
    },
    I32 {
        n: u32,
        tp: u8,
        v: u32,
    },
    I64 {
        n: u32,
        tp: u8,
        v: u64,
    },
    Len {
        n: u32,
        tp: u8,
        lp: u8,
        body: Body,
    },
    Group {
        n: u32,
        tp: u8,
        body: Vec<F>,
    },
    /// Bytes written as they are (deep groups, deliberately invalid pieces).
    Raw(Vec<u8>),
}

/// The payload of a length-delimited field.
#[derive(Clone, Debug, PartialEq)]
pub enum Body {
    Bytes(Vec<u8>),
    Msg(Vec<F>),
    /// A packed run of varints.
    Varints(Vec<(u64, VEnc)>),
}

/// Wire type codes.
pub const VARINT: u8 = 0;
pub const I64: u8 = 1;
pub const LEN: u8 = 2;
pub const SGROUP: u8 = 3;
pub const I32: u8 = 5;

impl F {
    pub fn wire_type(&self) -> u8 {
        match self {
            F::Varint { .. } => VARINT,
            F::I32 { .. } => I32,
            F::I64 { .. } => I64,
            F::Len { .. } => LEN,
            F::Group { .. } => SGROUP,
            F::Raw(_) => 255,
        }
    }

    fn set_number(&mut self, number: u32) {
        match self {
            F::Varint { n, .. }
            | F::I32 { n, .. }
            | F::I64 { n, .. }
            | F::Len { n, .. }
            | F::Group { n, .. } => *n = number,
            F::Raw(_) => {}
        }
    }
}

fn min_len(v: u64) -> usize {
    let mut n = 1;
    let mut x = v >> 7;
    while x != 0 {
        n += 1;
        x >>= 7;
    }
    n
}

/// Writes `v` as a varint of `len` bytes (`len` at least the minimal length,
/// at most 10); for 10 bytes, `dirty` goes into the high bits of the last.
pub fn put_varint_len(out: &mut Vec<u8>, v: u64, len: usize, dirty: u8) {
    for i in 0..len {
        let mut b = if i < 9 {
            ((v >> (7 * i)) & 0x7f) as u8
        } else {
            ((v >> 63) as u8) | ((dirty << 1) & 0x7e)
        };
        if i + 1 < len {
            b |= 0x80;
        }
        out.push(b);
    }
}

/// Writes `v` with `e`'s padding, at most 10 bytes; a dirty varint is always 10.
pub fn put_varint(out: &mut Vec<u8>, v: u64, e: VEnc) {
    let mut len = (min_len(v) + e.pad as usize).min(10);
    if e.dirty & 0x3f != 0 {
        len = 10;
    }
    put_varint_len(out, v, len, e.dirty);
}

/// Writes a tag or a length with `pad` extra bytes, at most 5 in all.
fn put_small(out: &mut Vec<u8>, v: u64, pad: u8) {
    let len = (min_len(v) + pad as usize).clamp(min_len(v), 5.max(min_len(v)));
    put_varint_len(out, v, len, 0);
}

fn put_tag(out: &mut Vec<u8>, n: u32, wire: u8, pad: u8) {
    put_small(out, ((n as u64) << 3) | wire as u64, pad);
}

/// Encodes a message.
pub fn encode(fields: &[F]) -> Vec<u8> {
    let mut out = Vec::new();
    encode_into(&mut out, fields);
    out
}

fn encode_into(out: &mut Vec<u8>, fields: &[F]) {
    for f in fields {
        match f {
            F::Varint { n, tp, v, e } => {
                put_tag(out, *n, VARINT, *tp);
                put_varint(out, *v, *e);
            }
            F::I32 { n, tp, v } => {
                put_tag(out, *n, I32, *tp);
                out.extend_from_slice(&v.to_le_bytes());
            }
            F::I64 { n, tp, v } => {
                put_tag(out, *n, I64, *tp);
                out.extend_from_slice(&v.to_le_bytes());
            }
            F::Len { n, tp, lp, body } => {
                put_tag(out, *n, LEN, *tp);
                let payload = match body {
                    Body::Bytes(b) => b.clone(),
                    Body::Msg(m) => encode(m),
                    Body::Varints(vs) => {
                        let mut p = Vec::new();
                        for (v, e) in vs {
                            put_varint(&mut p, *v, *e);
                        }
                        p
                    }
                };
                put_small(out, payload.len() as u64, *lp);
                out.extend_from_slice(&payload);
            }
            F::Group { n, tp, body } => {
                put_tag(out, *n, SGROUP, *tp);
                encode_into(out, body);
                put_tag(out, *n, 4, *tp);
            }
            F::Raw(b) => out.extend_from_slice(b),
        }
    }
}

/// A field `n` holding the message `body`, with minimal tag and length.
pub fn msg(n: u32, body: Vec<F>) -> F {
    F::Len {
        n,
        tp: 0,
        lp: 0,
        body: Body::Msg(body),
    }
}

/// A field `n` holding `bytes`.
pub fn bytes(n: u32, bytes: &[u8]) -> F {
    F::Len {
        n,
        tp: 0,
        lp: 0,
        body: Body::Bytes(bytes.to_vec()),
    }
}

/// A varint field.
pub fn varint(n: u32, v: u64) -> F {
    F::Varint {
        n,
        tp: 0,
        v,
        e: VEnc::default(),
    }
}

/// `depth` nested groups of field `n`, as raw bytes.
pub fn nested_groups(n: u32, depth: usize) -> Vec<u8> {
    let mut start = Vec::new();
    put_tag(&mut start, n, SGROUP, 0);
    let mut end = Vec::new();
    put_tag(&mut end, n, 4, 0);
    let mut out = Vec::new();
    for _ in 0..depth {
        out.extend_from_slice(&start);
    }
    for _ in 0..depth {
        out.extend_from_slice(&end);
    }
    out
}

// ---------------------------------------------------------------------------
// Strategies
// ---------------------------------------------------------------------------

/// What the generators may produce beyond what prost's decoder accepts.
#[derive(Clone, Copy, Debug, Default)]
pub struct Cfg {
    /// Encodings Google's parser accepts and prost rejects: known field
    /// numbers with a wrong wire type (skipped as unknown by Google), and
    /// 10-byte varints with garbage in the 10th byte.
    pub google_only: bool,
    /// Occasionally a tf.Example/SequenceExample feature name that is not
    /// UTF-8 (every decoder must reject the record).
    pub bad_utf8: bool,
    /// Occasionally a deliberately invalid piece (bad wire type, field 0,
    /// 6-byte tag or length, 11-byte varint, stray or crossed end group, bad
    /// packed run, groups nested past the limit...).
    pub invalid: bool,
}

/// The message types of the schemas, for choosing unknown fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Msg {
    Example,
    Seq,
    /// `Features`, `FeatureLists`, `FeatureList` and `OFRecord`: field 1 is a message.
    Field1IsMessage,
    Entry,
    Feature(Schema),
    List(Kind),
}

impl Msg {
    /// Whether field `n` with wire type `w` is a known field of the message.
    pub fn known(self, n: u32, w: u8) -> bool {
        match self {
            Msg::Example | Msg::Field1IsMessage => n == 1 && w == LEN,
            Msg::Seq | Msg::Entry => (n == 1 || n == 2) && w == LEN,
            Msg::Feature(Schema::TensorFlow) => (1..=3).contains(&n) && w == LEN,
            Msg::Feature(Schema::OneFlow) => (1..=5).contains(&n) && w == LEN,
            Msg::List(kind) => {
                n == 1
                    && (w == LEN
                        || match kind {
                            Kind::Bytes => false,
                            Kind::Float => w == I32,
                            Kind::Double => w == I64,
                            Kind::Int32 | Kind::Int64 => w == VARINT,
                        })
            }
        }
    }
}

fn tpad() -> BoxedStrategy<u8> {
    prop_oneof![8 => Just(0u8), 1 => 1u8..=4].boxed()
}

fn venc(cfg: Cfg) -> BoxedStrategy<VEnc> {
    let plain = prop_oneof![
        6 => Just(VEnc::default()),
        2 => (1u8..=9).prop_map(|pad| VEnc { pad, dirty: 0 }),
    ];
    if cfg.google_only {
        prop_oneof![
            8 => plain,
            1 => (1u8..64).prop_map(|dirty| VEnc { pad: 9, dirty }),
        ]
        .boxed()
    } else {
        plain.boxed()
    }
}

fn any_u64_interesting() -> BoxedStrategy<u64> {
    prop_oneof![
        3 => any::<u64>(),
        2 => 0u64..300,
        1 => prop::sample::select(vec![u64::MAX, 1 << 63, (1 << 63) - 1, 1 << 32, 0xffff_ffff]),
    ]
    .boxed()
}

/// Any field of any wire type with field number from `nums`; groups nest up
/// to `depth` levels and hold fields with any number (everything in a group
/// is unknown).
pub fn wire_field(cfg: Cfg, nums: BoxedStrategy<u32>, depth: u32) -> BoxedStrategy<F> {
    let leaf = prop_oneof![
        (nums.clone(), tpad(), any_u64_interesting(), venc(cfg))
            .prop_map(|(n, tp, v, e)| F::Varint { n, tp, v, e }),
        (nums.clone(), tpad(), any::<u32>()).prop_map(|(n, tp, v)| F::I32 { n, tp, v }),
        (nums.clone(), tpad(), any::<u64>()).prop_map(|(n, tp, v)| F::I64 { n, tp, v }),
        (
            nums.clone(),
            tpad(),
            tpad(),
            prop::collection::vec(any::<u8>(), 0..6)
        )
            .prop_map(|(n, tp, lp, b)| F::Len {
                n,
                tp,
                lp,
                body: Body::Bytes(b)
            }),
    ];
    if depth == 0 {
        return leaf.boxed();
    }
    let inner = wire_field(cfg, (1u32..40).boxed(), depth - 1);
    prop_oneof![
        4 => leaf,
        1 => (nums, tpad(), prop::collection::vec(inner, 0..3))
            .prop_map(|(n, tp, body)| F::Group { n, tp, body }),
    ]
    .boxed()
}

/// Pieces that make a message invalid, or that change the meaning of what
/// follows (an unterminated group, a fixed32 that swallows the next bytes).
fn invalid_piece() -> BoxedStrategy<F> {
    prop::sample::select(vec![
        vec![0x36, 0x00],                               // wire type 6
        vec![0x37, 0x00],                               // wire type 7
        vec![0x00, 0x00],                               // field 0
        vec![0x07],                                     // field 0, wire type 7
        vec![0xb0, 0x80, 0x80, 0x80, 0x80, 0x00, 0x00], // 6-byte tag
        vec![0xb0, 0x80, 0x80, 0x80, 0x10, 0x00],       // tag above 2^32-1
        vec![0xf8, 0xff, 0xff, 0xff, 0x0f, 0x00],       // field 2^29-1, 5-byte tag: valid
        vec![
            0x30, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00,
        ], // 11-byte varint
        vec![0x32, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00], // 6-byte length
        vec![0x32, 0x80, 0x80, 0x80, 0x80, 0x08],       // length 2^31
        vec![0x32, 0x05, 0x01],                         // length overrun (unless followed)
        vec![0x34],                                     // stray end group
        vec![0x33],                                     // unterminated group (maybe)
        vec![0x33, 0x3c],                               // crossed end group
        vec![0x33, 0x3b, 0x34, 0x3c],                   // crossed nested groups
        vec![0x35, 0x01],                               // fixed32 swallowing 3 bytes
        vec![0x31, 0x01, 0x02],                         // fixed64 swallowing 6 bytes
        vec![0x0c],                                     // end group for field 1
        nested_groups(6, 101),                          // past the depth limit anywhere
        nested_groups(6, 97),                           // past it from a list at depth 4+
    ])
    .prop_map(F::Raw)
    .boxed()
}

/// An unknown field of message `m`: any wire type, groups included; with
/// `google_only`, known numbers with a wrong wire type too.
pub fn unknown(cfg: Cfg, m: Msg) -> BoxedStrategy<F> {
    let nums = if cfg.google_only {
        prop_oneof![
            3 => 1u32..=5,
            3 => 6u32..=40,
            1 => Just((1u32 << 29) - 1),
            1 => 41u32..200_000,
        ]
        .boxed()
    } else {
        prop_oneof![
            4 => 6u32..=40,
            1 => Just((1u32 << 29) - 1),
            1 => 41u32..200_000,
        ]
        .boxed()
    };
    let field = wire_field(cfg, nums, 2).prop_map(move |mut f| {
        if let F::Varint { n, .. }
        | F::I32 { n, .. }
        | F::I64 { n, .. }
        | F::Len { n, .. }
        | F::Group { n, .. } = f
        {
            if m.known(n, f.wire_type()) {
                f.set_number(n + 100);
            }
        }
        f
    });
    if cfg.invalid {
        prop_oneof![30 => field, 1 => invalid_piece()].boxed()
    } else {
        field.boxed()
    }
}

/// `parts` with 0..3 unknown fields of `m` inserted at random places.
fn with_unknowns(cfg: Cfg, m: Msg, parts: BoxedStrategy<Vec<F>>) -> BoxedStrategy<Vec<F>> {
    let unknowns = prop_oneof![
        3 => Just(Vec::new()),
        1 => prop::collection::vec((any::<Index>(), unknown(cfg, m)), 1..3),
    ];
    (parts, unknowns)
        .prop_map(|(mut parts, unknowns)| {
            for (at, u) in unknowns {
                let i = at.index(parts.len() + 1);
                parts.insert(i, u);
            }
            parts
        })
        .boxed()
}

/// A field `n` whose payload is a message from `body`, with random padding.
fn framed(n: u32, body: BoxedStrategy<Vec<F>>) -> BoxedStrategy<F> {
    (body, tpad(), tpad())
        .prop_map(move |(b, tp, lp)| F::Len {
            n,
            tp,
            lp,
            body: Body::Msg(b),
        })
        .boxed()
}

/// Float bit patterns, specials included (NaNs with payloads, infinities,
/// signed zeros, denormals).
pub fn f32_bits() -> BoxedStrategy<u32> {
    prop_oneof![
        2 => any::<u32>(),
        1 => prop::sample::select(vec![
            0x7fc0_0000u32, // NaN
            0xffc0_0001,    // negative NaN with payload
            0x7f80_0001,    // signalling NaN
            0x7f80_0000,    // +inf
            0xff80_0000,    // -inf
            0x8000_0000,    // -0.0
            0x0000_0000,
            0x0000_0001, // smallest denormal
            0x807f_ffff, // largest negative denormal
            0x3f80_0000, // 1.0
        ]),
    ]
    .boxed()
}

/// Double bit patterns, specials included.
pub fn f64_bits() -> BoxedStrategy<u64> {
    prop_oneof![
        2 => any::<u64>(),
        1 => prop::sample::select(vec![
            0x7ff8_0000_0000_0000u64,
            0xfff8_0000_0000_0001,
            0x7ff0_0000_0000_0001,
            0x7ff0_0000_0000_0000,
            0xfff0_0000_0000_0000,
            0x8000_0000_0000_0000,
            0,
            1,
            0x800f_ffff_ffff_ffff,
            0x3ff0_0000_0000_0000,
        ]),
    ]
    .boxed()
}

/// One list element as its wire bits and varint encoding.
fn element(cfg: Cfg, kind: Kind) -> BoxedStrategy<(u64, VEnc)> {
    match kind {
        Kind::Bytes => unreachable!("bytes lists have no numeric elements"),
        Kind::Float => f32_bits().prop_map(|b| (b as u64, VEnc::default())).boxed(),
        Kind::Double => f64_bits().prop_map(|b| (b, VEnc::default())).boxed(),
        Kind::Int64 => {
            let v = prop_oneof![
                3 => any::<i64>(),
                1 => prop::sample::select(vec![0i64, 1, -1, i64::MIN, i64::MAX, 127, 128, 300]),
            ];
            (v, venc(cfg)).prop_map(|(v, e)| (v as u64, e)).boxed()
        }
        Kind::Int32 => {
            let v = prop_oneof![
                3 => any::<i32>(),
                1 => prop::sample::select(vec![0i32, 1, -1, i32::MIN, i32::MAX, 300]),
            ];
            // Sign-extended to 64 bits as writers do, or with garbage in the
            // high 32 bits (Google reads int32 by truncating).
            let bits = prop_oneof![
                4 => v.clone().prop_map(|v| v as i64 as u64),
                1 => (v, 1u32..).prop_map(|(v, hi)| (v as u32 as u64) | ((hi as u64) << 32)),
            ];
            (bits, venc(cfg)).boxed()
        }
    }
}

/// A run of list elements: packed (one length-delimited field) or unpacked.
fn run_fields(kind: Kind, packed: bool, elems: Vec<(u64, VEnc)>, tp: u8, lp: u8) -> Vec<F> {
    if packed {
        let body = match kind {
            Kind::Float => Body::Bytes(
                elems
                    .iter()
                    .flat_map(|(b, _)| (*b as u32).to_le_bytes())
                    .collect(),
            ),
            Kind::Double => Body::Bytes(elems.iter().flat_map(|(b, _)| b.to_le_bytes()).collect()),
            _ => Body::Varints(elems),
        };
        vec![F::Len { n: 1, tp, lp, body }]
    } else {
        elems
            .into_iter()
            .map(|(v, e)| match kind {
                Kind::Float => F::I32 {
                    n: 1,
                    tp,
                    v: v as u32,
                },
                Kind::Double => F::I64 { n: 1, tp, v },
                _ => F::Varint { n: 1, tp, v, e },
            })
            .collect()
    }
}

/// The body of a list message of `kind`.
pub fn list(cfg: Cfg, kind: Kind) -> BoxedStrategy<Vec<F>> {
    let parts = if kind == Kind::Bytes {
        prop::collection::vec(
            (prop::collection::vec(any::<u8>(), 0..6), tpad(), tpad()),
            0..4,
        )
        .prop_map(|vs| {
            vs.into_iter()
                .map(|(b, tp, lp)| F::Len {
                    n: 1,
                    tp,
                    lp,
                    body: Body::Bytes(b),
                })
                .collect()
        })
        .boxed()
    } else {
        let elem = element(cfg, kind);
        // The common case: one packed run (the memcpy path).
        let single = (prop::collection::vec(elem.clone(), 0..6), tpad(), tpad())
            .prop_map(move |(e, tp, lp)| run_fields(kind, true, e, tp, lp));
        // Several runs, packed and unpacked, in any mix.
        let runs = prop::collection::vec(
            (
                any::<bool>(),
                prop::collection::vec(elem, 0..4),
                tpad(),
                tpad(),
            ),
            0..4,
        )
        .prop_map(move |runs| {
            runs.into_iter()
                .flat_map(|(p, e, tp, lp)| run_fields(kind, p, e, tp, lp))
                .collect::<Vec<_>>()
        });
        if cfg.invalid {
            let bad = match kind {
                Kind::Float => vec![0x0a, 0x03, 0, 0, 0x80],
                Kind::Double => vec![0x0a, 0x04, 0, 0, 0, 0],
                _ => vec![0x0a, 0x02, 0x01, 0x80],
            };
            prop_oneof![
                8 => single,
                8 => runs,
                1 => Just(vec![F::Raw(bad)]),
            ]
            .boxed()
        } else {
            prop_oneof![single, runs].boxed()
        }
    };
    with_unknowns(cfg, Msg::List(kind), parts)
}

/// The body of a `Feature`: 0..4 oneof members (switching members, repeating
/// the same member), with unknown fields.
pub fn feature(cfg: Cfg, schema: Schema) -> BoxedStrategy<Vec<F>> {
    let numbers: &[u32] = match schema {
        Schema::TensorFlow => &[1, 2, 3],
        Schema::OneFlow => &[1, 2, 3, 4, 5],
    };
    let members: Vec<BoxedStrategy<F>> = numbers
        .iter()
        .map(|&n| {
            let kind = schema.kind_of(n).expect("a oneof member");
            framed(n, list(cfg, kind))
        })
        .collect();
    let members = prop::collection::vec(Union::new(members), 0..4).boxed();
    with_unknowns(cfg, Msg::Feature(schema), members)
}

/// A feature name: mostly from a small pool so that keys repeat.
pub fn name(cfg: Cfg, schema: Schema) -> BoxedStrategy<Vec<u8>> {
    let pool = prop::sample::select(vec![
        b"".to_vec(),
        b"a".to_vec(),
        b"b".to_vec(),
        b"label".to_vec(),
        "\u{e9}t\u{e9}".as_bytes().to_vec(),
        b"image/encoded".to_vec(),
        b"a\0b".to_vec(),
    ]);
    let ascii = "[a-c]{1,3}".prop_map(String::into_bytes);
    match schema {
        Schema::OneFlow => prop_oneof![
            10 => pool,
            4 => ascii,
            3 => prop::collection::vec(any::<u8>(), 0..4),
        ]
        .boxed(),
        Schema::TensorFlow if cfg.bad_utf8 => prop_oneof![
            60 => pool,
            20 => ascii,
            1 => prop::sample::select(vec![vec![0xff], vec![b'a', 0xc3], vec![0xed, 0xa0, 0x80]]),
        ]
        .boxed(),
        Schema::TensorFlow => prop_oneof![10 => pool, 4 => ascii].boxed(),
    }
}

/// One map entry (as field 1 of its map) whose value has body `value`:
/// usually key then value, sometimes value first, keys or values missing or
/// repeated, unknown fields anywhere.
pub fn entry(cfg: Cfg, schema: Schema, value: BoxedStrategy<Vec<F>>) -> BoxedStrategy<F> {
    let key = (name(cfg, schema), tpad(), tpad())
        .prop_map(|(k, tp, lp)| F::Len {
            n: 1,
            tp,
            lp,
            body: Body::Bytes(k),
        })
        .boxed();
    let val = framed(2, value);
    let keys = prop_oneof![
        8 => prop::collection::vec(key.clone(), 1..=1),
        1 => prop::collection::vec(key, 0..=2),
    ];
    let vals = prop_oneof![
        8 => prop::collection::vec(val.clone(), 1..=1),
        1 => prop::collection::vec(val, 0..=2),
    ];
    let parts = (keys, vals).boxed();
    let ordered = parts.clone().prop_map(|(mut k, v)| {
        k.extend(v);
        k
    });
    let reversed = parts.clone().prop_map(|(k, mut v)| {
        v.extend(k);
        v
    });
    let shuffled = parts
        .prop_map(|(mut k, v)| {
            k.extend(v);
            k
        })
        .prop_shuffle();
    let body = prop_oneof![6 => ordered, 1 => reversed, 1 => shuffled].boxed();
    framed(1, with_unknowns(cfg, Msg::Entry, body))
}

/// The body of a map message (`Features`, `FeatureLists`, `OFRecord`).
pub fn map(cfg: Cfg, schema: Schema, value: BoxedStrategy<Vec<F>>) -> BoxedStrategy<Vec<F>> {
    let entries = prop::collection::vec(entry(cfg, schema, value), 0..5).boxed();
    with_unknowns(cfg, Msg::Field1IsMessage, entries)
}

/// A tf.Example: usually one `features`, sometimes none or several (merged).
pub fn example(cfg: Cfg) -> BoxedStrategy<Vec<F>> {
    let features = framed(
        1,
        map(cfg, Schema::TensorFlow, feature(cfg, Schema::TensorFlow)),
    );
    let parts = prop_oneof![
        1 => prop::collection::vec(features.clone(), 0..=0),
        6 => prop::collection::vec(features.clone(), 1..=1),
        2 => prop::collection::vec(features, 2..=3),
    ]
    .boxed();
    with_unknowns(cfg, Msg::Example, parts)
}

/// The body of a `FeatureList`.
pub fn feature_list(cfg: Cfg) -> BoxedStrategy<Vec<F>> {
    let f = framed(1, feature(cfg, Schema::TensorFlow));
    with_unknowns(
        cfg,
        Msg::Field1IsMessage,
        prop::collection::vec(f, 0..4).boxed(),
    )
}

/// A tf.SequenceExample: `context` and `feature_lists`, each 0..=2 times, in
/// any order.
pub fn sequence_example(cfg: Cfg) -> BoxedStrategy<Vec<F>> {
    let context = framed(
        1,
        map(cfg, Schema::TensorFlow, feature(cfg, Schema::TensorFlow)),
    );
    let lists = framed(2, map(cfg, Schema::TensorFlow, feature_list(cfg)));
    let parts = (
        prop::collection::vec(context, 0..=2),
        prop::collection::vec(lists, 0..=2),
    )
        .prop_map(|(mut c, l)| {
            c.extend(l);
            c
        })
        .prop_shuffle()
        .boxed();
    with_unknowns(cfg, Msg::Seq, parts)
}

/// A OneFlow OFRecord (the record is the map itself).
pub fn ofrecord(cfg: Cfg) -> BoxedStrategy<Vec<F>> {
    map(cfg, Schema::OneFlow, feature(cfg, Schema::OneFlow))
}

/// A record of `kind`.
pub fn record(cfg: Cfg, kind: PayloadKind) -> BoxedStrategy<Vec<F>> {
    match kind {
        PayloadKind::Example => example(cfg),
        PayloadKind::SequenceExample => sequence_example(cfg),
        PayloadKind::OfRecord => ofrecord(cfg),
        PayloadKind::Raw => unreachable!("raw payloads are not generated"),
    }
}

/// A record of any of the three kinds.
pub fn any_record(cfg: Cfg) -> BoxedStrategy<(PayloadKind, Vec<F>)> {
    Union::new(
        KINDS
            .iter()
            .map(|&k| record(cfg, k).prop_map(move |r| (k, r)).boxed()),
    )
    .boxed()
}

// ---------------------------------------------------------------------------
// Comparable forms
// ---------------------------------------------------------------------------

/// The values of a list, floats and doubles as bit patterns.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Vals {
    Bytes(Vec<Vec<u8>>),
    Float(Vec<u32>),
    Double(Vec<u64>),
    Int32(Vec<i32>),
    Int64(Vec<i64>),
}

/// A feature: its list, or `None` for a feature with no kind.
pub type Feat = Option<Vals>;

/// A feature map, by name.
pub type FeatMap = BTreeMap<Vec<u8>, Feat>;

/// A record's values, as any correct decoder sees them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Rec {
    Example {
        has_features: bool,
        features: FeatMap,
    },
    Seq {
        has_context: bool,
        has_lists: bool,
        context: FeatMap,
        lists: BTreeMap<Vec<u8>, Vec<Feat>>,
    },
    Of(FeatMap),
}

/// A feature with what the views say about its encoding: the single packed
/// run (`packed_bytes`) and whether packed and unpacked runs mix.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FeatObs {
    pub vals: Feat,
    /// `packed_bytes()` of a numeric list; `None` for bytes lists and features without kind.
    pub packed: Option<Vec<u8>>,
    pub mixed: bool,
}

/// A map: the effective entries, and every entry's name in wire order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MapObs<V> {
    pub map: BTreeMap<Vec<u8>, V>,
    pub entry_names: Vec<Vec<u8>>,
}

/// A record as read through recordwire's views (or the reference decoder).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RecObs {
    Example {
        has_features: bool,
        features: MapObs<FeatObs>,
    },
    Seq {
        has_context: bool,
        has_lists: bool,
        context: MapObs<FeatObs>,
        lists: MapObs<Vec<FeatObs>>,
    },
    Of(MapObs<FeatObs>),
}

fn values_of(m: &MapObs<FeatObs>) -> FeatMap {
    m.map
        .iter()
        .map(|(k, v)| (k.clone(), v.vals.clone()))
        .collect()
}

impl RecObs {
    /// The values alone.
    pub fn values(&self) -> Rec {
        match self {
            RecObs::Example {
                has_features,
                features,
            } => Rec::Example {
                has_features: *has_features,
                features: values_of(features),
            },
            RecObs::Seq {
                has_context,
                has_lists,
                context,
                lists,
            } => Rec::Seq {
                has_context: *has_context,
                has_lists: *has_lists,
                context: values_of(context),
                lists: lists
                    .map
                    .iter()
                    .map(|(k, v)| (k.clone(), v.iter().map(|f| f.vals.clone()).collect()))
                    .collect(),
            },
            RecObs::Of(m) => Rec::Of(values_of(m)),
        }
    }
}

// ---------------------------------------------------------------------------
// Observers: read a record through every accessor, cross-checking them
// ---------------------------------------------------------------------------

/// Why observing failed: an accessor returned an error, or two accessors
/// disagreed.
#[derive(Debug, Clone, PartialEq)]
pub enum ObsErr {
    Decode(DecodeError),
    Mismatch(String),
}

impl From<DecodeError> for ObsErr {
    fn from(e: DecodeError) -> Self {
        ObsErr::Decode(e)
    }
}

macro_rules! fail {
    ($($fmt:tt)*) => {
        return Err(ObsErr::Mismatch(format!($($fmt)*)))
    };
}

macro_rules! ensure {
    ($cond:expr, $($fmt:tt)*) => {
        if !$cond {
            return Err(ObsErr::Mismatch(format!($($fmt)*)));
        }
    };
}

#[derive(Clone, Copy)]
struct Ctx<'a> {
    input: &'a [u8],
    base: u64,
}

impl<'a> Ctx<'a> {
    fn at(&self, offset: u64, len: usize) -> Option<&'a [u8]> {
        let start = usize::try_from(offset.checked_sub(self.base)?).ok()?;
        self.input.get(start..start.checked_add(len)?)
    }
}

/// A numeric element type, for the observers.
trait Num: Element {
    fn bits(self) -> u64;
    fn sentinel() -> Self;
    /// The values of a packed run, decoded independently of recordwire.
    fn decode_packed(b: &[u8]) -> Option<Vec<Self>>;
}

fn naive_varints(b: &[u8]) -> Option<Vec<u64>> {
    let mut out = Vec::new();
    let mut v: u64 = 0;
    let mut i = 0;
    for &byte in b {
        if i == 10 {
            return None;
        }
        v |= (((byte & 0x7f) as u128) << (7 * i)) as u64;
        i += 1;
        if byte < 0x80 {
            out.push(v);
            v = 0;
            i = 0;
        }
    }
    (i == 0).then_some(out)
}

impl Num for f32 {
    fn bits(self) -> u64 {
        self.to_bits() as u64
    }
    fn sentinel() -> Self {
        f32::from_bits(0x7fa5_5a01)
    }
    fn decode_packed(b: &[u8]) -> Option<Vec<Self>> {
        b.len().is_multiple_of(4).then(|| {
            b.chunks_exact(4)
                .map(|c| f32::from_bits(u32::from_le_bytes([c[0], c[1], c[2], c[3]])))
                .collect()
        })
    }
}

impl Num for f64 {
    fn bits(self) -> u64 {
        self.to_bits()
    }
    fn sentinel() -> Self {
        f64::from_bits(0x7ff5_a5a5_5a5a_0001)
    }
    fn decode_packed(b: &[u8]) -> Option<Vec<Self>> {
        b.len().is_multiple_of(8).then(|| {
            b.chunks_exact(8)
                .map(|c| {
                    let mut a = [0u8; 8];
                    a.copy_from_slice(c);
                    f64::from_bits(u64::from_le_bytes(a))
                })
                .collect()
        })
    }
}

impl Num for i32 {
    fn bits(self) -> u64 {
        self as u32 as u64
    }
    fn sentinel() -> Self {
        0x5a5a_a5a5
    }
    fn decode_packed(b: &[u8]) -> Option<Vec<Self>> {
        Some(naive_varints(b)?.into_iter().map(|v| v as i32).collect())
    }
}

impl Num for i64 {
    fn bits(self) -> u64 {
        self as u64
    }
    fn sentinel() -> Self {
        0x5a5a_a5a5_5a5a_a5a5
    }
    fn decode_packed(b: &[u8]) -> Option<Vec<Self>> {
        Some(naive_varints(b)?.into_iter().map(|v| v as i64).collect())
    }
}

fn bits<T: Num>(v: &[T]) -> Vec<u64> {
    v.iter().map(|x| x.bits()).collect()
}

/// A numeric list's values, `packed_bytes()` and `is_mixed()`.
type NumObs<T> = (Vec<T>, Option<Vec<u8>>, bool);

/// Reads a numeric list through `iter`, `into_iter`, `len`, `is_empty`,
/// `copy_to_slice` (exact, short, empty and long buffers), `extend_vec`,
/// `packed_bytes` and `is_mixed`, and checks they agree.
fn observe_num<T: Num>(l: NumList<'_, T>) -> Result<NumObs<T>, ObsErr> {
    let vals: Vec<T> = l.iter().collect::<Result<_, _>>()?;
    let again: Vec<T> = (&l).into_iter().collect::<Result<_, _>>()?;
    ensure!(
        bits(&again) == bits(&vals),
        "into_iter() {again:?} != iter() {vals:?}"
    );
    let n = vals.len();
    let len = l.len()?;
    ensure!(len == n, "len() {len} != {n} values from iter()");
    ensure!(
        l.is_empty()? == (n == 0),
        "is_empty() disagrees with {n} values"
    );

    let mut long = vec![T::sentinel(); n + 3];
    let got = l.copy_to_slice(&mut long)?;
    ensure!(got == n, "copy_to_slice(long) returned {got}, expected {n}");
    ensure!(
        bits(&long[..n]) == bits(&vals),
        "copy_to_slice(long) wrote {:?}, expected {vals:?}",
        &long[..n]
    );
    ensure!(
        long[n..].iter().all(|x| x.bits() == T::sentinel().bits()),
        "copy_to_slice wrote past the values: {:?}",
        &long[n..]
    );
    let mut short = vec![T::sentinel(); n / 2];
    let got = l.copy_to_slice(&mut short)?;
    ensure!(
        got == n,
        "copy_to_slice(short) returned {got}, expected {n}"
    );
    ensure!(
        bits(&short) == bits(&vals[..n / 2]),
        "copy_to_slice(short) wrote {short:?}, expected {:?}",
        &vals[..n / 2]
    );
    let got = l.copy_to_slice(&mut [])?;
    ensure!(
        got == n,
        "copy_to_slice(empty) returned {got}, expected {n}"
    );

    let mut extended = vec![T::sentinel()];
    l.extend_vec(&mut extended)?;
    ensure!(
        extended.len() == n + 1
            && extended[0].bits() == T::sentinel().bits()
            && bits(&extended[1..]) == bits(&vals),
        "extend_vec gave {extended:?}, expected sentinel then {vals:?}"
    );

    let packed = l.packed_bytes()?.map(<[u8]>::to_vec);
    if let Some(p) = &packed {
        let decoded = T::decode_packed(p);
        ensure!(
            decoded.as_deref().map(bits) == Some(bits(&vals)),
            "packed_bytes() {} decodes to {decoded:?}, but iter() gives {vals:?}",
            hex(p)
        );
    }
    let mixed = l.is_mixed()?;
    ensure!(
        !(mixed && packed.is_some()),
        "a mixed list has packed_bytes()"
    );
    Ok((vals, packed, mixed))
}

/// Reads a feature through `list`, `kind`, the typed accessors and every
/// list accessor.
fn observe_feature(ctx: Ctx<'_>, f: FeatureRef<'_>) -> Result<FeatObs, ObsErr> {
    let list = f.list()?;
    let kind = f.kind()?;
    ensure!(
        kind == list.as_ref().map(ListRef::kind),
        "kind() {kind:?} != list().kind() {:?}",
        list.as_ref().map(ListRef::kind)
    );
    let typed = [
        (Kind::Bytes, f.bytes_list()?.is_some()),
        (Kind::Float, f.float_list()?.is_some()),
        (Kind::Double, f.double_list()?.is_some()),
        (Kind::Int32, f.int32_list()?.is_some()),
        (Kind::Int64, f.int64_list()?.is_some()),
    ];
    for (k, some) in typed {
        ensure!(
            some == (kind == Some(k)),
            "typed accessor for {k:?} disagrees with kind {kind:?}"
        );
    }
    let Some(list) = list else {
        return Ok(FeatObs {
            vals: None,
            packed: None,
            mixed: false,
        });
    };
    let (vals, packed, mixed) = match list {
        ListRef::Bytes(l) => {
            let mut it = l.iter();
            let mut vals = Vec::new();
            while let Some(v) = it.next_with_offset() {
                let (v, off) = v?;
                ensure!(
                    ctx.at(off, v.len()) == Some(v),
                    "bytes value {} is not at its offset {off}",
                    hex(v)
                );
                vals.push(v.to_vec());
            }
            let again: Vec<&[u8]> = (&l).into_iter().collect::<Result<_, _>>()?;
            ensure!(
                again == vals,
                "into_iter() disagrees with next_with_offset()"
            );
            ensure!(
                l.len()? == vals.len(),
                "bytes len() {} != {}",
                l.len()?,
                vals.len()
            );
            ensure!(
                l.is_empty()? == vals.is_empty(),
                "bytes is_empty() disagrees"
            );
            (Vals::Bytes(vals), None, false)
        }
        ListRef::Float(l) => {
            let (v, p, m) = observe_num(l)?;
            (Vals::Float(v.iter().map(|x| x.to_bits()).collect()), p, m)
        }
        ListRef::Double(l) => {
            let (v, p, m) = observe_num(l)?;
            (Vals::Double(v.iter().map(|x| x.to_bits()).collect()), p, m)
        }
        ListRef::Int32(l) => {
            let (v, p, m) = observe_num(l)?;
            (Vals::Int32(v), p, m)
        }
        ListRef::Int64(l) => {
            let (v, p, m) = observe_num(l)?;
            (Vals::Int64(v), p, m)
        }
    };
    let n = match &vals {
        Vals::Bytes(v) => v.len(),
        Vals::Float(v) => v.len(),
        Vals::Double(v) => v.len(),
        Vals::Int32(v) => v.len(),
        Vals::Int64(v) => v.len(),
    };
    ensure!(list.len()? == n, "ListRef::len() {} != {n}", list.len()?);
    ensure!(
        list.is_empty()? == (n == 0),
        "ListRef::is_empty() disagrees"
    );
    ensure!(list.is_mixed()? == mixed, "ListRef::is_mixed() disagrees");
    Ok(FeatObs {
        vals: Some(vals),
        packed,
        mixed,
    })
}

/// Checks an entry's offsets against the input.
fn check_entry(ctx: Ctx<'_>, e: &Entry<'_>) -> Result<(), ObsErr> {
    ensure!(
        ctx.at(e.name_offset, e.name.len()) == Some(e.name),
        "entry name {} is not at its name_offset {}",
        hex(e.name),
        e.name_offset
    );
    ensure!(
        ctx.at(e.offset, 1).map(|b| b[0] & 0x7f) == Some(0x0a),
        "entry offset {} does not point at a field-1 LEN tag",
        e.offset
    );
    ensure!(
        e.name_str().is_ok() == std::str::from_utf8(e.name).is_ok(),
        "name_str() disagrees with from_utf8"
    );
    Ok(())
}

/// Names that are not keys of `map` (some close to keys that are).
fn missing_names<V>(map: &BTreeMap<Vec<u8>, V>) -> Vec<Vec<u8>> {
    let mut c = vec![b"\xff\xfemissing".to_vec(), b"zzz".to_vec(), Vec::new()];
    for k in map.keys().take(3) {
        let mut longer = k.clone();
        longer.push(b'x');
        c.push(longer);
        if let Some((_, shorter)) = k.split_last() {
            c.push(shorter.to_vec());
        }
    }
    c.retain(|n| !map.contains_key(n));
    c
}

/// Applies last-wins to entries in wire order and gives the order of each
/// name's last entry (the order `iter()` must follow).
fn last_wins<V: Clone>(entries: &[(Vec<u8>, V)]) -> (BTreeMap<Vec<u8>, V>, Vec<Vec<u8>>) {
    let mut map = BTreeMap::new();
    let mut order = Vec::new();
    for (i, (k, v)) in entries.iter().enumerate() {
        map.insert(k.clone(), v.clone());
        if !entries[i + 1..].iter().any(|(k2, _)| k2 == k) {
            order.push(k.clone());
        }
    }
    (map, order)
}

/// Reads a `Features` map through `iter`, `entries`, `len`, `is_empty` and
/// `get` (for every name and for missing ones), cross-checking them.
fn observe_features(ctx: Ctx<'_>, fs: FeaturesRef<'_>) -> Result<MapObs<FeatObs>, ObsErr> {
    let mut all = Vec::new();
    for nf in fs.entries() {
        let nf = nf?;
        check_entry(ctx, &nf.entry)?;
        ensure!(
            nf.name() == nf.entry.name,
            "NamedFeature::name() != entry.name"
        );
        all.push((nf.name().to_vec(), observe_feature(ctx, nf.feature)?));
    }
    let (map, order) = last_wins(&all);
    let mut iter_order = Vec::new();
    for nf in fs.iter() {
        let nf = nf?;
        check_entry(ctx, &nf.entry)?;
        let name = nf.name().to_vec();
        let obs = observe_feature(ctx, nf.feature)?;
        ensure!(
            map.get(&name) == Some(&obs),
            "iter() gives {obs:?} for {}, last entry is {:?}",
            hex(&name),
            map.get(&name)
        );
        iter_order.push(name);
    }
    ensure!(
        iter_order == order,
        "iter() names {iter_order:?} != last entries in wire order {order:?}"
    );
    ensure!(
        fs.len()? == map.len(),
        "len() {} != {} distinct names",
        fs.len()?,
        map.len()
    );
    ensure!(fs.is_empty()? == map.is_empty(), "is_empty() disagrees");
    for (name, want) in &map {
        let got = fs.get(name)?;
        ensure!(got.is_some(), "get({}) is None", hex(name));
        if let Some(f) = got {
            let got = observe_feature(ctx, f)?;
            ensure!(
                &got == want,
                "get({}) gives {got:?}, iter() {want:?}",
                hex(name)
            );
        }
    }
    for name in missing_names(&map) {
        ensure!(
            fs.get(&name)?.is_none(),
            "get({}) of a missing name is Some",
            hex(&name)
        );
    }
    Ok(MapObs {
        map,
        entry_names: all.into_iter().map(|(k, _)| k).collect(),
    })
}

fn observe_feature_list(
    ctx: Ctx<'_>,
    l: recordwire::view::FeatureListRef<'_>,
) -> Result<Vec<FeatObs>, ObsErr> {
    let mut out = Vec::new();
    for f in l.iter() {
        out.push(observe_feature(ctx, f?)?);
    }
    ensure!(
        l.len()? == out.len(),
        "FeatureList len() {} != {}",
        l.len()?,
        out.len()
    );
    ensure!(
        l.is_empty()? == out.is_empty(),
        "FeatureList is_empty() disagrees"
    );
    Ok(out)
}

/// Reads a `FeatureLists` map through every accessor.
fn observe_feature_lists(
    ctx: Ctx<'_>,
    fl: FeatureListsRef<'_>,
) -> Result<MapObs<Vec<FeatObs>>, ObsErr> {
    let mut all = Vec::new();
    for e in fl.entries() {
        let e = e?;
        check_entry(ctx, &e.entry)?;
        ensure!(
            e.name() == e.entry.name,
            "NamedFeatureList::name() != entry.name"
        );
        all.push((e.name().to_vec(), observe_feature_list(ctx, e.list)?));
    }
    let (map, order) = last_wins(&all);
    let mut iter_order = Vec::new();
    for e in fl.iter() {
        let e = e?;
        let name = e.name().to_vec();
        let obs = observe_feature_list(ctx, e.list)?;
        ensure!(
            map.get(&name) == Some(&obs),
            "iter() disagrees for {}",
            hex(&name)
        );
        iter_order.push(name);
    }
    ensure!(
        iter_order == order,
        "iter() names {iter_order:?} != {order:?}"
    );
    ensure!(
        fl.len()? == map.len(),
        "len() {} != {}",
        fl.len()?,
        map.len()
    );
    ensure!(fl.is_empty()? == map.is_empty(), "is_empty() disagrees");
    for (name, want) in &map {
        match fl.get(name)? {
            None => fail!("get({}) is None", hex(name)),
            Some(l) => {
                let got = observe_feature_list(ctx, l)?;
                ensure!(&got == want, "get({}) disagrees with iter()", hex(name));
            }
        }
    }
    for name in missing_names(&map) {
        ensure!(
            fl.get(&name)?.is_none(),
            "get({}) of a missing name is Some",
            hex(&name)
        );
    }
    Ok(MapObs {
        map,
        entry_names: all.into_iter().map(|(k, _)| k).collect(),
    })
}

/// How to open the view.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Open {
    /// `parse` (validated like `ParseFromString`).
    Parse,
    /// `new` (lazy, unchecked).
    Lazy,
}

/// Opens `input` as `kind` and reads everything through the views. The outer
/// error is `parse` rejecting the input; the inner one an accessor failing or
/// two accessors disagreeing.
pub fn observe(
    kind: PayloadKind,
    input: &[u8],
    base: u64,
    open: Open,
) -> Result<Result<RecObs, ObsErr>, DecodeError> {
    let ctx = Ctx { input, base };
    match kind {
        PayloadKind::Example => {
            let ex = match open {
                Open::Parse => ExampleRef::parse(input, base)?,
                Open::Lazy => ExampleRef::new(input, base),
            };
            Ok((|| {
                ensure!(ex.bytes() == input, "bytes() is not the input");
                let features = observe_features(ctx, ex.features())?;
                for (name, want) in &features.map {
                    match ex.get(name)? {
                        None => fail!("ExampleRef::get({}) is None", hex(name)),
                        Some(f) => ensure!(
                            &observe_feature(ctx, f)? == want,
                            "ExampleRef::get({}) disagrees",
                            hex(name)
                        ),
                    }
                }
                for name in missing_names(&features.map) {
                    ensure!(ex.get(&name)?.is_none(), "ExampleRef::get(missing) is Some");
                }
                Ok(RecObs::Example {
                    has_features: ex.has_features()?,
                    features,
                })
            })())
        }
        PayloadKind::SequenceExample => {
            let se = match open {
                Open::Parse => SequenceExampleRef::parse(input, base)?,
                Open::Lazy => SequenceExampleRef::new(input, base),
            };
            Ok((|| {
                ensure!(se.bytes() == input, "bytes() is not the input");
                let context = observe_features(ctx, se.context())?;
                let lists = observe_feature_lists(ctx, se.feature_lists())?;
                let (has_context, has_lists) = se.has_parts()?;
                Ok(RecObs::Seq {
                    has_context,
                    has_lists,
                    context,
                    lists,
                })
            })())
        }
        PayloadKind::OfRecord => {
            let of = match open {
                Open::Parse => OfRecordRef::parse(input, base)?,
                Open::Lazy => OfRecordRef::new(input, base),
            };
            Ok((|| {
                ensure!(of.bytes() == input, "bytes() is not the input");
                let features = observe_features(ctx, of.features())?;
                for (name, want) in &features.map {
                    match of.get(name)? {
                        None => fail!("OfRecordRef::get({}) is None", hex(name)),
                        Some(f) => ensure!(
                            &observe_feature(ctx, f)? == want,
                            "OfRecordRef::get({}) disagrees",
                            hex(name)
                        ),
                    }
                }
                Ok(RecObs::Of(features))
            })())
        }
        PayloadKind::Raw => unreachable!("raw payloads are not observed"),
    }
}
