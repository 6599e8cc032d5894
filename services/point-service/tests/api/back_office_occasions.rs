//! The back office's occasions (`/internal/v1/back-office/occasions`): each refusal, and that
//! the app's occasion list and its orders follow every change; the audit row of each.

use serde_json::{Value, json};

use crate::back_office::{call, operator_refusal};
use crate::helpers::*;

async fn occasions_of_the_app(app: &TestApp, query: &str) -> Vec<Value> {
    let (status, listed) = app.occasions(query, SARA).await;
    assert_eq!(status, 200);
    listed.as_array().unwrap().clone()
}

#[tokio::test]
async fn each_refusal_answers_its_message() {
    let app = spawn_app().await;
    let cases = [
        (json!([]), "NOT_AN_OBJECT", "the body must be a JSON object"),
        (
            json!({"occasionEn": "x", "en": "x"}),
            "UNKNOWN_FIELD",
            "en is not a field of an occasion",
        ),
        (
            json!({"occasionEn": "   "}),
            "INVALID_OCCASION_EN",
            "occasionEn must be text of 1 to 100 characters",
        ),
        (
            json!({"occasionEn": "x", "occasionAr": ""}),
            "INVALID_OCCASION_AR",
            "occasionAr must be text of 1 to 100 characters or null",
        ),
        (
            json!({"occasionEn": "x", "isCustom": 1}),
            "INVALID_IS_CUSTOM",
            "isCustom must be true or false",
        ),
        (
            json!({"occasionEn": "x", "active": "no"}),
            "INVALID_ACTIVE",
            "active must be true or false for an occasion",
        ),
        (
            json!({"occasionAr": "عيد"}),
            "FIELD_REQUIRED",
            "occasionEn is required for an occasion",
        ),
    ];
    for (body, code, message) in cases {
        assert_eq!(
            call(reqwest::Method::POST, "/occasions")
                .body(body.clone())
                .send(&app)
                .await,
            (400, operator_refusal(400, code, message)),
            "{body}"
        );
    }
    assert_eq!(
        call(reqwest::Method::PATCH, &format!("/occasions/{OCCASION}"))
            .body(json!({}))
            .send(&app)
            .await,
        (
            400,
            operator_refusal(
                400,
                "NOTHING_TO_CHANGE",
                "the body names no field of an occasion to change"
            )
        )
    );
    let unknown = "bbbbbbbbbbbbbbbbbbbbbbbb";
    for method in [reqwest::Method::PATCH, reqwest::Method::DELETE] {
        assert_eq!(
            call(method, &format!("/occasions/{unknown}"))
                .body(json!({"active": true}))
                .send(&app)
                .await,
            (
                404,
                operator_refusal(
                    404,
                    "OCCASION_NOT_FOUND",
                    &format!("occasion {unknown} not found")
                )
            )
        );
    }
    assert_eq!(
        app.count("SELECT count(*) AS n FROM back_office_audit")
            .await,
        0
    );
}

#[tokio::test]
async fn the_app_and_its_orders_follow_each_change_of_an_occasion() {
    let app = spawn_app().await;
    let (status, created) = call(reqwest::Method::POST, "/occasions")
        .body(json!({"occasionEn": " Eid ", "occasionAr": "عيد", "isCustom": true}))
        .send(&app)
        .await;
    assert_eq!(status, 201, "{created}");
    let id = created["id"].as_str().unwrap().to_owned();
    assert_eq!(
        created
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect::<Vec<_>>(),
        [
            "id",
            "occasionEn",
            "occasionAr",
            "isCustom",
            "active",
            "createdAt",
            "updatedAt"
        ]
    );
    assert_eq!(
        (
            &created["occasionEn"],
            &created["isCustom"],
            &created["active"]
        ),
        (&json!("Eid"), &json!(true), &json!(true))
    );
    let listed = occasions_of_the_app(&app, "language=ar").await;
    assert!(
        listed
            .contains(&json!({"id": id, "occasion": "عيد", "occasion_en": "Eid", "is_custom": 1})),
        "{listed:?}"
    );
    let gift = json!({"point_offer_id": OFFER, "to_client_id": OMAR, "payment_type": "point",
                      "point_occasion_id": id});
    let (status, order) = app.order(SARA, &gift).await;
    assert_eq!(
        (status, &order["order_type"]),
        (200, &json!("gift")),
        "{order}"
    );

    // Relabelled: the app shows the new label; no Arabic: the English one.
    let path = format!("/occasions/{id}");
    let (status, changed) = call(reqwest::Method::PATCH, &path)
        .body(json!({"occasionEn": "Eid al-Fitr", "occasionAr": null}))
        .send(&app)
        .await;
    assert_eq!(status, 200, "{changed}");
    let listed = occasions_of_the_app(&app, "language=ar").await;
    assert!(
        listed
            .iter()
            .any(|o| o["id"] == json!(id) && o["occasion"] == json!("Eid al-Fitr"))
    );

    // Withdrawn: gone from the app, refused by a new order; offered again once active.
    let (status, withdrawn) = call(reqwest::Method::DELETE, &path).send(&app).await;
    assert_eq!((status, &withdrawn["active"]), (200, &json!(false)));
    // Withdrawing again is the one withdrawal: answered as it is, nothing recorded (the
    // trail below holds one withdrawal).
    assert_eq!(
        call(reqwest::Method::DELETE, &path).send(&app).await,
        (200, withdrawn.clone())
    );
    assert!(
        !occasions_of_the_app(&app, "")
            .await
            .iter()
            .any(|o| o["id"] == json!(id))
    );
    let (status, refused) = app.order(SARA, &gift).await;
    assert_eq!(
        (status, &refused["error"]["message"]),
        (
            400,
            &json!(format!("point occasion {id} not found or inactive"))
        )
    );
    let (status, _) = call(reqwest::Method::PATCH, &path)
        .body(json!({"active": true}))
        .send(&app)
        .await;
    assert_eq!(status, 200);
    assert!(
        occasions_of_the_app(&app, "")
            .await
            .iter()
            .any(|o| o["id"] == json!(id))
    );

    let (_, trail) = call(reqwest::Method::GET, "/audit").send(&app).await;
    let actions: Vec<&str> = trail["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["action"].as_str().unwrap())
        .collect();
    assert_eq!(
        actions,
        [
            "occasion.update",
            "occasion.withdraw",
            "occasion.update",
            "occasion.create"
        ]
    );
    assert_eq!(trail["data"][2]["before"]["occasionAr"], json!("عيد"));
    assert_eq!(trail["data"][2]["after"]["occasionAr"], Value::Null);
    let (_, all) = call(reqwest::Method::GET, "/occasions").send(&app).await;
    assert!(
        all["data"]
            .as_array()
            .unwrap()
            .iter()
            .any(|o| o == &trail["data"][0]["after"])
    );
}
