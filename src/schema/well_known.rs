//! The well-known types in the forms of protobuf's JSON mapping
//! (`json_format`): Timestamp and Duration as strings, the wrappers as their
//! value, Struct, Value and ListValue as plain JSON, FieldMask as its paths,
//! Any with its `@type`.

use super::json::{scalar, Found, Printer, Scalar};
use super::plan::{FieldKind, WellKnown};
use crate::names::write_json_string;
use crate::wire::{DecodeError, DecodeReason, Value};

impl<'a> Printer<'_, 'a> {
    /// The last occurrence of field `number` of message `m` in `found`, as
    /// a scalar (`None` where it does not occur).
    fn last(&self, m: usize, found: &Found<'a>, number: u32) -> Option<(Scalar<'a>, u64)> {
        let plan = &self.plan.messages[m];
        let i = plan.field(number)?;
        let kind = plan.fields[i].kind;
        found
            .field(i)
            .iter()
            .rev()
            .find(|o| self.known(kind, o.value))
            .map(|o| (scalar(kind, o.value), o.value_offset))
    }

    /// A well-known type in its JSON form (protobuf's `json_format`).
    pub(super) fn well_known(
        &self,
        out: &mut Vec<u8>,
        wk: WellKnown,
        m: usize,
        found: &Found<'a>,
        chain: &[(&'a [u8], u64)],
        depth: u32,
    ) -> Result<(), DecodeError> {
        use std::io::Write as _;
        let at = chain.first().map_or(0, |c| c.1);
        let bad = |what: &'static str, why: &'static str| {
            Err(DecodeError::new(
                at,
                DecodeReason::WellKnownValue(what, why),
            ))
        };
        let int = |n: u32| match self.last(m, found, n) {
            Some((Scalar::I64(v), _)) => v,
            Some((Scalar::I32(v), _)) => i64::from(v),
            _ => 0,
        };
        let plan = &self.plan.messages[m];
        match wk {
            WellKnown::Timestamp => {
                let (seconds, nanos) = (int(1), int(2));
                if !(-62_135_596_800..=253_402_300_799).contains(&seconds) {
                    return bad("Timestamp", "seconds outside the years 1 to 9999");
                }
                if !(0..=999_999_999).contains(&nanos) {
                    return bad("Timestamp", "nanos outside 0 to 999999999");
                }
                let (days, secs) = (seconds.div_euclid(86_400), seconds.rem_euclid(86_400));
                let (y, mo, d) = civil_from_days(days);
                let _ = write!(
                    out,
                    "\"{y:04}-{mo:02}-{d:02}T{:02}:{:02}:{:02}",
                    secs / 3600,
                    secs / 60 % 60,
                    secs % 60
                );
                write_nanos(out, nanos as u32);
                out.extend_from_slice(b"Z\"");
            }
            WellKnown::Duration => {
                let (seconds, nanos) = (int(1), int(2));
                if !(-315_576_000_000..=315_576_000_000).contains(&seconds) {
                    return bad("Duration", "seconds beyond 10,000 years");
                }
                if nanos <= -1_000_000_000 || nanos >= 1_000_000_000 {
                    return bad("Duration", "nanos outside -999999999 to 999999999");
                }
                if (nanos < 0 && seconds > 0) || (nanos > 0 && seconds < 0) {
                    return bad("Duration", "seconds and nanos of different signs");
                }
                out.push(b'"');
                if seconds < 0 || nanos < 0 {
                    out.push(b'-');
                }
                let _ = write!(out, "{}", seconds.unsigned_abs());
                write_nanos(out, nanos.unsigned_abs() as u32);
                out.extend_from_slice(b"s\"");
            }
            WellKnown::Wrapper => {
                let Some(i) = plan.field(1) else {
                    out.extend_from_slice(b"null");
                    return Ok(());
                };
                let kind = plan.fields[i].kind;
                match self.last(m, found, 1) {
                    Some((v, offset)) => self.scalar(out, kind, v, offset)?,
                    None => self.default(out, kind),
                }
            }
            WellKnown::Struct => match plan.field(1) {
                Some(i) => self.map(out, None, &plan.fields[i], found.field(i), depth)?,
                None => out.extend_from_slice(b"{}"),
            },
            WellKnown::ListValue => match plan.field(1) {
                Some(i) => self.repeated(out, None, &plan.fields[i], found.field(i), depth)?,
                None => out.extend_from_slice(b"[]"),
            },
            WellKnown::Value => {
                // The kind set last: null (1), number (2), string (3), bool
                // (4), struct (5), list (6); none set is null.
                let Some(i) = plan.fields.iter().enumerate().find_map(|(i, f)| {
                    f.oneof
                        .and_then(|o| (found.winners[o] == Some(i)).then_some(i))
                }) else {
                    out.extend_from_slice(b"null");
                    return Ok(());
                };
                let f = &plan.fields[i];
                let occ = found.field(i);
                match f.kind {
                    FieldKind::Message(sub) => {
                        let parts: Vec<(&[u8], u64)> = occ
                            .iter()
                            .filter_map(|o| match o.value {
                                Value::Len(b) => Some((b, o.value_offset)),
                                _ => None,
                            })
                            .collect();
                        self.message(out, sub, &parts, depth + 1)?;
                    }
                    FieldKind::Enum(_) => out.extend_from_slice(b"null"),
                    kind => {
                        let Some((v, offset)) = self.last(m, found, f.number) else {
                            out.extend_from_slice(b"null");
                            return Ok(());
                        };
                        if let Scalar::F64(x) = v {
                            if !x.is_finite() {
                                return bad("Value", "a number_value that is NaN or infinite");
                            }
                        }
                        self.scalar(out, kind, v, offset)?;
                    }
                }
            }
            WellKnown::FieldMask => {
                // The paths joined, then escaped as one JSON string (a path
                // may hold any character but upper-case letters).
                let mut joined = Vec::new();
                if let Some(i) = plan.field(1) {
                    for (n, o) in found.field(i).iter().enumerate() {
                        // (Not UTF-8: refused in `collect`, a proto3 string.)
                        let Value::Len(path) = o.value else { continue };
                        if n > 0 {
                            joined.push(b',');
                        }
                        if !camel_case(&mut joined, path) {
                            return bad("FieldMask", "a path that is not lower_snake_case");
                        }
                    }
                }
                write_json_string(out, &joined);
            }
            WellKnown::Any => {
                let url = match self.last(m, found, 1) {
                    Some((Scalar::Str(u), _)) => u,
                    _ => b"",
                };
                let value = plan.field(2).and_then(|i| {
                    found.field(i).last().map(|o| match o.value {
                        Value::Len(b) => (b, o.value_offset),
                        _ => (&[][..], o.value_offset),
                    })
                });
                if url.is_empty() && value.is_none() {
                    out.extend_from_slice(b"{}");
                    return Ok(());
                }
                let name = url.rsplit(|&b| b == b'/').next().unwrap_or(url);
                let Some(inner) = std::str::from_utf8(name)
                    .ok()
                    .and_then(|n| self.plan.message_named(n))
                else {
                    return bad("Any", "a type_url whose type the schema does not define");
                };
                let value = value.unwrap_or((&[][..], at));
                out.extend_from_slice(b"{\"@type\":");
                write_json_string(out, url);
                let sub = self.collect(inner, &[value], depth + 1)?;
                if let Some(wk) = self.plan.messages[inner].well_known {
                    out.extend_from_slice(b",\"value\":");
                    self.well_known(out, wk, inner, &sub, &[value], depth + 1)?;
                } else {
                    let mut first = false;
                    self.fields(out, &mut first, inner, &sub, depth + 1)?;
                }
                self.recycle(sub);
                out.push(b'}');
            }
        }
        Ok(())
    }
}

/// The date of `days` after 1970-01-01 (proleptic Gregorian): year, month,
/// day (Howard Hinnant's `civil_from_days`).
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

/// A fraction of a second as protobuf's JSON writes it: none, or 3, 6 or 9
/// digits.
fn write_nanos(out: &mut Vec<u8>, nanos: u32) {
    use std::io::Write as _;
    let _ = match nanos {
        0 => Ok(()),
        n if n % 1_000_000 == 0 => write!(out, ".{:03}", n / 1_000_000),
        n if n % 1_000 == 0 => write!(out, ".{:06}", n / 1_000),
        n => write!(out, ".{n:09}"),
    };
}

/// A FieldMask path in lowerCamelCase (`foo_bar.baz` -> `fooBar.baz`);
/// false for a path protobuf refuses (an upper-case letter, or `_` not
/// before a lower-case one).
fn camel_case(out: &mut Vec<u8>, path: &[u8]) -> bool {
    let mut upper = false;
    for &b in path {
        if b.is_ascii_uppercase() {
            return false;
        }
        if upper {
            if !b.is_ascii_lowercase() {
                return false;
            }
            out.push(b.to_ascii_uppercase());
            upper = false;
        } else if b == b'_' {
            upper = true;
        } else {
            out.push(b);
        }
    }
    !upper
}
