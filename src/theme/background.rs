//! Whether the terminal is dark or light, so that `theme = "auto"` (the default) picks a theme
//! made for it: the terminal is asked for its background colour (OSC 11, through
//! `terminal-colorsaurus`, which also tells a terminal that cannot answer from a slow one), and
//! when it cannot say, `COLORFGBG` (set by rxvt, Konsole and others) is read.

use std::time::Duration;

/// The terminal's background, as far as a theme cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Background {
    Dark,
    Light,
}

impl Background {
    /// The shipped theme made for this background.
    pub fn theme(self) -> &'static str {
        match self {
            Background::Dark => "default",
            Background::Light => "light",
        }
    }
}

/// How long the terminal has to answer. A terminal that cannot answer is told apart at once
/// (it answers the device-attributes query sent after it); this only bounds a terminal that
/// answers neither, or a very slow link. A late answer would reach the console as keys, so the
/// bound is not made shorter than an ssh round trip across an ocean.
const ASK_FOR: Duration = Duration::from_millis(500);

/// The background, and how it was found; `None` when nothing says.
pub fn detect() -> Option<(Background, &'static str)> {
    let mut options = terminal_colorsaurus::QueryOptions::default();
    options.timeout = ASK_FOR;
    match terminal_colorsaurus::theme_mode(options) {
        Ok(terminal_colorsaurus::ThemeMode::Dark) => return Some((Background::Dark, "OSC 11")),
        Ok(terminal_colorsaurus::ThemeMode::Light) => return Some((Background::Light, "OSC 11")),
        Err(e) => tracing::debug!("the terminal did not say its background: {e}"),
    }
    std::env::var("COLORFGBG")
        .ok()
        .and_then(|v| from_colorfgbg(&v))
        .map(|b| (b, "COLORFGBG"))
}

/// `COLORFGBG` is `fg;bg` (or `fg;default;bg`), ANSI colour numbers: the background is the
/// last field; 7 (light grey) and 9 to 15 (the bright colours but 8, dark grey) are light.
pub fn from_colorfgbg(value: &str) -> Option<Background> {
    let bg: u8 = value.rsplit(';').next()?.trim().parse().ok()?;
    match bg {
        7 | 9..=15 => Some(Background::Light),
        0..=6 | 8 => Some(Background::Dark),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colorfgbg_reads_the_background_field() {
        assert_eq!(from_colorfgbg("15;0"), Some(Background::Dark));
        assert_eq!(from_colorfgbg("0;15"), Some(Background::Light));
        assert_eq!(from_colorfgbg("0;default;15"), Some(Background::Light));
        assert_eq!(from_colorfgbg("7;8"), Some(Background::Dark));
        assert_eq!(from_colorfgbg("0;7"), Some(Background::Light));
        for unknown in ["", "15;", "15;default", "0;300", "light"] {
            assert_eq!(from_colorfgbg(unknown), None, "{unknown:?}");
        }
    }
}
