//! The console's [`Model`] as it was at the cursor: the panels hold their snapshot series up to
//! the cursor, the timeline the records up to it, `now` is the cursor. The console's own views
//! then draw it unchanged.

use super::cursor::{Cursor, speed_text};
use super::load::Loaded;
use crate::app::Model;
use crate::app::model::{IncidentHeader, ReplayBar};
use crate::app::panes::panel::Panel;
use crate::config::{BadWhen, Config, PanelConfig};
use crate::incident::snapshot::{PanelSnapshot, SnapshotWindow};
use crate::metrics::{Point, Series};
use crate::theme::Theme;
use chrono::{DateTime, Utc};

/// What a panel without a snapshot says, and how to get one.
pub fn no_snapshot(id: &crate::incident::IncidentId) -> String {
    format!(
        "no snapshot of this panel in the incident; `warroom export {id} --prometheus URL` or \
         `warroom record {id}` take them"
    )
}

/// Where one panel's replayed data comes from.
#[derive(Debug, Clone)]
enum Feed {
    /// The panel's snapshot: all its series, cut to the cursor when shown.
    Snapshot {
        series: Vec<Series>,
        window: SnapshotWindow,
        error: Option<String>,
    },
    /// No snapshot: the panel says why.
    Missing(String),
}

/// The replayed dashboard: the model the views draw, and each panel's whole series.
#[derive(Debug)]
pub struct Scene {
    pub model: Model,
    feeds: Vec<Feed>,
}

/// A panel's configuration as its snapshot recorded it (the dashboard as it was, not as the
/// config file says today).
pub fn panel_config(s: &PanelSnapshot) -> PanelConfig {
    PanelConfig {
        title: s.title.clone(),
        query: s.query.clone(),
        unit: s.unit(),
        warn: s.warn,
        crit: s.crit,
        bad_when: if s.bad_below() {
            BadWhen::Below
        } else {
            BadWhen::Above
        },
        legend: s.legend.clone(),
        signal: s.signal.clone(),
        shape: Default::default(),
    }
}

fn series_of(s: &PanelSnapshot) -> Vec<Series> {
    s.series
        .iter()
        .map(|s| Series {
            labels: s.labels.clone(),
            points: s
                .points
                .iter()
                .map(|p| Point { t: p[0], v: p[1] })
                .collect(),
        })
        .collect()
}

/// The panels whose threshold crossings `loaded` records, in the order they first crossed:
/// what a replay without snapshots or configured panels can name.
fn crossed_panels(loaded: &Loaded) -> Vec<PanelConfig> {
    let mut out: Vec<PanelConfig> = Vec::new();
    for r in &loaded.records {
        if let crate::incident::Event::ThresholdCrossed { panel, .. } = &r.kind
            && !out.iter().any(|p| &p.title == panel)
        {
            out.push(PanelConfig {
                title: panel.clone(),
                query: String::new(),
                unit: crate::config::Unit::default(),
                warn: None,
                crit: None,
                bad_when: BadWhen::Above,
                legend: None,
                signal: None,
                shape: Default::default(),
            });
        }
    }
    out
}

impl Scene {
    /// The scene of `loaded`, with the config's timezone, refresh and range, showing the
    /// snapshots' panels (or the config's, else those whose crossings the journal holds,
    /// saying they have no snapshot).
    pub fn new(config: &Config, theme: Theme, loaded: &Loaded, cursor: &Cursor) -> Scene {
        let mut model = Model::new(config, theme, String::new(), cursor.at());
        if loaded.snapshots.is_empty() && model.panels.is_empty() {
            model.panels = crossed_panels(loaded).into_iter().map(Panel::new).collect();
        }
        let feeds = if loaded.snapshots.is_empty() {
            let why = match &loaded.snapshot_problem {
                Some(p) => p.clone(),
                None => no_snapshot(&loaded.id),
            };
            vec![Feed::Missing(why); model.panels.len()]
        } else {
            model.panels = loaded
                .snapshots
                .iter()
                .map(|s| Panel::new(panel_config(s)))
                .collect();
            loaded
                .snapshots
                .iter()
                .map(|s| Feed::Snapshot {
                    series: series_of(s),
                    window: s.window,
                    error: s.error.clone(),
                })
                .collect()
        };
        model.incident = Some(IncidentHeader {
            id: loaded.id.to_string(),
            title: loaded.title.clone(),
        });
        if let Some(p) = &loaded.snapshot_problem {
            model.notify(format!("panel snapshots unreadable: {p}"), true, None);
        } else if loaded.snapshots.is_empty() {
            model.notify(
                format!(
                    "no panel snapshots: timeline only (`warroom export {}` takes them)",
                    loaded.id
                ),
                true,
                None,
            );
        } else if let Some(torn) = &loaded.torn {
            model.notify(
                format!(
                    "the journal's last line is incomplete (line {}, being written?); replayed \
                     up to it",
                    torn.line
                ),
                true,
                None,
            );
        }
        // The timeline is half of what a replay shows (and all of it without snapshots).
        model.show_timeline = true;
        let mut scene = Scene { model, feeds };
        scene.show(loaded, cursor);
        scene
    }

    /// Whether the panels have snapshots to show.
    pub fn has_snapshots(&self) -> bool {
        self.feeds
            .iter()
            .any(|f| matches!(f, Feed::Snapshot { .. }))
    }

    /// Puts the model at the cursor: `now`, the records up to it, each panel's series up to it
    /// and its honest state, and the status bar's replay line.
    pub fn show(&mut self, loaded: &Loaded, cursor: &Cursor) {
        let at = cursor.at();
        let m = &mut self.model;
        m.now = at;
        // The timeline grows and shrinks at its end, so a seek costs what it moves.
        let n = loaded.records_until(at);
        if m.timeline.len() > n {
            m.timeline.truncate(n);
        } else {
            let from = m.timeline.len();
            m.timeline.extend_from_slice(&loaded.records[from..n]);
        }
        for (panel, feed) in m.panels.iter_mut().zip(&self.feeds) {
            feed_panel(panel, feed, at);
        }
        let state = if cursor.playing() {
            "▶ playing"
        } else {
            "⏸ paused"
        };
        m.replay = Some(ReplayBar {
            state: format!("REPLAY {state} {}", speed_text(cursor.speed())),
            incident: format!("{} {}", loaded.id, loaded.title)
                .trim_end()
                .to_string(),
            hints: super::keys::HINTS.to_string(),
        });
        m.dirty = true;
    }
}

/// Sets a panel's series and state to what it showed at `at`.
fn feed_panel(panel: &mut Panel, feed: &Feed, at: DateTime<Utc>) {
    panel.latest.clear();
    panel.warnings.clear();
    match feed {
        Feed::Missing(why) => {
            panel.series.clear();
            panel.last_ok = None;
            panel.last_error = Some((at, why.clone()));
        }
        Feed::Snapshot {
            error: Some(e),
            series,
            ..
        } if series.is_empty() => {
            panel.series.clear();
            panel.last_ok = None;
            panel.last_error = Some((at, format!("the snapshot failed: {e}")));
        }
        Feed::Snapshot { series, window, .. } => {
            let t = at.timestamp_millis() as f64 / 1000.0;
            panel.series = series
                .iter()
                .map(|s| Series {
                    labels: s.labels.clone(),
                    points: s.points[..s.points.partition_point(|p| p.t <= t)].to_vec(),
                })
                .collect();
            panel.last_error = None;
            // Past the snapshot's end the panel ages honestly into "stale".
            panel.last_ok = Some(at.min(window.to));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::incident::snapshot::SnapshotSeries;
    use crate::incident::{Event, IncidentId, Record, Source};

    fn t(s: &str) -> DateTime<Utc> {
        s.parse().unwrap()
    }

    fn record(seq: u64, time: &str, text: &str) -> Record {
        Record {
            seq,
            time: t(time),
            source: Source::Operator,
            actor: "ana".into(),
            host: String::new(),
            kind: Event::note(text),
        }
    }

    fn snapshot(from: &str, to: &str) -> PanelSnapshot {
        let (from, to) = (t(from), t(to));
        let window = SnapshotWindow::covering(from, to, 60.0);
        let points = (0..)
            .map(|i| from.timestamp() as f64 + i as f64 * 60.0)
            .take_while(|x| *x <= to.timestamp() as f64)
            .map(|x| [x, (x - from.timestamp() as f64) / 60.0])
            .collect();
        PanelSnapshot {
            order: 0,
            slug: "queue-depth".into(),
            title: "Queue depth".into(),
            query: "sum(queue_depth)".into(),
            unit: "count".into(),
            warn: Some(10.0),
            crit: Some(20.0),
            bad_when: "above".into(),
            legend: None,
            signal: None,
            window,
            series: vec![SnapshotSeries {
                labels: Default::default(),
                points,
            }],
            error: None,
        }
    }

    fn loaded(snapshots: Vec<PanelSnapshot>) -> Loaded {
        let records = vec![
            record(1, "2026-11-29T14:00:00Z", "opened"),
            record(2, "2026-11-29T14:10:00Z", "pool full"),
            record(3, "2026-11-29T14:30:00Z", "rolled back"),
        ];
        Loaded::new(
            IncidentId::parse("2026-11-29-1").unwrap(),
            records,
            None,
            snapshots,
        )
    }

    fn scene(l: &Loaded) -> (Scene, Cursor) {
        let (start, end) = l.span().unwrap();
        let mut cursor = Cursor::new(start, end, 60.0);
        cursor.toggle();
        let theme = Theme::builtin("default").unwrap();
        (
            Scene::new(
                &Config::default().with_panels(crate::metrics::presets::sim_panels()),
                theme,
                l,
                &cursor,
            ),
            cursor,
        )
    }

    #[test]
    fn the_timeline_holds_the_records_up_to_the_cursor_both_ways() {
        let l = loaded(vec![snapshot(
            "2026-11-29T14:00:00Z",
            "2026-11-29T14:40:00Z",
        )]);
        let (mut s, mut c) = scene(&l);
        assert_eq!(c.end(), t("2026-11-29T14:40:00Z"), "the snapshot's end");
        assert_eq!(s.model.timeline.len(), 1);
        c.seek(chrono::Duration::minutes(15));
        s.show(&l, &c);
        assert_eq!(s.model.timeline, l.records[..2]);
        c.to_end();
        s.show(&l, &c);
        assert_eq!(s.model.timeline, l.records);
        c.seek(chrono::Duration::minutes(-35));
        s.show(&l, &c);
        assert_eq!(s.model.timeline, l.records[..1]);
        assert_eq!(s.model.now, t("2026-11-29T14:05:00Z"));
    }

    #[test]
    fn panels_show_their_snapshot_up_to_the_cursor_then_age() {
        let l = loaded(vec![snapshot(
            "2026-11-29T14:00:00Z",
            "2026-11-29T14:20:00Z",
        )]);
        let (mut s, mut c) = scene(&l);
        assert_eq!(
            s.model.panels.len(),
            1,
            "the snapshots' panels, not the config's"
        );
        assert_eq!(s.model.panels[0].config.title, "Queue depth");
        c.seek(chrono::Duration::seconds(5 * 60 + 30));
        s.show(&l, &c);
        let p = &s.model.panels[0];
        let last = p.series[0].points.last().unwrap();
        assert_eq!(last.t, t("2026-11-29T14:05:00Z").timestamp() as f64);
        assert_eq!(p.current(), Some(5.0));
        assert_eq!(s.model.panel_state(0), crate::app::PanelState::Fresh);
        // Past the snapshot's end: the last value, stale.
        c.to_end();
        s.show(&l, &c);
        assert_eq!(s.model.panels[0].current(), Some(20.0));
        assert!(matches!(
            s.model.panel_state(0),
            crate::app::PanelState::Stale { age_secs: 600 }
        ));
    }

    #[test]
    fn without_snapshots_the_panels_say_so_and_the_timeline_still_plays() {
        let l = loaded(vec![]);
        let (mut s, mut c) = scene(&l);
        assert!(!s.has_snapshots());
        assert!(s.model.show_timeline);
        c.to_end();
        s.show(&l, &c);
        assert_eq!(s.model.timeline.len(), 3);
        assert!(matches!(
            s.model.panel_state(0),
            crate::app::PanelState::Failing { reason } if reason.contains("warroom export")
        ));
        let notice = s.model.notice.as_ref().unwrap();
        assert!(notice.text.contains("no panel snapshots"), "{notice:?}");
        let bar = s.model.replay.as_ref().unwrap();
        assert_eq!(bar.state, "REPLAY ⏸ paused 60×");
        assert_eq!(bar.incident, "2026-11-29-1", "no title was recorded");
    }
}
