//! How errors reach the person at the terminal: one line saying what was wrong and what to do
//! (every domain error is written that way), with no source locations, backtraces or colour
//! unless `WARROOM_LOG_LEVEL=debug` asks for the developer's report.

use std::io::IsTerminal;
use std::process::ExitCode;

/// The exit status of a command that failed.
pub const EXIT_FAILED: u8 = 1;

/// Whether the developer's report (locations, backtraces) is wanted.
pub fn debug_wanted() -> bool {
    std::env::var("WARROOM_LOG_LEVEL").is_ok_and(|v| v.trim().eq_ignore_ascii_case("debug"))
}

/// Whether stderr may carry colour: a terminal, and no `NO_COLOR`.
fn colour() -> bool {
    std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none()
}

/// Set up error reporting: color-eyre's full report only for a developer (`debug`), coloured
/// only on a terminal; otherwise a panic says one line and where the log is.
pub fn install(debug: bool) {
    if debug {
        let theme = if colour() {
            color_eyre::config::Theme::dark()
        } else {
            color_eyre::config::Theme::new()
        };
        let _ = color_eyre::config::HookBuilder::default()
            .theme(theme)
            .install();
        return;
    }
    std::panic::set_hook(Box::new(|info| {
        // The terminal first: a panic inside the console must not leave it in raw mode.
        let _ = crossterm::terminal::disable_raw_mode();
        let _ = crossterm::execute!(std::io::stderr(), crossterm::terminal::LeaveAlternateScreen);
        let what = info
            .payload()
            .downcast_ref::<&str>()
            .map(std::string::ToString::to_string)
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "an unexpected error".into());
        tracing::error!(panic = %what, location = ?info.location(), "warroom panicked");
        eprintln!(
            "warroom: internal error: {}; this is a bug: please report it (WARROOM_LOG_LEVEL=debug shows where)",
            warroom_line(&what)
        );
    }));
}

/// The message of `e` and its causes as one line.
pub fn one_line(e: &color_eyre::Report) -> String {
    let mut parts: Vec<String> = Vec::new();
    for cause in e.chain() {
        let text = warroom_line(&cause.to_string());
        // A cause already quoted by its parent's message is not said twice.
        if !parts.iter().any(|p| p.contains(&text)) {
            parts.push(text);
        }
    }
    parts.join(": ")
}

fn warroom_line(s: &str) -> String {
    let flat: Vec<&str> = s.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    crate::sanitize::line(&flat.join(" · ")).into_owned()
}

/// Print `e` for the person at the terminal and give the failure's exit status.
pub fn report(e: &color_eyre::Report, debug: bool) -> ExitCode {
    if debug {
        eprintln!("warroom: {e:?}");
    } else {
        eprintln!("warroom: {}", one_line(e));
    }
    ExitCode::from(EXIT_FAILED)
}

/// Restore the default action of SIGPIPE (Rust ignores it, so a write to a closed pipe is an
/// error and `println!` panics).
pub fn default_sigpipe() {
    #[cfg(unix)]
    // SAFETY: setting a signal's disposition to its default before any thread starts.
    #[allow(unsafe_code)]
    unsafe {
        let _ = nix::sys::signal::signal(
            nix::sys::signal::Signal::SIGPIPE,
            nix::sys::signal::SigHandler::SigDfl,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_error_and_its_causes_are_one_clean_line() {
        let e = color_eyre::eyre::eyre!("the cause\nacross two lines")
            .wrap_err("cannot open incident \"x\u{1b}[2J\"");
        let line = one_line(&e);
        assert!(!line.contains('\n') && !line.contains('\u{1b}'), "{line}");
        assert!(line.starts_with("cannot open incident"), "{line}");
        assert!(line.ends_with("the cause · across two lines"), "{line}");
    }
}
