//! The figures the draft reads from the panel snapshots, in the facts' own types, and the list
//! of those that could not be read and why.

use super::facts::{Latency, Moment, Peak, Signals, Swing};
use super::signals::{self, Role};
use super::words;
use crate::incident::snapshot::{PanelSnapshot, SnapshotSeries};
use chrono::{DateTime, Duration, Utc};
use chrono_tz::Tz;

/// How far before the impact the "before" latency is read.
const BEFORE: Duration = Duration::minutes(15);

fn secs(at: DateTime<Utc>) -> f64 {
    at.timestamp_millis() as f64 / 1000.0
}

fn from_secs(t: f64) -> DateTime<Utc> {
    DateTime::from_timestamp_millis((t * 1000.0).round() as i64).unwrap_or_default()
}

/// How long a level must hold to be reported as the peak's sustained level.
pub const SUSTAINED: f64 = 120.0;
/// How many times a signal must go past its warning threshold, the level it held short of it,
/// to be said to have swung.
pub const SWINGS: usize = 3;

fn peak_of(
    snap: &PanelSnapshot,
    window: (Option<f64>, Option<f64>),
    tz: Tz,
    text: impl Fn(f64) -> String,
) -> Option<Peak> {
    let (value, t) = signals::peak(snap, window.0, window.1)?;
    let (from, to) = (window.0.unwrap_or(f64::MIN), window.1.unwrap_or(f64::MAX));
    let sustained = signals::sustained(snap, from, to, SUSTAINED);
    let last = signals::instants(snap, from, to).last().copied();
    let warn = snap.warn.or(snap.crit);
    let stayed = match (sustained, last, warn) {
        (Some(s), Some(l), Some(w)) => held_to_the_end(snap, s, (l - SUSTAINED).max(from), l, w),
        _ => false,
    };
    let swing = match (sustained, warn) {
        (Some(s), Some(w)) if !signals::is_bad(snap, s, w) => swing(snap, from, to, w, &text),
        _ => None,
    };
    Some(Peak {
        panel: snap.title.clone(),
        value,
        text: text(value),
        at: Moment::new(from_secs(t), tz),
        sustained_text: sustained.map(&text),
        sustained,
        stayed,
        swing,
    })
}

/// The swing of `snap` within `from..to` when it went past its warning threshold `w` (from
/// back under it) [`SWINGS`] times or more, with its least bad reading.
fn swing(
    snap: &PanelSnapshot,
    from: f64,
    to: f64,
    w: f64,
    text: impl Fn(f64) -> String,
) -> Option<Swing> {
    let readings: Vec<f64> = (signals::instants(snap, from, to).iter())
        .filter_map(|t| signals::worst_at(snap, *t))
        .collect();
    let mut times = 0;
    let mut was_bad = false;
    for v in &readings {
        let bad = signals::is_bad(snap, *v, w);
        times += usize::from(bad && !was_bad);
        was_bad = bad;
    }
    let least = |a: f64, b: f64| if snap.bad_below() { a.max(b) } else { a.min(b) };
    let low = readings.iter().copied().reduce(least)?;
    (times >= SWINGS).then(|| Swing {
        low_text: text(low),
        times,
    })
}

/// Whether `snap` never came back from its sustained level `s`: every reading of its last
/// [`SUSTAINED`] seconds (`from`..`last`) past the warning threshold `w` and at `s` or beyond it
/// (5 % short of it at most). Beyond it counts: a signal that rose further at the end still
/// stayed; one caught at the top of a swing, back under `w` within those minutes, did not.
fn held_to_the_end(snap: &PanelSnapshot, s: f64, from: f64, last: f64, w: f64) -> bool {
    let tolerance = 0.05 * s.abs().max(1e-9);
    let level = if snap.bad_below() {
        s + tolerance
    } else {
        s - tolerance
    };
    signals::instants(snap, from, last).iter().all(|t| {
        signals::worst_at(snap, *t)
            .is_some_and(|v| signals::is_bad(snap, v, w) && signals::is_bad(snap, v, level))
    })
}

/// `series` with the mean wait of `wait` at each of its instants added (instants where the wait
/// is not known are left out).
fn waited(series: &SnapshotSeries, wait: &PanelSnapshot) -> SnapshotSeries {
    SnapshotSeries {
        labels: series.labels.clone(),
        points: (series.points.iter())
            .filter_map(|p| signals::worst_at(wait, p[0]).map(|w| [p[0], p[1] + w]))
            .collect(),
    }
}

/// The figures over the impact window (`start`..`end`; the whole snapshot where they are not
/// known) from the snapshots with data, and what is missing.
pub fn compute(
    snaps: &[PanelSnapshot],
    with_data: &[&PanelSnapshot],
    start: Option<DateTime<Utc>>,
    end: Option<DateTime<Utc>>,
    tz: Tz,
) -> (Signals, Vec<String>) {
    let role = |r: Role| signals::pick(with_data.iter().copied(), r);
    let error_panel = role(Role::ErrorRatio);
    let window = (start.map(secs), end.map(secs));
    let mut missing = Vec::new();
    let mut need = |what: &str, found: bool| {
        if !found {
            missing.push(what.to_string());
        }
    };
    let mut signals = Signals {
        error_ratio: error_panel.and_then(|s| peak_of(s, window, tz, words::percent)),
        pool_saturation: role(Role::PoolSaturation)
            .and_then(|s| peak_of(s, window, tz, words::percent)),
        retry_amplification: role(Role::RetryAmplification)
            .and_then(|s| peak_of(s, window, tz, |v| words::number(v, 1))),
        ..Signals::default()
    };
    if let Some(lat) = role(Role::Latency)
        && let Some((series, statistic)) = signals::central_series(lat)
    {
        // A mean that leaves the wait for a server out, and the mean wait over the same
        // queries: together, the mean the clients saw.
        let wait = (statistic == signals::Statistic::Mean)
            .then(|| signals::client_wait(with_data.iter().copied()))
            .flatten();
        let with_wait = wait.map(|w| waited(series, w));
        let series = with_wait.as_ref().unwrap_or(series);
        let first = series.points.first().map_or(0.0, |p| p[0]);
        let (b_from, b_to) = match start {
            Some(s) => (secs(s - BEFORE), secs(s)),
            None => (first, first + BEFORE.num_seconds() as f64),
        };
        let before = signals::median_between(series, b_from, b_to);
        let peak = signals::series_peak(
            series,
            window.0.unwrap_or(f64::MIN),
            window.1.unwrap_or(f64::MAX),
        );
        if let (Some(before), Some((peak, t))) = (before, peak) {
            signals.latency = Some(Latency {
                panel: lat.title.clone(),
                with_wait: wait.map(|w| w.title.clone()),
                statistic: statistic.word().to_string(),
                before,
                before_text: words::seconds(before),
                peak,
                peak_text: words::seconds(peak),
                at: Moment::new(from_secs(t), tz),
            });
        }
    }
    if snaps.is_empty() {
        need(
            "no panel snapshots: the peak error ratio, pool saturation, latency and retry \
             amplification and the charts are missing",
            false,
        );
    } else {
        need(
            "peak error ratio (no snapshot of an error-ratio panel with data)",
            signals.error_ratio.is_some(),
        );
        need(
            "peak pool saturation (no snapshot of a pool-saturation panel with data)",
            signals.pool_saturation.is_some(),
        );
        need(
            "latency before and at the peak (no latency panel with data before and during the \
             impact)",
            signals.latency.is_some(),
        );
        need(
            "peak retry amplification (no snapshot of a retry-amplification panel with data)",
            signals.retry_amplification.is_some(),
        );
        for s in snaps.iter().filter(|s| s.error.is_some()) {
            missing.push(format!(
                "panel \"{}\": its query failed when the snapshot was taken ({})",
                s.title,
                s.error.as_deref().unwrap_or_default()
            ));
        }
    }
    (signals, missing)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::incident::snapshot::SnapshotWindow;

    fn snap(title: &str, signal: &str, query: &str, points: Vec<[f64; 2]>) -> PanelSnapshot {
        PanelSnapshot {
            order: 0,
            slug: crate::incident::snapshot::slug(title),
            title: title.into(),
            query: query.into(),
            unit: "seconds".into(),
            warn: Some(0.1),
            crit: Some(1.0),
            bad_when: "above".into(),
            legend: None,
            signal: Some(signal.into()),
            window: SnapshotWindow {
                from: DateTime::from_timestamp(0, 0).unwrap(),
                to: DateTime::from_timestamp(2000, 0).unwrap(),
                step_s: 10.0,
            },
            series: vec![SnapshotSeries {
                labels: Default::default(),
                points,
            }],
            error: None,
        }
    }

    /// Held at 50 % for seven minutes, then higher still when the window ends: it rose and
    /// stayed, though its last reading is 20 % above its sustained level. With one reading
    /// back under its warning threshold in the last two minutes, it did not stay.
    #[test]
    fn a_signal_still_at_or_beyond_its_level_at_the_end_stayed() {
        let reading = |i: usize| match i {
            0..10 => 0.05,
            10..50 => 0.5,
            _ => 0.6,
        };
        let points: Vec<[f64; 2]> = (0..60).map(|i| [i as f64 * 10.0, reading(i)]).collect();
        let s = snap("Error ratio", "error-ratio", "q", points.clone());
        let p = peak_of(&s, (Some(0.0), Some(590.0)), chrono_tz::UTC, words::percent).unwrap();
        assert_eq!((p.sustained, p.value, p.stayed), (Some(0.5), 0.6, true));
        let mut dipped = points;
        dipped[55][1] = 0.05;
        let s = snap("Error ratio", "error-ratio", "q", dipped);
        let p = peak_of(&s, (Some(0.0), Some(590.0)), chrono_tz::UTC, words::percent).unwrap();
        assert!(!p.stayed, "back under its warning threshold at 550 s");
    }

    /// PgBouncer's query time "wait excluded" stays at 0.1 s while the clients wait 0.5 s more
    /// per query: the draft's latency is the mean the clients saw, 0.6 s, named a mean.
    #[test]
    fn a_mean_that_leaves_the_wait_out_gets_the_wait_back() {
        let t = |i: usize| i as f64 * 10.0;
        let server: Vec<[f64; 2]> = (0..200).map(|i| [t(i), 0.1]).collect();
        let wait: Vec<[f64; 2]> = (0..200)
            .map(|i| [t(i), if i >= 100 { 0.5 } else { 0.0 }])
            .collect();
        let q = "sum(rate(q_seconds_total[5m])) / sum(rate(q_total[5m]))";
        let snaps = [
            snap(
                "Mean query time (wait excluded)",
                "query-latency",
                q,
                server,
            ),
            snap("Mean wait per query", "mean-client-wait", q, wait),
        ];
        let with_data: Vec<&PanelSnapshot> = snaps.iter().collect();
        let start = DateTime::from_timestamp(1000, 0);
        let (signals, _) = compute(&snaps, &with_data, start, None, chrono_tz::UTC);
        let l = signals.latency.expect("a latency");
        assert_eq!(l.statistic, "mean");
        assert_eq!(l.with_wait.as_deref(), Some("Mean wait per query"));
        assert!(
            (l.before - 0.1).abs() < 1e-9 && (l.peak - 0.6).abs() < 1e-9,
            "{l:?}"
        );
        let said = crate::postmortem::phrases::latency_rose(&l).unwrap();
        assert!(said.starts_with("Mean query latency, the wait for a server included, rose"));
    }
}
