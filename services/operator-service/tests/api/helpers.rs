//! `spawn_app()`: the real app on port 0 with a seeded catalog database of its own, and a
//! real HTTP server standing in for the point service (the back office's routes relay to
//! it; `tests/system/back_office.rs` runs the real pair).

use std::net::TcpListener;

use db::testing::TestDatabase;
use diesel_async::SimpleAsyncConnection;
use operator_service::auth::{OperatorKeys, Role};
use operator_service::config::Config;
use serde_json::{Value, json};
use server::Secret;
use service_identity::{InternalRoute, Request, Service};

pub const SECRET: &str = "test-operator-secret-0123456789abcdef0123";

/// Offer ids the stand-in point service answers in its own ways.
pub const REFUSED_OFFER: &str = "ffffffffffffffffffffffff";
pub const FAILING_OFFER: &str = "eeeeeeeeeeeeeeeeeeeeeeee";
pub const WRONG_TOKEN_OFFER: &str = "dddddddddddddddddddddddd";

/// A service that keeps back-office data (`service`: the point or the order service), as
/// the back office reaches it: checks the credential as a keeper does (a refused one: 401),
/// then answers 200 with what it was sent (`{service, method, path, caller, request,
/// operatorId, operatorRole, body}`: the caller and the request and operator its credential
/// names), except for the offers above: a refusal of the back office's (404), its own failure
/// (503, envelope B), and the 401 of a refused credential; and a CSV for a path ending
/// `codes.csv`.
fn stand_in(service: &'static str) -> String {
    use actix_web::{App, HttpRequest, HttpResponse, web};
    server::spawn_local(move || {
        App::new().default_service(web::to(
            move |req: HttpRequest, body: web::Bytes| async move {
                let (me, route) = if service == "point service" {
                    (Service::Point, InternalRoute::PointBackOffice)
                } else {
                    (Service::Order, InternalRoute::OrderBackOffice)
                };
                let target = req.uri().path_and_query().map_or("", |pq| pq.as_str());
                let received = Request::received(req.method().as_str(), target, &body);
                let Ok(admitted) = testkit::identity::verifier(me)
                    .admit(req.headers(), route)
                    .and_then(|admitted| admitted.made_for(&received))
                else {
                    return HttpResponse::Unauthorized().json(json!({"statusCode": 401,
                    "message": "invalid service credential", "error": "Unauthorized"}));
                };
                let path = req.path().to_owned();
                if path.ends_with(REFUSED_OFFER) {
                    return HttpResponse::NotFound().json(json!({"statusCode": 404,
                    "message": format!("offer {REFUSED_OFFER} not found"), "error": "Not Found"}));
                }
                if path.ends_with(FAILING_OFFER) {
                    return HttpResponse::ServiceUnavailable().json(json!({"success": false,
                    "error": {"code": "SERVICE_UNAVAILABLE", "message": "busy"}}));
                }
                if path.ends_with(WRONG_TOKEN_OFFER) {
                    return HttpResponse::Unauthorized().json(json!({"statusCode": 401,
                    "message": "invalid service credential", "error": "Unauthorized"}));
                }
                if path.ends_with("codes.csv") {
                    return HttpResponse::Ok()
                        .content_type("text/csv; charset=utf-8")
                        .insert_header(("content-disposition", "attachment; filename=\"b.csv\""))
                        .insert_header(("cache-control", "no-store"))
                        .body("code,points,expires_at\nA-1,5,\n");
                }
                HttpResponse::Ok().json(json!({
                    "service": service,
                    "method": req.method().as_str(),
                    "path": path,
                    "query": req.query_string(),
                    "caller": admitted.caller.name(),
                    "request": admitted.request.map(|r| r.line),
                    "operatorId": admitted.operator.as_ref().map(|o| o.id.clone()),
                    "operatorRole": admitted.operator.as_ref().map(|o| o.role.clone()),
                    "body": serde_json::from_slice::<Value>(&body).ok(),
                }))
            },
        ))
    })
    .unwrap()
}

fn service(
    id: i64,
    title_en: &str,
    role: &str,
    parent: Option<i64>,
    ordering: i32,
    status: &str,
) -> Value {
    json!({"id": id, "title": format!("عربي {id}"), "titleTranslated": title_en, "status": status,
           "logo": "https://x/l.png", "ordering": ordering, "hierarchyRole": role, "parentId": parent,
           "image": null, "image_en": null, "thumbnail": null, "thumbnail_en": null, "url": null,
           "background_image_url": null, "serviceType": "default"})
}

/// 1 and 2 are parents; 3 and 8 standalone; 4 and 5 children of 1; 6 an unassigned child;
/// 7 a child of 2.
pub fn fixture() -> Value {
    json!({"services": [
        service(1, "Restaurants", "parent", None, 1, "active"),
        service(2, "Groceries", "parent", None, 2, "active"),
        service(3, "Pharmacy", "standalone", None, 3, "active"),
        service(4, "Burgers", "child", Some(1), 2, "active"),
        service(5, "Coffee", "child", Some(1), 1, "hidden"),
        service(6, "Sweets", "child", None, 3, "active"),
        service(7, "Fruit", "child", Some(2), 1, "active"),
        service(8, "Flowers", "standalone", None, 4, "hidden"),
    ]})
}

pub struct TestApp {
    pub base: String,
    pub client: reqwest::Client,
    pub keys: OperatorKeys,
    pub database: TestDatabase,
}

pub async fn spawn_app() -> TestApp {
    spawn_app_with_keepers(
        Some(stand_in("point service")),
        Some(stand_in("order service")),
    )
    .await
}

/// The app with the back office's point service at `point_service_url` (unset: `None`).
pub async fn spawn_app_with(point_service_url: Option<String>) -> TestApp {
    spawn_app_with_keepers(point_service_url, None).await
}

/// The app with the back office's point service and order service where they are given.
pub async fn spawn_app_with_keepers(
    point_service_url: Option<String>,
    order_service_url: Option<String>,
) -> TestApp {
    let wait = operator_service::back_office::upstream::WAIT;
    spawn_app_waiting(point_service_url, order_service_url, wait).await
}

/// The same, waiting `keeper_wait` for a keeper (`BACK_OFFICE_TIMEOUT_MS`).
pub async fn spawn_app_waiting(
    point_service_url: Option<String>,
    order_service_url: Option<String>,
    keeper_wait: std::time::Duration,
) -> TestApp {
    let database = testkit::seed::seeded_database(
        catalog_db::MIGRATIONS,
        operator_service::seed::load,
        &fixture(),
    )
    .await;
    let config = Config {
        common: testkit::config::common("operator-service"),
        database: testkit::config::database(database.url(), 10),
        jwt_secret: Secret::new(SECRET),
        point_service_url,
        order_service_url,
        signer: testkit::identity::signer(Service::Operator),
        keeper_wait,
    };
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(operator_service::startup::build(config, listener).unwrap());
    TestApp {
        base,
        client: reqwest::Client::new(),
        keys: OperatorKeys::new(SECRET.as_bytes()),
        database,
    }
}

impl TestApp {
    pub fn token(&self, role: Role) -> String {
        self.keys.issue("op-1", role, 1).unwrap()
    }

    pub async fn call(
        &self,
        method: &str,
        path: &str,
        role: Option<Role>,
        body: Option<&Value>,
    ) -> (u16, Value) {
        let mut request = self.client.request(
            method.parse().unwrap(),
            format!("{}/api/v1/operator{path}", self.base),
        );
        if let Some(role) = role {
            request = request.bearer_auth(self.token(role));
        }
        if let Some(body) = body {
            request = request.json(body);
        }
        testkit::answer(request.send().await.unwrap()).await
    }

    pub async fn admin(&self, method: &str, path: &str, body: Option<&Value>) -> (u16, Value) {
        self.call(method, path, Some(Role::Admin), body).await
    }

    pub async fn sql(&self, statement: &str) -> Result<(), String> {
        let mut conn = self.database.connect().await;
        conn.batch_execute(statement)
            .await
            .map_err(|e| e.to_string())
    }

    /// (role, parentId) of a service, read through the API.
    pub async fn place(&self, id: i64) -> (String, Value) {
        let (_, body) = self.admin("GET", &format!("/services/{id}"), None).await;
        (
            body["hierarchyRole"].as_str().unwrap().to_owned(),
            body["parentId"].clone(),
        )
    }
}

pub fn bad_request(message: &str) -> (u16, Value) {
    (400, testkit::operator_error(400, message, "Bad Request"))
}

pub fn ids(body: &Value) -> Vec<i64> {
    body.as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_i64().unwrap())
        .collect()
}
