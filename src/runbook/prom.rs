//! A minimal Prometheus instant-query client for gates and target queries in the headless CLI.
//! The dashboard's full client (`metrics::prometheus`) replaces it once merged; both implement
//! [`Source`], which is all the executor sees.

use crate::metrics::{
    InstantQuery, Labels, Point, QueryAnswer, RangeQuery, Series, Source, SourceError,
};
use futures::FutureExt;
use futures::future::BoxFuture;
use std::time::Duration;

/// Largest body accepted.
const MAX_BODY: usize = 8 * 1024 * 1024;

/// Instant queries against `base` (e.g. `http://127.0.0.1:9090`), 10 s timeout each.
#[derive(Debug, Clone)]
pub struct InstantClient {
    base: String,
    client: reqwest::Client,
    timeout: Duration,
}

impl InstantClient {
    pub fn new(base: &str) -> Result<Self, reqwest::Error> {
        Ok(InstantClient {
            base: base.trim_end_matches('/').to_string(),
            client: reqwest::Client::builder()
                .connect_timeout(Duration::from_secs(5))
                .build()?,
            timeout: Duration::from_secs(10),
        })
    }
}

/// Parse an instant-query response body (vector or scalar).
pub fn parse_instant(body: &[u8]) -> Result<QueryAnswer, SourceError> {
    let v: serde_json::Value =
        serde_json::from_slice(body).map_err(|e| SourceError::Malformed(e.to_string()))?;
    if v["status"] != "success" {
        return Err(SourceError::Api {
            error_type: crate::sanitize::line(v["errorType"].as_str().unwrap_or("unknown"))
                .into_owned(),
            message: crate::sanitize::line(v["error"].as_str().unwrap_or("")).into_owned(),
        });
    }
    let data = &v["data"];
    let num = |p: &serde_json::Value| -> Option<Point> {
        let t = p.get(0)?.as_f64()?;
        let s = p.get(1)?.as_str()?;
        let v = match s {
            "NaN" => f64::NAN,
            "+Inf" | "Inf" => f64::INFINITY,
            "-Inf" => f64::NEG_INFINITY,
            s => s.parse().ok()?,
        };
        Some(Point { t, v })
    };
    let mut series = Vec::new();
    match data["resultType"].as_str() {
        Some("vector") => {
            for r in data["result"].as_array().into_iter().flatten() {
                let mut labels = Labels::new();
                for (k, val) in r["metric"].as_object().into_iter().flatten() {
                    labels.insert(
                        crate::sanitize::line(k).into_owned(),
                        crate::sanitize::line(val.as_str().unwrap_or("")).into_owned(),
                    );
                }
                let p =
                    num(&r["value"]).ok_or_else(|| SourceError::Malformed("bad sample".into()))?;
                series.push(Series {
                    labels,
                    points: vec![p],
                });
            }
        }
        Some("scalar") => {
            let p =
                num(&data["result"]).ok_or_else(|| SourceError::Malformed("bad scalar".into()))?;
            series.push(Series {
                labels: Labels::new(),
                points: vec![p],
            });
        }
        other => {
            return Err(SourceError::Malformed(format!(
                "expected a vector or scalar, got {}",
                crate::sanitize::line(other.unwrap_or("nothing"))
            )));
        }
    }
    let warnings = v["warnings"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|w| w.as_str().map(|w| crate::sanitize::line(w).into_owned()))
        .collect();
    // Fields the dashboard adds to `QueryAnswer` keep their defaults here.
    #[allow(clippy::needless_update)]
    Ok(QueryAnswer {
        series,
        warnings,
        bytes: body.len(),
        ..Default::default()
    })
}

impl Source for InstantClient {
    fn describe(&self) -> String {
        format!("prometheus {}", self.base)
    }

    fn query_range(&self, _q: RangeQuery) -> BoxFuture<'static, Result<QueryAnswer, SourceError>> {
        async {
            Err(SourceError::Malformed(
                "range queries are not used by runbooks".into(),
            ))
        }
        .boxed()
    }

    fn query(&self, q: InstantQuery) -> BoxFuture<'static, Result<QueryAnswer, SourceError>> {
        let req = self
            .client
            .get(format!("{}/api/v1/query", self.base))
            .query(&[("query", q.query.as_str())])
            .timeout(self.timeout);
        let timeout = self.timeout;
        async move {
            let resp = req.send().await.map_err(|e| {
                if e.is_timeout() {
                    SourceError::Timeout(timeout)
                } else {
                    SourceError::Unreachable(crate::sanitize::line(&e.to_string()).into_owned())
                }
            })?;
            let status = resp.status().as_u16();
            if status == 429 {
                return Err(SourceError::RateLimited { retry_after: None });
            }
            let body = resp
                .bytes()
                .await
                .map_err(|e| SourceError::Malformed(e.to_string()))?;
            if body.len() > MAX_BODY {
                return Err(SourceError::TooLarge(MAX_BODY));
            }
            match parse_instant(&body) {
                Err(SourceError::Malformed(_)) if !(200..300).contains(&status) => {
                    Err(SourceError::Http {
                        status,
                        summary: crate::sanitize::line(&String::from_utf8_lossy(
                            &body[..body.len().min(200)],
                        ))
                        .into_owned(),
                    })
                }
                r => r,
            }
        }
        .boxed()
    }

    fn ready(&self) -> BoxFuture<'static, Result<(), SourceError>> {
        let req = self
            .client
            .get(format!("{}/-/ready", self.base))
            .timeout(self.timeout);
        async move {
            req.send()
                .await
                .map_err(|e| SourceError::Unreachable(e.to_string()))?;
            Ok(())
        }
        .boxed()
    }
}
