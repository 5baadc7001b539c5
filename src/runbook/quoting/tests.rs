use super::*;
use crate::runbook::template::{Context, Template, Values};

fn render(text: &str, ctx: Context, pairs: &[(&str, &str)]) -> Result<String, String> {
    let values: Values = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    Template::parse(text)
        .unwrap()
        .render(&values, None, ctx)
        .map_err(|e| e.to_string())
}

fn places(text: &str, lang: Lang) -> Vec<Place> {
    Template::parse(text).unwrap().places(lang).0
}

#[test]
fn sql_places_follow_postgres_lexing() {
    use Place::*;
    let t = "SELECT '{{a}}', E'{{b}}', \"{{c}}\", $x${{d}}$x$, {{e}} -- {{f}}\n/* {{g}} */ {{h}}";
    assert_eq!(
        places(t, Lang::Sql),
        vec![
            SqlString,
            SqlEscapeString,
            SqlIdentifier,
            SqlDollar,
            Bare,
            Comment,
            Comment,
            Bare
        ]
    );
    // A doubled quote stays inside the literal; `some'…'` is no escape string.
    assert_eq!(places("'it''s {{a}}'", Lang::Sql), vec![SqlString]);
    assert_eq!(places("x = some'{{a}}'", Lang::Sql), vec![SqlString]);
    assert_eq!(places("$1 {{a}}", Lang::Sql), vec![Bare]);
}

#[test]
fn an_injected_command_stays_inside_its_literal() {
    let evil = "x'; COMMIT; DROP TABLE victim; --";
    let out = render(
        "SELECT * FROM t WHERE name = '{{name}}'",
        Context::Sql,
        &[("name", evil)],
    )
    .unwrap();
    assert_eq!(
        out,
        "SELECT * FROM t WHERE name = 'x''; COMMIT; DROP TABLE victim; --'"
    );
    let mut lexer = Lexer::new(Lang::Sql);
    lexer.feed(&out);
    assert_eq!(lexer.second_command(), None, "{out}");
    assert!(!lexer.unclosed());
    // Names and escape strings by their own rules.
    assert_eq!(
        render(
            "SELECT \"{{c}}\" FROM t",
            Context::Sql,
            &[("c", "a\"; DROP TABLE t; --")]
        )
        .unwrap(),
        "SELECT \"a\"\"; DROP TABLE t; --\" FROM t"
    );
    assert_eq!(
        render("SELECT E'{{v}}'", Context::Sql, &[("v", "\\'; DROP")]).unwrap(),
        "SELECT E'\\\\''; DROP'"
    );
}

#[test]
fn unquotable_values_are_refused_not_rendered() {
    let refused = |t: &str, v: &str| render(t, Context::Sql, &[("v", v)]).is_err();
    assert!(refused("SELECT 1 LIMIT {{v}}", "1; DROP TABLE t"));
    assert!(refused("SELECT 1 LIMIT {{v}}", "ALL"));
    assert!(refused("SELECT '{{v}}'", "a\\'; DROP TABLE t; --"));
    assert!(refused("SELECT $$ {{v}} $$", "$$; DROP TABLE t; --"));
    assert!(refused("SELECT 1 -- {{v}}", "x\nDROP TABLE t"));
    assert!(refused("SELECT '{{v}}'", "nul\0"));
    assert_eq!(
        render("SELECT 1 LIMIT {{v}}", Context::Sql, &[("v", " 5 ")]).unwrap(),
        "SELECT 1 LIMIT 5"
    );
    for n in ["0", "-3", "2.5", ".5", "1e6", "+7"] {
        assert!(!refused("LIMIT {{v}}", n), "{n}");
    }
    for n in ["", "inf", "NaN", "0x10", "1 2", "1e", "--1", "5)"] {
        assert!(refused("LIMIT {{v}}", n), "{n:?}");
    }
}

#[test]
fn sql_commands_are_counted_outside_quotes_and_comments() {
    let second = |s: &str| {
        let mut l = Lexer::new(Lang::Sql);
        l.feed(s);
        l.second_command()
    };
    assert_eq!(second("SELECT 1"), None);
    assert_eq!(second("SELECT 1;"), None);
    assert_eq!(second("SELECT 1;  -- done\n"), None);
    assert_eq!(second("SELECT ';' , \";\", $$;$$ /* ; */ -- ;"), None);
    assert_eq!(
        second("SELECT 1; COMMIT; CREATE TABLE pwned(x int)"),
        Some(8)
    );
    assert_eq!(second("SELECT 1;SELECT 2"), Some(8));
    assert_eq!(second("SELECT E'\\';' ; DROP TABLE t"), Some(14));
}

#[test]
fn promql_values_stay_in_their_strings_and_regexes_match_literally() {
    let q = |t: &str, v: &str| render(t, Context::PromQl, &[("v", v)]);
    assert_eq!(
        q("up{job=\"{{v}}\"}", "no-such-job\"}) or vector(1) #").unwrap(),
        "up{job=\"no-such-job\\\"}) or vector(1) #\"}"
    );
    assert_eq!(
        q("up{job='{{v}}'}", "x'} or vector(1) #").unwrap(),
        "up{job='x\\'} or vector(1) #'}"
    );
    // A regex matcher's value matches literally: `.*` would match every series.
    assert_eq!(
        q("up{pod=~\"{{v}}-[a-z]+\"}", "a.*").unwrap(),
        "up{pod=~\"a\\\\.\\\\*-[a-z]+\"}"
    );
    assert_eq!(q("up{pod!~ `{{v}}`}", "a|b").unwrap(), "up{pod!~ `a\\|b`}");
    assert!(q("up{pod=`{{v}}`}", "x`} or vector(1) #").is_err());
    // Bare: numbers and durations only.
    assert_eq!(q("rate(x[{{v}}]) > 0", "5m").unwrap(), "rate(x[5m]) > 0");
    assert_eq!(q("x > {{v}}", "0.25").unwrap(), "x > 0.25");
    assert!(q("x > {{v}}", "0 or vector(1)").is_err());
    assert!(q("rate(x[{{v}}])", "5m]) or vector(1) #").is_err());
    assert!(q("x > {{v}}", "up").is_err());
}

#[test]
fn shell_words_are_quoted_for_their_place() {
    let sh = |t: &str, v: &str| render(t, Context::Shell, &[("v", v)]).unwrap();
    let evil = "x'; touch /tmp/pwned; echo \"$(id)\" `id` '";
    assert_eq!(sh("echo {{v}}", "a b"), "echo 'a b'");
    assert_eq!(
        sh("echo {{v}}", evil),
        format!("echo '{}'", evil.replace('\'', "'\\''"))
    );
    assert_eq!(sh("echo '{{v}}'", "it's"), "echo 'it'\\''s'");
    assert_eq!(
        sh("echo \"{{v}}\"", "$(id) `id` \"\\"),
        "echo \"\\$(id) \\`id\\` \\\"\\\\\""
    );
    // Inside a substitution the code is a command again, even within double quotes.
    assert_eq!(
        sh("echo \"$(cat {{v}})\"", "a; id"),
        "echo \"$(cat 'a; id')\""
    );
    assert_eq!(
        sh("echo \"`cat {{v}}`\" {{v}}", "a b"),
        "echo \"`cat 'a b'`\" 'a b'"
    );
    assert_eq!(
        places("echo \"$(x)\" \"{{v}}\"", Lang::Shell),
        vec![Place::ShellDouble]
    );
}

#[test]
fn the_shell_script_of_an_argv_is_found() {
    assert_eq!(shell_script_index(&["sh", "-c", "echo"]), Some(2));
    assert_eq!(
        shell_script_index(&["/bin/bash", "-e", "-c", "x", "name"]),
        Some(3)
    );
    assert_eq!(shell_script_index(&["bash", "-ec", "x"]), Some(2));
    assert_eq!(shell_script_index(&["busybox", "sh", "-c", "x"]), Some(3));
    assert_eq!(shell_script_index(&["sh", "script.sh", "-c"]), None);
    assert_eq!(shell_script_index(&["kubectl", "-c", "x"]), None);
    assert_eq!(shell_script_index(&["sh", "-c"]), None);
}

/// Every value, rendered into each quoted place, leaves the lexer where it found it: the
/// value never ends its quotes or comment.
#[test]
fn no_value_escapes_its_place() {
    let hostile = [
        "'",
        "''",
        "\"",
        "\\",
        "\\'",
        "$$",
        "$x$",
        "*/",
        "--",
        ";",
        "`",
        "$(id)",
        "a\nb",
        "\r",
        "é'\"`$;\\",
        "'; DROP TABLE t; --",
        "\"}) or vector(1) #",
    ];
    let cases: &[(Lang, &str)] = &[
        (Lang::Sql, "S '{{v}}' x"),
        (Lang::Sql, "S E'{{v}}' x"),
        (Lang::Sql, "S \"{{v}}\" x"),
        (Lang::Sql, "S $q${{v}}$q$ x"),
        (Lang::Sql, "S /* {{v}} */ x"),
        (Lang::PromQl, "m{l=\"{{v}}\"} x"),
        (Lang::PromQl, "m{l=~'{{v}}'} x"),
        (Lang::PromQl, "m{l=`{{v}}`} x"),
        (Lang::Shell, "e '{{v}}' x"),
        (Lang::Shell, "e \"{{v}}\" x"),
        (Lang::Shell, "e {{v}} x"),
    ];
    let ctx = |l: Lang| match l {
        Lang::Sql => Context::Sql,
        Lang::PromQl => Context::PromQl,
        Lang::Shell => Context::Shell,
    };
    for (lang, t) in cases {
        for v in hostile {
            let Ok(out) = render(t, ctx(*lang), &[("v", v)]) else {
                continue;
            };
            let mut lexer = Lexer::new(*lang);
            lexer.feed(&out);
            assert!(!lexer.unclosed(), "{t} with {v:?}: {out:?}");
            assert_eq!(lexer.second_command(), None, "{t} with {v:?}: {out:?}");
            // The text after the value is still code: ` x` ends bare.
            let mut probe = Lexer::new(*lang);
            probe.feed(out.trim_end_matches('x'));
            assert_eq!(probe.place(), Place::Bare, "{t} with {v:?}: {out:?}");
        }
    }
}
