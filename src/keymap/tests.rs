use super::*;

fn key(code: KeyCode, mods: KeyModifiers) -> KeyEvent {
    KeyEvent::new(code, mods)
}

fn overrides(
    mode: &str,
    action: &str,
    keys: &[&str],
) -> BTreeMap<String, BTreeMap<String, Vec<String>>> {
    let mut actions = BTreeMap::new();
    actions.insert(
        action.to_string(),
        keys.iter().map(std::string::ToString::to_string).collect(),
    );
    let mut m = BTreeMap::new();
    m.insert(mode.to_string(), actions);
    m
}

#[test]
fn defaults_have_no_duplicates_and_avoid_reserved_keys() {
    let map = Keymap::default();
    map.check_duplicates().unwrap();
    let reserved = ['a', 'b', 's', 'q', 'h', 'i', 'm', '['];
    for mode in Mode::ALL {
        for &action in Action::ALL {
            for c in map.keys(mode, action) {
                assert!(!c.mods.contains(KeyModifiers::ALT), "{c}");
                if let KeyCode::Char(ch) = c.code
                    && c.mods.contains(KeyModifiers::CONTROL)
                {
                    assert!(
                        !reserved.contains(&ch),
                        "{} binds reserved {c}",
                        mode.name()
                    );
                }
            }
        }
    }
}

#[test]
fn events_map_to_actions() {
    let map = Keymap::default();
    let d = Mode::Dashboard;
    assert_eq!(
        map.action(d, &key(KeyCode::Char('q'), KeyModifiers::NONE)),
        Some(Action::Quit)
    );
    assert_eq!(
        map.action(d, &key(KeyCode::Char('c'), KeyModifiers::CONTROL)),
        Some(Action::Quit)
    );
    assert_eq!(
        map.action(d, &key(KeyCode::Char('?'), KeyModifiers::SHIFT)),
        Some(Action::Help)
    );
    assert_eq!(
        map.action(d, &key(KeyCode::Char('+'), KeyModifiers::SHIFT)),
        Some(Action::RangeLonger)
    );
    assert_eq!(
        map.action(d, &key(KeyCode::BackTab, KeyModifiers::SHIFT)),
        Some(Action::PrevPanel)
    );
    assert_eq!(
        map.action(d, &key(KeyCode::Char('x'), KeyModifiers::NONE)),
        None
    );
    assert_eq!(
        map.action(Mode::Help, &key(KeyCode::Char('q'), KeyModifiers::NONE)),
        Some(Action::Close)
    );
    let mut release = key(KeyCode::Char('q'), KeyModifiers::NONE);
    release.kind = KeyEventKind::Release;
    assert_eq!(map.action(d, &release), None);
}

#[test]
fn chords_parse_and_print_back() {
    for s in [
        "q",
        "ctrl-c",
        "enter",
        "esc",
        "shift-tab",
        "f1",
        "space",
        "?",
        "alt-x",
        "up",
        "right",
    ] {
        let c = Chord::parse(s).unwrap();
        assert_eq!(Chord::parse(&c.to_string()), Ok(c), "{s}");
        assert_eq!(c.to_string(), s);
    }
    assert_eq!(
        Chord::parse("Ctrl-C").unwrap(),
        Chord::parse("ctrl-c").unwrap()
    );
    for bad in ["", "ctrl-", "qq", "f13", "hyper-x", "\u{1b}"] {
        assert!(Chord::parse(bad).is_err(), "{bad:?}");
    }
}

#[test]
fn overrides_replace_an_action_and_duplicates_are_refused() {
    let map = Keymap::with_overrides(&overrides("dashboard", "quit", &["x"])).unwrap();
    let d = Mode::Dashboard;
    assert_eq!(
        map.action(d, &key(KeyCode::Char('x'), KeyModifiers::NONE)),
        Some(Action::Quit)
    );
    assert_eq!(
        map.action(d, &key(KeyCode::Char('q'), KeyModifiers::NONE)),
        None
    );

    let err = Keymap::with_overrides(&overrides("dashboard", "quit", &["z"])).unwrap_err();
    assert!(err.contains("\"z\" is bound to both"), "{err}");
    let err = Keymap::with_overrides(&overrides("dashboard", "explode", &["z"])).unwrap_err();
    assert!(err.contains("unknown action \"explode\""), "{err}");
    let err = Keymap::with_overrides(&overrides("nowhere", "quit", &["z"])).unwrap_err();
    assert!(err.contains("unknown mode"), "{err}");
    let err = Keymap::with_overrides(&overrides("help", "close", &["ctrl-"])).unwrap_err();
    assert!(err.contains("is not a key"), "{err}");
}

#[test]
fn help_lists_every_bound_action_with_its_keys() {
    let map = Keymap::with_overrides(&overrides("dashboard", "refresh", &["R", "f5"])).unwrap();
    let help = map.help(Mode::Dashboard);
    assert_eq!(help.len(), defaults(Mode::Dashboard).len());
    let refresh = help
        .iter()
        .find(|(_, d)| *d == Action::Refresh.describe())
        .unwrap();
    assert_eq!(refresh.0, "R f5");
}

#[test]
fn every_action_is_bound_somewhere_and_every_row_is_unique() {
    for &action in Action::ALL {
        assert!(
            TABLE
                .iter()
                .any(|(_, a, keys, _)| *a == action && !keys.is_empty()),
            "{} has no default key in any mode",
            action.name()
        );
    }
    for (i, (m, a, ..)) in TABLE.iter().enumerate() {
        assert!(
            !TABLE[..i].iter().any(|(m2, a2, ..)| m2 == m && a2 == a),
            "{} appears twice in {}",
            a.name(),
            m.name()
        );
    }
}

#[test]
fn the_readme_key_table_is_the_key_map() {
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let begin = "<!-- keys: the most-used, from src/keymap.rs; a test checks them -->\n";
    let end = "<!-- keys end -->";
    let start = readme.find(begin).expect("the README marks its key table") + begin.len();
    let stop = start + readme[start..].find(end).expect("the key table ends");
    // The dashboard's rows as the key map writes them (the man page lists every mode).
    let dashboard = Keymap::default().markdown_rows(Mode::Dashboard);
    let rows: Vec<&str> = readme[start..stop]
        .lines()
        .filter(|l| l.starts_with("| `"))
        .collect();
    assert!(rows.len() >= 10, "the README shows {} keys", rows.len());
    for row in &rows {
        assert!(
            dashboard.iter().any(|d| d == row),
            "the README's key row {row:?} is not the key map's; its rows are:\n{}",
            dashboard.join("\n")
        );
    }
}

/// Chords the runbook pane binds over the dashboard's (its fallback), each with the reason it
/// is no surprise: moving, opening and closing mean the same there, on the pane's list.
const SHADOWED: &[(Action, Action, &str)] = &[
    (Action::Up, Action::Up, "moves the selection up in both"),
    (
        Action::Down,
        Action::Down,
        "moves the selection down in both",
    ),
    (
        Action::Open,
        Action::Zoom,
        "enter opens what is selected in both",
    ),
    (
        Action::Close,
        Action::Close,
        "esc closes what is open in both",
    ),
    (
        Action::Runbooks,
        Action::Runbooks,
        "b flips between the pane and the panels",
    ),
];

/// What changes a run: never on a key another mode binds, never in a text mode.
const RUN_CHANGING: [Action; 4] = [
    Action::Run,
    Action::PauseRun,
    Action::AbortRun,
    Action::ResumeRun,
];

/// Every conflict and cross-mode surprise in `map`, in words.
fn problems(map: &Keymap) -> Vec<String> {
    let mut out = Vec::new();
    if let Err(e) = map.check_duplicates() {
        out.push(e);
    }
    for mode in Mode::ALL {
        let own = map.chords(mode);
        // A text mode's keys never eat what is typed: no plain printable character.
        if mode.takes_text() {
            for (c, a) in &own {
                if matches!(c.code, KeyCode::Char(_)) && c.mods.is_empty() {
                    out.push(format!(
                        "{}: \"{c}\" ({}) would swallow typed text",
                        mode.name(),
                        a.name()
                    ));
                }
            }
        }
        // A key the mode binds over its fallback's is a listed, reasoned exception.
        if let Some(back) = mode.falls_back_to() {
            for (c, a) in &own {
                if let Some((_, b)) = map.chords(back).into_iter().find(|(d, _)| d == c)
                    && b != *a
                    && !SHADOWED.iter().any(|(x, y, _)| x == a && *y == b)
                {
                    out.push(format!(
                        "\"{c}\" is {} in {} but {} in {}: a surprise beside the dashboard",
                        a.name(),
                        mode.name(),
                        b.name(),
                        back.name()
                    ));
                }
            }
        }
        // Every mode where keys are not text can be quit and left.
        if !mode.takes_text() {
            let has = |a: Action| own.iter().any(|(_, x)| *x == a);
            if !has(Action::Quit) {
                out.push(format!("{} cannot quit", mode.name()));
            }
            if !has(Action::Close) {
                out.push(format!("{} cannot be closed", mode.name()));
            }
        }
    }
    // Keys that change a run live only in the runbook pane, on keys no other mode binds, so a
    // key pressed in the wrong place (or typed text that escaped a field) never touches a run.
    for a in RUN_CHANGING {
        for mode in Mode::ALL {
            let keys = map.keys(mode, a);
            if mode != Mode::Runbooks {
                if !keys.is_empty() {
                    out.push(format!("{} is bound in {}", a.name(), mode.name()));
                }
                continue;
            }
            if keys.is_empty() {
                out.push(format!("{} has no key", a.name()));
            }
            for c in keys {
                for other in Mode::ALL.into_iter().filter(|m| *m != Mode::Runbooks) {
                    if let Some((_, b)) = map.chords(other).into_iter().find(|(d, _)| *d == c) {
                        out.push(format!(
                            "\"{c}\" changes a run ({}) in the runbook pane but is {} in {}",
                            a.name(),
                            b.name(),
                            other.name()
                        ));
                    }
                }
            }
        }
    }
    // An action bound in several modes shares at least one key among them (help is `?`
    // everywhere, quitting `ctrl-c`, closing `esc`).
    for &a in Action::ALL {
        let sets: Vec<(Mode, Vec<Chord>)> = Mode::ALL
            .into_iter()
            .map(|m| (m, map.keys(m, a)))
            .filter(|(_, k)| !k.is_empty())
            .collect();
        for (m, keys) in &sets {
            for (n, other) in &sets {
                if !keys.iter().any(|k| other.contains(k)) {
                    out.push(format!(
                        "{} has no key in common between {} and {}",
                        a.name(),
                        m.name(),
                        n.name()
                    ));
                }
            }
        }
    }
    out
}

#[test]
fn no_mode_has_conflicts_or_cross_mode_surprises() {
    let found = problems(&Keymap::default());
    assert!(found.is_empty(), "{}", found.join("\n"));
}

#[test]
fn the_conflict_check_catches_each_kind_of_surprise() {
    // The old binding: `a` aborted a run in the pane while it adds an action item beside it.
    for (mode, action, keys, expect) in [
        (
            "runbooks",
            "abort_run",
            &["a"][..],
            "a surprise beside the dashboard",
        ),
        (
            "runbooks",
            "pause_run",
            &["p"][..],
            "a surprise beside the dashboard",
        ),
        (
            "dashboard",
            "abort_run",
            &["X"][..],
            "abort_run is bound in dashboard",
        ),
        (
            "runbooks",
            "resume_run",
            &["m"][..],
            "changes a run (resume_run)",
        ),
        ("note", "submit", &["s"][..], "would swallow typed text"),
        ("runbooks", "help", &["f2"][..], "help has no key in common"),
    ] {
        let map = Keymap::with_overrides(&overrides(mode, action, keys)).unwrap();
        let found = problems(&map);
        assert!(
            found.iter().any(|p| p.contains(expect)),
            "{mode}.{action} = {keys:?}: {found:?}"
        );
    }
}

#[test]
fn key_bindings_are_checked_where_they_are_written() {
    let c = crate::config::Config::parse(
        "w.toml",
        "refresh = \"5s\"\n[keys.dashboard]\nquit = \"z\"\n",
    )
    .unwrap();
    let d = Keymap::from_config(&c.keys).unwrap_err();
    assert!(d.message.contains("bound to both"), "{d}");
    assert_eq!((d.file.as_str(), d.line), ("w.toml", 2), "{d}");
    let c =
        crate::config::Config::parse("w.toml", "[keys.dashboard]\nquit = [\"x\", \"ctrl-c\"]\n")
            .unwrap();
    assert_eq!(
        Keymap::from_config(&c.keys)
            .unwrap()
            .hint(Mode::Dashboard, Action::Quit),
        "x"
    );
}
