//! The decoder against flate2 (miniz_oxide) on random data at every level,
//! raw, GZIP and ZLIB; restarts at every block start; stops at random
//! output limits; and hand-made streams for each accept/reject rule.

use std::io::Write;

use proptest::prelude::*;

use super::*;

/// Deterministic pseudo-random bytes, a mix of text-like runs, repeats and
/// noise (so that every block type and match kind turns up).
fn mixed(n: usize, seed: u64) -> Vec<u8> {
    let mut x = seed | 1;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let words: [&[u8]; 8] = [
        b"record ",
        b"feature ",
        b"label",
        b"0.25,",
        b"image/png ",
        b"\n",
        b"the ",
        b"\0\0\0\0",
    ];
    let mut out = Vec::with_capacity(n + 64);
    while out.len() < n {
        let r = next();
        match r % 8 {
            0 => out.extend((0..(r >> 8) % 300).map(|_| next() as u8)),
            1 => out.extend(std::iter::repeat_n(
                (r >> 8) as u8,
                ((r >> 16) % 500) as usize,
            )),
            2 if out.len() > 40 => {
                let back = ((r >> 8) as usize % out.len().min(40_000)) + 1;
                let len = ((r >> 24) % 300) as usize;
                for _ in 0..len {
                    out.push(out[out.len() - back]);
                }
            }
            _ => {
                for _ in 0..(r >> 8) % 20 {
                    out.extend_from_slice(words[(next() % 8) as usize]);
                }
            }
        }
    }
    out.truncate(n);
    out
}

fn raw(data: &[u8], level: u32) -> Vec<u8> {
    let mut e = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::new(level));
    e.write_all(data).expect("in memory");
    e.finish().expect("in memory")
}

fn gzip(data: &[u8], level: u32) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::new(level));
    e.write_all(data).expect("in memory");
    e.finish().expect("in memory")
}

fn zlib(data: &[u8], level: u32) -> Vec<u8> {
    let mut e = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::new(level));
    e.write_all(data).expect("in memory");
    e.finish().expect("in memory")
}

/// Decodes the raw stream at `bit` to its end: (output, end bit).
fn inflate(input: &[u8], bit: u64) -> Result<(Vec<u8>, u64), InflateError> {
    let mut out = Vec::new();
    match Inflate::at(bit).run(input, &mut out, usize::MAX, false)? {
        Progress::End { bit } => Ok((out, bit)),
        p => panic!("stopped at {p:?} without a limit"),
    }
}

/// Decodes `data` compressed in all three containers at `level`, checking
/// the output, the trailers and where the stream ends.
fn check_containers(data: &[u8], level: u32) {
    let r = raw(data, level);
    let (out, end) = inflate(&r, 0).expect("raw");
    assert_eq!(out, data, "raw, level {level}");
    assert_eq!(end_byte(end), r.len());

    let g = gzip(data, level);
    let h = gzip_header(&g, 0).expect("gzip header");
    let (out, end) = inflate(&g, h.deflate_start as u64 * 8).expect("gzip");
    assert_eq!(out, data, "gzip, level {level}");
    let mut crc = flate2::Crc::new();
    crc.update(&out);
    let t = gzip_trailer(&g, end_byte(end)).expect("trailer");
    t.check(&crc).expect("crc and size");
    assert_eq!(t.at + GZIP_TRAILER_LEN, g.len());

    let z = zlib(data, level);
    let h = zlib_header(&z, 0).expect("zlib header");
    let (out, end) = inflate(&z, h.deflate_start as u64 * 8).expect("zlib");
    assert_eq!(out, data, "zlib, level {level}");
    let mut adler = Adler32::new();
    adler.update(&out);
    let t = zlib_trailer(&z, end_byte(end)).expect("trailer");
    t.check(&adler).expect("adler");
    assert_eq!(t.at + ZLIB_TRAILER_LEN, z.len());
}

#[test]
fn every_level_in_every_container() {
    for n in [0, 1, 100, 70_000, 300_000] {
        let data = mixed(n, n as u64 + 3);
        for level in 0..=9 {
            check_containers(&data, level);
        }
    }
}

/// Every block start of `input`'s stream as (bit, output length), and the
/// whole output, decoding with `stop_at_blocks`.
fn blocks(input: &[u8]) -> (Vec<(u64, usize)>, Vec<u8>, u64) {
    let mut inflate = Inflate::at(0);
    let mut out = Vec::new();
    let mut starts = vec![(0, 0)];
    loop {
        match inflate
            .run(input, &mut out, usize::MAX, true)
            .expect("valid")
        {
            Progress::Block { bit } => {
                assert_eq!(inflate.bit(), bit);
                starts.push((bit, out.len()));
            }
            Progress::End { bit } => return (starts, out, bit),
            Progress::Limit => panic!("no limit"),
        }
    }
}

/// Restarting at each block start with the window before it gives the
/// rest of the output exactly.
fn check_restarts(input: &[u8], data: &[u8]) {
    let (starts, out, end) = blocks(input);
    assert_eq!(out, data);
    for &(bit, at) in &starts {
        let mut seeded = data[at.saturating_sub(WINDOW)..at].to_vec();
        let window = seeded.len();
        let mut inflate = Inflate::at(bit);
        let p = inflate.run(input, &mut seeded, usize::MAX, false);
        assert_eq!(p, Ok(Progress::End { bit: end }), "restart at bit {bit}");
        assert!(seeded[window..] == data[at..], "restart at bit {bit}");
    }
}

#[test]
fn restarts_at_every_block_start() {
    let data = mixed(400_000, 11);
    for level in [0, 1, 6, 9] {
        // Flushes add block boundaries (an empty stored block each).
        let mut e = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::new(level));
        for part in data.chunks(50_000) {
            e.write_all(part).expect("in memory");
            e.flush().expect("in memory");
        }
        let input = e.finish().expect("in memory");
        let (starts, _, _) = blocks(&input);
        assert!(starts.len() > 8, "level {level}: {} blocks", starts.len());
        check_restarts(&input, &data);
    }
}

/// Decoding with a limit, draining nothing, in steps of `step(i)` bytes.
fn limited(input: &[u8], mut step: impl FnMut() -> usize) -> Result<Vec<u8>, InflateError> {
    let mut inflate = Inflate::at(0);
    let mut out = Vec::new();
    loop {
        let limit = out.len() + step();
        match inflate.run(input, &mut out, limit, false)? {
            Progress::Limit => assert!(out.len() >= limit && out.len() <= limit + 258),
            Progress::End { .. } => return Ok(out),
            Progress::Block { .. } => panic!("not asked for"),
        }
    }
}

#[test]
fn stops_at_limits_and_resumes() {
    let data = mixed(200_000, 5);
    for level in [0, 1, 9] {
        let input = raw(&data, level);
        for step in [1, 7, 258, 4096, 100_000] {
            assert!(
                limited(&input, || step).expect("valid") == data,
                "{level} {step}"
            );
        }
    }
}

/// The block starts, output and end of `input`'s stream decoded in steps
/// of `step` bytes, stopping at every block too.
fn stepped_blocks(input: &[u8], step: usize) -> (Vec<(u64, usize)>, Vec<u8>, u64) {
    let mut inflate = Inflate::at(0);
    let mut out = Vec::new();
    let mut starts = vec![(0, 0)];
    loop {
        let limit = out.len() + step;
        match inflate.run(input, &mut out, limit, true).expect("valid") {
            Progress::Block { bit } => starts.push((bit, out.len())),
            Progress::Limit => assert!(out.len() >= limit),
            Progress::End { bit } => return (starts, out, bit),
        }
    }
}

#[test]
fn a_long_run_without_limit_matches_stepped_runs() {
    // The module doc's loop (no limit, a stop at every block, the whole
    // output kept in one Vec: the case whose growth once re-zeroed the
    // output at every call) over a few MB and a few hundred blocks, against
    // runs in steps of several sizes.
    let data = mixed(3_000_000, 21);
    let mut e = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::new(6));
    for part in data.chunks(10_000) {
        e.write_all(part).expect("in memory");
        e.flush().expect("in memory");
    }
    let input = e.finish().expect("in memory");
    let (starts, out, end) = blocks(&input);
    assert!(out == data);
    assert!(starts.len() > 300, "{} blocks", starts.len());
    for step in [1 << 20, 100_000, 4_093, 300] {
        let (s, o, e) = stepped_blocks(&input, step);
        assert_eq!(s, starts, "step {step}");
        assert!(o == out, "step {step}");
        assert_eq!(e, end, "step {step}");
    }
}

#[test]
fn drained_output_keeps_its_window() {
    // What an indexer does: keep only the last WINDOW bytes between calls.
    let data = mixed(300_000, 9);
    let input = raw(&data, 6);
    let mut inflate = Inflate::at(0);
    let mut out = Vec::new();
    let mut whole = Vec::new();
    let mut kept = 0; // bytes of `out` already in `whole`
    loop {
        let p = inflate
            .run(&input, &mut out, kept + 10_000, true)
            .expect("valid");
        whole.extend_from_slice(&out[kept..]);
        let drop = out.len().saturating_sub(WINDOW);
        out.drain(..drop);
        kept = out.len();
        if let Progress::End { .. } = p {
            break;
        }
    }
    assert!(whole == data);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn matches_flate2(n in 0usize..300_000, seed: u64, level in 0u32..=9) {
        let data = mixed(n, seed);
        check_containers(&data, level);
    }

    #[test]
    fn restarts_and_limits_match(n in 0usize..200_000, seed: u64, level in 0u32..=9, steps: u64) {
        let data = mixed(n, seed);
        let input = raw(&data, level);
        check_restarts(&input, &data);
        let mut x = steps | 1;
        let out = limited(&input, || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % 70_000) as usize + 1
        });
        prop_assert!(out.expect("valid") == data);
    }
}

/// A DEFLATE bit writer: values LSB-first, Huffman codes MSB-first.
#[derive(Default)]
struct BitWriter {
    out: Vec<u8>,
    acc: u64,
    n: u32,
}

impl BitWriter {
    fn bits(&mut self, value: u32, k: u32) -> &mut Self {
        self.acc |= u64::from(value) << self.n;
        self.n += k;
        while self.n >= 8 {
            self.out.push(self.acc as u8);
            self.acc >>= 8;
            self.n -= 8;
        }
        self
    }

    fn code(&mut self, code: u32, len: u32) -> &mut Self {
        self.bits(code.reverse_bits() >> (32 - len), len)
    }

    /// A fixed-code literal/length symbol.
    fn fixed(&mut self, sym: u32) -> &mut Self {
        match sym {
            0..=143 => self.code(0x30 + sym, 8),
            144..=255 => self.code(0x190 + sym - 144, 9),
            256..=279 => self.code(sym - 256, 7),
            _ => self.code(0xc0 + sym - 280, 8),
        }
    }

    fn finish(&mut self) -> Vec<u8> {
        if self.n > 0 {
            self.out.push(self.acc as u8);
        }
        std::mem::take(&mut self.out)
    }
}

fn reason(input: &[u8]) -> InflateReason {
    inflate(input, 0).expect_err("invalid").reason
}

#[test]
fn fixed_block_with_a_match() {
    // "ab" then length 4 (symbol 258) at distance 2 (code 1), end.
    let s = BitWriter::default()
        .bits(1, 1)
        .bits(1, 2)
        .fixed(u32::from(b'a'))
        .fixed(u32::from(b'b'))
        .fixed(258)
        .code(1, 5)
        .fixed(256)
        .finish();
    assert_eq!(inflate(&s, 0).expect("valid").0, b"ababab");
    // Distance 3 with 2 bytes of output reaches too far.
    let s = BitWriter::default()
        .bits(1, 1)
        .bits(1, 2)
        .fixed(u32::from(b'a'))
        .fixed(u32::from(b'b'))
        .fixed(258)
        .code(2, 5)
        .fixed(256)
        .finish();
    let e = inflate(&s, 0).expect_err("too far");
    assert_eq!(
        e.reason,
        InflateReason::DistanceTooFar {
            distance: 3,
            available: 2
        }
    );
    assert_eq!(e.bit, 3 + 8 + 8 + 7, "at the distance code");
}

#[test]
fn fixed_code_invalid_symbols() {
    for sym in [286, 287] {
        let s = BitWriter::default()
            .bits(1, 1)
            .bits(1, 2)
            .fixed(sym)
            .finish();
        let e = inflate(&s, 0).expect_err("invalid");
        assert_eq!(
            e.reason,
            InflateReason::InvalidSymbol(CodeKind::LiteralLength)
        );
        assert_eq!(e.bit, 3);
    }
    for d in [30, 31] {
        let s = BitWriter::default()
            .bits(1, 1)
            .bits(1, 2)
            .fixed(u32::from(b'a'))
            .fixed(257)
            .code(d, 5)
            .finish();
        assert_eq!(reason(&s), InflateReason::InvalidSymbol(CodeKind::Distance));
    }
}

#[test]
fn block_type_3_and_bad_stored_length() {
    let s = BitWriter::default().bits(1, 1).bits(3, 2).finish();
    assert_eq!(reason(&s), InflateReason::BadBlockType);
    let s = [1, 5, 0, 0xfa, 0xfe, b'h', b'e', b'l', b'l', b'o'];
    let e = inflate(&s, 0).expect_err("bad nlen");
    assert_eq!(
        e.reason,
        InflateReason::BadStoredLength {
            len: 5,
            nlen: 0xfefa
        }
    );
    assert_eq!(e.bit, 8);
    let s = [1, 5, 0, 0xfa, 0xff, b'h', b'e', b'l', b'l', b'o'];
    assert_eq!(inflate(&s, 0).expect("valid").0, b"hello");
}

/// A final dynamic block with these literal/length (257) and distance (1)
/// code lengths, each written with a code-length code of symbols 0 (2 bits),
/// 1 (1 bit) and 2 (2 bits); `body` writes the symbols after it.
fn dynamic(litlen: &[u8; 257], dist: u8, body: impl FnOnce(&mut BitWriter)) -> Vec<u8> {
    let mut w = BitWriter::default();
    w.bits(1, 1).bits(2, 2).bits(0, 5).bits(0, 5).bits(14, 4);
    // Code-length code lengths in their order 16 17 18 0 8 7 9 6 10 5 11 4
    // 12 3 13 2 14 1: 0 has 2, 2 has 2, 1 has 1.
    for len in [0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 1] {
        w.bits(len, 3);
    }
    for &len in litlen.iter().chain([&dist]) {
        match len {
            0 => w.code(0b10, 2),
            1 => w.code(0b0, 1),
            _ => w.code(0b11, 2),
        };
    }
    body(&mut w);
    w.finish()
}

#[test]
fn dynamic_codes_as_zlib_accepts_them() {
    let mut lens = [0u8; 257];
    // Only the end-of-block code, length 1: incomplete but accepted.
    lens[256] = 1;
    let s = dynamic(&lens, 0, |w| {
        w.bits(0, 1);
    });
    assert_eq!(inflate(&s, 0).expect("valid").0, b"");
    // Its missing code is invalid.
    let s = dynamic(&lens, 0, |w| {
        w.bits(1, 1);
    });
    assert_eq!(
        reason(&s),
        InflateReason::InvalidSymbol(CodeKind::LiteralLength)
    );
    // One literal and the end, a single distance code of length 1.
    lens[b'x' as usize] = 1;
    let s = dynamic(&lens, 1, |w| {
        w.bits(0, 1).bits(1, 1);
    });
    assert_eq!(inflate(&s, 0).expect("valid").0, b"x");
    // Three codes of length 1.
    lens[b'y' as usize] = 1;
    assert_eq!(
        reason(&dynamic(&lens, 0, |_| {})),
        InflateReason::OversubscribedCode(CodeKind::LiteralLength)
    );
    // Two codes of length 2: incomplete, rejected.
    let mut lens = [0u8; 257];
    lens[0] = 2;
    lens[256] = 2;
    assert_eq!(
        reason(&dynamic(&lens, 0, |_| {})),
        InflateReason::IncompleteCode(CodeKind::LiteralLength)
    );
    assert_eq!(
        reason(&dynamic(&[1; 257], 0, |_| {})),
        InflateReason::OversubscribedCode(CodeKind::LiteralLength)
    );
    // No end-of-block code.
    let mut lens = [0u8; 257];
    lens[0] = 1;
    lens[1] = 1;
    assert_eq!(
        reason(&dynamic(&lens, 0, |_| {})),
        InflateReason::MissingEndOfBlock
    );
}

#[test]
fn dynamic_header_errors() {
    // HLIT 30 (287 codes).
    let s = BitWriter::default()
        .bits(1, 1)
        .bits(2, 2)
        .bits(30, 5)
        .bits(0, 5)
        .bits(0, 4)
        .finish();
    assert_eq!(
        reason(&s),
        InflateReason::TooManySymbols {
            litlen: 287,
            dist: 1
        }
    );
    // HDIST 30 (31 codes).
    let s = BitWriter::default()
        .bits(1, 1)
        .bits(2, 2)
        .bits(0, 5)
        .bits(30, 5)
        .bits(0, 4)
        .finish();
    assert!(matches!(
        reason(&s),
        InflateReason::TooManySymbols { dist: 31, .. }
    ));
    // A code-length code of four codes of length 1: over-subscribed.
    let s = BitWriter::default()
        .bits(1, 1)
        .bits(2, 2)
        .bits(0, 5)
        .bits(0, 5)
        .bits(0, 4)
        .bits(1, 3)
        .bits(1, 3)
        .bits(1, 3)
        .bits(1, 3)
        .finish();
    assert_eq!(
        reason(&s),
        InflateReason::OversubscribedCode(CodeKind::CodeLength)
    );
    // One code of length 1 in the code-length code: incomplete.
    let s = BitWriter::default()
        .bits(1, 1)
        .bits(2, 2)
        .bits(0, 5)
        .bits(0, 5)
        .bits(0, 4)
        .bits(1, 3)
        .bits(0, 9)
        .finish();
    assert_eq!(
        reason(&s),
        InflateReason::IncompleteCode(CodeKind::CodeLength)
    );
    // Repeat (16) first, and a repeat past the end: code-length code with
    // 16 and 18 of length 1.
    let header = |w: &mut BitWriter| {
        w.bits(1, 1).bits(2, 2).bits(0, 5).bits(0, 5).bits(0, 4);
        w.bits(1, 3).bits(0, 3).bits(1, 3).bits(0, 3);
    };
    let mut w = BitWriter::default();
    header(&mut w);
    w.code(0, 1).bits(0, 2);
    assert_eq!(reason(&w.finish()), InflateReason::RepeatWithoutLength);
    let mut w = BitWriter::default();
    header(&mut w);
    // 18 x (11 + 127) zeros twice: 276 > 258.
    w.code(1, 1).bits(127, 7).code(1, 1).bits(127, 7);
    assert_eq!(reason(&w.finish()), InflateReason::TooManyLengths);
}

#[test]
fn truncated_anywhere_is_an_error() {
    let data = mixed(3_000, 77);
    for level in [0, 1, 6, 9] {
        let input = raw(&data, level);
        for cut in 0..input.len() {
            let e = inflate(&input[..cut], 0).expect_err("truncated");
            assert_eq!(
                e.reason,
                InflateReason::Truncated,
                "level {level}, cut at {cut}"
            );
            assert_eq!(e.bit, cut as u64 * 8);
        }
    }
    assert_eq!(
        Inflate::at(9).run(&[0], &mut Vec::new(), 10, true),
        Err(InflateError {
            bit: 8,
            reason: InflateReason::Truncated
        })
    );
}

#[test]
fn a_failed_decoder_stays_failed() {
    let s = BitWriter::default().bits(1, 1).bits(3, 2).finish();
    let mut inflate = Inflate::at(0);
    let first = inflate.run(&s, &mut Vec::new(), usize::MAX, false);
    assert!(first.is_err());
    assert_eq!(inflate.run(&s, &mut Vec::new(), usize::MAX, false), first);
}

#[test]
fn gzip_header_fields_and_checks() {
    let mut h = vec![0x1f, 0x8b, 8, FLAGS, 1, 2, 3, 4, 2, 3];
    const FLAGS: u8 = 2 | 4 | 8 | 16;
    h.extend_from_slice(&[3, 0, b'x', b'y', b'z']);
    h.extend_from_slice(b"name\0comment\0");
    let mut crc = flate2::Crc::new();
    crc.update(&h);
    h.extend_from_slice(&(crc.sum() as u16).to_le_bytes());
    let body = raw(b"hi", 6);
    let mut file = b"junk".to_vec();
    file.extend_from_slice(&h);
    file.extend_from_slice(&body);
    let parsed = gzip_header(&file, 4).expect("valid");
    assert_eq!(parsed.deflate_start, 4 + h.len());
    assert_eq!(parsed.mtime, 0x0403_0201);
    assert_eq!(&file[parsed.extra.clone().expect("extra")], b"xyz");
    assert_eq!(&file[parsed.name.clone().expect("name")], b"name");
    assert_eq!(&file[parsed.comment.clone().expect("comment")], b"comment");
    for cut in 4..4 + h.len() {
        assert_eq!(
            gzip_header(&file[..cut], 4).map_err(|e| e.reason),
            Err(ContainerReason::Truncated)
        );
    }
    let mut bad = file.clone();
    bad[4 + h.len() - 1] ^= 1;
    assert!(matches!(
        gzip_header(&bad, 4).map_err(|e| e.reason),
        Err(ContainerReason::HeaderCrc { .. })
    ));
    let mut bad = file.clone();
    bad[7] |= 0x20;
    assert_eq!(
        gzip_header(&bad, 4).map_err(|e| e.reason),
        Err(ContainerReason::ReservedFlags(0x20))
    );
    bad[6] = 7;
    assert_eq!(
        gzip_header(&bad, 4).map_err(|e| e.reason),
        Err(ContainerReason::BadMethod(7))
    );
    assert!(matches!(
        gzip_header(&file, 0).map_err(|e| e.reason),
        Err(ContainerReason::BadMagic(_))
    ));
}

#[test]
fn trailers_are_checked() {
    let g = gzip(b"hello", 6);
    let t = gzip_trailer(&g, g.len() - 8).expect("trailer");
    let mut crc = flate2::Crc::new();
    crc.update(b"hell");
    assert!(matches!(
        t.check(&crc).map_err(|e| e.reason),
        Err(ContainerReason::CrcMismatch { .. })
    ));
    crc.update(b"o");
    assert_eq!(t.check(&crc), Ok(()));
    assert!(gzip_trailer(&g, g.len() - 7).is_err());

    let z = zlib(b"hello", 6);
    let t = zlib_trailer(&z, z.len() - 4).expect("trailer");
    let mut adler = Adler32::new();
    adler.update(b"hellO");
    assert!(t.check(&adler).is_err());
    // zlib headers: 78 9c is fine; FDICT, a bad check, a 64 KiB window are not.
    assert_eq!(zlib_header(&[0x78, 0x9c], 0).map(|h| h.window_bits), Ok(15));
    assert_eq!(
        zlib_header(&[0x78, 0xbb], 0).map_err(|e| e.reason),
        Err(ContainerReason::ZlibDictionary)
    );
    assert!(matches!(
        zlib_header(&[0x78, 0x9d], 0).map_err(|e| e.reason),
        Err(ContainerReason::ZlibCheck(_))
    ));
    assert_eq!(
        zlib_header(&[0x88, 0x98], 0).map_err(|e| e.reason),
        Err(ContainerReason::ZlibWindow(8))
    );
}

#[test]
fn adler32_over_long_input_matches_the_definition() {
    let data = mixed(100_000, 3);
    let (mut a, mut b) = (1u64, 0u64);
    for &byte in &data {
        a = (a + u64::from(byte)) % 65521;
        b = (b + a) % 65521;
    }
    let mut adler = Adler32::new();
    for part in data.chunks(7777) {
        adler.update(part);
    }
    assert_eq!(u64::from(adler.value()), b << 16 | a);
}

/// The example of [`Adler32`]'s doc.
#[test]
fn adler32_example() {
    let mut a = Adler32::new();
    a.update(b"Wiki");
    a.update(b"pedia");
    assert_eq!(a.value(), 0x11e6_0398);
}

/// The loop of the module doc: checkpoints at every block of a GZIP member,
/// the trailer checked, and a restart from the last checkpoint.
#[test]
fn checkpoints_and_restart() -> Result<(), Box<dyn std::error::Error>> {
    // A GZIP member with several deflate blocks (flate2 ends a block at each flush).
    let text: Vec<u8> = (0..3000u32)
        .flat_map(|i| format!("record {i} ").into_bytes())
        .collect();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    for part in text.chunks(10_000) {
        gz.write_all(part)?;
        gz.flush()?;
    }
    let file = gz.finish()?;

    // Decode it, stopping at every block start to record a checkpoint.
    let header = gzip_header(&file, 0)?;
    let mut inflate = Inflate::at(header.deflate_start as u64 * 8);
    let mut out = Vec::new();
    let mut checkpoints = Vec::new();
    let end = loop {
        match inflate.run(&file, &mut out, usize::MAX, true)? {
            Progress::Block { bit } => checkpoints.push((bit, out.len())),
            Progress::End { bit } => break bit,
            Progress::Limit => unreachable!("no limit"),
        }
    };
    assert_eq!(out, text);
    let mut crc = flate2::Crc::new();
    crc.update(&out);
    gzip_trailer(&file, end_byte(end))?.check(&crc)?;

    // Restart from the last checkpoint: its bit and the 32 KiB before it.
    let &(bit, at) = checkpoints.last().expect("several blocks");
    let mut restarted = out[at.saturating_sub(WINDOW)..at].to_vec();
    let window = restarted.len();
    let mut inflate = Inflate::at(bit);
    assert_eq!(
        inflate.run(&file, &mut restarted, usize::MAX, false)?,
        Progress::End { bit: end }
    );
    assert_eq!(restarted[window..], text[at..]);
    Ok(())
}

mod miniz;
