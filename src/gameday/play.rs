//! Plays: the runbooks a headless rehearsal runs, and when (`pool-exhaustion@+3m`).

use chrono::NaiveTime;
use std::time::Duration;

/// When a play starts, in the scenario's terms.
#[derive(Debug, Clone, PartialEq)]
pub enum When {
    /// This long after the scenario's first fault.
    AfterFault(Duration),
    /// At this time on the scenario's clock (its `start_clock` is simulated second 0).
    Clock(NaiveTime),
}

/// One runbook run at one moment.
#[derive(Debug, Clone, PartialEq)]
pub struct Play {
    pub runbook: String,
    pub when: When,
}

impl Play {
    /// Parses `RUNBOOK@+DURATION` or `RUNBOOK@HH:MM[:SS]`.
    pub fn parse(text: &str) -> Result<Play, String> {
        let Some((runbook, when)) = text.rsplit_once('@') else {
            return Err(format!(
                "--play \"{text}\": expected RUNBOOK@WHEN, e.g. \"pool-exhaustion@+3m\" or \"disable-retries@07:05\""
            ));
        };
        if runbook.is_empty() {
            return Err(format!("--play \"{text}\": the runbook name is empty"));
        }
        let when = if let Some(after) = when.strip_prefix('+') {
            When::AfterFault(humantime::parse_duration(after).map_err(|e| {
                format!("--play \"{text}\": \"{after}\" is not a duration such as 3m or 90s ({e})")
            })?)
        } else {
            let time = NaiveTime::parse_from_str(when, "%H:%M:%S")
                .or_else(|_| NaiveTime::parse_from_str(when, "%H:%M"))
                .map_err(|_| {
                    format!("--play \"{text}\": \"{when}\" is neither +DURATION nor HH:MM")
                })?;
            When::Clock(time)
        };
        Ok(Play {
            runbook: runbook.to_string(),
            when,
        })
    }

    /// The simulated second at which the play starts, for a scenario whose clock starts at
    /// `start_clock` and whose first fault is at `fault_at` (if any).
    pub fn at(&self, start_clock: NaiveTime, fault_at: Option<f64>) -> Result<f64, String> {
        match &self.when {
            When::AfterFault(d) => fault_at.map(|f| f + d.as_secs_f64()).ok_or_else(|| {
                format!(
                    "--play \"{}\": the scenario has no fault to count from; use HH:MM",
                    self.runbook
                )
            }),
            When::Clock(t) => {
                let secs = (*t - start_clock).num_seconds();
                // A time before the start is on the next day, as on a night shift.
                Ok(secs.rem_euclid(86_400) as f64)
            }
        }
    }
}

/// `rb`'s duration variables with their defaults divided by `speed`, as (name, value).
pub fn simulated_durations(
    rb: &crate::runbook::model::Runbook,
    speed: f64,
) -> Vec<(String, String)> {
    rb.variables
        .iter()
        .filter(|v| v.kind == crate::runbook::model::VarKind::Duration)
        .filter_map(|v| {
            let d = humantime::parse_duration(v.default.as_deref()?).ok()?;
            let ms = (d.as_secs_f64() * 1000.0 / speed)
                .round()
                .max(MIN_SCALED_MS);
            Some((v.name.clone(), format!("{}ms", ms as u64)))
        })
        .collect()
}

/// The shortest scaled duration: a gate read more often than this only measures noise.
const MIN_SCALED_MS: f64 = 100.0;

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn clock(s: &str) -> NaiveTime {
        NaiveTime::parse_from_str(s, "%H:%M").unwrap()
    }

    #[test]
    fn plays_parse_in_both_forms() {
        let p = Play::parse("pool-exhaustion@+3m").unwrap();
        assert_eq!(p.runbook, "pool-exhaustion");
        assert_eq!(p.when, When::AfterFault(Duration::from_secs(180)));
        assert_eq!(p.at(clock("06:40"), Some(1200.0)).unwrap(), 1380.0);
        let p = Play::parse("disable-retries@07:05").unwrap();
        assert_eq!(p.at(clock("06:40"), None).unwrap(), 1500.0);
        // A night shift: 00:10 after a 22:30 start is the next day.
        let p = Play::parse("x@00:10").unwrap();
        assert_eq!(p.at(clock("22:30"), None).unwrap(), 6000.0);
    }

    #[test]
    fn duration_variables_follow_the_simulated_clock() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("runbooks");
        let loaded = crate::runbook::load::load_dir(&dir).unwrap();
        let vars = |name: &str| {
            let rb = loaded.runbooks.iter().find(|r| r.name == name).unwrap();
            simulated_durations(rb, 10.0)
        };
        let pool = vars("pool-exhaustion");
        assert!(
            pool.contains(&("interval".into(), "1000ms".into())),
            "{pool:?}"
        );
        assert!(pool.contains(&("soak".into(), "1500ms".into())), "{pool:?}");
        // Not a duration variable: the rate window is a PromQL string, already simulated time.
        assert!(!pool.iter().any(|(k, _)| k == "window"), "{pool:?}");
        assert!(vars("disable-retries").is_empty());
    }

    #[test]
    fn bad_plays_say_what_was_expected() {
        for bad in ["pool-exhaustion", "@+3m", "x@+soon", "x@25:99"] {
            let e = Play::parse(bad).unwrap_err();
            assert!(e.contains("--play"), "{bad}: {e}");
        }
        let p = Play::parse("x@+1m").unwrap();
        assert!(p.at(clock("06:40"), None).unwrap_err().contains("no fault"));
    }
}
