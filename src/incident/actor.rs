//! Who writes a record: the `actor` of every note, status change and action item, whichever
//! front end it comes from (the console, `warroom incident`, a game day's plays).

/// The person at the keyboard: `$WARROOM_ACTOR`, then `$USER`, then `operator`. An empty or
/// blank value counts as unset, and the name is sanitized (it is shown and exported).
pub fn current() -> String {
    from_env(|k| std::env::var(k).ok())
}

/// [`current`] over any environment lookup (tests pass their own).
pub fn from_env(var: impl Fn(&str) -> Option<String>) -> String {
    ["WARROOM_ACTOR", "USER"]
        .iter()
        .filter_map(|k| var(k))
        .find(|s| !s.trim().is_empty())
        .map(|s| crate::sanitize::line(s.trim()).into_owned())
        .unwrap_or_else(|| "operator".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_actor_comes_from_warroom_actor_then_user_and_blank_counts_as_unset() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| {
                pairs
                    .iter()
                    .find(|(n, _)| *n == k)
                    .map(|(_, v)| v.to_string())
            }
        };
        assert_eq!(
            from_env(env(&[("WARROOM_ACTOR", "ana"), ("USER", "root")])),
            "ana"
        );
        assert_eq!(
            from_env(env(&[("WARROOM_ACTOR", " "), ("USER", "root")])),
            "root"
        );
        assert_eq!(from_env(env(&[("USER", "")])), "operator");
        assert_eq!(from_env(env(&[])), "operator");
        assert!(!from_env(env(&[("USER", "a\u{1b}]0;x\u{7}")])).contains('\u{1b}'));
    }
}
