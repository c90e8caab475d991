//! Signing in with a project's API key, adding a second project's key to the same session,
//! and signing out. The key is checked by the service exactly as the API checks it, and never
//! logged or put in a URL (the form is a POST).

use askama::Template;
use warp::http::StatusCode;
use warp::reply::Response;

use crate::service::auth::Verdict;
use crate::web::error::WebError;
use crate::web::pages::{Ctx, Layout, Tab};
use crate::web::response;
use crate::web::session::{clear_cookie, set_cookie};

#[derive(Template)]
#[template(path = "signin.html")]
struct SignInPage {
    layout: Layout,
    /// Why the last attempt failed.
    error: Option<String>,
}

/// The sign-in form (signed in already: the form adds another project's key).
pub(crate) fn form(ctx: &Ctx<'_>, error: Option<String>) -> Result<Response, WebError> {
    let failed = error.is_some();
    let page = SignInPage {
        layout: ctx.layout("Sign in", None, Tab::None),
        error,
    };
    let status = if failed {
        StatusCode::UNAUTHORIZED
    } else {
        StatusCode::OK
    };
    Ok(response::html(status, page.render()?, ctx.gzip))
}

/// Checks the pasted key; on success starts the session (or adds the key's project to it)
/// and goes to the project's checks.
pub(crate) async fn sign_in(ctx: &Ctx<'_>) -> Result<Response, WebError> {
    let site = ctx.site;
    let client = crate::api::client(
        site.app.config.trust_proxy,
        &ctx.req.headers,
        ctx.req.remote,
    )
    .0
    .unwrap_or_default();
    let bucket = crate::service::auth::client_bucket(&client);
    let now = std::time::Instant::now();
    if let Err(wait) = site
        .failures
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .check(&bucket, now)
    {
        return Err(WebError::RateLimited {
            retry_after: wait.as_secs().max(1),
        });
    }
    let key = ctx.form.text("key");
    let verdict = site
        .app
        .service
        .authenticate(key, true, Some(&client))
        .await;
    let grant = match verdict {
        Verdict::Granted(g) => g,
        Verdict::Throttled { retry_after } => {
            return Err(WebError::RateLimited {
                retry_after: retry_after.as_secs().max(1),
            });
        }
        Verdict::Missing | Verdict::Wrong => {
            site.failures
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .count(&bucket, now);
            let message = if key.is_empty() {
                "Paste an API key of the project (from `overdue key add` or the first start's output)."
            } else {
                "That is not an API key of any project here. Keys start with hcw_ (read-write) \
                 or hcr_ (read-only) and are 32 characters long."
            };
            return form(ctx, Some(message.to_string()));
        }
    };
    let existing = ctx.visitor.as_ref().map(|v| v.token.as_str());
    let token = site.app.service.sign_in(existing, &grant).await?;
    let to = ctx.link(&format!("/projects/{}/checks/", grant.project));
    Ok(response::with_cookie(
        response::see_other(&to),
        &set_cookie(&token, &site.base, site.secure),
    ))
}

/// Ends the session and goes back to the sign-in form.
pub(crate) async fn sign_out(ctx: &Ctx<'_>) -> Result<Response, WebError> {
    if let Some(v) = &ctx.visitor {
        ctx.site.app.service.sign_out(&v.token).await?;
    }
    Ok(response::with_cookie(
        response::see_other(&ctx.link("/")),
        &clear_cookie(&ctx.site.base, ctx.site.secure),
    ))
}
