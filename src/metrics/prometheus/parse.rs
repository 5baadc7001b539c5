//! The Prometheus HTTP API's answers, turned into a [`QueryAnswer`] or a [`SourceError`].
//!
//! Pure: status, headers and body in, one outcome out, so every shape a server or a proxy can
//! produce is tested without a network. It never panics. Every label name and value and every
//! message from the server passes [`crate::sanitize::line`] here, where it enters.

use super::errors::{error_from_reply, summarize_error_body};
use crate::backoff::retry_after as retry_after_at;
use crate::metrics::series::{Labels, Point, Series};
use crate::metrics::source::{QueryAnswer, SourceError};
use crate::sanitize;
use chrono::{DateTime, Utc};
use serde::Deserialize;
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use std::fmt;

/// The largest body accepted (enforced while streaming, and here again).
pub const MAX_BODY: usize = 32 * 1024 * 1024;

/// Longest server message kept, in characters.
pub const MAX_MESSAGE: usize = 300;

/// Parse one answer to `/api/v1/query` or `/api/v1/query_range`. `retry_after` is the raw
/// `Retry-After` header (seconds or an HTTP date, read against the wall clock).
pub fn parse_answer(
    status: u16,
    content_type: Option<&str>,
    retry_after: Option<&str>,
    body: &[u8],
) -> Result<QueryAnswer, SourceError> {
    parse_answer_at(status, content_type, retry_after, body, Utc::now())
}

/// [`parse_answer`] with the time an HTTP-date `Retry-After` is measured from.
pub fn parse_answer_at(
    status: u16,
    content_type: Option<&str>,
    retry_after: Option<&str>,
    body: &[u8],
    now: DateTime<Utc>,
) -> Result<QueryAnswer, SourceError> {
    let retry_after = retry_after.and_then(|v| retry_after_at(v, now));
    if body.len() > MAX_BODY {
        return Err(SourceError::TooLarge(MAX_BODY));
    }
    if !(200..300).contains(&status) {
        return Err(error_from_reply(status, content_type, retry_after, body));
    }
    let env: Envelope<Data> = match serde_json::from_slice(body) {
        Ok(env) => env,
        Err(e) => return Err(malformed_2xx(content_type, body, &e)),
    };
    if env.status.as_deref() != Some("success") {
        return Err(api_error(env.error_type, env.error, env.status));
    }
    let data = env.data.ok_or_else(|| {
        SourceError::Malformed("\"data\" is missing from a success answer".into())
    })?;
    Ok(QueryAnswer {
        series: data.series,
        warnings: clean_list(env.warnings),
        infos: clean_list(env.infos),
        bytes: body.len(),
        result_type: Some(data.kind.result_type()),
        omitted: 0,
    })
}

/// A 2xx body that did not parse as the answer: say what it was instead.
pub(super) fn malformed_2xx(
    content_type: Option<&str>,
    body: &[u8],
    e: &serde_json::Error,
) -> SourceError {
    // An error envelope whose `data` would not parse is still an error envelope.
    if let Ok(env) = serde_json::from_slice::<Envelope<IgnoredAny>>(body)
        && env.status.as_deref() != Some("success")
    {
        return api_error(env.error_type, env.error, env.status);
    }
    let looks_json = content_type.is_none_or(|c| c.to_ascii_lowercase().contains("json"));
    let trimmed = body.trim_ascii_start();
    if trimmed.is_empty() {
        return SourceError::Malformed("empty body".into());
    }
    if !looks_json || trimmed.first() != Some(&b'{') {
        return SourceError::Malformed(format!(
            "not a JSON answer ({}): {}",
            content_type
                .map(sanitize::line)
                .unwrap_or("no content type".into()),
            summarize_error_body(content_type, body)
        ));
    }
    if e.is_eof() {
        SourceError::Malformed(format!(
            "truncated JSON: the body ends after {} bytes",
            body.len()
        ))
    } else {
        SourceError::Malformed(format!(
            "unexpected JSON: {}",
            clean_message(&e.to_string())
        ))
    }
}

pub(super) fn api_error(
    error_type: Option<String>,
    error: Option<String>,
    status: Option<String>,
) -> SourceError {
    match (error_type, error) {
        (None, None) => SourceError::Malformed(format!(
            "\"status\" is {} instead of \"success\" and there is no error",
            status
                .map(|s| format!("\"{}\"", clean_message(&s)))
                .unwrap_or_else(|| "missing".into())
        )),
        (t, m) => SourceError::Api {
            error_type: t
                .map(|t| sanitize::sanitize(&t, false, 40).into_owned())
                .unwrap_or_else(|| "unknown".into()),
            message: m.map(|m| clean_message(&m)).unwrap_or_default(),
        },
    }
}

/// One server message, sanitized and cut to [`MAX_MESSAGE`] characters.
pub fn clean_message(s: &str) -> String {
    sanitize::sanitize(s.trim(), false, MAX_MESSAGE).into_owned()
}

fn clean_list(v: Option<Vec<String>>) -> Vec<String> {
    v.unwrap_or_default()
        .iter()
        .take(20)
        .map(|s| clean_message(s))
        .collect()
}

/// The API's envelope. `D` is the `data` shape of the endpoint.
#[derive(Deserialize)]
pub(super) struct Envelope<D> {
    pub status: Option<String>,
    pub data: Option<D>,
    #[serde(rename = "errorType")]
    pub error_type: Option<String>,
    pub error: Option<String>,
    pub warnings: Option<Vec<String>>,
    pub infos: Option<Vec<String>>,
}

/// `data` of a query answer, read straight into [`Series`] without an intermediate tree.
struct Data {
    series: Vec<Series>,
    kind: Kind,
}

impl<'de> Deserialize<'de> for Data {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_map(DataVisitor)
    }
}

struct DataVisitor;

impl<'de> Visitor<'de> for DataVisitor {
    type Value = Data;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an object with \"resultType\" and \"result\"")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Data, A::Error> {
        let mut kind: Option<Kind> = None;
        let mut series: Option<Vec<Series>> = None;
        // Prometheus sends `resultType` first; if another server does not, `result` is held
        // as a JSON tree until the type is known.
        let mut early: Option<serde_json::Value> = None;
        while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            match key.as_ref() {
                "resultType" => {
                    let name: std::borrow::Cow<'de, str> = map.next_value()?;
                    kind = Some(Kind::from_name(&name).ok_or_else(|| {
                        de::Error::custom(format!(
                            "unknown resultType \"{}\"",
                            sanitize::sanitize(&name, false, 40)
                        ))
                    })?);
                }
                "result" => match kind {
                    Some(k) => series = Some(map.next_value_seed(ResultSeed(k))?),
                    None => early = Some(map.next_value()?),
                },
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        let kind = kind.ok_or_else(|| de::Error::missing_field("resultType"))?;
        if let Some(v) = early {
            series = Some(ResultSeed(kind).deserialize(v).map_err(de::Error::custom)?);
        }
        let series = series.ok_or_else(|| de::Error::missing_field("result"))?;
        Ok(Data { series, kind })
    }
}

#[derive(Clone, Copy, PartialEq, Debug)]
enum Kind {
    Matrix,
    Vector,
    Scalar,
    Str,
}

impl Kind {
    fn result_type(self) -> crate::metrics::ResultType {
        match self {
            Kind::Matrix => crate::metrics::ResultType::Matrix,
            Kind::Vector => crate::metrics::ResultType::Vector,
            Kind::Scalar => crate::metrics::ResultType::Scalar,
            Kind::Str => crate::metrics::ResultType::String,
        }
    }

    fn from_name(s: &str) -> Option<Kind> {
        match s {
            "matrix" => Some(Kind::Matrix),
            "vector" => Some(Kind::Vector),
            "scalar" => Some(Kind::Scalar),
            "string" => Some(Kind::Str),
            _ => None,
        }
    }
}

struct ResultSeed(Kind);

impl<'de> DeserializeSeed<'de> for ResultSeed {
    type Value = Vec<Series>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Vec<Series>, D::Error> {
        match self.0 {
            Kind::Matrix | Kind::Vector => {
                let items: Option<Vec<Item>> = Deserialize::deserialize(d)?;
                let mut out = Vec::new();
                for item in items.unwrap_or_default() {
                    out.push(item.into_series(self.0).map_err(de::Error::custom)?);
                }
                Ok(out)
            }
            Kind::Scalar => {
                let s: Sample = Deserialize::deserialize(d)?;
                Ok(vec![Series {
                    labels: Labels::new(),
                    points: vec![s.0],
                }])
            }
            Kind::Str => {
                // A string result has no numeric value; it is shown as a series with no points.
                let _: IgnoredAny = Deserialize::deserialize(d)?;
                Ok(vec![Series::default()])
            }
        }
    }
}

/// One element of a vector or matrix result.
#[derive(Deserialize)]
struct Item {
    metric: Option<RawLabels>,
    value: Option<Sample>,
    values: Option<Vec<Sample>>,
}

impl Item {
    fn into_series(self, kind: Kind) -> Result<Series, String> {
        let labels = self.metric.map(|m| m.0).unwrap_or_default();
        let mut points: Vec<Point> = match (kind, self.values, self.value) {
            (Kind::Matrix, Some(values), _) => values.into_iter().map(|s| s.0).collect(),
            (Kind::Vector, _, Some(value)) => vec![value.0],
            (Kind::Matrix, None, _) => return Err("a matrix series has no \"values\"".into()),
            _ => return Err("a vector sample has no \"value\"".into()),
        };
        // Points must be in increasing time for merging and drawing; servers almost always
        // send them so, and a sort costs nothing when they are.
        if points.windows(2).any(|w| w[0].t > w[1].t) {
            points.sort_by(|a, b| a.t.total_cmp(&b.t));
        }
        Ok(Series { labels, points })
    }
}

/// A label set, sanitized as it is read.
struct RawLabels(Labels);

impl<'de> Deserialize<'de> for RawLabels {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = RawLabels;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a label set of strings")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RawLabels, A::Error> {
                let mut labels = Labels::new();
                while let Some((k, v)) =
                    map.next_entry::<std::borrow::Cow<'de, str>, std::borrow::Cow<'de, str>>()?
                {
                    labels.insert(
                        sanitize::line(&k).into_owned(),
                        sanitize::line(&v).into_owned(),
                    );
                }
                Ok(RawLabels(labels))
            }
        }
        d.deserialize_map(V)
    }
}

/// `[<unix seconds>, "<value>"]`.
struct Sample(Point);

impl<'de> Deserialize<'de> for Sample {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Sample;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a sample [time, \"value\"]")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Sample, A::Error> {
                let t = seq
                    .next_element::<Number>()?
                    .ok_or_else(|| de::Error::invalid_length(0, &self))?
                    .0;
                let v = seq
                    .next_element::<Number>()?
                    .ok_or_else(|| de::Error::invalid_length(1, &self))?
                    .0;
                if seq.next_element::<IgnoredAny>()?.is_some() {
                    return Err(de::Error::invalid_length(3, &self));
                }
                if !t.is_finite() {
                    return Err(de::Error::custom("a sample time is not a finite number"));
                }
                Ok(Sample(Point { t, v }))
            }
        }
        d.deserialize_seq(V)
    }
}

/// A number sent as a JSON number or, as Prometheus does for values, a string that may be
/// "NaN", "+Inf" or "-Inf".
struct Number(f64);

impl<'de> Deserialize<'de> for Number {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Number;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a number or a numeric string")
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Number, E> {
                Ok(Number(v))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Number, E> {
                Ok(Number(v as f64))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Number, E> {
                Ok(Number(v as f64))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Number, E> {
                parse_value(v).map(Number).ok_or_else(|| {
                    E::custom(format!(
                        "\"{}\" is not a number",
                        sanitize::sanitize(v, false, 40)
                    ))
                })
            }
        }
        d.deserialize_any(V)
    }
}

/// A Prometheus value string: a float, "NaN", "+Inf", "-Inf" (also "Inf").
pub fn parse_value(s: &str) -> Option<f64> {
    match s {
        "NaN" => Some(f64::NAN),
        "+Inf" | "Inf" => Some(f64::INFINITY),
        "-Inf" => Some(f64::NEG_INFINITY),
        _ => {
            // Rust accepts "inf", "infinity" and "nan" in any case; Prometheus spells them
            // only as above, so anything else alphabetic is refused.
            if s.bytes()
                .any(|b| b.is_ascii_alphabetic() && b != b'e' && b != b'E')
            {
                return None;
            }
            s.parse().ok()
        }
    }
}

#[cfg(test)]
#[path = "parse_tests.rs"]
mod tests;
