//! Numbers as JSON text without the formatting machinery (`write!` with `{}`
//! or `{:?}`), which the schema printer's profile showed to be a quarter of
//! its time: integers from a stack buffer, doubles from `ryu`'s shortest
//! digits laid out as Rust's `{:?}` lays them out.

/// The decimal digits of `u`, at the end of `buf`.
fn digits(buf: &mut [u8; 20], mut u: u64) -> &[u8] {
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (u % 10) as u8;
        u /= 10;
        if u == 0 {
            break;
        }
    }
    &buf[i..]
}

/// Appends `v` in decimal, as `{}` writes it.
pub(crate) fn write_u64(out: &mut Vec<u8>, v: u64) {
    out.extend_from_slice(digits(&mut [0u8; 20], v));
}

/// Appends `v` in decimal, as `{}` writes it.
pub(crate) fn write_i64(out: &mut Vec<u8>, v: i64) {
    if v < 0 {
        out.push(b'-');
    }
    write_u64(out, v.unsigned_abs());
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
    write_digits(out, negative, digits, q);
}
