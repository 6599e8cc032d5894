//! Calls to a keeper's back-office routes (`/internal/v1/back-office`) as the operator
//! service makes them: its own credential, made for the one request and vouching for an
//! operator, unless a test takes them away or sends another.

use serde_json::Value;
use service_identity::{Service, Vouched};

/// Where a call goes: a keeper under test.
pub trait Keeper {
    fn client(&self) -> &reqwest::Client;
    /// The full URL of `path`.
    fn url(&self, path: &str) -> String;
    /// The keeper, as a credential names its callee.
    fn service(&self) -> Service;
}

/// What a call carries in its `Authorization`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Credential<'a> {
    /// Nothing.
    Nothing,
    /// `Bearer <this>`, as it is.
    Raw(&'a str),
    /// `caller`'s credential (development keys), made for this request and naming the
    /// operator, as the operator service makes it.
    From(Service),
    /// The operator service's credential made for `method path` instead.
    ForRequest(&'a str, &'a str),
    /// The operator service's credential made for another service.
    ForCallee(Service),
    /// The operator service's credential made for this request with another body.
    ForBody(&'a str),
}

/// A back-office call: the operator service's credential and an operator unless a test
/// takes them away.
pub struct Call<'a> {
    method: reqwest::Method,
    path: String,
    pub credential: Credential<'a>,
    pub operator: Option<(&'a str, &'a str)>,
    /// Also names the operator in the headers the keepers once believed (`X-Operator-Id`,
    /// `X-Operator-Role`), as a caller that is not the operator service might.
    pub operator_headers: bool,
    body: Option<Value>,
}

impl<'a> Call<'a> {
    /// `method` on `path` under `/internal/v1/back-office`, from the operator service, for
    /// `operator` (its id and role).
    pub fn new(method: reqwest::Method, path: &str, operator: (&'a str, &'a str)) -> Self {
        Self {
            method,
            path: format!("{BACK_OFFICE}{path}"),
            credential: Credential::From(Service::Operator),
            operator: Some(operator),
            operator_headers: false,
            body: None,
        }
    }

    /// The operator's role, for a route that admits fewer than the default's.
    pub fn by_role(mut self, role: &'a str) -> Self {
        let id = self.operator.map_or("op", |(id, _)| id);
        self.operator = Some((id, role));
        self
    }

    pub fn body(mut self, body: Value) -> Self {
        self.body = Some(body);
        self
    }

    pub async fn response(self, keeper: &impl Keeper) -> reqwest::Response {
        let url = reqwest::Url::parse(&keeper.url(&self.path)).unwrap();
        let sent = match url.query() {
            Some(query) => format!("{}?{query}", url.path()),
            None => url.path().to_owned(),
        };
        let vouched = self.operator.map(|(id, role)| Vouched {
            id: id.to_owned(),
            role: role.to_owned(),
        });
        let body = self.body.map(|body| body.to_string()).unwrap_or_default();
        let sign = |caller: Service, callee: Service, method: &str, sent: &str, body: &str| {
            crate::identity::signer(caller).vouch(
                callee,
                vouched.clone(),
                method,
                sent,
                body.as_bytes(),
            )
        };
        let (method, here) = (self.method.as_str(), keeper.service());
        let authorization = match self.credential {
            Credential::Nothing => None,
            Credential::Raw(raw) => Some(format!("Bearer {raw}")),
            Credential::From(caller) => Some(sign(caller, here, method, &sent, &body)),
            Credential::ForRequest(method, path) => {
                Some(sign(Service::Operator, here, method, path, &body))
            }
            Credential::ForCallee(callee) => {
                Some(sign(Service::Operator, callee, method, &sent, &body))
            }
            Credential::ForBody(other) => Some(sign(Service::Operator, here, method, &sent, other)),
        };
        let mut request = keeper.client().request(self.method, url);
        if let Some(authorization) = authorization {
            request = request.header("authorization", authorization);
        }
        if let (true, Some((id, role))) = (self.operator_headers, self.operator) {
            request = request
                .header("x-operator-id", id)
                .header("x-operator-role", role);
        }
        if !body.is_empty() {
            request = request
                .header("content-type", "application/json")
                .body(body);
        }
        request.send().await.unwrap()
    }

    /// The answer as (status, JSON).
    pub async fn send(self, keeper: &impl Keeper) -> (u16, Value) {
        crate::answer(self.response(keeper).await).await
    }
}

/// Written here rather than taken from the back-office crate, whose keepers these calls
/// test: a test that read the prefix from the code under test could not see it change.
const BACK_OFFICE: &str = "/internal/v1/back-office";

/// Calls every route the route table gives `keeper` as a caller it must refuse: with no
/// credential, a forged one, the operator service's made for another request or another
/// service (401); with each other service's own credential, whatever operator it names
/// (403); and for a route that names its operator, with the operator service's credential
/// but no operator (400), as each role the route does not admit and as a word that is no role
/// (403). Panics on any other answer; the caller then checks that nothing was written.
pub async fn refuse_every_stranger(keeper: ::back_office::routes::Keeper, app: &impl Keeper) {
    use ::back_office::role::Role;
    use ::back_office::routes::Route;
    let unauthenticated = refusal(
        401,
        "INVALID_SERVICE_CREDENTIAL",
        "invalid service credential",
    );
    let not_admitted = refusal(
        403,
        "CALLER_NOT_ADMITTED",
        "the calling service may not call this route",
    );
    for route in Route::ALL.into_iter().filter(|r| r.rule().keeper == keeper) {
        let rule = route.rule();
        let path = rule.keeper_path.replace("{id}", "1");
        let method = route.contract().method_name();
        let method = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
        let call = |credential, role| {
            let mut call = Call::new(method.clone(), &path, ("op-1", role));
            call.credential = credential;
            call
        };
        let other_callee = match app.service() {
            Service::Point => Service::Order,
            _ => Service::Point,
        };
        let elsewhere = format!("{BACK_OFFICE}/elsewhere");
        let here = format!("{BACK_OFFICE}{path}");
        let other_query = format!("{here}?limit=1");
        for credential in [
            Credential::Nothing,
            Credential::Raw("another-token"),
            Credential::ForRequest(method.as_str(), &elsewhere),
            Credential::ForRequest("TRACE", &here),
            Credential::ForRequest(method.as_str(), &other_query),
            Credential::ForCallee(other_callee),
            Credential::ForBody(r#"{"points": "1000000"}"#),
        ] {
            let answer = call(credential, "super_admin").send(app).await;
            assert_eq!(answer, unauthenticated, "{route:?} with {credential:?}");
        }
        // Each other service's own credential, vouching for a super_admin and naming one in
        // the old headers too: nothing it holds speaks for the operator service.
        for stranger in [Service::Auth, Service::Point, Service::Order] {
            let mut call = call(Credential::From(stranger), "super_admin");
            call.operator_headers = true;
            let answer = call.send(app).await;
            assert_eq!(answer, not_admitted, "{route:?} from the {stranger}");
        }
        if !rule.names_operator {
            continue;
        }
        let needed = "a back-office change needs the operator the operator service vouches for";
        for operator in [None, Some(("", "super_admin")), Some(("op-1", " "))] {
            let mut nobody = call(Credential::From(Service::Operator), "super_admin");
            nobody.operator = operator;
            assert_eq!(
                nobody.send(app).await,
                refusal(400, "NO_OPERATOR", needed),
                "{route:?} for {operator:?}"
            );
        }
        let refused = Role::ALL
            .into_iter()
            .filter(|role| !rule.admits.admits(*role))
            .map(Role::as_str)
            .chain(["root"]);
        for role in refused {
            let answer = call(Credential::From(Service::Operator), role)
                .send(app)
                .await;
            let message = format!("role {role} may not do this in the back office");
            assert_eq!(
                answer,
                refusal(403, "ROLE_REFUSED", &message),
                "{route:?} as {role}"
            );
        }
    }
}

/// A refusal in the back office's envelope, as the keepers answer it.
fn refusal(status: u16, code: &str, message: &str) -> (u16, Value) {
    (status, crate::back_office_error(status, code, message))
}
