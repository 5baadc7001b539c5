//! A replay's state and its `update`: keys, the passing of wall time, resizes and signals
//! change the cursor and the view. No I/O, so it is tested with simulated keys.

use super::cursor::Cursor;
use super::keys::{self, Action};
use super::load::Loaded;
use super::scene::Scene;
use crate::app::Model;
use crate::app::model::{Quit, RANGES};
use crate::config::Config;
use crate::theme::Theme;
use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use std::time::Duration;

/// What reaches a replay.
#[derive(Debug, Clone)]
pub enum Msg {
    Key(KeyEvent),
    /// Wall time passed since the last tick.
    Tick(Duration),
    Resize {
        width: u16,
        height: u16,
    },
    /// A signal asked the replay to end.
    Interrupted(&'static str),
}

/// Everything a replay holds.
#[derive(Debug)]
pub struct Replay {
    pub loaded: Loaded,
    pub cursor: Cursor,
    pub scene: Scene,
    /// The replay's help overlay is shown.
    pub help: bool,
    pub quit: Option<Quit>,
}

impl Replay {
    /// A replay of `loaded` at its first record, playing at `speed`.
    pub fn new(config: &Config, theme: Theme, loaded: Loaded, speed: f64) -> Replay {
        let (start, end) = loaded.span().unwrap_or_else(|| {
            let now = chrono::Utc::now();
            (now, now)
        });
        let cursor = Cursor::new(start, end, speed);
        let scene = Scene::new(config, theme, &loaded, &cursor);
        Replay {
            loaded,
            cursor,
            scene,
            help: false,
            quit: None,
        }
    }

    /// The model the views draw.
    pub fn model(&self) -> &Model {
        &self.scene.model
    }

    /// Whether something changed since the last frame.
    pub fn dirty(&self) -> bool {
        self.scene.model.dirty
    }
}

/// Apply one message.
pub fn update(r: &mut Replay, msg: Msg) {
    let before = r.cursor.clone();
    match msg {
        Msg::Tick(wall) => {
            r.cursor.advance(wall);
        }
        Msg::Resize { width, height } => {
            r.scene.model.width = width;
            r.scene.model.height = height;
            r.scene.model.dirty = true;
        }
        Msg::Interrupted(signal) => r.quit = Some(Quit::Signal(signal)),
        Msg::Key(ev) if r.help => {
            if ev.kind != KeyEventKind::Release {
                // Any key closes the help; Ctrl-C still quits from there.
                r.help = false;
                r.scene.model.dirty = true;
                if ev.code == KeyCode::Char('c') && ev.modifiers.contains(KeyModifiers::CONTROL) {
                    r.quit = Some(Quit::User);
                }
            }
        }
        Msg::Key(ev) => {
            if let Some(action) = keys::action(&ev) {
                act(r, action);
            }
        }
    }
    if r.cursor != before {
        r.scene.show(&r.loaded, &r.cursor);
    }
}

fn act(r: &mut Replay, action: Action) {
    let m = &mut r.scene.model;
    let c = &mut r.cursor;
    match action {
        Action::PlayPause => c.toggle(),
        Action::Back => c.seek(-keys::STEP),
        Action::Forward => c.seek(keys::STEP),
        Action::BackFar => c.seek(-keys::FAR),
        Action::ForwardFar => c.seek(keys::FAR),
        Action::Start => c.home(),
        Action::End => c.to_end(),
        Action::Faster => c.faster(),
        Action::Slower => c.slower(),
        Action::Timeline => m.show_timeline = !m.show_timeline,
        Action::NextPanel if !m.panels.is_empty() => {
            m.selected = (m.selected + 1) % m.panels.len();
        }
        Action::PrevPanel if !m.panels.is_empty() => {
            m.selected = (m.selected + m.panels.len() - 1) % m.panels.len();
        }
        Action::Zoom => m.zoomed = !m.zoomed,
        Action::RangeShorter => m.range_idx = m.range_idx.saturating_sub(1),
        Action::RangeLonger => m.range_idx = (m.range_idx + 1).min(RANGES.len() - 1),
        Action::Help => r.help = true,
        Action::Close => m.zoomed = false,
        Action::Quit => r.quit = Some(Quit::User),
        Action::NextPanel | Action::PrevPanel => {}
    }
    m.dirty = true;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::incident::{Event, IncidentId, Record, Source};
    use chrono::{DateTime, Utc};

    fn t(s: &str) -> DateTime<Utc> {
        s.parse().unwrap()
    }

    fn replay() -> Replay {
        let records = (0..=12)
            .map(|i| Record {
                seq: i + 1,
                time: t("2026-11-29T14:00:00Z") + chrono::Duration::minutes(i as i64 * 10),
                source: Source::Operator,
                actor: "ana".into(),
                host: String::new(),
                kind: Event::note(format!("note {i}")),
            })
            .collect();
        let loaded = Loaded::new(
            IncidentId::parse("2026-11-29-1").unwrap(),
            records,
            None,
            vec![],
        );
        let theme = Theme::builtin("default").unwrap();
        Replay::new(
            &Config::default().with_panels(crate::metrics::presets::sim_panels()),
            theme,
            loaded,
            60.0,
        )
    }

    fn press(r: &mut Replay, code: KeyCode) {
        update(r, Msg::Key(KeyEvent::new(code, KeyModifiers::NONE)));
    }

    #[test]
    fn keys_pause_seek_and_jump() {
        let mut r = replay();
        assert!(r.cursor.playing(), "a replay starts playing");
        update(&mut r, Msg::Tick(Duration::from_secs(30)));
        assert_eq!(r.model().now, t("2026-11-29T14:30:00Z"));
        assert_eq!(r.model().timeline.len(), 4);
        press(&mut r, KeyCode::Char(' '));
        assert!(!r.cursor.playing());
        update(&mut r, Msg::Tick(Duration::from_secs(30)));
        assert_eq!(r.model().now, t("2026-11-29T14:30:00Z"), "paused");
        press(&mut r, KeyCode::Right);
        press(&mut r, KeyCode::Char('L'));
        assert_eq!(r.model().now, t("2026-11-29T14:41:00Z"));
        assert_eq!(r.model().timeline.len(), 5);
        press(&mut r, KeyCode::Char('h'));
        press(&mut r, KeyCode::Char('H'));
        assert_eq!(r.model().now, t("2026-11-29T14:30:00Z"));
        press(&mut r, KeyCode::End);
        assert_eq!(r.model().now, t("2026-11-29T16:00:00Z"));
        assert_eq!(r.model().timeline.len(), 13);
        press(&mut r, KeyCode::Home);
        assert_eq!(r.model().timeline.len(), 1);
        let bar = r.model().replay.clone().unwrap();
        assert!(bar.state.contains("⏸ paused 60×"), "{bar:?}");
    }

    #[test]
    fn speed_help_timeline_and_quit() {
        let mut r = replay();
        press(&mut r, KeyCode::Char('+'));
        assert_eq!(r.cursor.speed(), 120.0);
        assert!(r.model().replay.as_ref().unwrap().state.contains("120×"));
        press(&mut r, KeyCode::Char('-'));
        press(&mut r, KeyCode::Char('-'));
        assert_eq!(r.cursor.speed(), 30.0);
        assert!(r.model().show_timeline);
        press(&mut r, KeyCode::Char('t'));
        assert!(!r.model().show_timeline);
        press(&mut r, KeyCode::Char('?'));
        assert!(r.help);
        press(&mut r, KeyCode::Char('q'));
        assert!(!r.help && r.quit.is_none(), "q closes the help first");
        press(&mut r, KeyCode::Char('q'));
        assert_eq!(r.quit, Some(Quit::User));
        let mut r = replay();
        update(&mut r, Msg::Interrupted("SIGTERM"));
        assert_eq!(r.quit, Some(Quit::Signal("SIGTERM")));
    }

    #[test]
    fn playing_to_the_end_pauses_there() {
        let mut r = replay();
        for _ in 0..1000 {
            update(&mut r, Msg::Tick(Duration::from_millis(250)));
        }
        assert!(!r.cursor.playing());
        assert_eq!(r.model().now, r.cursor.end());
        assert!(r.model().replay.as_ref().unwrap().state.contains("paused"));
    }
}
