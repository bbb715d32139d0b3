//! Reading records from JSON: the input of `pack` and `encode`.
//!
//! Accepts everything [`super`]'s printers write and what protobuf's
//! `json_format.MessageToDict` / `MessageToJson` print: the original field
//! names and their lowerCamelCase forms, int64 and int32 as strings or
//! numbers, floats as numbers or as `"NaN"`, `"Infinity"`, `"-Infinity"` (or
//! numeric strings), bytes in standard or URL-safe base64 with or without
//! padding, `null` for an absent field, and names in the surrogate-escape
//! form (`\udcXX`) for bytes that are not UTF-8.
//!
//! Floats are read as protobuf does (decimal to double, then rounded to the
//! nearest float), except that a value that rounds to the largest float is
//! accepted (`3.4028235e+38`, which protobuf prints but its own parser
//! rejects); a finite value beyond the float range is an error.
//!
//! The parser is hand-written rather than serde_json's because it must keep
//! number literals exact (an int64 is not a double) and accept lone
//! surrogate escapes in names, which serde_json rejects.
//!
//! ```
//! use recordwire::json::read::message_from_json;
//! use recordwire::encode::{Feature, Message};
//! use recordwire::view::PayloadKind;
//!
//! let m = message_from_json(
//!     PayloadKind::Example,
//!     br#"{"features": {"feature": {"label": {"int64_list": {"value": ["7", 8]}}}}}"#,
//! )?;
//! let Message::Example(ex) = m else { unreachable!() };
//! assert_eq!(ex.features.unwrap().get("label"), Some(&Feature::Int64(vec![7, 8])));
//! # Ok::<(), recordwire::json::read::JsonError>(())
//! ```

use base64::Engine as _;

use crate::encode::{
    Example, Feature, FeatureList, FeatureLists, Features, Message, OfRecord, SequenceExample,
};
use crate::names::quoted;
use crate::view::PayloadKind;

pub use crate::json_text::{parse_json, JsonError, JsonValue, MAX_JSON_DEPTH};

fn err(path: &str, message: impl Into<String>) -> JsonError {
    JsonError {
        offset: None,
        path: path.to_string(),
        message: message.into(),
    }
}

/// The members of an object, with `null` members dropped and every key
/// checked against `known` (each `(proto_name, camelName)`). Returns, for each
/// known field, its value if present.
fn fields<'v, const N: usize>(
    v: &'v JsonValue,
    path: &str,
    known: [(&str, &str); N],
) -> Result<[Option<&'v JsonValue>; N], JsonError> {
    let JsonValue::Object(members) = v else {
        return Err(err(path, "expected an object"));
    };
    let mut out = [None; N];
    for (k, val) in members {
        let i = known
            .iter()
            .position(|(a, b)| k == a.as_bytes() || k == b.as_bytes())
            .ok_or_else(|| {
                let names: Vec<String> = known.iter().map(|(a, _)| format!("\"{a}\"")).collect();
                let expected = match names.as_slice() {
                    [one] => one.clone(),
                    many => format!("one of {}", many.join(", ")),
                };
                err(
                    path,
                    format!("unknown field {}; expected {expected}", quoted(k)),
                )
            })?;
        if matches!(val, JsonValue::Null) {
            continue;
        }
        if out[i].is_some() {
            return Err(err(path, format!("field {} appears twice", known[i].0)));
        }
        out[i] = Some(val);
    }
    Ok(out)
}

fn map_members<'v>(v: &'v JsonValue, path: &str) -> Result<&'v [(Vec<u8>, JsonValue)], JsonError> {
    match v {
        JsonValue::Object(m) => Ok(m),
        _ => Err(err(path, "expected an object")),
    }
}

fn array<'v>(v: &'v JsonValue, path: &str) -> Result<&'v [JsonValue], JsonError> {
    match v {
        JsonValue::Array(a) => Ok(a),
        _ => Err(err(path, "expected an array")),
    }
}

fn scalar_text<'v>(v: &'v JsonValue, path: &str) -> Result<std::borrow::Cow<'v, str>, JsonError> {
    match v {
        JsonValue::Number(n) => Ok(std::borrow::Cow::Borrowed(n)),
        JsonValue::String(s) => std::str::from_utf8(s)
            .map(|s| std::borrow::Cow::Borrowed(s.trim()))
            .map_err(|_| err(path, "expected a number")),
        _ => Err(err(path, "expected a number or a string")),
    }
}

fn int(v: &JsonValue, path: &str, min: i128, max: i128) -> Result<i128, JsonError> {
    let t = scalar_text(v, path)?;
    let n: i128 = match t.parse::<i128>() {
        Ok(n) => n,
        Err(_) => {
            // An integral value written with a fraction or exponent (1.0, 1e3).
            let f: f64 = t
                .parse()
                .map_err(|_| err(path, format!("{t:?} is not an integer")))?;
            if f.fract() != 0.0 || !f.is_finite() || f.abs() > 9.007_199_254_740_992e15 {
                return Err(err(path, format!("{t:?} is not an exact integer")));
            }
            f as i128
        }
    };
    if n < min || n > max {
        return Err(err(path, format!("{t} is out of range")));
    }
    Ok(n)
}

fn special(t: &str) -> Option<f64> {
    match t {
        "NaN" => Some(f64::NAN),
        "Infinity" => Some(f64::INFINITY),
        "-Infinity" => Some(f64::NEG_INFINITY),
        _ => None,
    }
}

fn double(v: &JsonValue, path: &str) -> Result<f64, JsonError> {
    let t = scalar_text(v, path)?;
    if let Some(s) = special(&t) {
        return Ok(s);
    }
    if matches!(v, JsonValue::String(_))
        && !t
            .bytes()
            .all(|b| b.is_ascii_digit() || b"+-.eE".contains(&b))
    {
        return Err(err(path, format!("{t:?} is not a number")));
    }
    let f: f64 = t
        .parse()
        .map_err(|_| err(path, format!("{t:?} is not a number")))?;
    if f.is_infinite() {
        return Err(err(path, format!("{t} is out of range for a double")));
    }
    Ok(f)
}

fn float(v: &JsonValue, path: &str) -> Result<f32, JsonError> {
    let d = double(v, path)?;
    let f = d as f32;
    if d.is_finite() && f.is_infinite() {
        return Err(err(path, format!("{d} is out of range for a float")));
    }
    Ok(f)
}

fn bytes(v: &JsonValue, path: &str) -> Result<Vec<u8>, JsonError> {
    let JsonValue::String(s) = v else {
        return Err(err(path, "expected a base64 string"));
    };
    use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD};
    let url = s.iter().any(|&b| b == b'-' || b == b'_');
    let padded = s.ends_with(b"=");
    let engine = match (url, padded) {
        (false, true) => &STANDARD,
        (false, false) => &STANDARD_NO_PAD,
        (true, true) => &URL_SAFE,
        (true, false) => &URL_SAFE_NO_PAD,
    };
    engine
        .decode(s)
        .map_err(|e| err(path, format!("invalid base64: {e}")))
}

const KINDS: [(&str, &str); 5] = [
    ("bytes_list", "bytesList"),
    ("float_list", "floatList"),
    ("double_list", "doubleList"),
    ("int32_list", "int32List"),
    ("int64_list", "int64List"),
];

/// One `Feature` object; `ofrecord` allows double and int32 lists.
pub fn feature_from_json(v: &JsonValue, path: &str, ofrecord: bool) -> Result<Feature, JsonError> {
    let f = fields(v, path, KINDS)?;
    let set: Vec<usize> = (0..5).filter(|&i| f[i].is_some()).collect();
    if set.len() > 1 {
        return Err(err(
            path,
            "more than one kind of list in one feature (a oneof)",
        ));
    }
    let Some(&i) = set.first() else {
        return Ok(Feature::None);
    };
    if !ofrecord && (i == 2 || i == 3) {
        return Err(err(path, format!("{} exists only in OFRecord", KINDS[i].0)));
    }
    let lpath = format!("{path}.{}", KINDS[i].0);
    let [values] = fields(
        f[i].unwrap_or(&JsonValue::Null),
        &lpath,
        [("value", "value")],
    )?;
    let items: &[JsonValue] = match values {
        None => &[],
        Some(v) => array(v, &format!("{lpath}.value"))?,
    };
    let at = |j: usize| format!("{lpath}.value[{j}]");
    Ok(match i {
        0 => Feature::Bytes(
            items
                .iter()
                .enumerate()
                .map(|(j, v)| bytes(v, &at(j)))
                .collect::<Result<_, _>>()?,
        ),
        1 => Feature::Float(
            items
                .iter()
                .enumerate()
                .map(|(j, v)| float(v, &at(j)))
                .collect::<Result<_, _>>()?,
        ),
        2 => Feature::Double(
            items
                .iter()
                .enumerate()
                .map(|(j, v)| double(v, &at(j)))
                .collect::<Result<_, _>>()?,
        ),
        3 => Feature::Int32(
            items
                .iter()
                .enumerate()
                .map(|(j, v)| int(v, &at(j), i32::MIN as i128, i32::MAX as i128).map(|n| n as i32))
                .collect::<Result<_, _>>()?,
        ),
        _ => Feature::Int64(
            items
                .iter()
                .enumerate()
                .map(|(j, v)| int(v, &at(j), i64::MIN as i128, i64::MAX as i128).map(|n| n as i64))
                .collect::<Result<_, _>>()?,
        ),
    })
}

/// tf.Example and SequenceExample are proto3: their names must be UTF-8.
fn check_utf8_name(name: &[u8], path: &str) -> Result<(), JsonError> {
    std::str::from_utf8(name).map(|_| ()).map_err(|_| {
        err(
            path,
            "a tf.Example name must be valid UTF-8 (only OFRecord names may hold other bytes)",
        )
    })
}

/// A `feature` map object (`{"name": {...}, ...}`); later duplicates replace
/// earlier ones, as protobuf's parser does.
fn feature_map(v: &JsonValue, path: &str, ofrecord: bool) -> Result<Features, JsonError> {
    let mut out = Features::new();
    for (name, f) in map_members(v, path)? {
        let p = format!("{path}[{}]", quoted(name));
        if !ofrecord {
            check_utf8_name(name, &p)?;
        }
        out.insert(name, feature_from_json(f, &p, ofrecord)?);
    }
    Ok(out)
}

fn features_message(v: &JsonValue, path: &str) -> Result<Features, JsonError> {
    let [feature] = fields(v, path, [("feature", "feature")])?;
    match feature {
        None => Ok(Features::new()),
        Some(m) => feature_map(m, &format!("{path}.feature"), false),
    }
}

/// The shape of a record of `kind` in JSON, for the error of a record
/// whose top level is not it.
fn expected_shape(kind: PayloadKind) -> &'static str {
    match kind {
        PayloadKind::Example => {
            r#"a tf.Example is {"features": {"feature": {"NAME": {"int64_list": {"value": [...]}}}}}"#
        }
        PayloadKind::OfRecord => {
            r#"an OFRecord is {"feature": {"NAME": {"int64_list": {"value": [...]}}}}"#
        }
        PayloadKind::SequenceExample => {
            r#"a tf.SequenceExample is {"context": {"feature": {...}}, "feature_lists": {"feature_list": {"NAME": {"feature": [...]}}}}"#
        }
        PayloadKind::Raw => r#"a raw record is {"raw": "BASE64"}"#,
    }
}

/// Converts a parsed JSON value into a message of `kind`.
pub fn message_from_value(kind: PayloadKind, v: &JsonValue) -> Result<Message, JsonError> {
    message_top(kind, v).map_err(|mut e| {
        // An error at the top level says what the top level should be.
        if e.path.is_empty() {
            e.message = format!("{} ({})", e.message, expected_shape(kind));
        }
        e
    })
}

fn message_top(kind: PayloadKind, v: &JsonValue) -> Result<Message, JsonError> {
    Ok(match kind {
        PayloadKind::Example => {
            let [features] = fields(v, "", [("features", "features")])?;
            Message::Example(Example {
                features: features
                    .map(|f| features_message(f, "features"))
                    .transpose()?,
            })
        }
        PayloadKind::OfRecord => {
            let [feature] = fields(v, "", [("feature", "feature")])?;
            Message::OfRecord(OfRecord {
                features: match feature {
                    None => Features::new(),
                    Some(m) => feature_map(m, "feature", true)?,
                },
            })
        }
        PayloadKind::SequenceExample => {
            let [context, lists] = fields(
                v,
                "",
                [("context", "context"), ("feature_lists", "featureLists")],
            )?;
            let feature_lists = match lists {
                None => None,
                Some(l) => {
                    let [fl] = fields(l, "feature_lists", [("feature_list", "featureList")])?;
                    let mut out = FeatureLists::new();
                    if let Some(m) = fl {
                        for (name, list) in map_members(m, "feature_lists.feature_list")? {
                            let p = format!("feature_lists.feature_list[{}]", quoted(name));
                            check_utf8_name(name, &p)?;
                            let [feature] = fields(list, &p, [("feature", "feature")])?;
                            let features = match feature {
                                None => Vec::new(),
                                Some(a) => array(a, &format!("{p}.feature"))?
                                    .iter()
                                    .enumerate()
                                    .map(|(j, f)| {
                                        feature_from_json(f, &format!("{p}.feature[{j}]"), false)
                                    })
                                    .collect::<Result<_, _>>()?,
                            };
                            out.insert(name, FeatureList { features });
                        }
                    }
                    Some(out)
                }
            };
            Message::SequenceExample(SequenceExample {
                context: context
                    .map(|c| features_message(c, "context"))
                    .transpose()?,
                feature_lists,
            })
        }
        PayloadKind::Raw => {
            let [raw] = fields(v, "", [("raw", "raw")])?;
            Message::Raw(match raw {
                None => Vec::new(),
                Some(r) => bytes(r, "raw")?,
            })
        }
    })
}

/// Parses `text` (one JSON object) as a message of `kind`.
pub fn message_from_json(kind: PayloadKind, text: &[u8]) -> Result<Message, JsonError> {
    message_from_value(kind, &parse_json(text)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn syntax_errors_have_offsets() {
        for (text, at) in [
            (&b"{"[..], 1),
            (b"{\"a\" 1}", 5),
            (b"[1,]", 3),
            (b"\"abc", 4),
            (b"01", 1),
            (b"{} x", 3),
            (b"\"\\ud800\"", 1),
        ] {
            let e = parse_json(text).unwrap_err();
            assert_eq!(
                e.offset,
                Some(at),
                "{:?}: {e}",
                String::from_utf8_lossy(text)
            );
        }
        let deep = "[".repeat(100_000);
        assert!(parse_json(deep.as_bytes()).is_err());
    }

    #[test]
    fn strings_and_surrogate_escapes() {
        let v = parse_json(br#""a\u00e9\ud83d\ude00\udcff\n""#).unwrap();
        assert_eq!(
            v,
            JsonValue::String(b"a\xc3\xa9\xf0\x9f\x98\x80\xff\n".to_vec())
        );
        // What the printer writes reads back to the same bytes.
        let name = b"ok\xff\xfe\"\\\x01";
        let mut printed = Vec::new();
        super::super::write_str_bytes(&mut printed, name);
        assert_eq!(
            parse_json(&printed).unwrap(),
            JsonValue::String(name.to_vec())
        );
    }

    #[test]
    fn numbers_and_specials() {
        let f = |t: &str| float(&parse_json(t.as_bytes()).unwrap(), "x");
        assert_eq!(f("3.4028235e+38").unwrap(), f32::MAX);
        assert_eq!(f("1.4013e-45").unwrap(), 1e-45);
        assert!(f("\"NaN\"").unwrap().is_nan());
        assert_eq!(f("\"-Infinity\"").unwrap(), f32::NEG_INFINITY);
        assert!(f("3.5e38").is_err());
        assert!(f("\"abc\"").is_err());
        let i = |t: &str| {
            int(
                &parse_json(t.as_bytes()).unwrap(),
                "x",
                i64::MIN as i128,
                i64::MAX as i128,
            )
        };
        assert_eq!(i("\"-9223372036854775808\"").unwrap(), i64::MIN as i128);
        assert_eq!(i("9223372036854775807").unwrap(), i64::MAX as i128);
        assert_eq!(i("1e3").unwrap(), 1000);
        assert!(i("9223372036854775808").is_err());
        assert!(i("1.5").is_err());
    }

    #[test]
    fn messages() {
        let m = message_from_json(
            PayloadKind::OfRecord,
            br#"{"feature": {"d": {"doubleList": {"value": [5e-324, "Infinity"]}}, "n": {}, "i": {"int32_list": {"value": [-1, "2"]}}}}"#,
        )
        .unwrap();
        let Message::OfRecord(r) = m else { panic!() };
        assert_eq!(
            r.features.get("d"),
            Some(&Feature::Double(vec![5e-324, f64::INFINITY]))
        );
        assert_eq!(r.features.get("n"), Some(&Feature::None));
        assert_eq!(r.features.get("i"), Some(&Feature::Int32(vec![-1, 2])));
        let e = message_from_json(
            PayloadKind::Example,
            br#"{"features": {"feature": {"x": {"int32_list": {"value": [1]}}}}}"#,
        )
        .unwrap_err();
        assert_eq!(e.path, "features.feature[\"x\"]");
        let e = message_from_json(
            PayloadKind::Example,
            br#"{"features": {"feature": {"x": {"int64_list": {"value": [1, "z"]}}}}}"#,
        )
        .unwrap_err();
        assert_eq!(e.path, "features.feature[\"x\"].int64_list.value[1]");
        assert!(message_from_json(PayloadKind::Example, br#"{"feature": {}}"#).is_err());
        let m = message_from_json(PayloadKind::Example, br#"{"features": {}}"#).unwrap();
        assert_eq!(
            m,
            Message::Example(Example {
                features: Some(Features::new())
            })
        );
    }
}
