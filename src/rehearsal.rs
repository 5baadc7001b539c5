//! Rehearsals: a simulated outage staged in this process ([`stage`]) on its own clock
//! ([`clock`]), recorded as an incident in simulated time ([`recording`], [`faults`]), with
//! runbooks bound to the stage ([`runbooks`]) and run as plays at chosen moments ([`plays`]),
//! headless ([`headless`]) or with the console opened on the stage (`warroom demo`), and
//! scored at the end ([`score`]). Below the console: nothing here imports `app` or `ui`.

pub mod clock;
pub mod error;
pub mod faults;
pub mod headless;
pub mod history;
pub mod plays;
pub mod recording;
pub mod runbooks;
pub mod score;
pub mod stage;

pub use stage::{Stage, StageSpec};

/// A rehearsal's panels: the config's `[[panel]]` if it has any, else the simulator's.
pub fn panels(config: &crate::config::Config) -> Vec<crate::config::PanelConfig> {
    if config.panels.is_empty() {
        crate::metrics::presets::sim_panels()
    } else {
        config.panels.clone()
    }
}

/// Join the hard-wrapped lines of each paragraph so the overlay can wrap them to its width.
pub fn reflow(text: &str) -> String {
    text.trim()
        .split("\n\n")
        .map(|p| p.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect::<Vec<_>>()
        .join("\n\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn briefings_are_reflowed_by_paragraph() {
        assert_eq!(reflow("a b\nc\n\nd\ne\n"), "a b c\n\nd e");
    }
}
