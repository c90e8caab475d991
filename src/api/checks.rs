//! Check endpoints: list, get, create (upsert), update, delete, pause, resume and snooze
//! (one check, or every check of a tag or the project).
//! Order of checks inside write endpoints (reference §1.5): body parse, authentication,
//! existence, ownership, validation, action.

use uuid::Uuid;
use warp::http::StatusCode;
use warp::reply::Response;

use crate::api::auth::{authorize, authorize_read, body_object};
use crate::api::error::ApiError;
use crate::api::response::json_response;
use crate::api::router::CheckRef;
use crate::api::{App, Request};
use crate::model::json::{CheckList, CheckObject, Urls};
use crate::model::spec::parse_spec;
use crate::model::{ApiVersion, Check};
use crate::service::ServiceError;
use crate::service::auth::Grant;

fn urls(app: &App, version: ApiVersion) -> Urls<'_> {
    Urls {
        site_root: app.service.site_root(),
        version,
    }
}

fn check_response(
    app: &App,
    status: StatusCode,
    check: &Check,
    version: ApiVersion,
    read_only: bool,
) -> Response {
    let object = CheckObject {
        check,
        now: app.service.now(),
        urls: urls(app, version),
        read_only,
    };
    json_response(status, &object)
}

/// Runs `f` on the check a path names, as the caller's key sees it: 404 when it does not exist
/// (or, named by `unique_key`, is in another project), 403 when named by UUID and another
/// project's (reference §1.5).
pub(crate) fn with_check<R>(
    app: &App,
    grant: &Grant,
    ident: &CheckRef,
    f: impl FnOnce(&Check) -> R,
) -> Result<R, ApiError> {
    app.service.read(|s| {
        let check = match ident {
            CheckRef::Uuid(u) => {
                let c = s.check(u).ok_or(ApiError::NotFound)?;
                if c.project != grant.project {
                    return Err(ApiError::Forbidden);
                }
                c
            }
            CheckRef::UniqueKey(k) => s
                .check_by_unique_key(&grant.project, k)
                .ok_or(ApiError::NotFound)?,
        };
        Ok(f(check))
    })
}

/// GET checks/: `slug` filters by exact slug, every `tag` must be among the check's tags.
pub(crate) async fn list(
    app: &App,
    req: &Request,
    version: ApiVersion,
) -> Result<Response, ApiError> {
    let grant = authorize_read(app, req).await?;
    let mut slug = None;
    let mut tags: Vec<String> = Vec::new();
    for (k, v) in req.query_pairs() {
        match k.as_str() {
            "slug" if !v.is_empty() => slug = Some(v),
            "tag" if !tags.contains(&v) => tags.push(v),
            _ => {}
        }
    }
    let now = app.service.now();
    let urls = urls(app, version);
    // The body is written under the read lock from the stored checks themselves, not from
    // copies: about 2 µs a check, so 1,000 checks hold it for ~2 ms.
    Ok(app.service.read(|s| {
        let wanted = |c: &&Check| tags.iter().all(|t| c.has_tag(t));
        let checks: Vec<&Check> = match &slug {
            Some(slug) => s
                .checks_by_slug(&grant.project, slug)
                .into_iter()
                .filter(wanted)
                .collect(),
            None => s.checks_of(&grant.project).filter(wanted).collect(),
        };
        json_response(
            StatusCode::OK,
            &CheckList {
                checks,
                now,
                urls,
                read_only: grant.read_only,
            },
        )
    }))
}

/// `GET checks/<uuid>` or `checks/<unique_key>`.
pub(crate) async fn get(
    app: &App,
    req: &Request,
    version: ApiVersion,
    ident: CheckRef,
) -> Result<Response, ApiError> {
    let grant = authorize_read(app, req).await?;
    let check = with_check(app, &grant, &ident, Check::clone)?;
    Ok(check_response(
        app,
        StatusCode::OK,
        &check,
        version,
        grant.read_only,
    ))
}

/// POST checks/: 201 when created, 200 when `unique` matched an existing check.
pub(crate) async fn create(
    app: &App,
    req: &Request,
    version: ApiVersion,
) -> Result<Response, ApiError> {
    let body = body_object(req)?;
    let grant = authorize(app, req, &body).await?;
    let spec = parse_spec(&body).map_err(ServiceError::from)?;
    let (check, created) = app
        .service
        .create_check(grant.project, spec, version)
        .await?;
    let status = if created {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok(check_response(app, status, &check, version, false))
}

/// POST checks/<uuid>.
pub(crate) async fn update(
    app: &App,
    req: &Request,
    version: ApiVersion,
    uuid: Uuid,
) -> Result<Response, ApiError> {
    let body = body_object(req)?;
    let grant = authorize(app, req, &body).await?;
    with_check(app, &grant, &CheckRef::Uuid(uuid), |_| ())?;
    let spec = parse_spec(&body).map_err(ServiceError::from)?;
    let check = app
        .service
        .update_check(grant.project, uuid, spec, version)
        .await?;
    Ok(check_response(app, StatusCode::OK, &check, version, false))
}

/// DELETE checks/<uuid>: the key comes from the header only (the body is not read).
pub(crate) async fn delete(
    app: &App,
    req: &Request,
    version: ApiVersion,
    uuid: Uuid,
) -> Result<Response, ApiError> {
    let grant = authorize(app, req, &serde_json::Map::new()).await?;
    let check = app.service.delete_check(grant.project, uuid).await?;
    Ok(check_response(app, StatusCode::OK, &check, version, false))
}

/// POST checks/<uuid>/pause (`resume: false`) or checks/<uuid>/resume (`resume: true`,
/// 409 unless paused).
pub(crate) async fn pause_or_resume(
    app: &App,
    req: &Request,
    version: ApiVersion,
    uuid: Uuid,
    resume: bool,
) -> Result<Response, ApiError> {
    let body = body_object(req)?;
    let grant = authorize(app, req, &body).await?;
    let check = if resume {
        app.service.resume_check(grant.project, uuid).await?
    } else {
        app.service.pause_check(grant.project, uuid).await?
    };
    Ok(check_response(app, StatusCode::OK, &check, version, false))
}

/// POST checks/<uuid>/snooze with `{"seconds": N}` or `{"until": "<timestamp>"}`
/// (docs/api-extensions.md); `{"seconds": 0}` ends the snooze.
pub(crate) async fn snooze(
    app: &App,
    req: &Request,
    version: ApiVersion,
    uuid: Uuid,
) -> Result<Response, ApiError> {
    let body = body_object(req)?;
    let grant = authorize(app, req, &body).await?;
    with_check(app, &grant, &CheckRef::Uuid(uuid), |_| ())?;
    let now = app.service.now();
    let until = crate::model::snooze::parse_body(&body, now).map_err(ServiceError::from)?;
    let check = app.service.snooze_check(grant.project, uuid, until).await?;
    Ok(check_response(app, StatusCode::OK, &check, version, false))
}

/// POST checks/snooze with the body of [`snooze`]: snoozes every check of the project, or,
/// with `?tag=` (repeatable, as the list filters), those that have every tag named. The
/// answer lists the checks snoozed, as `GET checks/` would.
pub(crate) async fn snooze_many(
    app: &App,
    req: &Request,
    version: ApiVersion,
) -> Result<Response, ApiError> {
    let body = body_object(req)?;
    let grant = authorize(app, req, &body).await?;
    let mut tags: Vec<String> = Vec::new();
    for (k, v) in req.query_pairs() {
        if k == "tag" && !tags.contains(&v) {
            tags.push(v);
        }
    }
    let now = app.service.now();
    let until = crate::model::snooze::parse_body(&body, now).map_err(ServiceError::from)?;
    let checks = app
        .service
        .snooze_checks(grant.project, tags, until)
        .await?;
    let list = CheckList {
        checks: checks.iter().collect(),
        now,
        urls: urls(app, version),
        read_only: false,
    };
    Ok(json_response(StatusCode::OK, &list))
}
