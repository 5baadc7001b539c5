//! The game-day score as people read it.

/// The game-day score as lines of text.
pub fn score_text(s: &crate::sim::score::Score) -> String {
    let mins = |v: Option<f64>| v.map_or("not yet".to_string(), |s| format!("{:.1} min", s / 60.0));
    format!(
        "  time to first mitigation  {}\n  time to recovery          {}\n  failed requests           {:.0}\n  duplicate writes          {:.0}\n  minutes over objective    {}",
        mins(s.time_to_first_mitigation_s),
        mins(s.time_to_recovery_s),
        s.failed_logical_requests,
        s.duplicate_writes,
        s.minutes_over_objective
    )
}
