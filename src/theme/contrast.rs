//! The contrast test: every shipped theme's roles, measured as WCAG 2 contrast ratios of
//! foreground on background, computed here from the colours themselves. Text needs 4.5:1,
//! borders and chart lines 3:1.
//!
//! ANSI colours have no fixed RGB: they are measured as xterm's default palette shows them.
//! A role without a background is drawn on the theme's `[assumed] background` (the default
//! theme assumes a dark terminal: black, with xterm's default foreground `#e5e5e5`); "reset"
//! means the assumed colour; `reversed` swaps foreground and background; `dim` is taken as
//! half-way to the background (terminals differ; this is the usual rendering).

use super::{BUILTIN, Theme};
use ratatui::style::{Color, Modifier, Style};

type Rgb = (f64, f64, f64);

/// xterm's default 16 colours.
fn ansi(i: u8) -> Rgb {
    const P: [(u8, u8, u8); 16] = [
        (0, 0, 0),
        (205, 0, 0),
        (0, 205, 0),
        (205, 205, 0),
        (0, 0, 238),
        (205, 0, 205),
        (0, 205, 205),
        (229, 229, 229),
        (127, 127, 127),
        (255, 0, 0),
        (0, 255, 0),
        (255, 255, 0),
        (92, 92, 255),
        (255, 0, 255),
        (0, 255, 255),
        (255, 255, 255),
    ];
    let (r, g, b) = P[usize::from(i % 16)];
    (f64::from(r), f64::from(g), f64::from(b))
}

/// The 256-colour cube and grey ramp.
fn indexed(i: u8) -> Rgb {
    match i {
        0..=15 => ansi(i),
        16..=231 => {
            let k = i - 16;
            let step = |v: u8| {
                if v == 0 {
                    0.0
                } else {
                    55.0 + 40.0 * f64::from(v)
                }
            };
            (step(k / 36), step((k / 6) % 6), step(k % 6))
        }
        _ => {
            let v = 8.0 + 10.0 * f64::from(i - 232);
            (v, v, v)
        }
    }
}

fn rgb(c: Color, reset: Rgb) -> Rgb {
    match c {
        Color::Reset => reset,
        Color::Black => ansi(0),
        Color::Red => ansi(1),
        Color::Green => ansi(2),
        Color::Yellow => ansi(3),
        Color::Blue => ansi(4),
        Color::Magenta => ansi(5),
        Color::Cyan => ansi(6),
        Color::Gray => ansi(7),
        Color::DarkGray => ansi(8),
        Color::LightRed => ansi(9),
        Color::LightGreen => ansi(10),
        Color::LightYellow => ansi(11),
        Color::LightBlue => ansi(12),
        Color::LightMagenta => ansi(13),
        Color::LightCyan => ansi(14),
        Color::White => ansi(15),
        Color::Rgb(r, g, b) => (f64::from(r), f64::from(g), f64::from(b)),
        Color::Indexed(i) => indexed(i),
    }
}

/// WCAG 2 relative luminance.
fn luminance((r, g, b): Rgb) -> f64 {
    let lin = |c: f64| {
        let c = c / 255.0;
        if c <= 0.03928 {
            c / 12.92
        } else {
            ((c + 0.055) / 1.055).powf(2.4)
        }
    };
    0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b)
}

/// WCAG 2 contrast ratio of two colours, 1 to 21.
pub fn ratio(a: Rgb, b: Rgb) -> f64 {
    let (la, lb) = (luminance(a), luminance(b));
    (la.max(lb) + 0.05) / (la.min(lb) + 0.05)
}

/// What a cell drawn in `style` shows: its foreground and background colours, on a terminal
/// whose own colours are the theme's assumed ones, over `under` (the style beneath, if any).
pub fn colours(t: &Theme, style: Style, under: Style) -> (Rgb, Rgb) {
    let bg0 = rgb(t.assumed_background, (0.0, 0.0, 0.0));
    let fg0 = rgb(t.assumed_foreground, (229.0, 229.0, 229.0));
    let merged = under.patch(style);
    let mut fg = merged.fg.map_or(fg0, |c| rgb(c, fg0));
    let mut bg = merged.bg.map_or(bg0, |c| rgb(c, bg0));
    if merged.add_modifier.contains(Modifier::REVERSED) {
        std::mem::swap(&mut fg, &mut bg);
    }
    if merged.add_modifier.contains(Modifier::DIM) {
        fg = (
            (fg.0 + bg.0) / 2.0,
            (fg.1 + bg.1) / 2.0,
            (fg.2 + bg.2) / 2.0,
        );
    }
    (fg, bg)
}

/// Every contrast too low in `t`: (what, ratio, needed).
pub fn failures(t: &Theme) -> Vec<(String, f64, f64)> {
    let none = Style::default();
    let mut checks: Vec<(String, Style, Style, f64)> = vec![
        ("text".into(), t.text, none, 4.5),
        ("muted".into(), t.muted, none, 4.5),
        ("title".into(), t.title, none, 4.5),
        ("ok".into(), t.ok, none, 4.5),
        ("warn".into(), t.warn, none, 4.5),
        ("crit".into(), t.crit, none, 4.5),
        ("loading".into(), t.loading, none, 4.5),
        ("stale".into(), t.stale, none, 4.5),
        ("partial".into(), t.partial, none, 4.5),
        ("failing".into(), t.failing, none, 4.5),
        ("selection".into(), t.selection, none, 4.5),
        ("accent".into(), t.accent, none, 4.5),
        ("status_bar".into(), t.status_bar, none, 4.5),
        ("border".into(), t.border, none, 3.0),
        ("border_focus".into(), t.border_focus, none, 3.0),
        ("threshold_warn".into(), t.threshold_warn, none, 3.0),
        ("threshold_crit".into(), t.threshold_crit, none, 3.0),
    ];
    for (i, s) in t.series.iter().enumerate() {
        checks.push((format!("series[{i}]"), *s, none, 3.0));
    }
    // What the status bar draws on itself: each role as the bar shows it.
    for (name, role) in [
        ("text", t.text),
        ("muted", t.muted),
        ("accent", t.accent),
        ("ok", t.ok),
        ("warn", t.warn),
        ("failing", t.failing),
        ("loading", t.loading),
        ("stale", t.stale),
    ] {
        let shown = crate::ui::statusbar::on_bar(role, t.status_bar);
        checks.push((
            format!("{name} on the status bar"),
            shown,
            t.status_bar,
            4.5,
        ));
    }
    // The selected row's text is drawn with the selection style over the text role.
    checks.push(("text selected".into(), t.selection, t.text, 4.5));
    checks
        .into_iter()
        .filter_map(|(what, style, under, need)| {
            let (fg, bg) = colours(t, style, under);
            let r = ratio(fg, bg);
            (r < need).then_some((what, r, need))
        })
        .collect()
}

#[test]
fn every_theme_file_passes_the_contrast_test() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/themes");
    let mut seen = 0;
    let mut report = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().and_then(|e| e.to_str()) != Some("toml") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let t = Theme::parse(&path.display().to_string(), &text).unwrap_or_else(|d| panic!("{d}"));
        let bad = failures(&t);
        if !bad.is_empty() {
            report.push(format!(
                "{}: {}",
                path.display(),
                bad.iter()
                    .map(|(w, r, n)| format!("{w} {r:.2}:1 (needs {n}:1)"))
                    .collect::<Vec<_>>()
                    .join("; ")
            ));
        }
        seen += 1;
    }
    assert!(report.is_empty(), "{}", report.join("\n"));
    assert_eq!(
        seen,
        BUILTIN.len(),
        "every shipped theme is a file in themes/"
    );
}

#[test]
fn the_measure_is_wcags() {
    // The WCAG reference points: black on white 21:1, a colour on itself 1:1, and the
    // light grey the light theme once had for muted text (#e5e5e5 on white) about 1.3:1.
    assert!((ratio((0.0, 0.0, 0.0), (255.0, 255.0, 255.0)) - 21.0).abs() < 1e-9);
    assert!((ratio((127.0, 1.0, 9.0), (127.0, 1.0, 9.0)) - 1.0).abs() < 1e-9);
    let grey = ratio(ansi(7), (255.0, 255.0, 255.0));
    assert!(grey < 1.3, "{grey}");
    // #767676 on white is the classic 4.54:1.
    let r = ratio((118.0, 118.0, 118.0), (255.0, 255.0, 255.0));
    assert!((r - 4.54).abs() < 0.01, "{r}");
    // A broken theme fails: light-grey muted text on a white terminal, white on white.
    let text = "name = \"bad\"\n[assumed]\nbackground = \"white\"\nforeground = \"black\"\n[roles]\nmuted = \"gray\"\nstatus_bar = { fg = \"black\", bg = \"white\" }\ntext = \"white\"\n";
    let t = Theme::parse("bad.toml", text).unwrap();
    let bad: Vec<String> = failures(&t).into_iter().map(|(w, ..)| w).collect();
    assert!(bad.contains(&"muted".to_string()), "{bad:?}");
    assert!(bad.contains(&"text".to_string()), "{bad:?}");
}

#[test]
fn auto_and_no_color_read_well_on_dark_and_light_terminals() {
    use super::Background;
    for background in [Background::Dark, Background::Light] {
        // The theme `auto` picks is made for this background, and passes on it.
        let t = Theme::builtin(background.theme()).unwrap();
        let lum = luminance(rgb(t.assumed_background, (0.0, 0.0, 0.0)));
        assert_eq!(
            lum > 0.5,
            background == Background::Light,
            "{} is made for a {} background",
            t.name,
            if lum > 0.5 { "light" } else { "dark" }
        );
        assert!(failures(&t).is_empty(), "{}: {:?}", t.name, failures(&t));
    }
    // NO_COLOR's mono is picked whatever the background: it must pass on both.
    for (bg, fg) in [("black", "gray"), ("white", "black")] {
        let text = super::BUILTIN.iter().find(|(n, _)| *n == "mono").unwrap().1;
        let mut t = Theme::parse("mono.toml", text).unwrap();
        t.assumed_background = super::parse_colour(bg).unwrap();
        t.assumed_foreground = super::parse_colour(fg).unwrap();
        assert!(failures(&t).is_empty(), "mono on {bg}: {:?}", failures(&t));
    }
}
