//! The hidden marker in every body warroom writes on GitHub.
//!
//! An HTML comment does not show on GitHub but stays in the body, so warroom can find what it
//! created before: when publishing again (to update instead of duplicating) and after an
//! ambiguous failure (a create answered with a 502 may have created the issue), before
//! anything is posted again.
//!
//! The marker names the incident by its local id (`2026-12-01-1`, for people) and by its
//! globally unique id (`uid=…`), because local ids repeat across machines and data dirs: two
//! incidents with the same local id never find each other's issues. A marker written before
//! incidents had a global id (`incident=… key=…` alone) is a [`Marker::legacy`] one: it is
//! trusted only for objects this incident's own outbox recorded.

/// What a body is, for one incident: `postmortem` or `action:AI-2`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Marker {
    pub incident: String,
    /// The incident's globally unique id; `None` in markers written before there was one.
    pub uid: Option<String>,
    pub key: String,
}

/// Keeps only characters a marker may hold, so no text can end the comment early.
fn safe(s: &str) -> String {
    s.chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | ':' | '.' | '_'))
        .collect()
}

impl Marker {
    fn new(incident: &str, uid: Option<&str>, key: String) -> Marker {
        Marker {
            incident: safe(incident),
            uid: uid.map(safe).filter(|u| !u.is_empty()),
            key,
        }
    }

    /// The marker of an incident's postmortem.
    pub fn postmortem(incident: &str, uid: Option<&str>) -> Marker {
        Marker::new(incident, uid, "postmortem".into())
    }

    /// The marker of an incident's postmortem pull request (distinct from the issue's, so the
    /// two forms in one repository never stand for each other).
    pub fn postmortem_pr(incident: &str, uid: Option<&str>) -> Marker {
        Marker::new(incident, uid, "postmortem-pr".into())
    }

    /// The marker of one action item (`AI-2`).
    pub fn action(incident: &str, uid: Option<&str>, item: &str) -> Marker {
        Marker::new(incident, uid, format!("action:{}", safe(item)))
    }

    /// The same marker as written before incidents had a global id.
    pub fn legacy(&self) -> Marker {
        Marker {
            uid: None,
            ..self.clone()
        }
    }

    /// The comment as written at the end of a body.
    pub fn render(&self) -> String {
        match &self.uid {
            Some(uid) => format!(
                "<!-- warroom:v1 incident={} uid={uid} key={} -->",
                self.incident, self.key
            ),
            None => format!(
                "<!-- warroom:v1 incident={} key={} -->",
                self.incident, self.key
            ),
        }
    }

    /// True when `body` carries this marker (a whole marker line: the legacy form of one
    /// marker is never found inside another incident's newer one).
    pub fn is_in(&self, body: &str) -> bool {
        let m = self.render();
        body.lines().any(|l| l.trim() == m)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers_are_distinct_and_cannot_be_broken_out_of() {
        let u = Some("0123abcd");
        let a = Marker::action("2026-11-29-1", u, "AI-1");
        let b = Marker::action("2026-11-29-1", u, "AI-10");
        assert!(a.is_in(&format!("text\n{}", a.render())));
        assert!(!a.is_in(&b.render()), "AI-1 must not match AI-10");
        assert!(
            !Marker::postmortem("2026-11-29-2", u)
                .is_in(&Marker::postmortem("2026-11-29-1", u).render())
        );
        let evil = Marker::action("x", Some("u --> <b>"), "AI-1 --> <script>");
        assert_eq!(evil.render().matches("-->").count(), 1);
    }

    #[test]
    fn the_global_id_tells_incidents_with_the_same_local_id_apart() {
        let a = Marker::postmortem("2026-12-01-1", Some("aaaa"));
        let b = Marker::postmortem("2026-12-01-1", Some("bbbb"));
        assert!(!a.is_in(&b.render()));
        assert!(
            !a.legacy().is_in(&b.render()),
            "a legacy marker is a whole line"
        );
        assert!(
            a.legacy()
                .is_in(&Marker::postmortem("2026-12-01-1", None).render())
        );
        assert_eq!(
            a.render(),
            "<!-- warroom:v1 incident=2026-12-01-1 uid=aaaa key=postmortem -->"
        );
    }
}
