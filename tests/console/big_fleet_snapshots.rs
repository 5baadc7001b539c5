//! Issue 34, point 3: a panel whose query matches 2,000 series draws its ten worst by their
//! peak, counts the rest ("+1,990 more") and names the worst now, which sets the panel's level
//! whether drawn or not; what it holds stays within its cap on points.

use crate::support::fleet;
use crate::ui_snapshots::{press, render, t0};
use crossterm::event::KeyCode;
use warroom::app::panes::panel::Level;
use warroom::metrics::series::{MAX_DRAWN_SERIES, MAX_PANEL_POINTS, MAX_PANEL_SERIES};

#[test]
fn a_panel_of_2000_series_draws_its_worst_ten_and_names_the_worst_now() {
    let m = fleet::model(t0(), 200, 60, 2_000, 400);
    let p = &m.panels[0];
    // What is held: the 64 worst now, within the cap on points (which bit: 64 × 400).
    assert_eq!(p.series_count(), 2_000);
    assert_eq!(p.series.len(), MAX_PANEL_SERIES);
    let held: usize = p.series.iter().map(|s| s.points.len()).sum();
    assert!(held <= MAX_PANEL_POINTS, "{held} points held");
    assert!(p.points_capped);
    // What is drawn: ten, the stuck pod not among them (its peak is below the spikes').
    let drawn = p.drawn(MAX_DRAWN_SERIES);
    assert_eq!(drawn.len(), MAX_DRAWN_SERIES);
    assert!(drawn.iter().all(|s| s.labels["pod"] != fleet::STUCK));
    // What the level sees: every series held, the stuck pod the worst, past crit.
    let (worst, value) = p.worst_now().unwrap();
    assert_eq!(worst.labels["pod"], fleet::STUCK);
    assert_eq!(p.level(value), Level::Crit);
    // Zoomed: the chart as wide as the screen, its legend beside it.
    let mut m = m;
    press(&mut m, KeyCode::Enter);
    let screen = render(&m).to_string();
    assert!(screen.contains("▲ CRIT"), "{screen}");
    assert!(screen.contains("+1,990 more"), "{screen}");
    assert!(
        screen.contains(&format!("worst {} 97.0%", fleet::STUCK)),
        "{screen}"
    );
    assert!(screen.contains("points capped at 20,000"), "{screen}");
    insta::assert_snapshot!("big_fleet_2000_series_200x60", screen);
}
