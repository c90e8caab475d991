//! The dashboard: server-rendered pages where people sign in with a project's API key and see
//! and run their checks, served by the same listener as the APIs.
//!
//! [`filter`] is the one warp filter of the HTTP server. It strips the site root's path prefix
//! (so `--site-root https://host/overdue` works whether the proxy strips the prefix or passes it
//! on), answers the dashboard's own paths ([`router`]), and hands everything else to the API
//! ([`crate::api::handle`]). The dashboard talks to the service like the API does and shares the
//! API's status and JSON rules; it never touches the store.
//!
//! Pages work without JavaScript; `assets/dashboard.js` only enhances them (live updates, copy
//! buttons, confirmation). Every response carries [`response::secure`]'s headers, whose CSP
//! allows no inline script or style.

pub(crate) mod assets;
pub(crate) mod channel_form;
pub(crate) mod error;
pub(crate) mod forms;
pub(crate) mod pages;
pub(crate) mod response;
pub(crate) mod router;
pub(crate) mod session;
pub(crate) mod signin;
pub(crate) mod site;
pub(crate) mod timeline;

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;

use futures_util::StreamExt;
use warp::http::{HeaderMap, Method};
use warp::reply::Response;
use warp::{Buf, Filter};

use crate::api::{App, BodyStream, Peer};
pub(crate) use site::Site;

/// The warp filter serving everything: the dashboard (when on) and the APIs.
pub(crate) fn filter(
    app: Arc<App>,
) -> impl Filter<Extract = (Response,), Error = Infallible> + Clone {
    let site = Arc::new(Site::new(app));
    let query = warp::query::raw().or(warp::any().map(String::new)).unify();
    warp::any()
        .and(warp::method())
        .and(warp::path::full())
        .and(query)
        .and(warp::header::headers_cloned())
        .and(warp::ext::optional::<Peer>().map(|peer: Option<Peer>| peer.map(|p| p.0)))
        .and(warp::body::stream())
        .then(
            move |method: Method,
                  path: warp::path::FullPath,
                  query: String,
                  headers: HeaderMap,
                  remote: Option<SocketAddr>,
                  body| {
                let site = site.clone();
                let body = boxed_body(body);
                let path = path.as_str().to_string();
                async move { handle(site, method, path, query, headers, remote, body).await }
            },
        )
        .recover(|_| async { Ok::<_, Infallible>(crate::api::not_found()) })
        .unify()
}

fn boxed_body<S, B>(stream: S) -> BodyStream
where
    S: futures_util::Stream<Item = Result<B, warp::Error>> + Send + 'static,
    B: Buf,
{
    Box::pin(stream.map(|r| r.map(|mut b| b.copy_to_bytes(b.remaining()))))
}

/// Dispatches one request: a dashboard path to its page, anything else to the APIs.
pub(crate) async fn handle(
    site: Arc<Site>,
    method: Method,
    path: String,
    query: String,
    headers: HeaderMap,
    remote: Option<SocketAddr>,
    body: BodyStream,
) -> Response {
    let health = site.app.service.storage_health();
    if health.is_standby() {
        return crate::api::standby_response(&site.app.service.storage_location());
    }
    let path = match site::strip_prefix(&path, &site.base) {
        Some(rest) => rest.to_string(),
        None => path,
    };
    if site.enabled
        && let Some(page) = router::parse(&path)
    {
        let req = pages::Incoming {
            method,
            query,
            headers,
            remote,
        };
        return pages::serve(&site, page, req, body).await;
    }
    crate::api::handle(site.app.clone(), method, path, query, headers, remote, body).await
}
