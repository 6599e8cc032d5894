//! `GET /docs` on every service answers the documentation page or redirects to `/docs/`,
//! which answers it (docs/design.md, "Answers the spec leaves open").

use crate::operations::start_all;

#[tokio::test]
async fn docs_without_the_slash_leads_to_the_page_on_every_service() {
    let system = start_all().await;
    let no_redirects = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    for service in &system.services {
        let name = service.name;
        let response = no_redirects
            .get(format!("{}/docs", service.base))
            .send()
            .await
            .unwrap();
        let status = response.status();
        let page = if status.is_redirection() {
            let location = response.headers()["location"].to_str().unwrap().to_owned();
            assert_eq!(location, "/docs/", "{name}");
            no_redirects
                .get(format!("{}{location}", service.base))
                .send()
                .await
                .unwrap()
        } else {
            response
        };
        assert_eq!(page.status(), 200, "{name}: GET /docs answered {status}");
        assert!(
            page.headers()["content-type"]
                .to_str()
                .unwrap()
                .starts_with("text/html"),
            "{name}"
        );
        assert!(page.text().await.unwrap().contains("swagger-ui"), "{name}");
    }
}
