//! Themes: styles by role (text, ok, warn, crit, stale…), never raw widget colours.
//!
//! The shipped themes live in `themes/*.toml` and are embedded at build time. A theme may also
//! be a file path. A broken theme falls back to the default and says why; it never blocks.
//! `NO_COLOR` selects `mono`. State is never shown by colour alone: the UI always adds a symbol
//! or a word, so monochrome terminals lose nothing.

use crate::diagnostic::Diagnostic;
use ratatui::style::{Color, Modifier, Style};
use serde::Deserialize;
use serde_spanned::Spanned;

pub mod background;
pub use background::Background;

/// The theme name that picks a shipped theme for the terminal's background.
pub use crate::config::THEME_AUTO as AUTO;

/// The shipped themes, by name.
pub const BUILTIN: &[(&str, &str)] = &[
    ("default", include_str!("../themes/default.toml")),
    ("light", include_str!("../themes/light.toml")),
    ("mono", include_str!("../themes/mono.toml")),
    (
        "high-contrast",
        include_str!("../themes/high-contrast.toml"),
    ),
];

/// Styles by role.
#[derive(Debug, Clone, PartialEq)]
pub struct Theme {
    pub name: String,
    pub text: Style,
    pub muted: Style,
    pub border: Style,
    pub border_focus: Style,
    pub title: Style,
    pub ok: Style,
    pub warn: Style,
    pub crit: Style,
    pub loading: Style,
    pub stale: Style,
    pub partial: Style,
    pub failing: Style,
    pub selection: Style,
    pub accent: Style,
    pub status_bar: Style,
    pub threshold_warn: Style,
    pub threshold_crit: Style,
    /// Colours for chart series, used in turn.
    pub series: Vec<Style>,
    /// The terminal's own background and foreground the theme is made for (what "reset"
    /// means): the contrast test measures the roles against them.
    pub assumed_background: Color,
    pub assumed_foreground: Color,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTheme {
    name: Option<String>,
    assumed: Option<RawAssumed>,
    roles: RawRoles,
}

/// `[assumed]`: the terminal colours the theme is made for.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawAssumed {
    background: Option<Spanned<String>>,
    foreground: Option<Spanned<String>>,
}

macro_rules! roles {
    ($($role:ident),* $(,)?) => {
        #[derive(Debug, Deserialize)]
        #[serde(deny_unknown_fields)]
        struct RawRoles {
            $($role: Option<Spanned<RawStyle>>,)*
            series: Option<Vec<Spanned<RawStyle>>>,
        }

        fn apply(base: &mut Theme, raw: RawRoles, file: &str, text: &str) -> Result<(), Diagnostic> {
            $(if let Some(s) = raw.$role { base.$role = style_of(&s, file, text)?; })*
            if let Some(list) = raw.series {
                let styles: Result<Vec<Style>, Diagnostic> =
                    list.iter().map(|s| style_of(s, file, text)).collect();
                let styles = styles?;
                if !styles.is_empty() {
                    base.series = styles;
                }
            }
            Ok(())
        }
    };
}

roles!(
    text,
    muted,
    border,
    border_focus,
    title,
    ok,
    warn,
    crit,
    loading,
    stale,
    partial,
    failing,
    selection,
    accent,
    status_bar,
    threshold_warn,
    threshold_crit,
);

#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum RawStyle {
    Colour(String),
    Full {
        fg: Option<String>,
        bg: Option<String>,
        #[serde(default)]
        bold: bool,
        #[serde(default)]
        dim: bool,
        #[serde(default)]
        reversed: bool,
        #[serde(default)]
        underlined: bool,
    },
}

fn style_of(s: &Spanned<RawStyle>, file: &str, text: &str) -> Result<Style, Diagnostic> {
    let colour = |c: &str| {
        parse_colour(c).ok_or_else(|| {
            Diagnostic::at(
                file,
                text,
                Some(s.span()),
                format!(
                    "unknown colour \"{c}\": expected an ANSI name (\"red\", \"light-blue\", \"dark-gray\", \"reset\"), \"#rrggbb\" or 0-255"
                ),
            )
        })
    };
    Ok(match s.get_ref() {
        RawStyle::Colour(c) => Style::default().fg(colour(c)?),
        RawStyle::Full {
            fg,
            bg,
            bold,
            dim,
            reversed,
            underlined,
        } => {
            let mut st = Style::default();
            if let Some(fg) = fg {
                st = st.fg(colour(fg)?);
            }
            if let Some(bg) = bg {
                st = st.bg(colour(bg)?);
            }
            for (on, m) in [
                (*bold, Modifier::BOLD),
                (*dim, Modifier::DIM),
                (*reversed, Modifier::REVERSED),
                (*underlined, Modifier::UNDERLINED),
            ] {
                if on {
                    st = st.add_modifier(m);
                }
            }
            st
        }
    })
}

/// Parse a colour name, `#rrggbb` or an index 0-255. Never panics on any input.
pub fn parse_colour(s: &str) -> Option<Color> {
    let s = s.trim().to_ascii_lowercase().replace('_', "-");
    if let Some(hex) = s.strip_prefix('#') {
        if hex.len() != 6 || !hex.is_ascii() {
            return None;
        }
        let byte = |i: usize| u8::from_str_radix(hex.get(i..i + 2)?, 16).ok();
        return Some(Color::Rgb(byte(0)?, byte(2)?, byte(4)?));
    }
    if let Ok(i) = s.parse::<u8>() {
        return Some(Color::Indexed(i));
    }
    Some(match s.as_str() {
        "reset" | "default" => Color::Reset,
        "black" => Color::Black,
        "red" => Color::Red,
        "green" => Color::Green,
        "yellow" => Color::Yellow,
        "blue" => Color::Blue,
        "magenta" => Color::Magenta,
        "cyan" => Color::Cyan,
        "gray" | "grey" => Color::Gray,
        "dark-gray" | "dark-grey" => Color::DarkGray,
        "light-red" => Color::LightRed,
        "light-green" => Color::LightGreen,
        "light-yellow" => Color::LightYellow,
        "light-blue" => Color::LightBlue,
        "light-magenta" => Color::LightMagenta,
        "light-cyan" => Color::LightCyan,
        "white" => Color::White,
        _ => return None,
    })
}

impl Theme {
    /// Parse a theme file over the default (missing roles keep the default's style).
    pub fn parse(file: &str, text: &str) -> Result<Theme, Diagnostic> {
        let raw: RawTheme =
            toml::from_str(text).map_err(|e| Diagnostic::from_toml(file, text, &e))?;
        let mut theme = Theme::fallback();
        apply(&mut theme, raw.roles, file, text)?;
        if let Some(a) = raw.assumed {
            let colour = |c: &Spanned<String>| {
                parse_colour(c.get_ref()).ok_or_else(|| {
                    Diagnostic::at(
                        file,
                        text,
                        Some(c.span()),
                        format!(
                            "unknown colour \"{}\": expected an ANSI name, \"#rrggbb\" or 0-255",
                            c.get_ref()
                        ),
                    )
                })
            };
            if let Some(b) = &a.background {
                theme.assumed_background = colour(b)?;
            }
            if let Some(f) = &a.foreground {
                theme.assumed_foreground = colour(f)?;
            }
        }
        theme.name = raw.name.unwrap_or_else(|| file.to_string());
        Ok(theme)
    }

    /// A shipped theme by name.
    pub fn builtin(name: &str) -> Option<Theme> {
        BUILTIN
            .iter()
            .find(|(n, _)| *n == name)
            .and_then(|(n, text)| Theme::parse(&format!("themes/{n}.toml"), text).ok())
    }

    /// The theme for this terminal: [`Theme::resolve`] with `NO_COLOR` and the terminal's
    /// background asked for (only when the theme is `auto`). Called before the terminal is put
    /// in the console's mode, so that the terminal's answer never reaches the key reader.
    pub fn for_terminal(requested: &str) -> (Theme, Option<String>) {
        Theme::resolve(
            requested,
            std::env::var_os("NO_COLOR").is_some(),
            background::detect,
        )
    }

    /// The theme to use: `NO_COLOR` wins; then `auto` (the default) picks the shipped theme
    /// for the background `detect` finds (dark when it finds none); then a shipped name or a
    /// file path; anything broken falls back to the default, with a warning to show in the
    /// status bar.
    pub fn resolve(
        requested: &str,
        no_color: bool,
        detect: impl FnOnce() -> Option<(Background, &'static str)>,
    ) -> (Theme, Option<String>) {
        if no_color {
            return (Theme::builtin("mono").unwrap_or_else(Theme::fallback), None);
        }
        if requested == AUTO {
            let background = detect().map_or(Background::Dark, |(b, how)| {
                tracing::info!("terminal background {b:?} (from {how})");
                b
            });
            return (
                Theme::builtin(background.theme()).unwrap_or_else(Theme::fallback),
                None,
            );
        }
        if let Some(t) = Theme::builtin(requested) {
            return (t, None);
        }
        let warning = match std::fs::read_to_string(requested) {
            Ok(text) => match Theme::parse(requested, &text) {
                Ok(t) => return (t, None),
                Err(d) => format!("theme: {}; using the default theme", d.headline()),
            },
            Err(e) => format!(
                "theme \"{}\" is neither {AUTO}, a shipped theme ({}) nor a readable file ({e}); using the default theme",
                crate::sanitize::line(requested),
                BUILTIN
                    .iter()
                    .map(|(n, _)| *n)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        };
        (
            Theme::builtin("default").unwrap_or_else(Theme::fallback),
            Some(warning),
        )
    }

    /// A theme built in code, for when even the embedded default failed to parse.
    pub fn fallback() -> Theme {
        let fg = |c| Style::default().fg(c);
        let bold = Style::default().add_modifier(Modifier::BOLD);
        Theme {
            name: "fallback".into(),
            text: Style::default(),
            muted: fg(Color::DarkGray),
            border: fg(Color::DarkGray),
            border_focus: fg(Color::Cyan).add_modifier(Modifier::BOLD),
            title: bold,
            ok: fg(Color::Green),
            warn: fg(Color::Yellow).add_modifier(Modifier::BOLD),
            crit: fg(Color::Red).add_modifier(Modifier::BOLD),
            loading: fg(Color::Blue),
            stale: fg(Color::Yellow),
            partial: fg(Color::Magenta),
            failing: fg(Color::Red).add_modifier(Modifier::BOLD),
            selection: Style::default().add_modifier(Modifier::REVERSED),
            accent: fg(Color::Cyan),
            status_bar: Style::default().add_modifier(Modifier::REVERSED),
            threshold_warn: fg(Color::Yellow),
            threshold_crit: fg(Color::Red),
            series: vec![fg(Color::Cyan), fg(Color::Magenta), fg(Color::Green)],
            assumed_background: Color::Black,
            assumed_foreground: Color::Gray,
        }
    }

    /// The style of series number `i`.
    pub fn series(&self, i: usize) -> Style {
        if self.series.is_empty() {
            return self.text;
        }
        self.series[i % self.series.len()]
    }
}

#[cfg(test)]
mod contrast;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_shipped_theme_parses() {
        for (name, text) in BUILTIN {
            let t = Theme::parse(name, text).unwrap_or_else(|d| panic!("{d}"));
            assert_eq!(t.name, *name);
        }
    }

    #[test]
    fn the_default_theme_uses_only_ansi_colours_and_no_background() {
        let t = Theme::builtin("default").unwrap();
        let mut styles = vec![
            t.text,
            t.muted,
            t.border,
            t.border_focus,
            t.title,
            t.ok,
            t.warn,
            t.crit,
            t.loading,
            t.stale,
            t.partial,
            t.failing,
            t.selection,
            t.accent,
            t.status_bar,
            t.threshold_warn,
            t.threshold_crit,
        ];
        styles.extend(t.series.iter().copied());
        for s in styles {
            assert!(
                !matches!(s.fg, Some(Color::Rgb(..) | Color::Indexed(_))),
                "{s:?}"
            );
            assert!(s.bg.is_none() || s.bg == Some(Color::Reset), "{s:?}");
        }
    }

    #[test]
    fn no_color_selects_mono() {
        let (t, warning) = Theme::resolve("high-contrast", true, || None);
        assert_eq!(t.name, "mono");
        assert!(warning.is_none());
    }

    #[test]
    fn auto_picks_the_theme_made_for_the_terminals_background() {
        for (found, expect) in [
            (Some((Background::Light, "OSC 11")), "light"),
            (Some((Background::Dark, "COLORFGBG")), "default"),
            (None, "default"),
        ] {
            let (t, warning) = Theme::resolve(AUTO, false, || found);
            assert_eq!(t.name, expect, "{found:?}");
            assert!(warning.is_none());
        }
        // A theme named, or NO_COLOR, is never second-guessed (and the terminal never asked).
        let asked = |_: &str| -> Option<(Background, &'static str)> { panic!("asked") };
        assert_eq!(
            Theme::resolve("default", false, || asked("")).0.name,
            "default"
        );
        assert_eq!(Theme::resolve(AUTO, true, || asked("")).0.name, "mono");
    }

    #[test]
    fn a_broken_theme_falls_back_and_says_why() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bad.toml");
        std::fs::write(&path, "name = \"bad\"\n[roles]\nok = \"chartreuse\"\n").unwrap();
        let (t, warning) = Theme::resolve(path.to_str().unwrap(), false, || None);
        assert_eq!(t.name, "default");
        let warning = warning.unwrap();
        assert!(warning.contains(":3:"), "{warning}");
        assert!(warning.contains("chartreuse"), "{warning}");

        let (t, warning) = Theme::resolve("no-such-theme", false, || None);
        assert_eq!(t.name, "default");
        assert!(warning.unwrap().contains("no-such-theme"));
    }

    #[test]
    fn colour_parser_never_panics() {
        for s in [
            "",
            "#",
            "#12",
            "#ééé",
            "#zzzzzz",
            "256",
            "-1",
            "Light_Blue",
            "#0a0B0c",
        ] {
            let _ = parse_colour(s);
        }
        assert_eq!(parse_colour("Light_Blue"), Some(Color::LightBlue));
        assert_eq!(parse_colour("#0a0B0c"), Some(Color::Rgb(10, 11, 12)));
        assert_eq!(parse_colour("#ééé"), None);
    }
}
