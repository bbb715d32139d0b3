//! Numbers as JSON text without the formatting machinery (`write!` with `{}`
//! or `{:?}`), which the schema printer's profile showed to be a quarter of
//! its time: integers from a stack buffer, doubles from `ryu`'s shortest
//! digits laid out as Rust's `{:?}` lays them out.

/// Writes the decimal digits of `u` at the end of `buf`; returns where they
/// start.
fn digits_at(buf: &mut [u8; 20], mut u: u64) -> usize {
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (u % 10) as u8;
        u /= 10;
        if u == 0 {
            break;
        }
    }
    i
}

/// The decimal digits of `v` (with a `-` if negative), at the end of `buf`.
pub(crate) fn signed_digits(buf: &mut [u8; 20], v: i64) -> &[u8] {
    let mut i = digits_at(buf, v.unsigned_abs());
    if v < 0 {
        i -= 1;
        buf[i] = b'-';
    }
    &buf[i..]
}

/// Appends `v` in decimal, as `{}` writes it.
pub(crate) fn write_u64(out: &mut Vec<u8>, v: u64) {
    let mut buf = [0u8; 20];
    let i = digits_at(&mut buf, v);
    out.extend_from_slice(&buf[i..]);
}

/// Appends `v` in decimal, as `{}` writes it.
pub(crate) fn write_i64(out: &mut Vec<u8>, v: i64) {
    out.extend_from_slice(signed_digits(&mut [0u8; 20], v));
}

/// Appends the decimal `digits × 10^q` (`digits` without leading or trailing
/// zeros, not empty; negated if `negative`) as Rust's `{:?}` writes a double:
/// in exponent form below 1e-4 and from 1e16 on (`1.4013e-45`, `1e16`), else
/// with a fraction (`0.0001`, `16777216.0`).
pub(crate) fn write_digits(out: &mut Vec<u8>, negative: bool, digits: &[u8], q: i32) {
    if negative {
        out.push(b'-');
    }
    let len = digits.len();
    let first = q + len as i32 - 1; // the power of ten of the first digit
    if !(-4..16).contains(&first) {
        out.push(digits[0]);
        if len > 1 {
            out.push(b'.');
            out.extend_from_slice(&digits[1..]);
        }
        out.push(b'e');
        write_i64(out, i64::from(first));
    } else if first >= 0 {
        let int = first.unsigned_abs() as usize + 1;
        if len <= int {
            out.extend_from_slice(digits);
            out.resize(out.len() + int - len, b'0');
            out.extend_from_slice(b".0");
        } else {
            out.extend_from_slice(&digits[..int]);
            out.push(b'.');
            out.extend_from_slice(&digits[int..]);
        }
    } else {
        out.extend_from_slice(b"0.");
        out.resize(out.len() + first.unsigned_abs() as usize - 1, b'0');
        out.extend_from_slice(digits);
    }
}

/// Appends the finite double `v` as `{:?}` writes it: the shortest decimal
/// that reads back to it (the closest such), which `ryu` finds too; its text
/// (`1e16`, `1.5e-7`, `0.001`, `120.0`) is taken apart into digits and a
/// power of ten and laid out again by [`write_digits`].
pub(crate) fn write_finite_f64(out: &mut Vec<u8>, v: f64) {
    let mut buf = ryu::Buffer::new();
    let text = buf.format_finite(v).as_bytes();
    let (negative, text) = match text.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, text),
    };
    let (mantissa, exp) = match text.iter().position(|&c| c == b'e') {
        Some(e) => {
            let (sign, n) = match &text[e + 1..] {
                [b'-', n @ ..] => (-1, n),
                n => (1, n),
            };
            let n = n
                .iter()
                .fold(0i32, |a, &c| a * 10 + i32::from(c.wrapping_sub(b'0')));
            (&text[..e], sign * n)
        }
        None => (text, 0),
    };
    // The mantissa's digits (at most 17 significant, with up to 5 zeros
    // before them in ryu's `0.0000dd` form), and how many precede its point.
    let mut all = [0u8; 32];
    let mut len = 0;
    let mut int_len = None;
    for &c in mantissa {
        if c == b'.' {
            int_len = Some(len);
        } else if len < all.len() {
            all[len] = c;
            len += 1;
        }
    }
    let int_len = int_len.unwrap_or(len) as i32;
    let mut digits = &all[..len];
    while let [b'0', rest @ ..] = digits {
        digits = rest;
    }
    let mut trailing = 0;
    while let [rest @ .., b'0'] = digits {
        digits = rest;
        trailing += 1;
    }
    if digits.is_empty() {
        out.extend_from_slice(if negative { b"-0.0" } else { b"0.0" });
        return;
    }
    // The value is all[..len] × 10^(exp + int_len - len).
    let q = exp + int_len - len as i32 + trailing;
    if is_tie(v, digits, q) {
        // Two shortest decimals equally near: ryu takes the even one, `{:?}`
        // not always (974.71734619140625 is `974.7173461914063`).
        use std::io::Write as _;
        let _ = write!(out, "{v:?}");
        return;
    }
    write_digits(out, negative, digits, q);
}

/// Whether the double `v` lies exactly halfway between `digits × 10^q` and
/// one of its neighbours of as many digits (`v` is `(10 × digits ± 5) ×
/// 10^(q-1)` exactly), where shortest formatters may choose differently.
fn is_tie(v: f64, digits: &[u8], q: i32) -> bool {
    let bits = v.to_bits();
    let (field, fraction) = ((bits >> 52) & 0x7ff, bits & ((1 << 52) - 1));
    let (mut m, mut e) = if field == 0 {
        (fraction, -1074)
    } else {
        (fraction | (1 << 52), field as i32 - 1075)
    };
    if m == 0 || digits.len() > 17 {
        return false;
    }
    let tz = m.trailing_zeros();
    m >>= tz;
    e += tz as i32;
    // v = m × 2^e with m odd, and t × 10^k = t × 5^k × 2^k with t odd: equal
    // only where e = k and m = t × 5^k (or m × 5^-k = t).
    let k = q - 1;
    if e != k || k.unsigned_abs() > 27 {
        return false;
    }
    let d = digits
        .iter()
        .fold(0u128, |a, &c| a * 10 + u128::from(c - b'0'));
    let five = 5u128.pow(k.unsigned_abs());
    [d * 10 + 5, d * 10 - 5].into_iter().any(|t| {
        if k >= 0 {
            t.checked_mul(five) == Some(u128::from(m))
        } else {
            u128::from(m).checked_mul(five) == Some(t)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What `write_finite_f64` must write: `{:?}`'s text, byte for byte.
    fn check(v: f64) {
        let mut out = Vec::new();
        write_finite_f64(&mut out, v);
        assert_eq!(
            std::str::from_utf8(&out).unwrap(),
            format!("{v:?}"),
            "{:#018x}",
            v.to_bits()
        );
    }

    #[test]
    fn doubles_print_as_debug_does() {
        for v in [
            0.0,
            -0.0,
            1.0,
            -1.5,
            0.1,
            1e-4,
            9.999e-5,
            1e-5,
            1e15,
            9_999_999_999_999_998.0,
            1e16,
            1e21,
            1e22,
            1.5e300,
            5e-324,
            f64::MIN_POSITIVE,
            f64::MAX,
            f64::MIN,
            123_456.789,
            f64::from_bits(0x408e_75bd_2000_0000), // 974.71734619140625
            0.5,
            2.5,
            1.25e-3,
            4.5e20,
            0.000_123_4,
            2f64.powi(60),
        ] {
            check(v);
        }
        // Random bit patterns (SplitMix64), and random magnitudes near the
        // forms' boundaries.
        let mut s = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            s = s.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = s;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        };
        for _ in 0..200_000 {
            let v = f64::from_bits(next());
            if v.is_finite() {
                check(v);
            }
            let e = (next() % 50) as i32 - 25;
            check((next() % 1_000_000) as f64 * 10f64.powi(e));
            let f = f32::from_bits(next() as u32);
            if f.is_finite() {
                check(f64::from(f));
            }
        }
    }

    #[test]
    fn integers_print_as_display_does() {
        for v in [0, 1, -1, 9, 10, -10, i64::MAX, i64::MIN, 1_234_567_890] {
            let mut out = Vec::new();
            write_i64(&mut out, v);
            assert_eq!(out, v.to_string().as_bytes());
        }
        let mut out = Vec::new();
        write_u64(&mut out, u64::MAX);
        assert_eq!(out, u64::MAX.to_string().as_bytes());
    }
}
