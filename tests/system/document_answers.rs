//! Every service's OpenAPI document still lists every answer it listed before the refusals
//! became types (issue 29): route by route, each status of the copy in
//! `tests/system/document_answers/<service>.json` (taken from the documents served on
//! 2026-11-27, before the change) is still documented, and its description still names each
//! message it named (every backquoted text of three words or more). A document may say more;
//! it may never say less. (Five 200s sketched their body's shape in backquotes; since issue 30
//! their exact schemas say it, and the sketches left the copy: the client lookup's and the two
//! pay routes', at both the order and the point service.) One message changed on purpose
//! since: the credits route's 401, `invalid service credential` where it was `invalid internal
//! token`, when each service got its own credential (issue 40).

use std::collections::BTreeMap;

use serde_json::Value;

use crate::operations::start_all;

/// Route (`get /path`) → status → the messages its description named.
type Answers = BTreeMap<String, BTreeMap<String, Vec<String>>>;

fn before(service: &str) -> Answers {
    let path = format!(
        "{}/system/document_answers/{service}.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_json::from_str(&text).unwrap()
}

/// What the document says of one route's answers: status → description.
fn described(doc: &Value, route: &str) -> Option<BTreeMap<String, String>> {
    let (method, path) = route.split_once(' ')?;
    let responses = doc["paths"][path][method]["responses"].as_object()?;
    Some(
        responses
            .iter()
            .map(|(status, answer)| {
                let text = answer["description"].as_str().unwrap_or_default();
                (status.clone(), text.to_owned())
            })
            .collect(),
    )
}

/// The answers of `before` that `doc` no longer documents, one line each.
fn lost(before: &Answers, doc: &Value) -> Vec<String> {
    let mut lost = Vec::new();
    for (route, answers) in before {
        let Some(now) = described(doc, route) else {
            lost.push(format!("{route}: no longer documented"));
            continue;
        };
        for (status, messages) in answers {
            let Some(description) = now.get(status) else {
                lost.push(format!("{route} {status}: no longer documented"));
                continue;
            };
            for message in messages {
                if !description.contains(&format!("`{message}`")) {
                    lost.push(format!("{route} {status}: no longer names `{message}`"));
                }
            }
        }
    }
    lost
}

#[tokio::test]
async fn every_document_lists_the_answers_it_listed_before_or_more() {
    let system = start_all().await;
    for service in &system.services {
        let doc: Value = service.get("/openapi.json").await.json().await.unwrap();
        let lost = lost(&before(service.name), &doc);
        assert!(lost.is_empty(), "{}:\n{}", service.name, lost.join("\n"));
    }
}

#[test]
fn an_answer_dropped_from_a_document_is_found() {
    let before: Answers = serde_json::from_value(serde_json::json!({
        "get /a": {"200": [], "404": ["point order not found"]},
        "get /b": {"200": []}
    }))
    .unwrap();
    let doc = serde_json::json!({"paths": {"/a": {"get": {"responses": {
        "200": {"description": "ok"},
        "404": {"description": "`point offer <id> not found or inactive`"}
    }}}}});
    assert_eq!(
        lost(&before, &doc),
        [
            "get /a 404: no longer names `point order not found`",
            "get /b: no longer documented"
        ]
    );
}
