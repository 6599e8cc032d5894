//! One trace across the system: a request that starts at the order service shows the relay,
//! the point service, the point service's caller lookup at the auth service, and the SQL of
//! both, as one connected tree of spans. The services export over OTLP/HTTP to a collector
//! in this test, which decodes what it receives as a real collector would.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use actix_web::{App, HttpResponse, web};
use e2e::demo::SARA;
use e2e::{Service, demo_database};
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::any_value::Value as Any;
use opentelemetry_proto::tonic::trace::v1::span::SpanKind;
use prost::Message;

/// A span as the collector saw it.
#[derive(Debug, Clone)]
struct Seen {
    service: String,
    name: String,
    kind: i32,
    trace_id: Vec<u8>,
    span_id: Vec<u8>,
    parent: Vec<u8>,
    attributes: HashMap<String, String>,
}

fn text(value: Option<&opentelemetry_proto::tonic::common::v1::AnyValue>) -> String {
    match value.and_then(|v| v.value.as_ref()) {
        Some(Any::StringValue(s)) => s.clone(),
        Some(Any::IntValue(i)) => i.to_string(),
        Some(other) => format!("{other:?}"),
        None => String::new(),
    }
}

fn collector() -> (String, Arc<Mutex<Vec<Seen>>>) {
    let seen: Arc<Mutex<Vec<Seen>>> = Arc::default();
    let sink = seen.clone();
    let base = server::spawn_local(move || {
        let sink = sink.clone();
        App::new().route(
            "/v1/traces",
            web::post().to(move |body: web::Bytes| {
                let sink = sink.clone();
                async move {
                    let request = ExportTraceServiceRequest::decode(body).unwrap();
                    let mut sink = sink.lock().unwrap();
                    for resource in request.resource_spans {
                        let service = resource
                            .resource
                            .iter()
                            .flat_map(|r| &r.attributes)
                            .find(|a| a.key == "service.name")
                            .map(|a| text(a.value.as_ref()))
                            .unwrap_or_default();
                        for span in resource.scope_spans.into_iter().flat_map(|s| s.spans) {
                            sink.push(Seen {
                                service: service.clone(),
                                name: span.name,
                                kind: span.kind,
                                trace_id: span.trace_id,
                                span_id: span.span_id,
                                parent: span.parent_span_id,
                                attributes: span
                                    .attributes
                                    .iter()
                                    .map(|a| (a.key.clone(), text(a.value.as_ref())))
                                    .collect(),
                            });
                        }
                    }
                    HttpResponse::Ok().finish()
                }
            }),
        )
    })
    .unwrap();
    (base, seen)
}

#[tokio::test]
async fn a_relayed_request_is_one_trace_from_the_order_service_to_the_sql() {
    let (endpoint, seen) = collector();
    let otel = [("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint.as_str())];
    let auth_db = demo_database(&["auth-service"], "auth").await;
    let points_db = demo_database(&["point-service"], "points").await;
    let catalog_db = demo_database(&["order-service"], "catalog").await;
    let auth = Service::start("auth-service", auth_db.url(), &otel).await;
    let points = Service::start(
        "point-service",
        points_db.url(),
        &[otel[0], ("AUTH_SERVICE_URL", &auth.base)],
    )
    .await;
    let order = Service::start(
        "order-service",
        catalog_db.url(),
        &[
            otel[0],
            ("POINT_SERVICE_URL", &points.base),
            ("AUTH_SERVICE_URL", &auth.base),
        ],
    )
    .await;

    let response = order
        .client()
        .get(format!("{}/api/v2/client/points", order.base))
        .bearer_auth(SARA)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);

    // A graceful stop flushes each service's span batch.
    for service in [order, points, auth] {
        assert!(service.terminate().await.success());
    }
    let spans = seen.lock().unwrap().clone();

    let root = spans
        .iter()
        .find(|s| {
            s.service == "order-service"
                && s.kind == SpanKind::Server as i32
                && s.parent.is_empty()
                && s.attributes
                    .get("http.route")
                    .is_some_and(|r| r == "/api/v2/client/points")
        })
        .unwrap_or_else(|| panic!("no root span at the order service in {spans:#?}"));
    let trace: Vec<&Seen> = spans
        .iter()
        .filter(|s| s.trace_id == root.trace_id)
        .collect();
    let describe = || {
        trace
            .iter()
            .map(|s| {
                format!(
                    "{} {} kind={} {:?}",
                    s.service,
                    s.name,
                    s.kind,
                    s.attributes.get("db.statement")
                )
            })
            .collect::<Vec<_>>()
            .join("\n")
    };

    // Connected: every span but the root has its parent in the same trace.
    let ids: HashSet<&Vec<u8>> = trace.iter().map(|s| &s.span_id).collect();
    for span in &trace {
        assert!(
            span.parent.is_empty() && span.span_id == root.span_id || ids.contains(&span.parent),
            "{} {} has a parent outside the trace:\n{}",
            span.service,
            span.name,
            describe()
        );
    }
    let by_id: HashMap<&Vec<u8>, &&Seen> = trace.iter().map(|s| (&s.span_id, s)).collect();
    let parent_of = |span: &Seen| by_id.get(&span.parent).map(|p| p.service.clone());

    // The relay: the point service's server span is a child of the order service's call.
    let point_server = trace
        .iter()
        .find(|s| s.service == "point-service" && s.kind == SpanKind::Server as i32)
        .unwrap_or_else(|| panic!("no point-service server span:\n{}", describe()));
    assert_eq!(
        parent_of(point_server).as_deref(),
        Some("order-service"),
        "{}",
        describe()
    );
    // The caller lookup: an auth-service server span, child of the point service's call.
    let auth_server = trace
        .iter()
        .find(|s| s.service == "auth-service" && s.kind == SpanKind::Server as i32)
        .unwrap_or_else(|| panic!("no auth-service server span:\n{}", describe()));
    assert_eq!(
        parent_of(auth_server).as_deref(),
        Some("point-service"),
        "{}",
        describe()
    );
    // SQL in both, with statements and no bind values.
    for service in ["point-service", "auth-service"] {
        let sql: Vec<&&Seen> = trace
            .iter()
            .filter(|s| {
                s.service == service
                    && s.attributes
                        .get("db.system")
                        .is_some_and(|v| v == "postgresql")
            })
            .collect();
        assert!(!sql.is_empty(), "no SQL span at {service}:\n{}", describe());
        for span in sql {
            let statement = &span.attributes["db.statement"];
            assert!(
                !statement.is_empty() && !statement.contains("binds"),
                "{statement}"
            );
            assert_eq!(span.kind, SpanKind::Client as i32);
        }
    }
}
