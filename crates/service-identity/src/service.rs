//! Our services by name, and the one list of who may call each internal route
//! (docs/design.md, "Service identity"). The Kubernetes render is checked against this list
//! (`service-identity callers`, read by `scripts/check-deploy.sh`).

use std::fmt;

/// One of our services: a caller or a callee of an internal route.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Service {
    Auth,
    Point,
    Order,
    Operator,
}

impl Service {
    pub const ALL: [Service; 4] = [
        Service::Auth,
        Service::Point,
        Service::Order,
        Service::Operator,
    ];

    /// The name a credential gives it (`iss`, `aud`), as its binary and Deployment are named.
    pub const fn name(self) -> &'static str {
        match self {
            Service::Auth => "auth-service",
            Service::Point => "point-service",
            Service::Order => "order-service",
            Service::Operator => "operator-service",
        }
    }

    pub fn from_name(name: &str) -> Option<Service> {
        Service::ALL.into_iter().find(|s| s.name() == name)
    }
}

impl fmt::Display for Service {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Each internal route (or family of routes) one of our services serves to the others.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InternalRoute {
    /// `GET /internal/v1/clients/{id}` (auth service): a client's profile.
    ClientProfile,
    /// `POST /internal/v1/credits` (point service): a gift card's points.
    Credits,
    /// `/internal/v1/back-office/...` of the point service.
    PointBackOffice,
    /// `/internal/v1/back-office/...` of the order service.
    OrderBackOffice,
}

impl InternalRoute {
    pub const ALL: [InternalRoute; 4] = [
        InternalRoute::ClientProfile,
        InternalRoute::Credits,
        InternalRoute::PointBackOffice,
        InternalRoute::OrderBackOffice,
    ];

    /// The service that serves it.
    pub const fn callee(self) -> Service {
        match self {
            InternalRoute::ClientProfile => Service::Auth,
            InternalRoute::Credits | InternalRoute::PointBackOffice => Service::Point,
            InternalRoute::OrderBackOffice => Service::Order,
        }
    }

    /// The services it admits; any other caller is refused (403) before anything is read.
    pub const fn callers(self) -> &'static [Service] {
        match self {
            InternalRoute::ClientProfile => &[Service::Point, Service::Order],
            InternalRoute::Credits => &[Service::Order],
            InternalRoute::PointBackOffice | InternalRoute::OrderBackOffice => &[Service::Operator],
        }
    }

    /// Its path (a family's prefix), for logs and the callers listing.
    pub const fn path(self) -> &'static str {
        match self {
            InternalRoute::ClientProfile => "/internal/v1/clients/{id}",
            InternalRoute::Credits => "/internal/v1/credits",
            InternalRoute::PointBackOffice | InternalRoute::OrderBackOffice => {
                "/internal/v1/back-office/*"
            }
        }
    }

    /// Every service that calls `callee`: the keys its trust list needs, and no others.
    pub fn callers_of(callee: Service) -> Vec<Service> {
        let mut callers: Vec<Service> = InternalRoute::ALL
            .into_iter()
            .filter(|route| route.callee() == callee)
            .flat_map(|route| route.callers().iter().copied())
            .collect();
        callers.sort();
        callers.dedup();
        callers
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_read_back_and_no_service_calls_itself() {
        for service in Service::ALL {
            assert_eq!(Service::from_name(service.name()), Some(service));
        }
        for route in InternalRoute::ALL {
            assert!(!route.callers().contains(&route.callee()), "{route:?}");
        }
        assert_eq!(
            InternalRoute::callers_of(Service::Point),
            [Service::Order, Service::Operator]
        );
        assert!(InternalRoute::callers_of(Service::Operator).is_empty());
    }
}
