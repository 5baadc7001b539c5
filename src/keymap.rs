//! Key bindings per mode: defaults, overrides from `[keys.MODE]` in warroom.toml, duplicate
//! checks, and the help overlay's text, all from one table.
//!
//! Default keys avoid tmux prefixes, flow control and terminal aliases (Ctrl-A, Ctrl-B, Ctrl-S,
//! Ctrl-Q, Ctrl-H, Ctrl-I, Ctrl-M, Ctrl-[) and Alt.

use crate::diagnostic::Diagnostic;
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

    /// How the README and help name it.
    pub fn title(self) -> &'static str {
        match self {
            Mode::Dashboard => "Dashboard",
            Mode::Help => "Help overlay",
            Mode::Note => "Typing a note",
            Mode::Runbooks => "Runbook pane",
            Mode::Dialog => "Dialogs",
        }
    }

    /// The mode whose bindings a key not bound here falls back to: the runbook pane shares the
    /// screen with the dashboard, so the dashboard's keys work beside it (the pane's own keys
    /// win; a test checks that none of them is a surprise).
    pub fn falls_back_to(self) -> Option<Mode> {
        match self {
            Mode::Runbooks => Some(Mode::Dashboard),
            _ => None,
        }
    }

    /// Whether keys not bound here are text (a note, a dialog's field).
    pub fn takes_text(self) -> bool {
        matches!(self, Mode::Note | Mode::Dialog)
    }

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

/// Declares [`Action`] from one list: each variant with the name `[keys.*]` uses and what it
/// does, so the enum, [`Action::ALL`], the names and the help text cannot drift apart.
macro_rules! actions {
    ($($variant:ident = $name:literal, $help:literal;)*) => {
        /// Everything a key can do.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Action {
            $($variant,)*
        }

        impl Action {
            /// Every action, in declaration order.
            pub const ALL: &'static [Action] = &[$(Action::$variant,)*];

            /// The name used in the config file.
            pub fn name(self) -> &'static str {
                match self {
                    $(Action::$variant => $name,)*
                }
            }

            /// What it does, for the help overlay (a mode may say it more precisely: see
            /// [`Action::describe_in`]).
            pub fn describe(self) -> &'static str {
                match self {
                    $(Action::$variant => $help,)*
                }
            }
        }
    };
}

actions! {
    Quit = "quit", "quit warroom (recording stops)";
    Help = "help", "show or hide this help";
    Close = "close", "close the overlay or leave the zoomed panel";
    Zoom = "zoom", "zoom the selected panel to full screen, or back";
    NextPanel = "next_panel", "select the next panel";
    PrevPanel = "prev_panel", "select the previous panel";
    Up = "up", "select the panel above";
    Down = "down", "select the panel below";
    RangeShorter = "range_shorter", "show a shorter time range";
    RangeLonger = "range_longer", "show a longer time range";
    Pause = "pause", "pause or resume refreshing";
    Refresh = "refresh", "refresh every panel now";
    Timeline = "timeline", "show or hide the incident timeline";
    Note = "note", "add a note to the timeline (#tags kept)";
    Submit = "submit", "record what was typed";
    Runbooks = "runbooks", "open the runbook pane (plan, run, progress)";
    Status = "status", "set the incident's status";
    Severity = "severity", "set the incident's severity";
    ActionItem = "action_item", "add an action item (owner, priority, due)";
    ImpactStart = "impact_start", "mark when the impact started";
    ImpactEnd = "impact_end", "mark when the impact ended";
    Correct = "correct", "correct or retract a timeline record";
    EditorNote = "editor_note", "write a note in $EDITOR";
    Export = "export", "export the postmortem draft";
    TimelineFilter = "timeline_filter", "timeline: show one source, then the next";
    TimelineOrder = "timeline_order", "timeline: newest or oldest first";
    JumpToPanel = "jump_to_panel", "go to the newest crossing's panel; again: older";
    Run = "run", "run: see the plan, set variables, type the name";
    PauseRun = "pause_run", "hold or resume the run between actions (asks)";
    AbortRun = "abort_run", "abort the run (asks, saying what is done and not)";
    ResumeRun = "resume_run", "resume a stopped run (done steps never run again)";
    NextField = "next_field", "next field";
    PrevField = "prev_field", "previous field";
    Open = "open", "show the selected runbook's plan";
    Changes = "changes", "show or hide GitHub changes (deploys, merges)";
    Publish = "publish", "publish the postmortem to GitHub (asks first)";
    Messages = "messages", "show the message log (every message, newest first)";
    Declare = "declare", "declare an incident (until then: only watching)";
    PageUp = "page_up", "timeline: scroll up a page";
    PageDown = "page_down", "timeline: scroll down a page";
    Top = "top", "timeline: to the newest record (the top)";
    Bottom = "bottom", "timeline: to the oldest record (the end)";
    Search = "search", "timeline: search (enter finds the next match)";
    Variables = "variables", "set a dashboard variable ($name)";
    Silence = "silence", "silence a firing alert in Alertmanager (the form asks)";
    Copy = "copy", "copy the incident id, PromQL, run id or export path";
    GraphUrl = "graph_url", "show and copy the panel's /graph URL";
    Palette = "palette", "command palette: an action, runbook/theme/status NAME";
}

/// The default bindings, one row per action and mode, in the order help lists them: the mode,
/// the action, its keys, and what it does there when that is more precise than
/// [`Action::describe`]. The help overlay, the README's key table (checked by a test), the
/// hints and the duplicate check all come from this table.
pub const TABLE: &[(Mode, Action, &[&str], Option<&str>)] = &[
    (Mode::Dashboard, Action::Quit, &["q", "ctrl-c"], None),
    (Mode::Dashboard, Action::Help, &["?", "f1"], None),
    (
        Mode::Dashboard,
        Action::Close,
        &["esc"],
        Some("dismiss the message, or leave the zoomed panel"),
    ),
    (Mode::Dashboard, Action::Zoom, &["enter", "z"], None),
    (
        Mode::Dashboard,
        Action::NextPanel,
        &["tab", "l", "right"],
        None,
    ),
    (
        Mode::Dashboard,
        Action::PrevPanel,
        &["shift-tab", "h", "left"],
        None,
    ),
    (Mode::Dashboard, Action::Up, &["k", "up"], None),
    (Mode::Dashboard, Action::Down, &["j", "down"], None),
    (Mode::Dashboard, Action::RangeShorter, &["-"], None),
    (Mode::Dashboard, Action::RangeLonger, &["+", "="], None),
    (Mode::Dashboard, Action::Pause, &["p", "space"], None),
    (Mode::Dashboard, Action::Refresh, &["r"], None),
    (Mode::Dashboard, Action::Timeline, &["t"], None),
    (Mode::Dashboard, Action::Note, &["n"], None),
    (Mode::Dashboard, Action::EditorNote, &["e"], None),
    (Mode::Dashboard, Action::Export, &["E"], None),
    (Mode::Dashboard, Action::Publish, &["P"], None),
    (Mode::Dashboard, Action::Changes, &["C"], None),
    (Mode::Dashboard, Action::Runbooks, &["b"], None),
    (Mode::Dashboard, Action::Declare, &["D"], None),
    (Mode::Dashboard, Action::Variables, &["V"], None),
    (Mode::Dashboard, Action::Status, &["s"], None),
    (Mode::Dashboard, Action::Severity, &["v"], None),
    (Mode::Dashboard, Action::ActionItem, &["a"], None),
    (Mode::Dashboard, Action::ImpactStart, &["i"], None),
    (Mode::Dashboard, Action::ImpactEnd, &["I"], None),
    (Mode::Dashboard, Action::Correct, &["c"], None),
    (Mode::Dashboard, Action::TimelineFilter, &["f"], None),
    (Mode::Dashboard, Action::TimelineOrder, &["O"], None),
    (Mode::Dashboard, Action::JumpToPanel, &["g"], None),
    (Mode::Dashboard, Action::PageUp, &["pageup"], None),
    (Mode::Dashboard, Action::PageDown, &["pagedown"], None),
    (Mode::Dashboard, Action::Top, &["home"], None),
    (Mode::Dashboard, Action::Bottom, &["end"], None),
    (Mode::Dashboard, Action::Search, &["/"], None),
    (Mode::Dashboard, Action::Messages, &["m"], None),
    (Mode::Dashboard, Action::Silence, &["S"], None),
    (Mode::Dashboard, Action::Copy, &["y"], None),
    (Mode::Dashboard, Action::GraphUrl, &["o"], None),
    (Mode::Dashboard, Action::Palette, &[":"], None),
    (
        Mode::Help,
        Action::Close,
        &["esc", "?", "q", "f1"],
        Some("close this help"),
    ),
    (
        Mode::Help,
        Action::Up,
        &["k", "up"],
        Some("scroll this help"),
    ),
    (
        Mode::Help,
        Action::Down,
        &["j", "down"],
        Some("scroll this help"),
    ),
    (Mode::Help, Action::Quit, &["ctrl-c"], None),
    (Mode::Note, Action::Submit, &["enter"], None),
    (
        Mode::Note,
        Action::Close,
        &["esc", "ctrl-c"],
        Some("cancel the note"),
    ),
    (
        Mode::Runbooks,
        Action::Up,
        &["k", "up"],
        Some("select the runbook above"),
    ),
    (
        Mode::Runbooks,
        Action::Down,
        &["j", "down"],
        Some("select the runbook below"),
    ),
    (Mode::Runbooks, Action::Open, &["enter"], None),
    (
        Mode::Runbooks,
        Action::Search,
        &["/"],
        Some("filter the runbook list by name (esc clears)"),
    ),
    (Mode::Runbooks, Action::Run, &["x"], None),
    (Mode::Runbooks, Action::PauseRun, &["H"], None),
    (Mode::Runbooks, Action::AbortRun, &["A"], None),
    (Mode::Runbooks, Action::ResumeRun, &["R"], None),
    (
        Mode::Runbooks,
        Action::Close,
        &["esc"],
        Some("back to the list, or close the pane (runs go on)"),
    ),
    (
        Mode::Runbooks,
        Action::Runbooks,
        &["b"],
        Some("flip to the panels' keys (runs go on; b returns)"),
    ),
    (Mode::Runbooks, Action::Help, &["?", "f1"], None),
    (Mode::Runbooks, Action::Quit, &["q", "ctrl-c"], None),
    (
        Mode::Dialog,
        Action::Submit,
        &["enter"],
        Some("answer (a typed word must match exactly)"),
    ),
    (
        Mode::Dialog,
        Action::Close,
        &["esc", "ctrl-c"],
        Some("cancel (a step: ask again, skip or abort)"),
    ),
    (
        Mode::Dialog,
        Action::NextField,
        &["tab", "down"],
        Some("next field or choice"),
    ),
    (
        Mode::Dialog,
        Action::PrevField,
        &["shift-tab", "up"],
        Some("previous field or choice"),
    ),
];

impl Action {
    /// What it does in `mode`, for the help overlay (moving and closing mean different things
    /// in different places).
    pub fn describe_in(self, mode: Mode) -> &'static str {
        TABLE
            .iter()
            .find(|(m, a, _, _)| *m == mode && *a == self)
            .and_then(|(_, _, _, help)| *help)
            .unwrap_or_else(|| self.describe())
    }

    fn by_name(name: &str) -> Option<Action> {
        Action::ALL.iter().copied().find(|a| a.name() == name)
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
            KeyCode::Home => write!(f, "home"),
            KeyCode::End => write!(f, "end"),
            KeyCode::PageUp => write!(f, "pageup"),
            KeyCode::PageDown => write!(f, "pagedown"),
            KeyCode::Delete => write!(f, "delete"),
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

/// The default keys of `mode` from [`TABLE`], in help order.
fn defaults(mode: Mode) -> Vec<(Action, &'static [&'static str])> {
    (TABLE.iter())
        .filter(|(m, ..)| *m == mode)
        .map(|(_, a, keys, _)| (*a, *keys))
        .collect()
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
    /// The config's key map: the defaults with its `[keys.MODE]`; a refusal points at `[keys]`
    /// in the file.
    pub fn from_config(keys: &crate::config::KeyOverrides) -> Result<Keymap, Diagnostic> {
        Keymap::with_overrides(&keys.modes).map_err(|message| match &keys.place {
            Some(place) => Diagnostic {
                message,
                ..place.clone()
            },
            None => Diagnostic::at("warroom.toml", "", None, message),
        })
    }

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
                        Action::ALL
                            .iter()
                            .map(|a| a.name())
                            .collect::<Vec<_>>()
                            .join(", ")
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

    /// The action for a key event in `mode`, or in the mode it falls back to.
    pub fn action_with_fallback(&self, mode: Mode, ev: &KeyEvent) -> Option<Action> {
        self.action(mode, ev)
            .or_else(|| mode.falls_back_to().and_then(|m| self.action(m, ev)))
    }

    /// Every chord bound in `mode`, with its action.
    pub fn chords(&self, mode: Mode) -> Vec<(Chord, Action)> {
        (self.bindings.get(&mode).into_iter().flatten())
            .flat_map(|(a, cs)| cs.iter().map(move |c| (*c, *a)))
            .collect()
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

impl Keymap {
    /// The bindings of `mode` as Markdown table rows (`| `q` `ctrl-c` | quit … |`), as the
    /// README shows the most-used ones.
    pub fn markdown_rows(&self, mode: Mode) -> Vec<String> {
        (self.help(mode).into_iter())
            .map(|(keys, what)| {
                let keys: Vec<String> = keys.split(' ').map(|k| format!("`{k}`")).collect();
                format!("| {} | {} |", keys.join(" "), what.replace('|', "\\|"))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests;
