//! At least 100,000 malformed replies through the parser: 0 panics, and every case becomes
//! exactly one panel state (fresh, partial, or failing with one error kind), with clean text.

use proptest::prelude::*;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::collections::BTreeMap;
use warroom::metrics::prometheus::parse::{MAX_MESSAGE, parse_answer};
use warroom::metrics::{QueryAnswer, SourceError};
use warroom::sanitize::{HOSTILE_SAMPLES, is_clean};

const SEEDS: &[&str] = &[
    r#"{"status":"success","data":{"resultType":"matrix","result":[{"metric":{"__name__":"up","pod":"a"},"values":[[1700000000,"1"],[1700000015,"NaN"],[1700000030,"+Inf"],[1700000045,"-Inf"]]},{"metric":{"pod":"b"},"values":[[1700000000.5,"0.25"]]}]}}"#,
    r#"{"status":"success","data":{"resultType":"vector","result":[{"metric":{"code":"500"},"value":[1700000000,"3.5e2"]}]}}"#,
    r#"{"status":"success","data":{"resultType":"scalar","result":[1700000000,"42"]}}"#,
    r#"{"status":"success","data":{"resultType":"string","result":[1700000000,"hello"]}}"#,
    r#"{"status":"success","data":{"resultType":"matrix","result":[]}}"#,
    r#"{"status":"success","warnings":["partial response: store down"],"infos":["PromQL info"],"data":{"resultType":"vector","result":[{"metric":{},"value":[1,"1"]}]}}"#,
    r#"{"status":"error","errorType":"bad_data","error":"parse error at char 5"}"#,
    r#"{"status":"error","errorType":"timeout","error":"query timed out in expression evaluation"}"#,
    r#"{"status":"error","errorType":"422","error":"VictoriaMetrics says no"}"#,
    "<!DOCTYPE html><html><head><title>504 Gateway Time-out</title></head><body>nginx</body></html>",
    "upstream connect error or disconnect/reset before headers\n",
    "404 page not found\n",
];

const SNIPPETS: &[&str] = &[
    "\"NaN\"",
    "\"+Inf\"",
    "\"-Inf\"",
    "\"inf\"",
    "1e999",
    "-1e400",
    "123456789012345678901234567890123456789",
    "null",
    "[]",
    "{}",
    "\"\"",
    "true",
    "\"\\u001b]0;pwned\\u0007\"",
    "\"\\u202e\"",
    "\"\\ud800\"",
    "\"vector\"",
    "\"matrix\"",
    "\"scalar\"",
    "\"histogram\"",
    "\"value\"",
    "\"values\"",
    "\"warnings\"",
    "\"error\"",
    "<html>",
    "<title>",
    ",",
    "]",
    "}",
    "\"",
    "\\",
];

const STATUSES: &[u16] = &[
    200, 200, 200, 200, 204, 206, 301, 302, 400, 401, 403, 404, 422, 429, 499, 500, 502, 503, 504,
    0, 999,
];

const CONTENT_TYPES: &[Option<&str>] = &[
    Some("application/json"),
    Some("application/json"),
    Some("text/plain; charset=utf-8"),
    Some("text/html"),
    Some("application/octet-stream"),
    Some("\u{1b}[2J"),
    None,
];

const RETRY_AFTERS: &[Option<&str>] = &[
    None,
    None,
    Some("5"),
    Some("0"),
    Some("-1"),
    Some("99999999999999999999"),
    Some("Sun, 06 Nov 1994 08:49:37 GMT"),
    Some("Wed, 21 Oct 2099 07:28:00 GMT"),
    Some("soon"),
];

fn mutate(rng: &mut StdRng, seed: &[u8]) -> Vec<u8> {
    let mut b = seed.to_vec();
    let ops = rng.random_range(1..=3);
    for _ in 0..ops {
        match rng.random_range(0..8) {
            0 if !b.is_empty() => {
                // Byte flips.
                for _ in 0..rng.random_range(1..4) {
                    let i = rng.random_range(0..b.len());
                    b[i] = rng.random();
                }
            }
            1 => {
                let cut = rng.random_range(0..=b.len());
                b.truncate(cut);
            }
            2 | 3 => {
                let at = rng.random_range(0..=b.len());
                let s = SNIPPETS[rng.random_range(0..SNIPPETS.len())];
                b.splice(at..at, s.bytes());
            }
            4 => {
                // Type swaps on the text.
                let text = String::from_utf8_lossy(&b).into_owned();
                let swaps = [
                    ("matrix", "vector"),
                    ("vector", "matrix"),
                    ("\"values\"", "\"value\""),
                    ("\"value\"", "\"values\""),
                    ("success", "error"),
                    ("\"1\"", "1"),
                    ("\"1\"", "\"one\""),
                    ("[1700000000", "[\"1700000000\""),
                    ("\"pod\":\"a\"", "\"pod\":1"),
                    ("scalar", "string"),
                ];
                let (from, to) = swaps[rng.random_range(0..swaps.len())];
                b = text.replacen(from, to, 1).into_bytes();
            }
            5 => {
                // A hostile label value.
                let h = HOSTILE_SAMPLES[rng.random_range(0..HOSTILE_SAMPLES.len())];
                let text = String::from_utf8_lossy(&b).into_owned();
                let escaped = serde_json::to_string(h).unwrap_or_default();
                b = text.replacen("\"a\"", &escaped, 1).into_bytes();
            }
            6 => {
                // A huge repeated region.
                let at = rng.random_range(0..=b.len());
                let n = rng.random_range(0..2000);
                b.splice(at..at, std::iter::repeat_n(b'9', n));
            }
            _ => {
                let at = rng.random_range(0..=b.len());
                let junk: Vec<u8> = (0..rng.random_range(1..16)).map(|_| rng.random()).collect();
                b.splice(at..at, junk);
            }
        }
    }
    b
}

/// The panel state a reply becomes.
fn state(r: &Result<QueryAnswer, SourceError>) -> &'static str {
    match r {
        Ok(a) if !a.warnings.is_empty() => "partial",
        Ok(_) => "fresh",
        Err(SourceError::Timeout(_)) => "failing: timeout",
        Err(SourceError::Unreachable(_)) => "failing: unreachable",
        Err(SourceError::RateLimited { .. }) => "failing: rate limited",
        Err(SourceError::Api { .. }) => "failing: api error",
        Err(SourceError::Http { .. }) => "failing: http error",
        Err(SourceError::Malformed(_)) => "failing: malformed",
        Err(SourceError::TooLarge(_)) => "failing: too large",
    }
}

/// Everything that reaches the screen is clean and short.
fn check(status: u16, body: &[u8], r: &Result<QueryAnswer, SourceError>) -> Result<(), String> {
    match r {
        Ok(a) => {
            if !(200..300).contains(&status) {
                return Err(format!("status {status} gave an answer"));
            }
            for s in &a.series {
                for (k, v) in &s.labels {
                    if !is_clean(k, false) || !is_clean(v, false) {
                        return Err(format!("raw label {k:?}={v:?}"));
                    }
                }
                if s.points.iter().any(|p| !p.t.is_finite()) {
                    return Err("a non-finite time".into());
                }
                if s.points.windows(2).any(|w| w[0].t > w[1].t) {
                    return Err("points out of order".into());
                }
            }
            for w in a.warnings.iter().chain(&a.infos) {
                if !is_clean(w, false) || w.chars().count() > MAX_MESSAGE + 1 {
                    return Err(format!("raw or long warning {w:?}"));
                }
            }
            if a.bytes != body.len() {
                return Err("bytes miscounted".into());
            }
        }
        Err(e) => {
            let text = e.to_string();
            if !is_clean(&text, false) || text.chars().count() > 2 * MAX_MESSAGE + 100 {
                return Err(format!("raw or long error {text:?}"));
            }
        }
    }
    Ok(())
}

#[test]
fn a_hundred_thousand_malformed_replies() {
    let mut rng = StdRng::seed_from_u64(0x5eed_2026);
    let mut counts: BTreeMap<&'static str, u64> = BTreeMap::new();
    let (mut panics, mut bad) = (0u64, Vec::new());
    const CASES: u64 = 100_000;
    for case in 0..CASES {
        let seed = SEEDS[rng.random_range(0..SEEDS.len())].as_bytes();
        let body = if rng.random_bool(0.05) {
            seed.to_vec()
        } else {
            mutate(&mut rng, seed)
        };
        let status = if rng.random_bool(0.7) {
            200
        } else {
            STATUSES[rng.random_range(0..STATUSES.len())]
        };
        let ct = CONTENT_TYPES[rng.random_range(0..CONTENT_TYPES.len())];
        let ra = RETRY_AFTERS[rng.random_range(0..RETRY_AFTERS.len())];
        let r = std::panic::catch_unwind(|| parse_answer(status, ct, ra, &body));
        match r {
            Err(_) => panics += 1,
            Ok(r) => {
                *counts.entry(state(&r)).or_default() += 1;
                if let Err(why) = check(status, &body, &r)
                    && bad.len() < 5
                {
                    bad.push(format!(
                        "case {case}: {why}: {status} {:?}",
                        String::from_utf8_lossy(&body)
                    ));
                }
            }
        }
    }
    eprintln!("{CASES} cases: {counts:#?}");
    assert_eq!(panics, 0);
    assert!(bad.is_empty(), "{bad:#?}");
    assert_eq!(
        counts.values().sum::<u64>(),
        CASES,
        "each case is one state"
    );
    for kind in [
        "fresh",
        "partial",
        "failing: api error",
        "failing: http error",
        "failing: malformed",
        "failing: rate limited",
    ] {
        assert!(
            counts.get(kind).copied().unwrap_or(0) > 100,
            "the fuzzer rarely reached {kind}: {counts:?}"
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 3000, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes_and_statuses(
        status in any::<u16>(),
        body in proptest::collection::vec(any::<u8>(), 0..512),
        ct in proptest::option::of("[ -~]{0,40}"),
        ra in proptest::option::of("[ -~]{0,40}"),
    ) {
        let r = parse_answer(status, ct.as_deref(), ra.as_deref(), &body);
        prop_assert!(check(status, &body, &r).is_ok(), "{:?}", r);
    }

    #[test]
    fn arbitrary_values_in_a_valid_envelope(
        values in proptest::collection::vec("[-+0-9.eE]{0,12}|NaN|[+-]Inf", 0..20),
        label in "\\PC{0,20}",
    ) {
        let points: Vec<serde_json::Value> = values
            .iter()
            .enumerate()
            .map(|(i, v)| serde_json::json!([1.7e9 + i as f64 * 15.0, v]))
            .collect();
        let body = serde_json::json!({"status": "success", "data": {"resultType": "matrix",
            "result": [{"metric": {"l": label}, "values": points}]}}).to_string();
        let r = parse_answer(200, Some("application/json"), None, body.as_bytes());
        prop_assert!(check(200, body.as_bytes(), &r).is_ok(), "{:?}", r);
        if let Ok(a) = &r {
            prop_assert_eq!(a.series[0].points.len(), values.len());
            for (p, v) in a.series[0].points.iter().zip(&values) {
                let expect: f64 = match v.as_str() {
                    "NaN" => f64::NAN,
                    "+Inf" => f64::INFINITY,
                    "-Inf" => f64::NEG_INFINITY,
                    other => other.parse().unwrap_or(f64::NAN),
                };
                prop_assert!(p.v == expect || (p.v.is_nan() && expect.is_nan()), "{} vs {}", p.v, v);
            }
        }
    }
}
