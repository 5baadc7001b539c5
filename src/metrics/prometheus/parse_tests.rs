use super::*;
use crate::metrics::source::SourceError;

const JSON: Option<&str> = Some("application/json");

fn ok(body: &str) -> QueryAnswer {
    match parse_answer(200, JSON, None, body.as_bytes()) {
        Ok(a) => a,
        Err(e) => panic!("{body}: {e:?}"),
    }
}

fn err(status: u16, ct: Option<&str>, body: &str) -> SourceError {
    match parse_answer(status, ct, None, body.as_bytes()) {
        Ok(a) => panic!("{body}: unexpectedly {a:?}"),
        Err(e) => e,
    }
}

#[test]
fn a_matrix_with_special_values() {
    let a = ok(
        r#"{"status":"success","data":{"resultType":"matrix","result":[
        {"metric":{"__name__":"up","pod":"a"},"values":[[1.5,"1"],[2,"NaN"],[3,"+Inf"],[4,"-Inf"],[5,"1e3"]]}
    ]}}"#,
    );
    assert_eq!(a.series.len(), 1);
    let s = &a.series[0];
    assert_eq!(s.labels["pod"], "a");
    let v: Vec<f64> = s.points.iter().map(|p| p.v).collect();
    assert_eq!(v[0], 1.0);
    assert!(v[1].is_nan());
    assert_eq!(v[2], f64::INFINITY);
    assert_eq!(v[3], f64::NEG_INFINITY);
    assert_eq!(v[4], 1000.0);
    assert_eq!(s.points[0].t, 1.5);
    assert!(a.warnings.is_empty());
}

#[test]
fn vectors_scalars_strings_and_empty_results() {
    let a = ok(
        r#"{"status":"success","data":{"resultType":"vector","result":[
        {"metric":{},"value":[10,"2"]},{"metric":{"a":"b"},"value":[10,"3"]}]}}"#,
    );
    assert_eq!(a.series.len(), 2);
    assert_eq!(a.series[1].points, vec![Point { t: 10.0, v: 3.0 }]);
    let a = ok(r#"{"status":"success","data":{"resultType":"scalar","result":[7,"0.25"]}}"#);
    assert_eq!(a.series[0].points, vec![Point { t: 7.0, v: 0.25 }]);
    let a = ok(r#"{"status":"success","data":{"resultType":"string","result":[7,"hi"]}}"#);
    assert!(a.series[0].points.is_empty());
    let a = ok(r#"{"status":"success","data":{"resultType":"matrix","result":[]}}"#);
    assert!(a.series.is_empty());
    assert!(a.bytes > 0);
}

#[test]
fn result_before_result_type_is_still_read() {
    let a = ok(
        r#"{"data":{"result":[{"metric":{"x":"1"},"values":[[1,"2"]]}],"resultType":"matrix"},"status":"success"}"#,
    );
    assert_eq!(a.series[0].points, vec![Point { t: 1.0, v: 2.0 }]);
}

#[test]
fn warnings_and_infos_are_kept_and_sanitized() {
    let a = ok(
        r#"{"status":"success","warnings":["store \u001b[2Jdown"],"infos":["PromQL info: x"],
        "data":{"resultType":"vector","result":[]}}"#,
    );
    assert_eq!(a.warnings, vec!["store \\e[2Jdown".to_string()]);
    assert_eq!(a.infos, vec!["PromQL info: x".to_string()]);
}

#[test]
fn hostile_labels_are_sanitized_on_entry() {
    for h in crate::sanitize::HOSTILE_SAMPLES {
        let body = serde_json::json!({"status":"success","data":{"resultType":"vector",
            "result":[{"metric":{"pod":h, *h: "v"},"value":[1,"1"]}]}});
        let a = ok(&body.to_string());
        for (k, v) in &a.series[0].labels {
            assert!(crate::sanitize::is_clean(k, false), "{k:?}");
            assert!(crate::sanitize::is_clean(v, false), "{v:?}");
        }
    }
}

#[test]
fn every_standard_and_odd_error_type() {
    for (status, t) in [
        (400, "bad_data"),
        (422, "execution"),
        (503, "timeout"),
        (503, "canceled"),
        (500, "internal"),
        (503, "unavailable"),
        (422, "422"),
        (200, "execution"),
    ] {
        let body = format!(r#"{{"status":"error","errorType":"{t}","error":"boom \u0007"}}"#);
        assert_eq!(
            err(status, JSON, &body),
            SourceError::Api {
                error_type: t.into(),
                message: "boom \\x07".into()
            },
            "{status} {t}"
        );
    }
}

#[test]
fn text_html_and_rate_limits() {
    assert_eq!(
        err(
            404,
            Some("text/plain; charset=utf-8"),
            "404 page not found\n"
        ),
        SourceError::Http {
            status: 404,
            summary: "404 page not found (check the URL and its path prefix)".into()
        }
    );
    let e = err(
        502,
        Some("text/html"),
        "<html><head><title>502 Bad Gateway</title></head></html>",
    );
    assert_eq!(
        e,
        SourceError::Http {
            status: 502,
            summary: "HTML page \"502 Bad Gateway\"".into()
        }
    );
    let e = parse_answer(429, None, Some("12"), b"slow down").unwrap_err();
    assert_eq!(e.retry_after(), Some(std::time::Duration::from_secs(12)));
    let e = parse_answer(503, None, Some("2"), b"").unwrap_err();
    assert!(matches!(e, SourceError::RateLimited { .. }));
    let e = parse_answer(503, Some("text/plain"), None, b"Service Unavailable").unwrap_err();
    assert!(matches!(e, SourceError::Http { status: 503, .. }));
}

#[test]
fn html_with_status_200_is_malformed_and_named() {
    let e = err(
        200,
        Some("text/html"),
        "<!doctype html><title>Sign in</title>",
    );
    match e {
        SourceError::Malformed(m) => assert!(m.contains("Sign in"), "{m}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn truncated_bodies_at_every_offset_never_succeed_wrongly() {
    let full = r#"{"status":"success","data":{"resultType":"matrix","result":[{"metric":{"a":"b"},"values":[[1,"1"],[2,"2"]]}]}}"#;
    for cut in 0..full.len() {
        let r = parse_answer(200, JSON, None, &full.as_bytes()[..cut]);
        assert!(matches!(r, Err(SourceError::Malformed(_))), "{cut}: {r:?}");
    }
    let r = parse_answer(200, JSON, None, &full.as_bytes()[..60]).unwrap_err();
    assert!(r.to_string().contains("truncated"), "{r}");
}

#[test]
fn wrong_shapes_are_malformed() {
    for body in [
        r#"{"status":"success"}"#,
        r#"{"status":"success","data":{"resultType":"matrix","result":[{"metric":{},"value":[1,"1"]}]}}"#,
        r#"{"status":"success","data":{"resultType":"vector","result":[{"metric":{},"values":[[1,"1"]]}]}}"#,
        r#"{"status":"success","data":{"resultType":"histogram","result":[]}}"#,
        r#"{"status":"success","data":{"resultType":"vector","result":[{"metric":{"a":1},"value":[1,"1"]}]}}"#,
        r#"{"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[1,"one"]}]}}"#,
        r#"{"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":["NaN","1"]}]}}"#,
        r#"{"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[1]}]}}"#,
        r#"{"status":"weird"}"#,
        r#"[]"#,
        "",
    ] {
        assert!(
            matches!(err(200, JSON, body), SourceError::Malformed(_)),
            "{body}"
        );
    }
}

#[test]
fn oversized_bodies_are_refused() {
    let big = vec![b' '; MAX_BODY + 1];
    assert_eq!(
        parse_answer(200, JSON, None, &big),
        Err(SourceError::TooLarge(MAX_BODY))
    );
}

#[test]
fn values_parse_like_prometheus_writes_them() {
    assert_eq!(parse_value("1.5e-3"), Some(0.0015));
    assert_eq!(parse_value("-0"), Some(0.0));
    for bad in ["inf", "nan", "infinity", "0x10", "", " 1"] {
        assert_eq!(parse_value(bad), None, "{bad}");
    }
}
