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
        keys.iter().map(|s| s.to_string()).collect(),
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
fn the_readme_key_tables_are_the_key_map() {
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let begin = "<!-- keys: generated from src/keymap.rs; a test checks it -->\n";
    let end = "<!-- keys end -->";
    let start = readme.find(begin).expect("the README marks its key tables") + begin.len();
    let stop = start + readme[start..].find(end).expect("the key tables end");
    let expected = Keymap::default().markdown();
    assert_eq!(
        readme[start..stop].trim(),
        expected.trim(),
        "the README's key tables differ from the key map; paste this between the markers:\n{expected}"
    );
}
