//! The well-known types read from their JSON forms, as `json_format.Parse`
//! reads them: Timestamp (RFC 3339, `Z` or a `±HH:MM` offset), Duration
//! (`"-1.5s"`), the wrappers (their bare value), Struct, Value, ListValue
//! (plain JSON), FieldMask (`"fooBar,a.bC"`, lowerCamelCase paths back to
//! snake_case) and Any (`"@type"`, then the message's fields, or `"value"`
//! for a well-known type); each written as the message it is.

use super::encode::{double, fail, tag, type_of, write_len, At, Encoder, Wire};
use super::plan::{FieldKind, WellKnown};
use crate::json::read::{JsonError, JsonValue};
use crate::names::quoted;

/// The first and last second of Timestamp's range (0001-01-01 to 9999-12-31).
const TIMESTAMP_SECONDS: (i64, i64) = (-62_135_596_800, 253_402_300_799);
/// Duration's range in seconds, either way (10,000 years).
const DURATION_SECONDS: i64 = 315_576_000_000;

impl Encoder<'_> {
    /// The body of the well-known type `wk` (message type `m`) from `v`.
    pub(super) fn well_known(
        &self,
        wk: WellKnown,
        m: usize,
        v: &JsonValue,
        at: &At<'_>,
        out: &mut Vec<u8>,
    ) -> Result<(), JsonError> {
        let plan = &self.plan.messages[m];
        let field = |number: u32| {
            plan.field(number)
                .map(|i| &plan.fields[i])
                .ok_or_else(|| fail(at, format!("{} has no field {number}", plan.name)))
        };
        match wk {
            WellKnown::Timestamp | WellKnown::Duration => {
                let JsonValue::String(s) = v else {
                    return Err(fail(at, format!("expected a string, not {}", type_of(v))));
                };
                let text = std::str::from_utf8(s).unwrap_or("");
                let (seconds, nanos) = if wk == WellKnown::Timestamp {
                    timestamp(text)
                } else {
                    duration(text)
                }
                .map_err(|why| fail(at, format!("{}: {why}", quoted(s))))?;
                if seconds != 0 {
                    Wire::Varint(seconds as u64).write(field(1)?.number, out);
                }
                if nanos != 0 {
                    Wire::Varint(i64::from(nanos) as u64).write(field(2)?.number, out);
                }
            }
            WellKnown::Wrapper => {
                let f = field(1)?;
                if matches!(v, JsonValue::Null) {
                    return Err(fail(at, "null is not a wrapper's value"));
                }
                let w = self.scalar(f.kind, v, at)?;
                if !w.is_default() {
                    w.write(f.number, out);
                }
            }
            WellKnown::Struct => {
                if !matches!(v, JsonValue::Object(_)) {
                    return Err(fail(at, format!("expected an object, not {}", type_of(v))));
                }
                self.map(field(1)?, v, at, out)?;
            }
            WellKnown::ListValue => {
                if !matches!(v, JsonValue::Array(_)) {
                    return Err(fail(at, format!("expected an array, not {}", type_of(v))));
                }
                self.repeated(field(1)?, v, at, out)?;
            }
            WellKnown::Value => {
                // null_value 1, number_value 2, string_value 3, bool_value 4,
                // struct_value 5, list_value 6: a oneof, written even at its
                // default.
                let (number, wire) = match v {
                    JsonValue::Null => (1, Wire::Varint(0)),
                    // Beyond a double: infinite, as protobuf's reader
                    // (Python's float) makes it.
                    JsonValue::Number(t) => {
                        let x = match double(v, at) {
                            Ok(x) => x,
                            Err(_) if t.parse::<f64>().is_ok_and(f64::is_infinite) => {
                                t.parse::<f64>().unwrap_or(f64::INFINITY)
                            }
                            Err(e) => return Err(e),
                        };
                        (2, Wire::Fixed64(x.to_bits()))
                    }
                    JsonValue::String(_) => (3, self.scalar(field(3)?.kind, v, at)?),
                    JsonValue::Bool(b) => (4, Wire::Varint(u64::from(*b))),
                    JsonValue::Object(_) | JsonValue::Array(_) => {
                        let number = if matches!(v, JsonValue::Object(_)) {
                            5
                        } else {
                            6
                        };
                        let f = field(number)?;
                        let FieldKind::Message(sub) = f.kind else {
                            return Err(fail(at, "google.protobuf.Value of another shape"));
                        };
                        let mut body = Vec::new();
                        self.message(sub, v, at, &mut body)?;
                        (number, Wire::Len(body))
                    }
                };
                wire.write(field(number)?.number, out);
            }
            WellKnown::FieldMask => {
                let JsonValue::String(s) = v else {
                    return Err(fail(at, format!("expected a string, not {}", type_of(v))));
                };
                let number = field(1)?.number;
                if !s.is_empty() {
                    for path in s.split(|&b| b == b',') {
                        let mut snake = Vec::with_capacity(path.len() + 4);
                        for &b in path {
                            if b == b'_' {
                                return Err(fail(
                                    at,
                                    format!(
                                        "the FieldMask path {} holds a '_' (paths are lowerCamelCase)",
                                        quoted(path)
                                    ),
                                ));
                            }
                            if b.is_ascii_uppercase() {
                                snake.push(b'_');
                                snake.push(b.to_ascii_lowercase());
                            } else {
                                snake.push(b);
                            }
                        }
                        Wire::Len(snake).write(number, out);
                    }
                }
            }
            WellKnown::Any => self.any(m, v, at, out)?,
        }
        Ok(())
    }

    /// An `Any`: `{}`, or `"@type"` with the message's fields beside it
    /// (or its JSON form as `"value"` for a well-known type).
    fn any(
        &self,
        m: usize,
        v: &JsonValue,
        at: &At<'_>,
        out: &mut Vec<u8>,
    ) -> Result<(), JsonError> {
        let JsonValue::Object(members) = v else {
            return Err(fail(at, format!("expected an object, not {}", type_of(v))));
        };
        if members.is_empty() {
            return Ok(());
        }
        let Some((_, url)) = members.iter().find(|(k, _)| k == b"@type") else {
            return Err(fail(at, "an Any without \"@type\""));
        };
        let JsonValue::String(url) = url else {
            return Err(fail(at, "an Any's \"@type\" must be a string"));
        };
        let name = url.rsplit(|&b| b == b'/').next().unwrap_or(url);
        let Some(inner) = std::str::from_utf8(name)
            .ok()
            .and_then(|n| self.plan.message_named(n))
        else {
            return Err(fail(
                at,
                format!("the Any's type {} is not in the schema", quoted(url)),
            ));
        };
        let mut value = Vec::new();
        let this = Encoder {
            plan: self.plan,
            sort_maps: false,
        };
        if self.plan.messages[inner].well_known.is_some() {
            for (k, _) in members {
                if k != b"@type" && k != b"value" {
                    return Err(fail(
                        at,
                        format!(
                            "unknown field {} of an Any holding a well-known type (its fields are \"@type\" and \"value\")",
                            quoted(k)
                        ),
                    ));
                }
            }
            let Some((_, json)) = members.iter().find(|(k, _)| k == b"value") else {
                return Err(fail(at, "an Any holding a well-known type needs \"value\""));
            };
            this.message(inner, json, &At::Field(at, b"value"), &mut value)?;
        } else {
            this.members(inner, members, Some(b"@type"), at, &mut value)?;
        }
        let plan = &self.plan.messages[m];
        let (Some(t), Some(b)) = (plan.field(1), plan.field(2)) else {
            return Err(fail(at, "google.protobuf.Any of another shape"));
        };
        tag(plan.fields[t].number, 2, out);
        write_len(url, out);
        if !value.is_empty() {
            tag(plan.fields[b].number, 2, out);
            write_len(&value, out);
        }
        Ok(())
    }
}

/// `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)` as seconds and nanos since
/// the epoch.
fn timestamp(text: &str) -> Result<(i64, i32), String> {
    let b = text.as_bytes();
    let digits = |from: usize, n: usize| -> Result<i64, String> {
        let part = b
            .get(from..from + n)
            .filter(|p| p.iter().all(u8::is_ascii_digit))
            .ok_or("not YYYY-MM-DDTHH:MM:SS with a Z or ±HH:MM offset")?;
        Ok(part.iter().fold(0i64, |a, &d| a * 10 + i64::from(d - b'0')))
    };
    let shape_ok = b.len() >= 20
        && b[4] == b'-'
        && b[7] == b'-'
        && b[10] == b'T'
        && b[13] == b':'
        && b[16] == b':';
    if !shape_ok {
        return Err("not YYYY-MM-DDTHH:MM:SS with a Z or ±HH:MM offset".into());
    }
    let (year, month, day) = (digits(0, 4)?, digits(5, 2)?, digits(8, 2)?);
    let (hour, minute, second) = (digits(11, 2)?, digits(14, 2)?, digits(17, 2)?);
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    let month_days = [
        31,
        if leap { 29 } else { 28 },
        31,
        30,
        31,
        30,
        31,
        31,
        30,
        31,
        30,
        31,
    ];
    if year < 1
        || !(1..=12).contains(&month)
        || day < 1
        || day > month_days[(month - 1).clamp(0, 11) as usize]
        || hour > 23
        || minute > 59
        || second > 59
    {
        return Err("a date or time out of range".into());
    }
    let mut rest = &text[19..];
    let mut nanos = 0i32;
    if let Some(r) = rest.strip_prefix('.') {
        let end = r.find(|c: char| !c.is_ascii_digit()).unwrap_or(r.len());
        if end == 0 || end > 9 {
            return Err("a fraction of 1 to 9 digits".into());
        }
        nanos = fraction(&r[..end]);
        rest = &r[end..];
    }
    let offset = match rest {
        "Z" => 0,
        o if o.len() == 6 && (o.starts_with('+') || o.starts_with('-')) && &o[3..4] == ":" => {
            let (h, m) = (o[1..3].parse::<i64>(), o[4..6].parse::<i64>());
            let (Ok(h), Ok(m)) = (h, m) else {
                return Err("a bad time zone offset".into());
            };
            let sign = if o.starts_with('-') { -1 } else { 1 };
            sign * (h * 3600 + m * 60)
        }
        _ => return Err("no time zone (Z or ±HH:MM) at the end".into()),
    };
    let seconds =
        days_from_civil(year, month, day) * 86_400 + hour * 3600 + minute * 60 + second - offset;
    if !(TIMESTAMP_SECONDS.0..=TIMESTAMP_SECONDS.1).contains(&seconds) {
        return Err("outside the years 0001 to 9999".into());
    }
    Ok((seconds, nanos))
}

/// `[-]SECONDS[.fraction]s` as seconds and nanos (both of the sign).
fn duration(text: &str) -> Result<(i64, i32), String> {
    let body = text.strip_suffix('s').ok_or("a Duration ends in 's'")?;
    let negative = body.starts_with('-');
    let unsigned = body.strip_prefix(['-', '+']).unwrap_or(body);
    let (whole, frac) = match unsigned.split_once('.') {
        Some((w, f)) => (w, f),
        None => (unsigned, ""),
    };
    if whole.is_empty()
        || !whole.bytes().all(|b| b.is_ascii_digit())
        || !frac.bytes().all(|b| b.is_ascii_digit())
    {
        return Err("not [-]SECONDS[.FRACTION]s".into());
    }
    let seconds: i64 = whole
        .parse()
        .map_err(|_| "seconds beyond 10,000 years".to_owned())?;
    if seconds > DURATION_SECONDS {
        return Err("seconds beyond 10,000 years".into());
    }
    let nanos = if frac.is_empty() { 0 } else { fraction(frac) };
    if nanos >= 1_000_000_000 {
        return Err("a fraction that rounds to a whole second".into());
    }
    Ok(if negative {
        (-seconds, -nanos)
    } else {
        (seconds, nanos)
    })
}

/// The nanoseconds of the digits after a point: exact for up to 9 digits,
/// rounded beyond (as protobuf's `round(float('0.' + digits) * 1e9)`, ties
/// to even); none is 0.
fn fraction(digits: &str) -> i32 {
    if digits.len() <= 9 {
        let n: i32 = digits.parse().unwrap_or(0);
        n * 10i32.pow(9 - digits.len() as u32)
    } else {
        let f: f64 = format!("0.{digits}").parse().unwrap_or(0.0);
        (f * 1e9).round_ties_even() as i32
    }
}

/// Days from 1970-01-01 to a date (proleptic Gregorian; Howard Hinnant's
/// `days_from_civil`).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::{duration, timestamp};

    #[test]
    fn timestamps_and_durations() {
        assert_eq!(timestamp("1970-01-01T00:00:00Z"), Ok((0, 0)));
        assert_eq!(timestamp("1969-12-31T23:59:59.500Z"), Ok((-1, 500_000_000)));
        assert_eq!(timestamp("0001-01-01T00:00:00Z"), Ok((-62_135_596_800, 0)));
        assert_eq!(
            timestamp("9999-12-31T23:59:59.999999999Z"),
            Ok((253_402_300_799, 999_999_999))
        );
        assert_eq!(timestamp("1970-01-01T01:00:00+01:00"), Ok((0, 0)));
        assert_eq!(
            timestamp("1970-01-01T00:00:00.000001-00:30"),
            Ok((1800, 1000))
        );
        for bad in [
            "1970-01-01 00:00:00Z",
            "1970-01-01T00:00:00",
            "1970-02-30T00:00:00Z",
            "1970-01-01T00:00:00.Z",
            "0000-12-31T00:00:00Z",
        ] {
            assert!(timestamp(bad).is_err(), "{bad}");
        }
        assert_eq!(duration("1.5s"), Ok((1, 500_000_000)));
        assert_eq!(duration("-0.5s"), Ok((0, -500_000_000)));
        assert_eq!(duration("0s"), Ok((0, 0)));
        assert_eq!(
            duration("315576000000.999999999s"),
            Ok((315_576_000_000, 999_999_999))
        );
        assert_eq!(duration("+1.s"), Ok((1, 0)));
        for bad in ["1.5", "s", ".5s", "315576000001s", "1e3s"] {
            assert!(duration(bad).is_err(), "{bad}");
        }
    }
}
