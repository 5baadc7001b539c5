//! The replay's keys: one table gives the bindings, the help overlay and the hints. Replay has
//! its own keys (it records nothing, and `+`/`-` change the speed here, not the range), so it
//! does not take `[keys.*]` overrides from the config.

use crate::keymap::Chord;
use crossterm::event::{KeyEvent, KeyEventKind};

/// Everything a key does in a replay.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    PlayPause,
    Back,
    Forward,
    BackFar,
    ForwardFar,
    Start,
    End,
    Faster,
    Slower,
    Timeline,
    NextPanel,
    PrevPanel,
    Zoom,
    RangeShorter,
    RangeLonger,
    Help,
    Close,
    Quit,
}

/// A short seek, and a long one.
pub const STEP: chrono::Duration = chrono::Duration::minutes(1);
pub const FAR: chrono::Duration = chrono::Duration::minutes(10);

/// The bindings, in the order the help lists them: action, keys, what it does.
pub const TABLE: &[(Action, &[&str], &str)] = &[
    (Action::PlayPause, &["space", "p"], "play or pause"),
    (Action::Back, &["left", "h"], "back 1 minute"),
    (Action::Forward, &["right", "l"], "forward 1 minute"),
    (Action::BackFar, &["shift-left", "H"], "back 10 minutes"),
    (
        Action::ForwardFar,
        &["shift-right", "L"],
        "forward 10 minutes",
    ),
    (Action::Start, &["home", "g"], "to the first record"),
    (Action::End, &["end", "G"], "to the end of the incident"),
    (Action::Faster, &["+", "="], "faster"),
    (Action::Slower, &["-"], "slower"),
    (Action::Timeline, &["t"], "show or hide the timeline"),
    (Action::NextPanel, &["tab"], "select the next panel"),
    (
        Action::PrevPanel,
        &["shift-tab"],
        "select the previous panel",
    ),
    (
        Action::Zoom,
        &["enter", "z"],
        "zoom the selected panel, or back",
    ),
    (Action::RangeShorter, &["["], "show a shorter time range"),
    (Action::RangeLonger, &["]"], "show a longer time range"),
    (Action::Help, &["?", "f1"], "this help (any key closes it)"),
    (Action::Close, &["esc"], "close help, unzoom"),
    (Action::Quit, &["q", "ctrl-c"], "quit"),
];

/// The status bar's key hints.
pub const HINTS: &str = "space play  ←/→ 1m  H/L 10m  +/- speed  ? help  q quit";

/// The action of a key press, if any (releases are ignored).
pub fn action(ev: &KeyEvent) -> Option<Action> {
    if ev.kind == KeyEventKind::Release {
        return None;
    }
    let chord = Chord::from_event(ev);
    TABLE
        .iter()
        .find(|(_, keys, _)| {
            keys.iter()
                .any(|k| Chord::parse(k).is_ok_and(|c| c == chord))
        })
        .map(|(a, _, _)| *a)
}

/// The help overlay's lines: keys, then what they do.
pub fn help() -> Vec<(String, &'static str)> {
    TABLE
        .iter()
        .map(|(_, keys, what)| (keys.join(" "), *what))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crossterm::event::{KeyCode, KeyModifiers};

    #[test]
    fn every_key_parses_and_none_is_bound_twice() {
        let mut seen = Vec::new();
        for (_, keys, _) in TABLE {
            for k in *keys {
                let chord = Chord::parse(k).unwrap_or_else(|e| panic!("{k}: {e}"));
                assert!(!seen.contains(&chord), "{k} is bound twice");
                seen.push(chord);
            }
        }
    }

    #[test]
    fn terminal_events_map_to_actions() {
        let key = |code, mods| action(&KeyEvent::new(code, mods));
        assert_eq!(
            key(KeyCode::Char(' '), KeyModifiers::NONE),
            Some(Action::PlayPause)
        );
        // Terminals send a capital letter with Shift set.
        assert_eq!(
            key(KeyCode::Char('L'), KeyModifiers::SHIFT),
            Some(Action::ForwardFar)
        );
        assert_eq!(
            key(KeyCode::Left, KeyModifiers::SHIFT),
            Some(Action::BackFar)
        );
        assert_eq!(key(KeyCode::Left, KeyModifiers::NONE), Some(Action::Back));
        assert_eq!(
            key(KeyCode::Char('c'), KeyModifiers::CONTROL),
            Some(Action::Quit)
        );
        assert_eq!(key(KeyCode::Char('x'), KeyModifiers::NONE), None);
        let mut release = KeyEvent::new(KeyCode::Char('q'), KeyModifiers::NONE);
        release.kind = KeyEventKind::Release;
        assert_eq!(action(&release), None);
    }
}
