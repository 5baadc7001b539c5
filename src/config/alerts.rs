//! `[alerts]`: how the alert intake polls Prometheus's `/api/v1/alerts` and Alertmanager's
//! `/api/v2/alerts`. Alertmanager's address is `[alertmanager] url`; Prometheus's alerts come
//! from the configured Prometheus (with its auth and headers).
//!
//! ```toml
//! [alerts]
//! prometheus = true     # poll Prometheus's own alerts (default: yes, when a URL is known)
//! interval = "15s"      # time between two polls of one source
//! timeout = "10s"       # deadline of one request
//! ```

use serde::Deserialize;
use serde_spanned::Spanned;
use std::time::Duration;

/// The alert intake's settings, validated.
#[derive(Debug, Clone, PartialEq)]
pub struct AlertsConfig {
    /// Poll Prometheus's `/api/v1/alerts` (when a Prometheus URL is known).
    pub prometheus: bool,
    /// Time between two polls of one source.
    pub interval: Duration,
    /// Deadline of one request, connection and body included.
    pub timeout: Duration,
    /// `[alertmanager] headers`: sent with every request to Alertmanager (a Mimir or Cortex
    /// tenant); `None`: the `[prometheus] headers` are (one tenant for both, as Mimir has it).
    pub alertmanager_headers: Option<Vec<(String, String)>>,
    /// `[alertmanager] silence_ceiling`: the longest silence warroom makes (issue 35).
    pub silence_ceiling: Duration,
}

impl AlertsConfig {
    /// The headers requests to Alertmanager carry, given Prometheus's.
    pub fn alertmanager_headers(&self, prometheus: &[(String, String)]) -> Vec<(String, String)> {
        self.alertmanager_headers
            .clone()
            .unwrap_or_else(|| prometheus.to_vec())
    }
}

impl Default for AlertsConfig {
    fn default() -> Self {
        AlertsConfig {
            prometheus: true,
            interval: Duration::from_secs(15),
            timeout: Duration::from_secs(10),
            alertmanager_headers: None,
            silence_ceiling: Duration::from_secs(12 * 3600),
        }
    }
}

/// `[alerts]` as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawAlerts {
    prometheus: Option<bool>,
    interval: Option<Spanned<String>>,
    timeout: Option<Spanned<String>>,
}

impl RawAlerts {
    /// Checks the section; an error carries the span of the bad value and its message.
    pub(super) fn validate(self) -> Result<AlertsConfig, (std::ops::Range<usize>, String)> {
        let mut cfg = AlertsConfig::default();
        if let Some(p) = self.prometheus {
            cfg.prometheus = p;
        }
        if let Some(i) = self.interval {
            cfg.interval = super::parse_duration(&i, "[alerts] interval", 1..=3600)
                .map_err(|m| (i.span(), m))?;
        }
        if let Some(t) = self.timeout {
            cfg.timeout = super::parse_duration(&t, "[alerts] timeout", 1..=300)
                .map_err(|m| (t.span(), m))?;
        }
        Ok(cfg)
    }
}

#[cfg(test)]
mod tests {
    use crate::config::{Config, ConfigError};
    use std::time::Duration;

    #[test]
    fn defaults_and_a_full_section() {
        let c = Config::parse("w.toml", "").unwrap();
        assert!(c.alerts.prometheus);
        assert_eq!(c.alerts.interval, Duration::from_secs(15));
        let c = Config::parse(
            "w.toml",
            "[alerts]\nprometheus = false\ninterval = \"2s\"\ntimeout = \"3s\"\n",
        )
        .unwrap();
        assert!(!c.alerts.prometheus);
        assert_eq!(
            (c.alerts.interval, c.alerts.timeout),
            (Duration::from_secs(2), Duration::from_secs(3))
        );
    }

    #[test]
    fn the_silence_ceiling_and_alertmanager_headers() {
        let c = Config::parse("w.toml", "").unwrap();
        assert_eq!(c.alerts.silence_ceiling, Duration::from_secs(12 * 3600));
        let text = "[prometheus]\nheaders = { \"X-Scope-OrgID\" = \"t1\" }\n\
                    [alertmanager]\nurl = \"http://127.0.0.1:9093\"\n";
        let c = Config::parse("w.toml", text).unwrap();
        let tenant = vec![("X-Scope-OrgID".to_string(), "t1".to_string())];
        assert_eq!(c.alerts.alertmanager_headers(&c.prometheus.headers), tenant);
        let text =
            format!("{text}silence_ceiling = \"2h\"\nheaders = {{ \"X-Scope-OrgID\" = \"t2\" }}\n");
        let c = Config::parse("w.toml", &text).unwrap();
        assert_eq!(c.alerts.silence_ceiling, Duration::from_secs(7200));
        assert_eq!(
            c.alerts.alertmanager_headers(&c.prometheus.headers)[0].1,
            "t2"
        );
        let bad = "[alertmanager]\nurl = \"http://a:9093\"\nsilence_ceiling = \"5s\"\n";
        let Err(ConfigError::Invalid(d)) = Config::parse("w.toml", bad) else {
            panic!("a 5 s ceiling was accepted");
        };
        assert!(d.to_string().contains("w.toml:3:"), "{d}");
    }

    #[test]
    fn bad_values_point_at_themselves() {
        let text = "[alerts]\ninterval = \"0s\"\n";
        let Err(ConfigError::Invalid(d)) = Config::parse("w.toml", text) else {
            panic!("a zero interval was accepted");
        };
        let shown = d.to_string();
        assert!(shown.contains("w.toml:2:12"), "{shown}");
        assert!(shown.contains("[alerts] interval \"0s\""), "{shown}");
        let Err(ConfigError::Invalid(d)) =
            Config::parse("w.toml", "[alerts]\nintervall = \"5s\"\n")
        else {
            panic!("an unknown key was accepted");
        };
        assert!(d.to_string().contains("w.toml:2:1"), "{d}");
    }
}
