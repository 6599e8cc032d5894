//! A real Prometheus (Debian's `prometheus` package; scripts/check-monitoring.sh installs it
//! in `make test`) started by a test: scraping the running services every second under their
//! own job names, evaluating rule files every second, on a free port with a storage of its own.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::process::{Child, Command};

use crate::free_port;

pub struct Prometheus {
    pub base: String,
    child: Child,
    dir: PathBuf,
    http: reqwest::Client,
}

/// The `namespace` label every target gets, as the PodMonitor's scrape gives it in a cluster.
pub const NAMESPACE: &str = "e2e";

impl Prometheus {
    /// Scrapes each `(job, base URL)` and evaluates `rule_files`; returns once it is ready.
    pub async fn start(targets: &[(&str, &str)], rule_files: &[&Path]) -> Prometheus {
        let binary = crate::tools::debian_binary("prometheus", "prometheus");
        let dir = std::env::temp_dir().join(format!("e2e-prometheus-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir_all(&dir).unwrap();
        let scrape_configs: Vec<Value> = targets
            .iter()
            .map(|(job, base)| {
                let address = base.trim_start_matches("http://");
                json!({"job_name": job, "static_configs": [
                    {"targets": [address], "labels": {"namespace": NAMESPACE}}]})
            })
            .collect();
        // JSON is YAML: Prometheus reads it as its configuration file.
        let config = json!({
            "global": {"scrape_interval": "1s", "evaluation_interval": "1s", "scrape_timeout": "1s"},
            "rule_files": rule_files,
            "scrape_configs": scrape_configs,
        });
        let config_path = dir.join("prometheus.json");
        std::fs::write(&config_path, config.to_string()).unwrap();
        let port = free_port();
        let child = Command::new(binary)
            .arg(format!("--config.file={}", config_path.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.join("data").display()
            ))
            .arg(format!("--web.listen-address=127.0.0.1:{port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let prometheus = Prometheus {
            base: format!("http://127.0.0.1:{port}"),
            child,
            dir,
            http: reqwest::Client::builder()
                .timeout(Duration::from_secs(10))
                .build()
                .unwrap(),
        };
        prometheus
            .wait_for(
                "Prometheus to be ready",
                Duration::from_secs(60),
                async || {
                    let ready = prometheus
                        .http
                        .get(format!("{}/-/ready", prometheus.base))
                        .send()
                        .await;
                    ready.is_ok_and(|r| r.status().is_success()).then_some(())
                },
            )
            .await;
        prometheus
    }

    /// `GET /api/v1/<path>`'s `data`; panics on an error answer.
    pub async fn api(&self, path: &str, query: &[(&str, &str)]) -> Value {
        let body = self.answer(path, query).await;
        assert_eq!(
            body["status"], "success",
            "/api/v1/{path} {query:?}: {body}"
        );
        body["data"].clone()
    }

    /// `GET /api/v1/<path>`'s whole answer, success or error.
    pub async fn answer(&self, path: &str, query: &[(&str, &str)]) -> Value {
        let url =
            url::Url::parse_with_params(&format!("{}/api/v1/{path}", self.base), query).unwrap();
        self.http
            .get(url)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap()
    }

    /// Why Prometheus refuses `expr` (its own parser, by evaluating it now), if it does.
    pub async fn refuses(&self, expr: &str) -> Option<String> {
        let body = self.answer("query", &[("query", expr)]).await;
        (body["status"] != "success").then(|| body["error"].to_string())
    }

    /// The alerts Prometheus holds now (pending or firing).
    pub async fn alerts(&self) -> Vec<Value> {
        self.api("alerts", &[]).await["alerts"]
            .as_array()
            .cloned()
            .unwrap_or_default()
    }

    /// The query of every rule it loaded, with the rule's name.
    pub async fn rule_queries(&self) -> Vec<(String, String)> {
        let data = self.api("rules", &[]).await;
        data["groups"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|group| group["rules"].as_array().unwrap().iter())
            .map(|rule| {
                (
                    rule["name"].as_str().unwrap().to_owned(),
                    rule["query"].as_str().unwrap().to_owned(),
                )
            })
            .collect()
    }

    /// Polls `probe` (every 200 ms) until it gives a value; panics after `deadline`.
    pub async fn wait_for<T>(
        &self,
        what: &str,
        deadline: Duration,
        mut probe: impl AsyncFnMut() -> Option<T>,
    ) -> T {
        let until = tokio::time::Instant::now() + deadline;
        loop {
            if let Some(value) = probe().await {
                return value;
            }
            assert!(
                tokio::time::Instant::now() < until,
                "waited {deadline:?} for {what}"
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.child.start_kill();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
