//! The system as Kubernetes runs it: several replicas of each service behind a balancer of
//! its own (HAProxy, round robin over the replicas whose `/readyz` answers), and every call
//! between services going through that balancer as it goes through a Kubernetes Service.
//! Tests reach a replica directly (`replicas(..)[i].base`) to send a rule's steps to chosen
//! replicas, or the balancer (`url(..)`) as the app does.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::balancer::Balancer;
use crate::stack::{Databases, owned, pairs};
use crate::{Service, free_port};

pub const AUTH: &str = "auth-service";
pub const POINTS: &str = "point-service";
pub const ORDER: &str = "order-service";
pub const OPERATOR: &str = "operator-service";
/// The four services, in the order they are started.
pub const SERVICES: [&str; 4] = [AUTH, POINTS, ORDER, OPERATOR];

/// How one service's replicas are started: database URL and variables.
struct Launch {
    database: String,
    env: Vec<(String, String)>,
}

pub struct ReplicatedStack {
    replicas: BTreeMap<&'static str, Vec<Service>>,
    launch: BTreeMap<&'static str, Launch>,
    pub sandbox: Service,
    pub balancer: Balancer,
    http: reqwest::Client,
    /// Calls that replicas already replaced resent after meeting a closing connection.
    resent_by_retired: usize,
}

/// The log line of a call resent after meeting a closing connection
/// (`telemetry::closed_connections`).
const RESENT: &str = "sent it again";

impl ReplicatedStack {
    /// `replicas` processes of each service over `databases`, the payment sandbox (one; it
    /// plays a service outside the cluster), `make run`'s settings (`scripts/dev.env`: point
    /// and card orders on), more variables for every service (`common`) and for the order
    /// service (`order_extra`). Returns once every replica is ready behind the balancer.
    pub async fn start(
        databases: &Databases,
        replicas: usize,
        common: &[(&str, &str)],
        order_extra: &[(&str, &str)],
    ) -> ReplicatedStack {
        Self::start_with_extra(databases, replicas, common, &[], order_extra).await
    }

    /// [`ReplicatedStack::start`] with more variables for the point service's replicas too
    /// (`points_extra`).
    pub async fn start_with_extra(
        databases: &Databases,
        replicas: usize,
        common: &[(&str, &str)],
        points_extra: &[(&str, &str)],
        order_extra: &[(&str, &str)],
    ) -> ReplicatedStack {
        let ports: BTreeMap<&str, Vec<u16>> = SERVICES
            .iter()
            .map(|s| (*s, (0..replicas).map(|_| free_port()).collect()))
            .collect();
        let balancer = Balancer::start(
            &SERVICES
                .iter()
                .map(|s| (*s, ports[s].clone()))
                .collect::<Vec<_>>(),
        )
        .await;
        let sandbox_url = format!("http://127.0.0.1:{}", free_port());
        let with = |extra: &[(&str, &str)]| {
            let mut env = owned(common);
            env.extend(owned(extra));
            env
        };
        let (auth_url, points_url, order_url) = (
            balancer.url(AUTH),
            balancer.url(POINTS),
            balancer.url(ORDER),
        );
        let mut order_env = with(&[
            ("POINT_SERVICE_URL", &points_url),
            ("AUTH_SERVICE_URL", &auth_url),
        ]);
        order_env.extend(owned(order_extra));
        let mut points_env = with(&[
            ("AUTH_SERVICE_URL", &auth_url),
            ("PAYMENT_SERVICE_URL", &sandbox_url),
        ]);
        points_env.extend(owned(points_extra));
        let launch = BTreeMap::from([
            (
                AUTH,
                Launch {
                    database: databases.auth.clone(),
                    env: with(&[]),
                },
            ),
            (
                POINTS,
                Launch {
                    database: databases.points.clone(),
                    env: points_env,
                },
            ),
            (
                ORDER,
                Launch {
                    database: databases.catalog.clone(),
                    env: order_env,
                },
            ),
            (
                OPERATOR,
                Launch {
                    database: databases.catalog.clone(),
                    env: with(&[
                        ("POINT_SERVICE_URL", &points_url),
                        ("ORDER_SERVICE_URL", &order_url),
                    ]),
                },
            ),
        ]);
        let mut started = BTreeMap::new();
        for service in SERVICES {
            let how = &launch[service];
            let env = pairs(&how.env);
            let replicas = futures_util::future::join_all(
                ports[service]
                    .iter()
                    .map(|port| Service::start_on(service, *port, &how.database, &env)),
            )
            .await;
            started.insert(service, replicas);
        }
        let webhook = format!("{points_url}/webhooks/v1/payments");
        let sandbox = Service::start_on(
            "payment-sandbox",
            sandbox_url.rsplit(':').next().unwrap().parse().unwrap(),
            "",
            &[("POINT_SERVICE_WEBHOOK_URL", &webhook)],
        )
        .await;
        balancer.wait_all_up().await;
        ReplicatedStack {
            replicas: started,
            launch,
            sandbox,
            balancer,
            http: reqwest::Client::builder()
                .timeout(Duration::from_secs(30))
                .pool_idle_timeout(crate::CLIENT_IDLE)
                .build()
                .unwrap(),
            resent_by_retired: 0,
        }
    }

    /// Calls resent after meeting a closing connection, by every replica that ran, from their
    /// logs.
    pub fn resent_calls(&self) -> usize {
        let live: usize = self.replicas.values().flatten().map(resent).sum();
        live + self.resent_by_retired
    }

    /// `service`'s base URL through the balancer.
    pub fn url(&self, service: &str) -> String {
        self.balancer.url(service)
    }

    /// `service`'s replicas, each reachable directly at its `base`.
    pub fn replicas(&self, service: &str) -> &[Service] {
        &self.replicas[service]
    }

    /// A request: `(status, JSON body or the text as a JSON string)`.
    pub async fn call(
        &self,
        method: &str,
        url: &str,
        token: Option<&str>,
        headers: &[(&str, &str)],
        body: Option<&Value>,
    ) -> (u16, Value) {
        crate::stack::call(&self.http, method, url, token, headers, body).await
    }

    /// One step of a rolling restart, as Kubernetes stops and replaces a pod: the replica
    /// leaves the balancer (the endpoint removal), `pre_stop` passes (the preStop sleep),
    /// SIGTERM, and the process finishes its in-flight requests and exits; a new process
    /// starts on the same port and rejoins once `/readyz` answers. Returns how long the
    /// stopping process took from SIGTERM to exit; panics if it exited with a failure.
    pub async fn restart(&mut self, service: &str, replica: usize, pre_stop: Duration) -> Duration {
        let service = SERVICES.into_iter().find(|s| *s == service).unwrap();
        self.balancer.set_state(service, replica, "drain").await;
        tokio::time::sleep(pre_stop).await;
        let old = &mut self.replicas.get_mut(service).unwrap()[replica];
        let stopping = Instant::now();
        let status = old.stop().await;
        let drained = stopping.elapsed();
        assert!(
            status.success(),
            "{service} r{replica} exited with {status} after SIGTERM; logs:\n{}",
            old.logs().join("\n")
        );
        let retired = resent(old);
        let how = &self.launch[service];
        let new = Service::start_on(service, old.port(), &how.database, &pairs(&how.env)).await;
        *old = new;
        self.resent_by_retired += retired;
        self.balancer.set_state(service, replica, "ready").await;
        self.balancer.wait_for(service, replica, "UP").await;
        drained
    }
}

/// How many calls `service`'s process resent, from its log.
fn resent(service: &Service) -> usize {
    service
        .logs()
        .iter()
        .filter(|line| line.contains(RESENT))
        .count()
}
