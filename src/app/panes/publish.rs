//! What the console shows of publishing (`P`): where postmortems go and whether a publication
//! is under way.

use crate::github::publish::Target;

/// The forms offered, in the dialog's order.
pub const TARGETS: [(Target, &str); 2] = [
    (
        Target::Pr,
        "as a pull request (postmortems/<date>-<slug>.md and its charts)",
    ),
    (Target::Issue, "as an issue (the Markdown, charts linked)"),
];

/// The publish state the console shows.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PublishPane {
    /// Where postmortems go (`[github] postmortems`); `None`: publishing is not configured.
    pub repo: Option<String>,
    /// A publication asked for here has not finished (or given up) yet.
    pub in_flight: bool,
}
