use super::*;

fn invalid(text: &str) -> Diagnostic {
    match Config::parse("w.toml", text) {
        Err(ConfigError::Invalid(d)) => d,
        other => panic!("expected an error for {text:?}, got {other:?}"),
    }
}

#[test]
fn empty_file_gives_the_defaults() {
    let c = Config::parse("w.toml", "").unwrap();
    // No `[[panel]]`: the dashboard is discovered (a rehearsal asks for the simulator's).
    assert!(c.panels.is_empty());
    assert_eq!(c.refresh, Duration::from_secs(5));
    assert_eq!(c.keys, KeyOverrides::default());
}

#[test]
fn a_full_file_parses() {
    let c = Config::parse(
        "w.toml",
        r#"
refresh = "10s"
range = "6h"
timezone = "Europe/London"
theme = "mono"

[prometheus]
url = "http://127.0.0.1:9090/prom/"
timeout = "5s"
headers = { "X-Scope-OrgID" = "tenant-1" }
auth = { kind = "bearer", token_env = "PROM_TOKEN" }

[keys.dashboard]
quit = ["q", "ctrl-c"]

[[panel]]
title = "Pool"
query = "up"
unit = "percent"
warn = 0.8
crit = 0.9
"#,
    )
    .unwrap();
    assert_eq!(
        c.prometheus.url.as_deref(),
        Some("http://127.0.0.1:9090/prom")
    );
    assert_eq!(
        c.prometheus.headers,
        vec![("X-Scope-OrgID".into(), "tenant-1".into())]
    );
    assert_eq!(
        c.prometheus.auth,
        AuthConfig::Bearer {
            token: SecretRef::Env("PROM_TOKEN".into())
        }
    );
    assert_eq!(c.timezone, chrono_tz::Europe::London);
    assert_eq!(c.panels.len(), 1);
    assert_eq!(c.range, Duration::from_secs(6 * 3600));
}

#[test]
fn unknown_keys_name_their_place() {
    let d = invalid("refresh = \"5s\"\nrefersh = \"5s\"\n");
    assert_eq!((d.file.as_str(), d.line, d.col), ("w.toml", 2, 1));
    assert!(d.message.contains("refersh"), "{d}");
}

#[test]
fn bad_values_name_their_place() {
    let d = invalid("timezone = \"Mars/Olympus\"\n");
    assert_eq!((d.line, d.col), (1, 12));
    assert!(d.message.contains("IANA"), "{d}");

    let d = invalid("\n\nrefresh = \"0s\"\n");
    assert_eq!(d.line, 3);
    assert!(d.message.contains("out of range"), "{d}");

    let d = invalid("[prometheus]\nurl = \"ftp://x\"\n");
    assert_eq!(d.line, 2);

    let d = invalid("[[panel]]\ntitle = \"p\"\nquery = \"up\"\nwarn = 5\ncrit = 1\n");
    assert!(d.message.contains("wrong order"), "{d}");
    assert_eq!(d.line, 1);

    let d = invalid("[prometheus]\nauth = { kind = \"bearer\" }\n");
    assert!(d.message.contains("token_env"), "{d}");

    let d = invalid("[[panel]]\ntitle = \"p\"\nquery = \"up\"\nunit = \"furlongs\"\n");
    assert_eq!(d.line, 4, "{d}");
}

#[test]
fn secrets_cannot_be_written_in_the_config() {
    let d = invalid("[prometheus]\nauth = { kind = \"bearer\", token = \"s3cr3t\" }\n");
    assert!(d.message.contains("unknown field `token`"), "{d}");
    assert!(d.message.contains("token_env"), "{d}");
}

#[test]
fn units_format_for_people() {
    assert_eq!(Unit::Percent.format(0.953), "95.3%");
    assert_eq!(Unit::Seconds.format(0.042), "42ms");
    assert_eq!(Unit::Seconds.format(11.2), "11.20s");
    assert_eq!(Unit::Ratio.format(2.6), "2.60×");
    assert_eq!(Unit::Count.format(12500.0), "12.5k");
    assert_eq!(Unit::Count.format(f64::NAN), "NaN");
    assert_eq!(Unit::Bytes.format(2048.0), "2.0KiB");
}

#[test]
fn the_export_gap_limit_is_read_and_checked() {
    assert_eq!(
        Config::parse("w.toml", "").unwrap().gap_limit,
        Duration::from_secs(1800)
    );
    let c = Config::parse("w.toml", "[export]\ngap_limit = \"45m\"\n").unwrap();
    assert_eq!(c.gap_limit, Duration::from_secs(45 * 60));
    let d = invalid("[export]\ngap_limit = \"5s\"\n");
    assert!(
        d.to_string().contains("gap_limit \"5s\" is out of range"),
        "{d}"
    );
    assert!(d.to_string().contains(":2:"), "the line is named: {d}");
}

#[test]
fn the_example_parses_as_it_is_and_with_every_setting_in_use() {
    // As printed: every setting commented out, so it is the defaults.
    let c = Config::parse("example.toml", EXAMPLE).unwrap_or_else(|e| panic!("{e}"));
    assert!(c.panels.is_empty() && c.github.is_none() && c.alertmanager.is_none());
    assert_eq!(c.refresh, Duration::from_secs(5));
    // With every "# key = value" line in use (prose is "## "), it sets every section.
    let used: String = EXAMPLE
        .lines()
        .map(|l| match l.strip_prefix("# ") {
            Some(setting) => format!("{setting}\n"),
            None => format!("{l}\n"),
        })
        .collect();
    // The two auth lines are alternatives: keep the first.
    let used = used.replacen(
        "auth = { kind = \"basic\", username = \"oncall\", password_file = \"~/.config/warroom/prom-pass\" }\n",
        "",
        1,
    );
    let c = Config::parse("example.toml", &used).unwrap_or_else(|e| panic!("{e}\n{used}"));
    assert_eq!(c.panels.len(), 1);
    assert_eq!(c.panels[0].title, "Pool saturation");
    assert_eq!(c.variables.len(), 1);
    assert_eq!(c.variables[0].all_value.as_deref(), Some(".*"));
    assert!(c.github.is_some() && c.alertmanager.is_some());
    assert_eq!(
        c.prometheus.url.as_deref(),
        Some("https://metrics.example.net/prometheus")
    );
    assert_eq!(c.runbook_vars.len(), 2);
    assert_eq!(c.keys.modes["dashboard"]["refresh"], ["r", "f5"]);
    assert_eq!(c.gap_limit, Duration::from_secs(30 * 60));
    let share = c.share.expect("[share]");
    assert_eq!(
        (share.url.as_str(), share.replicas),
        ("nats://nats.example.net:4222", 3)
    );
    // No line is left that is neither prose, a setting, a table nor blank.
    for l in EXAMPLE.lines() {
        assert!(
            l.is_empty()
                || l.starts_with("## ")
                || l == "##"
                || l.starts_with("# ")
                || l.starts_with('['),
            "{l:?}"
        );
    }
}

#[test]
fn variables_parse_and_round_trip() {
    let text = r#"
[[panel]]
title = "CPU"
query = 'rate(cpu{instance=~"$instance", job="${job}"}[$__rate_interval])'

[[variable]]
name = "job"
kind = "custom"
query = "node,db"

[[variable]]
name = "instance"
query = 'label_values(up{job="$job"}, instance)'
current = ["a:9100", "b:9100"]
multi = true
include_all = true
regex = "/.*:9100/"
sort = 1
"#;
    let c = Config::parse("w.toml", text).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(c.variables.len(), 2);
    let v = &c.variables[1];
    assert_eq!(v.kind, crate::variables::VarKind::Query);
    assert_eq!(v.current, ["a:9100", "b:9100"]);
    assert!(v.multi && v.include_all);
    assert_eq!(v.path, "[[variable]] instance");
    // What the importer writes reads back the same.
    let again = format!(
        "{}\n{}",
        panels::render_toml(&c.panels),
        variables::render_toml(&c.variables)
    );
    let d = Config::parse("w.toml", &again).unwrap_or_else(|e| panic!("{e}\n{again}"));
    assert_eq!(d.variables, c.variables);
    assert_eq!(d.panels, c.panels);
}

#[test]
fn variables_are_checked_with_their_line() {
    let d = invalid("[[variable]]\nname = \"a b\"\nquery = \"x\"\n");
    assert_eq!(d.line, 1, "{d}");
    assert!(d.message.contains("not a name"), "{d}");
    let d = invalid("[[variable]]\nname = \"a\"\nkind = \"adhoc\"\n");
    assert!(d.message.contains("expected query, custom"), "{d}");
    let d = invalid("[[variable]]\nname = \"a\"\n");
    assert!(d.message.contains("has no query"), "{d}");
    let d = invalid(
        "[[variable]]\nname = \"a\"\nquery = \"x\"\n[[variable]]\nname = \"a\"\nquery = \"y\"\n",
    );
    assert_eq!(d.line, 4, "{d}");
    let d = invalid(
        "[[variable]]\nname = \"a\"\nquery = \"x\"\n\n[[panel]]\ntitle = \"T\"\nquery = 'up{i=\"$b\"}'\n",
    );
    assert_eq!(d.line, 5, "{d}");
    assert!(
        d.message
            .contains("uses $b, which no [[variable]] declares"),
        "{d}"
    );
    let d = invalid("[[variable]]\nname = \"a\"\nquery = 'label_values(up{x=\"$zz\"}, i)'\n");
    assert!(d.message.contains("$a's query uses $zz"), "{d}");
    // `$1` of label_replace and `$__interval` are not variables.
    Config::parse(
        "w.toml",
        "[[panel]]\ntitle = \"T\"\nquery = 'label_replace(rate(up[$__interval]), \"a\", \"$1\", \"b\", \"(.*)\")'\n",
    )
    .unwrap();
}
