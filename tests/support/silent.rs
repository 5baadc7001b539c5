//! A metrics source that never answers a query (and says it is ready): the console's panels
//! stay loading, for tests about something else (alerts, GitHub changes, publishing).

use futures::future::BoxFuture;
use warroom::metrics::{InstantQuery, QueryAnswer, RangeQuery, Source, SourceError};

pub struct Silent;

impl Source for Silent {
    fn describe(&self) -> String {
        "silent".into()
    }
    fn query_range(&self, _q: RangeQuery) -> BoxFuture<'static, Result<QueryAnswer, SourceError>> {
        Box::pin(futures::future::pending())
    }
    fn query(&self, _q: InstantQuery) -> BoxFuture<'static, Result<QueryAnswer, SourceError>> {
        Box::pin(futures::future::pending())
    }
    fn ready(&self) -> BoxFuture<'static, Result<(), SourceError>> {
        Box::pin(async { Ok(()) })
    }
}
