//! Key bindings per mode: defaults, overrides from `[keys.MODE]` in warroom.toml, duplicate
//! checks, and the help overlay's text, all from one table.
//!
//! Default keys avoid tmux prefixes, flow control and terminal aliases (Ctrl-A, Ctrl-B, Ctrl-S,
//! Ctrl-Q, Ctrl-H, Ctrl-I, Ctrl-M, Ctrl-[) and Alt.

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use std::collections::BTreeMap;
use std::fmt;

/// Where keys are interpreted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Mode {
    /// The panel grid, and a zoomed panel.
    Dashboard,
    /// The help overlay.
    Help,
    /// Typing a note for the timeline: keys that are not bound here are text.
    Note,
    /// The runbook pane: the list, a plan, a run's progress.
    Runbooks,
    /// A dialog over everything else (typed confirmation, a choice, a form): keys that are not
    /// bound here are text for the focused field.
    Dialog,
}

impl Mode {
    pub const ALL: [Mode; 5] = [
        Mode::Dashboard,
        Mode::Help,
        Mode::Note,
        Mode::Runbooks,
        Mode::Dialog,
    ];

    /// The name used in `[keys.NAME]`.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Dashboard => "dashboard",
            Mode::Help => "help",
            Mode::Note => "note",
            Mode::Runbooks => "runbooks",
            Mode::Dialog => "dialog",
        }
    }
}

/// Everything a key can do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Action {
    Quit,
    Help,
    Close,
    Zoom,
    NextPanel,
    PrevPanel,
    Up,
    Down,
    RangeShorter,
    RangeLonger,
    Pause,
    Refresh,
    Timeline,
    Note,
    Submit,
    Runbooks,
    Status,
    Severity,
    ActionItem,
    ImpactStart,
    ImpactEnd,
    Correct,
    EditorNote,
    Export,
    TimelineFilter,
    TimelineOrder,
    JumpToPanel,
    Run,
    PauseRun,
    AbortRun,
    NextField,
    PrevField,
    Open,
    Changes,
    Publish,
}

impl Action {
    pub const ALL: [Action; 35] = [
        Action::Quit,
        Action::Help,
        Action::Close,
        Action::Zoom,
        Action::NextPanel,
        Action::PrevPanel,
        Action::Up,
        Action::Down,
        Action::RangeShorter,
        Action::RangeLonger,
        Action::Pause,
        Action::Refresh,
        Action::Timeline,
        Action::Note,
        Action::Submit,
        Action::Runbooks,
        Action::Status,
        Action::Severity,
        Action::ActionItem,
        Action::ImpactStart,
        Action::ImpactEnd,
        Action::Correct,
        Action::EditorNote,
        Action::Export,
        Action::TimelineFilter,
        Action::TimelineOrder,
        Action::JumpToPanel,
        Action::Run,
        Action::PauseRun,
        Action::AbortRun,
        Action::NextField,
        Action::PrevField,
        Action::Open,
        Action::Changes,
        Action::Publish,
    ];

    /// The name used in the config file.
    pub fn name(self) -> &'static str {
        match self {
            Action::Quit => "quit",
            Action::Help => "help",
            Action::Close => "close",
            Action::Zoom => "zoom",
            Action::NextPanel => "next_panel",
            Action::PrevPanel => "prev_panel",
            Action::Up => "up",
            Action::Down => "down",
            Action::RangeShorter => "range_shorter",
            Action::RangeLonger => "range_longer",
            Action::Pause => "pause",
            Action::Refresh => "refresh",
            Action::Timeline => "timeline",
            Action::Note => "note",
            Action::Submit => "submit",
            Action::Runbooks => "runbooks",
            Action::Status => "status",
            Action::Severity => "severity",
            Action::ActionItem => "action_item",
            Action::ImpactStart => "impact_start",
            Action::ImpactEnd => "impact_end",
            Action::Correct => "correct",
            Action::EditorNote => "editor_note",
            Action::Export => "export",
            Action::TimelineFilter => "timeline_filter",
            Action::TimelineOrder => "timeline_order",
            Action::JumpToPanel => "jump_to_panel",
            Action::Run => "run",
            Action::PauseRun => "pause_run",
            Action::AbortRun => "abort_run",
            Action::NextField => "next_field",
            Action::PrevField => "prev_field",
            Action::Open => "open",
            Action::Changes => "changes",
            Action::Publish => "publish",
        }
    }

    /// What it does, for the help overlay.
    pub fn describe(self) -> &'static str {
        match self {
            Action::Quit => "quit warroom (recording stops)",
            Action::Help => "show or hide this help",
            Action::Close => "close the overlay or leave the zoomed panel",
            Action::Zoom => "zoom the selected panel to full screen, or back",
            Action::NextPanel => "select the next panel",
            Action::PrevPanel => "select the previous panel",
            Action::Up => "select the panel above",
            Action::Down => "select the panel below",
            Action::RangeShorter => "show a shorter time range",
            Action::RangeLonger => "show a longer time range",
            Action::Pause => "pause or resume refreshing",
            Action::Refresh => "refresh every panel now",
            Action::Timeline => "show or hide the incident timeline",
            Action::Note => "add a note to the timeline (#tags kept)",
            Action::Submit => "record what was typed",
            Action::Runbooks => "open the runbook pane (plan, run, progress)",
            Action::Status => "set the incident's status",
            Action::Severity => "set the incident's severity",
            Action::ActionItem => "add an action item (owner, priority, due)",
            Action::ImpactStart => "mark when the impact started",
            Action::ImpactEnd => "mark when the impact ended",
            Action::Correct => "correct or retract a timeline record",
            Action::EditorNote => "write a note in $EDITOR",
            Action::Export => "export the postmortem draft",
            Action::TimelineFilter => "timeline: show one source, then the next",
            Action::TimelineOrder => "timeline: newest or oldest first",
            Action::JumpToPanel => "go to the newest crossing's panel; again: older",
            Action::Run => "run the runbook (after typing its name)",
            Action::PauseRun => "pause or resume the run (between actions)",
            Action::AbortRun => "abort the run (between actions)",
            Action::NextField => "next field",
            Action::PrevField => "previous field",
            Action::Open => "show the selected runbook's plan",
            Action::Changes => "show or hide GitHub changes (deploys, merges)",
            Action::Publish => "publish the postmortem to GitHub (asks first)",
        }
    }

    /// What it does in `mode`, for the help overlay (moving and closing mean different things
    /// in different places).
    pub fn describe_in(self, mode: Mode) -> &'static str {
        match (mode, self) {
            (Mode::Help, Action::Up) | (Mode::Help, Action::Down) => "scroll this help",
            (Mode::Help, Action::Close) => "close this help",
            (Mode::Runbooks, Action::Up) => "select the runbook above",
            (Mode::Runbooks, Action::Down) => "select the runbook below",
            (Mode::Runbooks, Action::Close) => "back to the list, or close the pane",
            (Mode::Dialog, Action::Submit) => "answer (a typed word must match exactly)",
            (Mode::Dialog, Action::Close) => "cancel (the answer is no)",
            (Mode::Dialog, Action::NextField) => "next field or choice",
            (Mode::Dialog, Action::PrevField) => "previous field or choice",
            _ => self.describe(),
        }
    }

    fn by_name(name: &str) -> Option<Action> {
        Action::ALL.into_iter().find(|a| a.name() == name)
    }
}

/// One key with its modifiers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Chord {
    pub code: KeyCode,
    pub mods: KeyModifiers,
}

impl Chord {
    /// Normalise a terminal key event: Shift is part of a printable character, not a modifier.
    pub fn from_event(ev: &KeyEvent) -> Chord {
        let mut mods =
            ev.modifiers & (KeyModifiers::CONTROL | KeyModifiers::ALT | KeyModifiers::SHIFT);
        if matches!(ev.code, KeyCode::Char(_) | KeyCode::BackTab) {
            mods.remove(KeyModifiers::SHIFT);
        }
        let code = match ev.code {
            KeyCode::Char(c) if mods.contains(KeyModifiers::CONTROL) => {
                KeyCode::Char(c.to_ascii_lowercase())
            }
            c => c,
        };
        Chord { code, mods }
    }

    /// Parse `q`, `?`, `ctrl-c`, `shift-tab`, `enter`, `esc`, `f1`, `space`, `up`...
    pub fn parse(s: &str) -> Result<Chord, String> {
        let mut mods = KeyModifiers::NONE;
        let mut rest = s;
        loop {
            let lower = rest.to_ascii_lowercase();
            if let Some(r) = lower.strip_prefix("ctrl-") {
                mods |= KeyModifiers::CONTROL;
                rest = &rest[rest.len() - r.len()..];
            } else if let Some(r) = lower.strip_prefix("alt-") {
                mods |= KeyModifiers::ALT;
                rest = &rest[rest.len() - r.len()..];
            } else if let Some(r) = lower.strip_prefix("shift-") {
                mods |= KeyModifiers::SHIFT;
                rest = &rest[rest.len() - r.len()..];
            } else {
                break;
            }
        }
        let named = match rest.to_ascii_lowercase().as_str() {
            "enter" | "return" => Some(KeyCode::Enter),
            "esc" | "escape" => Some(KeyCode::Esc),
            "tab" if mods.contains(KeyModifiers::SHIFT) => {
                mods.remove(KeyModifiers::SHIFT);
                Some(KeyCode::BackTab)
            }
            "tab" => Some(KeyCode::Tab),
            "backtab" => Some(KeyCode::BackTab),
            "space" => Some(KeyCode::Char(' ')),
            "backspace" => Some(KeyCode::Backspace),
            "up" => Some(KeyCode::Up),
            "down" => Some(KeyCode::Down),
            "left" => Some(KeyCode::Left),
            "right" => Some(KeyCode::Right),
            "home" => Some(KeyCode::Home),
            "end" => Some(KeyCode::End),
            "pageup" => Some(KeyCode::PageUp),
            "pagedown" => Some(KeyCode::PageDown),
            "delete" => Some(KeyCode::Delete),
            f if f.len() >= 2 && f.starts_with('f') => f[1..]
                .parse::<u8>()
                .ok()
                .filter(|n| (1..=12).contains(n))
                .map(KeyCode::F),
            _ => None,
        };
        let code = match named {
            Some(c) => c,
            None => {
                let mut chars = rest.chars();
                match (chars.next(), chars.next()) {
                    (Some(c), None) if !c.is_control() => {
                        if mods.contains(KeyModifiers::CONTROL) {
                            KeyCode::Char(c.to_ascii_lowercase())
                        } else {
                            KeyCode::Char(c)
                        }
                    }
                    _ => {
                        return Err(format!(
                            "\"{}\" is not a key: expected a character, a name such as \"enter\", \"esc\", \"tab\", \"up\", \"f1\", \"space\", optionally with \"ctrl-\", \"alt-\" or \"shift-\"",
                            crate::sanitize::line(s)
                        ));
                    }
                }
            }
        };
        if matches!(code, KeyCode::Char(_)) {
            mods.remove(KeyModifiers::SHIFT);
        }
        Ok(Chord { code, mods })
    }
}

impl fmt::Display for Chord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.mods.contains(KeyModifiers::CONTROL) {
            write!(f, "ctrl-")?;
        }
        if self.mods.contains(KeyModifiers::ALT) {
            write!(f, "alt-")?;
        }
        if self.mods.contains(KeyModifiers::SHIFT) {
            write!(f, "shift-")?;
        }
        match self.code {
            KeyCode::Char(' ') => write!(f, "space"),
            KeyCode::Char(c) => write!(f, "{c}"),
            KeyCode::Enter => write!(f, "enter"),
            KeyCode::Esc => write!(f, "esc"),
            KeyCode::Tab => write!(f, "tab"),
            KeyCode::BackTab => write!(f, "shift-tab"),
            KeyCode::Backspace => write!(f, "backspace"),
            KeyCode::Up => write!(f, "up"),
            KeyCode::Down => write!(f, "down"),
            KeyCode::Left => write!(f, "left"),
            KeyCode::Right => write!(f, "right"),
            KeyCode::F(n) => write!(f, "f{n}"),
            other => write!(f, "{other:?}"),
        }
    }
}

/// The bindings of every mode.
#[derive(Debug, Clone, PartialEq)]
pub struct Keymap {
    /// mode → action → keys, in the order they are listed in help.
    bindings: BTreeMap<Mode, Vec<(Action, Vec<Chord>)>>,
}

fn defaults(mode: Mode) -> Vec<(Action, &'static [&'static str])> {
    match mode {
        Mode::Dashboard => vec![
            (Action::Quit, &["q", "ctrl-c"]),
            (Action::Help, &["?", "f1"]),
            (Action::Close, &["esc"]),
            (Action::Zoom, &["enter", "z"]),
            (Action::NextPanel, &["tab", "l", "right"]),
            (Action::PrevPanel, &["shift-tab", "h", "left"]),
            (Action::Up, &["k", "up"]),
            (Action::Down, &["j", "down"]),
            (Action::RangeShorter, &["-"]),
            (Action::RangeLonger, &["+", "="]),
            (Action::Pause, &["p", "space"]),
            (Action::Refresh, &["r"]),
            (Action::Timeline, &["t"]),
            (Action::Note, &["n"]),
            (Action::EditorNote, &["e"]),
            (Action::Export, &["E"]),
            (Action::Publish, &["P"]),
            (Action::Changes, &["C"]),
            (Action::Runbooks, &["b"]),
            (Action::Status, &["s"]),
            (Action::Severity, &["v"]),
            (Action::ActionItem, &["a"]),
            (Action::ImpactStart, &["i"]),
            (Action::ImpactEnd, &["I"]),
            (Action::Correct, &["c"]),
            (Action::TimelineFilter, &["f"]),
            (Action::TimelineOrder, &["o"]),
            (Action::JumpToPanel, &["g"]),
        ],
        Mode::Help => vec![
            (Action::Close, &["esc", "?", "q", "f1"]),
            (Action::Up, &["k", "up"]),
            (Action::Down, &["j", "down"]),
            (Action::Quit, &["ctrl-c"]),
        ],
        Mode::Note => vec![
            (Action::Submit, &["enter"]),
            (Action::Close, &["esc", "ctrl-c"]),
        ],
        Mode::Runbooks => vec![
            (Action::Up, &["k", "up"]),
            (Action::Down, &["j", "down"]),
            (Action::Open, &["enter"]),
            (Action::Run, &["x"]),
            (Action::PauseRun, &["p", "space"]),
            (Action::AbortRun, &["a"]),
            (Action::Close, &["esc", "b"]),
            (Action::Timeline, &["t"]),
            (Action::Help, &["?", "f1"]),
            (Action::Quit, &["q", "ctrl-c"]),
        ],
        Mode::Dialog => vec![
            (Action::Submit, &["enter"]),
            (Action::Close, &["esc", "ctrl-c"]),
            (Action::NextField, &["tab", "down"]),
            (Action::PrevField, &["shift-tab", "up"]),
        ],
    }
}

impl Default for Keymap {
    fn default() -> Self {
        let mut bindings = BTreeMap::new();
        for mode in Mode::ALL {
            let list = defaults(mode)
                .into_iter()
                .map(|(a, keys)| {
                    let chords = keys.iter().filter_map(|k| Chord::parse(k).ok()).collect();
                    (a, chords)
                })
                .collect();
            bindings.insert(mode, list);
        }
        Keymap { bindings }
    }
}

impl Keymap {
    /// The defaults with overrides: `overrides[mode][action] = keys` replaces that action's keys.
    /// Errors name the mode, action and key, and what was expected.
    pub fn with_overrides(
        overrides: &BTreeMap<String, BTreeMap<String, Vec<String>>>,
    ) -> Result<Keymap, String> {
        let mut map = Keymap::default();
        for (mode_name, actions) in overrides {
            let Some(mode) = Mode::ALL.into_iter().find(|m| m.name() == mode_name) else {
                return Err(format!(
                    "[keys.{mode_name}]: unknown mode: expected one of {}",
                    Mode::ALL.map(Mode::name).join(", ")
                ));
            };
            let list = map.bindings.entry(mode).or_default();
            for (action_name, keys) in actions {
                let action = Action::by_name(action_name).ok_or_else(|| {
                    format!(
                        "[keys.{mode_name}]: unknown action \"{action_name}\": expected one of {}",
                        Action::ALL.map(Action::name).join(", ")
                    )
                })?;
                let chords = keys
                    .iter()
                    .map(|k| {
                        Chord::parse(k)
                            .map_err(|e| format!("[keys.{mode_name}] {action_name}: {e}"))
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                match list.iter_mut().find(|(a, _)| *a == action) {
                    Some(entry) => entry.1 = chords,
                    None => list.push((action, chords)),
                }
            }
        }
        map.check_duplicates()?;
        Ok(map)
    }

    fn check_duplicates(&self) -> Result<(), String> {
        for (mode, list) in &self.bindings {
            let mut seen: std::collections::HashMap<Chord, Action> =
                std::collections::HashMap::new();
            for (action, chords) in list {
                for c in chords {
                    if let Some(other) = seen.insert(*c, *action)
                        && other != *action
                    {
                        return Err(format!(
                            "[keys.{}]: \"{c}\" is bound to both \"{}\" and \"{}\": give each key one action",
                            mode.name(),
                            other.name(),
                            action.name()
                        ));
                    }
                }
            }
        }
        Ok(())
    }

    /// The action for a key event in `mode`, if any. Key releases and repeats of non-movement
    /// keys are ignored by the caller.
    pub fn action(&self, mode: Mode, ev: &KeyEvent) -> Option<Action> {
        if ev.kind == KeyEventKind::Release {
            return None;
        }
        let chord = Chord::from_event(ev);
        self.bindings
            .get(&mode)?
            .iter()
            .find(|(_, chords)| chords.contains(&chord))
            .map(|(a, _)| *a)
    }

    /// The keys of `action` in `mode`, for hints.
    pub fn keys(&self, mode: Mode, action: Action) -> Vec<Chord> {
        self.bindings
            .get(&mode)
            .and_then(|l| l.iter().find(|(a, _)| *a == action))
            .map(|(_, c)| c.clone())
            .unwrap_or_default()
    }

    /// The first key of `action` in `mode` as text, for the status bar.
    pub fn hint(&self, mode: Mode, action: Action) -> String {
        self.keys(mode, action)
            .first()
            .map(ToString::to_string)
            .unwrap_or_default()
    }

    /// Help lines for `mode`: (keys, description), in binding order; unbound actions omitted.
    pub fn help(&self, mode: Mode) -> Vec<(String, &'static str)> {
        self.bindings
            .get(&mode)
            .map(|l| {
                l.iter()
                    .filter(|(_, c)| !c.is_empty())
                    .map(|(a, c)| {
                        let keys: Vec<String> = c.iter().map(ToString::to_string).collect();
                        (keys.join(" "), a.describe_in(mode))
                    })
                    .collect()
            })
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests;
