//! `examples/metrics/prometheus.rs` as a process: its known traffic, scraped over
//! HTTP as Prometheus text, shows in the series with the expected values.
#![cfg(unix)]

#[path = "support/process.rs"]
mod process;
#[path = "../../../tests/support/example.rs"]
mod support;

use std::time::Duration;

use process::{Running, free_port, http_get, sample};

const ORDERS: u32 = 7;
const PRICES: u32 = 3;
const QUOTES: u32 = 6;
const FAILURES: u32 = 4;
const UNROUTED: u32 = 2;

#[test]
fn the_example_serves_its_traffic_as_prometheus_text() {
    let binary = support::example("prometheus", &[]);
    let port = free_port();
    let listen = format!("127.0.0.1:{port}");
    let counts = [ORDERS, PRICES, QUOTES, FAILURES, UNROUTED].map(|n| n.to_string());
    let mut example = Running::start(
        &binary,
        &[
            "--listen",
            &listen,
            "--orders",
            &counts[0],
            "--prices",
            &counts[1],
            "--quotes",
            &counts[2],
            "--failures",
            &counts[3],
            "--unrouted",
            &counts[4],
            "--seconds",
            "60",
        ],
    );
    let line = example.line_starting("serving metrics on ", Duration::from_secs(30));
    let url = format!("http://{listen}/metrics");
    assert_eq!(line, format!("serving metrics on {url}"));

    let text = http_get(&url);
    let value = |name: &str, labels: &[(&str, &str)]| {
        let name = format!("codecbus_eventbus_{name}");
        sample(&text, &name, labels)
            .unwrap_or_else(|| panic!("no sample {name}{labels:?} in\n{text}"))
    };
    let address = |a| [("address", a)];

    assert!(
        text.contains("# TYPE codecbus_eventbus_sent_total counter"),
        "{text}"
    );
    assert!(
        text.contains("# TYPE codecbus_eventbus_handlers gauge"),
        "{text}"
    );

    // Sends to one consumer.
    assert_eq!(value("sent_total", &address("orders")), f64::from(ORDERS));
    assert_eq!(
        value("delivered_total", &address("orders")),
        f64::from(ORDERS)
    );
    assert_eq!(value("handlers", &address("orders")), 1.0);
    assert_eq!(value("pending", &address("orders")), 0.0);
    assert_eq!(
        value("processing_time_seconds_count", &address("orders")),
        f64::from(ORDERS)
    );

    // Publishes reach both consumers.
    assert_eq!(
        value("published_total", &address("prices")),
        f64::from(PRICES)
    );
    assert_eq!(
        value("delivered_total", &address("prices")),
        f64::from(2 * PRICES)
    );
    assert_eq!(value("handlers", &address("prices")), 2.0);

    // Answered requests: their round trips, with quantiles.
    assert_eq!(value("sent_total", &address("quotes")), f64::from(QUOTES));
    assert_eq!(
        value("request_time_seconds_count", &address("quotes")),
        f64::from(QUOTES)
    );
    for quantile in ["0.5", "0.99"] {
        let q = value(
            "request_time_seconds",
            &[("address", "quotes"), ("quantile", quantile)],
        );
        assert!(q > 0.0 && q < 5.0, "quantile {quantile} of quotes: {q}");
    }

    assert_eq!(
        value(
            "received_total",
            &[("address", "orders"), ("side", "local")]
        ),
        f64::from(ORDERS)
    );
    assert_eq!(
        value("processing_time_seconds_count", &address("quotes")),
        f64::from(QUOTES)
    );

    // Requests the handler refused, and requests nobody could take.
    assert_eq!(
        value(
            "reply_failures_total",
            &[("address", "checks"), ("failure", "RECIPIENT_FAILURE")]
        ),
        f64::from(FAILURES)
    );
    assert_eq!(
        value(
            "reply_failures_total",
            &[("address", "nowhere"), ("failure", "NO_HANDLERS")]
        ),
        f64::from(UNROUTED)
    );
    assert_eq!(
        value(
            "refused_total",
            &[("address", "nowhere"), ("reason", "NO_HANDLERS")]
        ),
        f64::from(UNROUTED)
    );
    assert_eq!(
        value("processing_time_seconds_count", &address("checks")),
        f64::from(FAILURES)
    );

    // A scrape changes nothing: the counters stay.
    let again = http_get(&url);
    assert_eq!(
        sample(&again, "codecbus_eventbus_sent_total", &address("orders")),
        Some(f64::from(ORDERS))
    );
    drop(example);
}

#[test]
fn bad_flags_and_a_taken_port_are_errors() {
    let binary = support::example("prometheus", &[]);
    let run = |args: &[&str]| process::run_to_end(&binary, args);

    let (code, stderr) = run(&["--orders", "many"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("--orders: cannot read \"many\""),
        "{stderr}"
    );
    let (code, stderr) = run(&["--listen"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("--listen needs a value"), "{stderr}");

    // A port something else listens on: an error naming it, no panic.
    let taken = std::net::TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
    let listen = taken.local_addr().expect("local address").to_string();
    let (code, stderr) = run(&["--listen", &listen, "--seconds", "0"]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains(&format!("cannot serve metrics on {listen}")),
        "{stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
}
