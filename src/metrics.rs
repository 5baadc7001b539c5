//! Metrics: the [`Source`] interface every panel, gate and recorder queries, the series it
//! returns, and its implementations (a real Prometheus over HTTP; the embedded store).

pub mod discover;
pub mod embedded;
pub mod fetch;
pub mod from_config;
pub mod group;
pub mod health;
pub mod presets;
pub mod prometheus;
pub mod selectors;
pub mod series;
pub mod source;

pub use series::{Labels, Point, Series};
pub use source::{InstantQuery, QueryAnswer, RangeQuery, ResultType, Source, SourceError};
