//! Calls to a keeper's back-office routes (`/internal/v1/back-office`) as the operator
//! service makes them: the internal token and an operator, unless a test takes them away.

use serde_json::Value;

/// Where a call goes: a keeper under test.
pub trait Keeper {
    fn client(&self) -> &reqwest::Client;
    /// The full URL of `path`.
    fn url(&self, path: &str) -> String;
}

/// A back-office call: the internal token and an operator unless a test takes them away.
pub struct Call<'a> {
    method: reqwest::Method,
    path: String,
    pub token: Option<&'a str>,
    pub operator: Option<(&'a str, &'a str)>,
    body: Option<Value>,
}

impl<'a> Call<'a> {
    /// `method` on `path` under `/internal/v1/back-office`, with `token` and `operator`
    /// (its id and role).
    pub fn new(
        method: reqwest::Method,
        path: &str,
        token: &'a str,
        operator: (&'a str, &'a str),
    ) -> Self {
        Self {
            method,
            path: format!("{BACK_OFFICE}{path}"),
            token: Some(token),
            operator: Some(operator),
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
        let mut request = keeper.client().request(self.method, keeper.url(&self.path));
        if let Some(token) = self.token {
            request = request.header("x-internal-token", token);
        }
        if let Some((id, role)) = self.operator {
            request = request
                .header("x-operator-id", id)
                .header("x-operator-role", role);
        }
        if let Some(body) = self.body {
            request = request.json(&body);
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

/// Calls every route the route table gives `keeper` as a caller it must refuse: without
/// the internal token or with another (401), and for a route that names its operator, with
/// `token` but no operator (400), as each role the route does not admit and as a word that
/// is no role (403). Panics on any other answer; the caller then checks that nothing was
/// written.
pub async fn refuse_every_stranger(
    keeper: ::back_office::routes::Keeper,
    app: &impl Keeper,
    token: &str,
) {
    use ::back_office::role::Role;
    use ::back_office::routes::Route;
    for route in Route::ALL.into_iter().filter(|r| r.rule().keeper == keeper) {
        let rule = route.rule();
        let path = rule.keeper_path.replace("{id}", "1");
        let method = route.contract().method_name();
        let method = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
        let call = |token, role| Call::new(method.clone(), &path, token, ("op-1", role));
        let mut anonymous = call(token, "super_admin");
        anonymous.token = None;
        let bad_token = refusal(401, "INVALID_INTERNAL_TOKEN", "invalid internal token");
        assert_eq!(anonymous.send(app).await, bad_token, "{route:?}");
        let stranger = call("another-token", "super_admin").send(app).await;
        assert_eq!(stranger, bad_token, "{route:?}");
        if !rule.names_operator {
            continue;
        }
        let mut nobody = call(token, "super_admin");
        nobody.operator = None;
        let needed = "a back-office change needs X-Operator-Id and X-Operator-Role";
        assert_eq!(
            nobody.send(app).await,
            refusal(400, "NO_OPERATOR", needed),
            "{route:?}"
        );
        let refused = Role::ALL
            .into_iter()
            .filter(|role| !rule.admits.admits(*role))
            .map(Role::as_str)
            .chain(["root"]);
        for role in refused {
            let answer = call(token, role).send(app).await;
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
