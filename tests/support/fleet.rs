//! A large fleet on one panel (issue 34, point 3): the pool saturation of `n` pods, landed on
//! the default dashboard's first panel as a refresh would land it. Ten pods spiked to 100% and
//! are recovering (90% now); `api-1234` has sat at 97% (past crit, 95%) the whole hour, so its
//! peak is below theirs: the chart draws the ten, and the panel is CRIT because of `api-1234`.
//! The other pods wave between 20% and 70%. Shared by the snapshot test and the bench.

use chrono::{DateTime, Utc};
use warroom::app::Model;
use warroom::config::Config;
use warroom::metrics::{Point, QueryAnswer, Series};
use warroom::theme::Theme;

/// The pod past crit whose peak is not among the highest.
pub const STUCK: &str = "api-1234";

/// The dashboard at `w`×`h` and `now`, its first panel holding the answer for `n` pods of
/// `points` points each over the last hour (the other panels are still loading).
pub fn model(now: DateTime<Utc>, w: u16, h: u16, n: usize, points: usize) -> Model {
    let mut m = Model::new(
        &Config::default().with_panels(warroom::metrics::presets::sim_panels()),
        Theme::builtin("default").unwrap(),
        "prometheus http://127.0.0.1:9090".into(),
        now,
    );
    m.width = w;
    m.height = h;
    let end = now.timestamp() as f64;
    let step = m.range_secs() / points as f64;
    let series = (0..n)
        .map(|i| {
            let pod = format!("api-{i:04}");
            let stuck = pod == STUCK;
            let spiking = i % (n / 10).max(1) == 7 && i / (n / 10).max(1) < 10;
            Series {
                labels: [("pod".to_string(), pod)].into(),
                points: (0..points)
                    .map(|k| {
                        let x = k as f64 / points as f64;
                        let v = if stuck {
                            0.97
                        } else if spiking {
                            // Up to 100% at mid-hour, down to 90% now.
                            1.0 - (x - 0.5).abs() * 0.2
                        } else {
                            0.45 + 0.25 * (x * 6.0 + i as f64).sin()
                        };
                        Point {
                            t: end - step * (points - 1 - k) as f64,
                            v,
                        }
                    })
                    .collect(),
            }
        })
        .collect();
    let window = m.window();
    let query = m.panels[0].config.query.clone();
    let p = &mut m.panels[0];
    let (ticket, _) = p
        .fetch
        .due(&query, &window, end)
        .expect("a first refresh is due");
    let answer = QueryAnswer {
        series,
        ..Default::default()
    };
    p.land(ticket, Ok(answer), now);
    m
}
