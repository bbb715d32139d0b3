//! docs/FORMAT.md §5.2 against protobuf itself: every float32 is printed as
//! the very number `json_format.MessageToDict` gives (the double of Python's
//! `ToShortestFloat`), compared as a double, and reads back as the same
//! float32; every double as `repr` writes it.
//!
//! `testdata/floats/make.py` (Python 3.11.7, protobuf 7.36.2; see
//! `testdata/floats/README.md`) printed, through MessageToDict:
//!
//! - `random`: 1,048,576 float32 bit patterns, the low 32 bits of SplitMix64
//!   outputs from a stated seed, which this test generates again;
//! - `denormal`: every positive denormal, 0x00000001 to 0x007fffff;
//! - `special`: zeros, NaNs, infinities, powers of two and of ten and their
//!   neighbours, the extremes, exact ties, negative denormals;
//! - `double`: random and special doubles.
//!
//! For `random` and `denormal`, `manifest.txt` has the SHA-256 of all the
//! expected doubles (8 bytes little-endian each, in order, any NaN as
//! 0x7ff8000000000000), and `expected.txt.gz` the expected text of a subset
//! (the first 20,000 random values, every random value a shortest-digits
//! printer may print differently, a sample of denormals); `special` and
//! `double` are stored whole. Each value is printed by `json::write_record`
//! of a tf.Example or an OFRecord holding it in a `float_list` (or a
//! `double_list`), as `cat`, `get` and `decode` print it; its text is read as
//! a double and compared with MessageToDict's. The SHA-256 of our doubles must
//! equal the stored one; a stored value that differs fails first, with its
//! bits and both texts. `pack`'s reader (`message_from_json`) reads every
//! printed record back to the same bits.
//!
//! On a digest mismatch outside the stored subset, `make.py --full DIR`
//! writes every expected double; `RECORDWIRE_FLOATS_FULL=DIR cargo test
//! --test decode float_text` then names the first value that differs.

use std::collections::BTreeMap;
use std::io::Read as _;
use std::path::{Path, PathBuf};

use recordwire::encode::{Example, Feature, Features, Message, OfRecord};
use recordwire::json;
use recordwire::json::read::message_from_json;
use recordwire::view::PayloadKind;

/// Values per printed record.
const CHUNK: usize = 1 << 16;
const CANONICAL_NAN: u64 = 0x7ff8_0000_0000_0000;

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/floats")
}

// ---------------------------------------------------------------------------
// The fixture
// ---------------------------------------------------------------------------

/// `key = value` lines of `manifest.txt`.
fn manifest() -> BTreeMap<String, String> {
    let path = dir().join("manifest.txt");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let (k, v) = l.split_once(" = ").expect("key = value");
            (k.to_owned(), v.to_owned())
        })
        .collect()
}

fn number(m: &BTreeMap<String, String>, key: &str) -> u64 {
    let v = m
        .get(key)
        .unwrap_or_else(|| panic!("manifest has no {key}"));
    match v.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => v.parse(),
    }
    .unwrap_or_else(|e| panic!("manifest {key} = {v}: {e}"))
}

/// One stored value: its index in its set, its bit pattern and the text
/// `json.dumps` wrote for what MessageToDict gave.
#[derive(Debug, Clone)]
struct Stored {
    index: usize,
    bits: u64,
    text: String,
}

/// The stored values of one set, in index order.
fn stored(set: &str) -> Vec<Stored> {
    let path = dir().join("expected.txt.gz");
    let file = std::fs::File::open(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut text = String::new();
    flate2::read::GzDecoder::new(file)
        .read_to_string(&mut text)
        .expect("expected.txt.gz is gzip'd text");
    let prefix = format!("{set} ");
    let out: Vec<Stored> = text
        .lines()
        .filter_map(|l| l.strip_prefix(&prefix))
        .map(|l| {
            let mut f = l.splitn(3, ' ');
            let (Some(i), Some(b), Some(t)) = (f.next(), f.next(), f.next()) else {
                panic!("bad line {l:?}");
            };
            Stored {
                index: i.parse().expect("index"),
                bits: u64::from_str_radix(b, 16).expect("bits"),
                text: t.to_owned(),
            }
        })
        .collect();
    assert!(!out.is_empty(), "no {set} values in expected.txt.gz");
    assert!(out.windows(2).all(|w| w[0].index < w[1].index));
    out
}

/// SplitMix64 (Steele, Lea and Flood), as `make.py` has it.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

// ---------------------------------------------------------------------------
// SHA-256 (FIPS 180-4), small and slow, enough for 75 MB in a debug build
// ---------------------------------------------------------------------------

const K: [u32; 64] = [
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
];

struct Sha256 {
    h: [u32; 8],
    block: [u8; 64],
    used: usize,
    total: u64,
}

impl Sha256 {
    fn new() -> Self {
        Sha256 {
            h: [
                0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab,
                0x5be0cd19,
            ],
            block: [0; 64],
            used: 0,
            total: 0,
        }
    }

    fn compress(&mut self) {
        let mut w = [0u32; 64];
        for (i, c) in self.block.chunks_exact(4).enumerate() {
            w[i] = u32::from_be_bytes([c[0], c[1], c[2], c[3]]);
        }
        for i in 16..64 {
            let s0 = w[i - 15].rotate_right(7) ^ w[i - 15].rotate_right(18) ^ (w[i - 15] >> 3);
            let s1 = w[i - 2].rotate_right(17) ^ w[i - 2].rotate_right(19) ^ (w[i - 2] >> 10);
            w[i] = w[i - 16]
                .wrapping_add(s0)
                .wrapping_add(w[i - 7])
                .wrapping_add(s1);
        }
        let [mut a, mut b, mut c, mut d, mut e, mut f, mut g, mut h] = self.h;
        for i in 0..64 {
            let s1 = e.rotate_right(6) ^ e.rotate_right(11) ^ e.rotate_right(25);
            let ch = (e & f) ^ (!e & g);
            let t1 = h
                .wrapping_add(s1)
                .wrapping_add(ch)
                .wrapping_add(K[i])
                .wrapping_add(w[i]);
            let s0 = a.rotate_right(2) ^ a.rotate_right(13) ^ a.rotate_right(22);
            let maj = (a & b) ^ (a & c) ^ (b & c);
            let t2 = s0.wrapping_add(maj);
            h = g;
            g = f;
            f = e;
            e = d.wrapping_add(t1);
            d = c;
            c = b;
            b = a;
            a = t1.wrapping_add(t2);
        }
        for (x, y) in self.h.iter_mut().zip([a, b, c, d, e, f, g, h]) {
            *x = x.wrapping_add(y);
        }
    }

    fn update(&mut self, mut data: &[u8]) {
        self.total += data.len() as u64;
        while !data.is_empty() {
            let n = (64 - self.used).min(data.len());
            self.block[self.used..self.used + n].copy_from_slice(&data[..n]);
            self.used += n;
            data = &data[n..];
            if self.used == 64 {
                self.compress();
                self.used = 0;
            }
        }
    }

    fn hex(mut self) -> String {
        let bits = self.total * 8;
        self.update(&[0x80]);
        while self.used != 56 {
            self.update(&[0]);
        }
        self.update(&bits.to_be_bytes());
        self.h.iter().map(|w| format!("{w:08x}")).collect()
    }
}

#[test]
fn sha256_known_answers() {
    let hex = |data: &[u8]| {
        let mut s = Sha256::new();
        s.update(data);
        s.hex()
    };
    assert_eq!(
        hex(b""),
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    );
    assert_eq!(
        hex(b"abc"),
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    );
    assert_eq!(
        hex(b"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
    );
}

// ---------------------------------------------------------------------------
// Printing
// ---------------------------------------------------------------------------

/// A record holding `values` as the float list (or double list) `v`.
fn record(kind: PayloadKind, values: Feature) -> Vec<u8> {
    let mut f = Features::new();
    f.insert("v", values);
    let m = match kind {
        PayloadKind::Example => Message::Example(Example::with_features(f)),
        _ => Message::OfRecord(OfRecord::with_features(f)),
    };
    m.to_bytes().expect("encodes")
}

/// The number tokens of the one list in a printed record, as written.
fn tokens(line: &str) -> impl Iterator<Item = &str> {
    let start = line.find(":[").expect("a value list") + 2;
    let end = line.rfind(']').expect("a value list");
    line[start..end].split(',')
}

/// The double a printed token stands for (NaN canonical).
fn token_bits(tok: &str) -> u64 {
    match tok {
        "\"NaN\"" => CANONICAL_NAN,
        "\"Infinity\"" => f64::INFINITY.to_bits(),
        "\"-Infinity\"" => f64::NEG_INFINITY.to_bits(),
        _ => {
            assert!(
                tok.bytes().any(|b| b == b'.' || b == b'e'),
                "{tok}: neither a fraction nor an exponent"
            );
            tok.parse::<f64>()
                .unwrap_or_else(|e| panic!("{tok}: {e}"))
                .to_bits()
        }
    }
}

/// Python's spelling of a number as ours: `3.4028235e+38` → `3.4028235e38`,
/// `9.999999e-05` → `9.999999e-5`.
fn ours_spelling(python: &str) -> String {
    match python.split_once('e') {
        Some((m, e)) => format!("{m}e{}", e.parse::<i32>().expect("exponent")),
        None => python.to_owned(),
    }
}

/// The bits of a float32 read back the way `pack` reads a float (decimal to
/// the nearest double, then to the nearest float32), NaN canonical.
fn read_back_f32(double_bits: u64) -> u32 {
    let d = f64::from_bits(double_bits);
    if d.is_nan() {
        f32::NAN.to_bits()
    } else {
        (d as f32).to_bits()
    }
}

fn canonical_f32(bits: u32) -> u32 {
    if f32::from_bits(bits).is_nan() {
        f32::NAN.to_bits()
    } else {
        bits
    }
}

/// What one run over a set found.
struct Run {
    digest: String,
    /// The printed double of every value, when asked for.
    doubles: Vec<u64>,
}

/// Prints `values` as float lists, `CHUNK` per record, through
/// `json::write_record` of `kind`, and checks each printed value: it reads
/// back as the same float32 (by the rule of `pack`, and through
/// `message_from_json` when `reader` is set), and where `stored` has its
/// index, it is MessageToDict's number, written as Python writes it but for
/// the exponent. Returns the SHA-256 of the printed doubles.
fn print_and_check(
    set: &str,
    offset: usize,
    values: &[u32],
    kind: PayloadKind,
    stored: &[Stored],
    reader: bool,
    keep: bool,
) -> Run {
    let mut sha = Sha256::new();
    let mut doubles = Vec::new();
    let end = offset + values.len();
    let mut next = stored
        .iter()
        .filter(|s| (offset..end).contains(&s.index))
        .peekable();
    let mut line = Vec::new();
    let mut failures = Vec::new();
    for (c, chunk) in values.chunks(CHUNK).enumerate() {
        let floats: Vec<f32> = chunk.iter().map(|&b| f32::from_bits(b)).collect();
        let bytes = record(kind, Feature::Float(floats));
        line.clear();
        json::write_record(&mut line, kind, &bytes, 0, false, None).expect("prints");
        let text = std::str::from_utf8(&line).expect("UTF-8");
        let mut n = 0;
        let mut printed = Vec::with_capacity(8 * chunk.len());
        for (j, tok) in tokens(text).enumerate() {
            let index = offset + c * CHUNK + j;
            let bits = chunk[j];
            let ours = token_bits(tok);
            printed.extend_from_slice(&ours.to_le_bytes());
            if keep {
                doubles.push(ours);
            }
            if read_back_f32(ours) != canonical_f32(bits) {
                failures.push(format!(
                    "{set}[{index}] {bits:#010x} printed as {tok} reads back as {:#010x}",
                    read_back_f32(ours)
                ));
            }
            if let Some(s) = next.next_if(|s| s.index == index) {
                assert_eq!(
                    s.bits,
                    u64::from(bits),
                    "{set}[{index}]: the stored bit pattern is not the one generated here"
                );
                let theirs = token_bits(&s.text);
                if ours != theirs || tok != ours_spelling(&s.text) {
                    failures.push(format!(
                        "{set}[{index}] {bits:#010x}: ours {tok}, MessageToDict {} \
                         (as doubles {ours:#018x} and {theirs:#018x})",
                        s.text
                    ));
                }
            }
            n += 1;
        }
        assert_eq!(n, chunk.len(), "{set}: values printed in record {c}");
        sha.update(&printed);
        if reader {
            let (Message::Example(Example { features: Some(f) })
            | Message::OfRecord(OfRecord { features: f })) =
                message_from_json(kind, &line).expect("pack reads what cat prints")
            else {
                panic!("{set}: record {c} read back as another message");
            };
            let Some(Feature::Float(back)) = f.get("v") else {
                panic!("{set}: record {c} read back without its float list");
            };
            let back: Vec<u32> = back.iter().map(|v| canonical_f32(v.to_bits())).collect();
            let want: Vec<u32> = chunk.iter().map(|&b| canonical_f32(b)).collect();
            if back != want {
                let i = back.iter().zip(&want).position(|(a, b)| a != b);
                failures.push(format!(
                    "{set}: record {c} read back by message_from_json differs first at {i:?}"
                ));
            }
        }
        if failures.len() >= 20 {
            break;
        }
    }
    assert!(
        failures.is_empty(),
        "{set}: {} values differ from MessageToDict (the first ones):\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(next.next().is_none(), "{set}: stored values left unchecked");
    Run {
        digest: sha.hex(),
        doubles,
    }
}

/// Checks the values `offset..offset + values.len()` of a set against the
/// digest `key` of the manifest; on a mismatch, names the first differing
/// value from `RECORDWIRE_FLOATS_FULL` (see the module docs) when it is set.
fn check_digest(
    set: &str,
    key: &str,
    offset: usize,
    values: &[u32],
    kind: PayloadKind,
    stored: &[Stored],
) {
    let m = manifest();
    let want = m.get(key).expect("a digest in the manifest");
    let full = std::env::var_os("RECORDWIRE_FLOATS_FULL");
    let reader = set == "random";
    let run = print_and_check(set, offset, values, kind, stored, reader, full.is_some());
    if &run.digest == want {
        return;
    }
    let Some(full) = full else {
        panic!(
            "{set}[{offset}..]: the SHA-256 of our {} doubles is {}, MessageToDict's {want}; \
             every stored value agrees. To see which value differs: python3 \
             testdata/floats/make.py --full DIR, then RECORDWIRE_FLOATS_FULL=DIR cargo test \
             --test decode float_text",
            values.len(),
            run.digest
        );
    };
    let path = Path::new(&full).join(format!("{set}.f64"));
    let theirs = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let theirs = theirs.chunks_exact(8).skip(offset);
    for (i, (ours, t)) in run.doubles.iter().zip(theirs).enumerate() {
        let t = u64::from_le_bytes(t.try_into().expect("8 bytes"));
        if *ours != t {
            panic!(
                "{set}[{}] {:#010x}: ours {:?} ({ours:#018x}), MessageToDict {:?} ({t:#018x})",
                offset + i,
                values[i],
                f64::from_bits(*ours),
                f64::from_bits(t)
            );
        }
    }
    panic!("{set}: the digests differ but {} agrees", path.display());
}

// ---------------------------------------------------------------------------
// The sets
// ---------------------------------------------------------------------------

#[test]
fn random_float32_print_as_message_to_dict() {
    let m = manifest();
    let count = number(&m, "random.count");
    assert!(count >= 1_000_000, "at least a million values: {count}");
    let mut gen = SplitMix64(number(&m, "random.seed"));
    let values: Vec<u32> = (0..count).map(|_| gen.next() as u32).collect();
    let stored = stored("random");
    check_digest(
        "random",
        "random.sha256",
        0,
        &values,
        PayloadKind::Example,
        &stored,
    );
}

/// All 8,388,607 of them, in parts checked on threads of their own.
#[test]
fn every_positive_denormal_prints_as_message_to_dict() {
    let m = manifest();
    let first = number(&m, "denormal.first") as u32;
    let count = number(&m, "denormal.count") as usize;
    assert_eq!((first, count), (1, (1 << 23) - 1), "all of them");
    let parts = number(&m, "denormal.parts") as usize;
    let values: Vec<u32> = (first..).take(count).collect();
    let stored = stored("denormal");
    std::thread::scope(|scope| {
        for k in 0..parts {
            let (a, b) = (k * count / parts, (k + 1) * count / parts);
            let (values, stored) = (&values[a..b], &stored);
            scope.spawn(move || {
                check_digest(
                    "denormal",
                    &format!("denormal.sha256.{k}"),
                    a,
                    values,
                    PayloadKind::OfRecord,
                    stored,
                );
            });
        }
    });
}

#[test]
fn special_float32_print_as_message_to_dict() {
    let s = stored("special");
    assert_eq!(s.len() as u64, number(&manifest(), "special.count"));
    assert!(s.iter().enumerate().all(|(i, v)| v.index == i));
    let values: Vec<u32> = s.iter().map(|v| v.bits as u32).collect();
    for kind in [PayloadKind::Example, PayloadKind::OfRecord] {
        print_and_check("special", 0, &values, kind, &s, true, false);
    }
    // Printing them all allocates nothing once the line has grown: denormals,
    // ties and the extremes take every path of the float printer.
    let floats = values.iter().map(|&b| f32::from_bits(b)).collect();
    let bytes = record(PayloadKind::Example, Feature::Float(floats));
    let mut line = Vec::new();
    let print = |line: &mut Vec<u8>| {
        line.clear();
        json::write_record(line, PayloadKind::Example, &bytes, 0, false, None).expect("prints");
    };
    print(&mut line);
    let ((), n) = crate::counting_alloc::count_allocations(|| print(&mut line));
    assert_eq!(n, 0, "allocations while printing {} floats", values.len());
    // The values of the issue are there, with MessageToDict's numbers.
    for (bits, text) in [
        (0x0000_0001u32, "1.4013e-45"),
        (356370.12f32.to_bits(), "356370.12"),
        ((-2566554.3f32).to_bits(), "-2566554.2"),
        ((-52277.813f32).to_bits(), "-52277.812"),
        (f32::MAX.to_bits(), "3.4028235e+38"),
    ] {
        let found = s.iter().find(|v| v.bits == u64::from(bits));
        assert_eq!(found.map(|v| v.text.as_str()), Some(text), "{bits:#010x}");
    }
}

/// The significant digits of a decimal token.
fn significant(tok: &str) -> String {
    let mantissa = tok.trim_start_matches('-').split('e').next().unwrap_or("");
    let d: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    d.trim_start_matches('0').trim_end_matches('0').to_owned()
}

/// Whether the exact value of `d` lies exactly halfway between two decimals
/// of `n` significant digits: its expansion is those digits, then a 5, then
/// nothing (zeros as far as 30 more digits show).
fn is_exact_tie(d: f64, n: usize) -> bool {
    let text = format!("{:.*e}", n + 30, d.abs());
    let digits: String = significant(&text);
    digits.len() == n + 1 && digits.ends_with('5')
}

/// A double is printed as the double itself, in the shortest form that reads
/// back (docs/FORMAT.md §5.2), which is what MessageToDict gives and
/// `json.dumps` writes with `repr`. Where two decimals of that shortest length
/// are equally near, `repr` takes the even last digit and Rust's `{:?}` the
/// upper one (`-888780674661125.3`, repr `-888780674661125.2`, for
/// -888780674661125.25): the same double, spelled otherwise. Those are the
/// only differences allowed.
#[test]
fn doubles_print_as_repr() {
    let s = stored("double");
    let m = manifest();
    assert_eq!(s.len() as u64, number(&m, "double.count"));
    let mut gen = SplitMix64(number(&m, "double.seed"));
    let values: Vec<f64> = s.iter().map(|v| f64::from_bits(v.bits)).collect();
    // The first ones are random bit patterns, generated here again.
    let random = s.iter().take_while(|v| v.bits == gen.next()).count();
    assert!(random >= 1000, "{random} random doubles");
    let bytes = record(PayloadKind::OfRecord, Feature::Double(values));
    let mut line = Vec::new();
    json::write_record(&mut line, PayloadKind::OfRecord, &bytes, 0, false, None).expect("prints");
    let text = std::str::from_utf8(&line).expect("UTF-8");
    let mut failures = Vec::new();
    let mut ties = 0;
    let mut n = 0;
    for (tok, v) in tokens(text).zip(&s) {
        n += 1;
        let want = ours_spelling(&v.text);
        if tok == want {
            continue;
        }
        let same = token_bits(tok) == token_bits(&v.text);
        let len = significant(tok).len();
        if same && len == significant(&want).len() && is_exact_tie(f64::from_bits(v.bits), len) {
            ties += 1;
            continue;
        }
        failures.push(format!(
            "double[{}] {:#018x}: ours {tok}, repr {}",
            v.index, v.bits, v.text
        ));
    }
    assert_eq!(n, s.len());
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(
        ties < s.len() / 20,
        "{ties} shortest ties spelled otherwise"
    );
}
