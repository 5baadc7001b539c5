//! The hidden marker in every body warroom writes on GitHub.
//!
//! An HTML comment does not show on GitHub but stays in the body, so warroom can find what it
//! created before: when publishing again (to update instead of duplicating) and after an
//! ambiguous failure (a create answered with a 502 may have created the issue), before
//! anything is posted again.

/// What a body is, for one incident: `postmortem` or `action:AI-2`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Marker {
    pub incident: String,
    pub key: String,
}

/// Keeps only characters a marker may hold, so no text can end the comment early.
fn safe(s: &str) -> String {
    s.chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | ':' | '.' | '_'))
        .collect()
}

impl Marker {
    /// The marker of an incident's postmortem.
    pub fn postmortem(incident: &str) -> Marker {
        Marker {
            incident: safe(incident),
            key: "postmortem".into(),
        }
    }

    /// The marker of an incident's postmortem pull request (distinct from the issue's, so the
    /// two forms in one repository never stand for each other).
    pub fn postmortem_pr(incident: &str) -> Marker {
        Marker {
            incident: safe(incident),
            key: "postmortem-pr".into(),
        }
    }

    /// The marker of one action item (`AI-2`).
    pub fn action(incident: &str, item: &str) -> Marker {
        Marker {
            incident: safe(incident),
            key: format!("action:{}", safe(item)),
        }
    }

    /// The comment as written at the end of a body.
    pub fn render(&self) -> String {
        format!(
            "<!-- warroom:v1 incident={} key={} -->",
            self.incident, self.key
        )
    }

    /// True when `body` carries this marker.
    pub fn is_in(&self, body: &str) -> bool {
        body.contains(&self.render())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers_are_distinct_and_cannot_be_broken_out_of() {
        let a = Marker::action("2026-11-29-1", "AI-1");
        let b = Marker::action("2026-11-29-1", "AI-10");
        assert!(a.is_in(&format!("text\n{}", a.render())));
        assert!(!a.is_in(&b.render()), "AI-1 must not match AI-10");
        assert!(
            !Marker::postmortem("2026-11-29-2").is_in(&Marker::postmortem("2026-11-29-1").render())
        );
        let evil = Marker::action("x", "AI-1 --> <script>");
        assert_eq!(evil.render().matches("-->").count(), 1);
    }
}
