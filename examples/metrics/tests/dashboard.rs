//! `examples/metrics/dashboard` as a process, its page rendered by headless
//! Chromium: after a known burst the page's table shows each address with
//! the numbers the burst produced, the same numbers `/metrics` serves.
#![cfg(unix)]

#[path = "support/process.rs"]
mod process;
#[path = "../../../tests/support/example.rs"]
mod support;

use std::path::{Path, PathBuf};
use std::time::Duration;

use process::{Running, free_port, http_get, sample};

const ORDERS: u32 = 17;
const PRICES: u32 = 6;
const QUOTES: u32 = 9;
const FAILURES: u32 = 5;
const UNROUTED: u32 = 3;
const HELD: u32 = 4;

/// Debian's Chromium; its absence fails the test (it is part of the set-up
/// that `scripts/test` and `.ci/run` install).
fn chromium() -> PathBuf {
    let found = ["/usr/bin/chromium", "/usr/bin/chromium-browser"]
        .into_iter()
        .map(PathBuf::from)
        .find(|p| p.is_file());
    found.unwrap_or_else(|| {
        panic!(
            "headless Chromium is needed to render the dashboard and is not installed: \
             apt-get install chromium (scripts/test installs it)"
        )
    })
}

/// A profile folder for one Chromium run, removed afterwards.
struct Profile(PathBuf);

impl Profile {
    fn new() -> Profile {
        let dir = std::env::temp_dir().join(format!(
            "codecbus-dashboard-chromium-{}-{}",
            std::process::id(),
            free_port()
        ));
        std::fs::create_dir_all(&dir).expect("create a Chromium profile folder");
        Profile(dir)
    }
}

impl Drop for Profile {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The page at `url` after its script ran for a while (virtual time), as
/// Chromium serializes the DOM.
fn rendered_dom(chromium: &Path, url: &str) -> String {
    let profile = Profile::new();
    let user_data = format!("--user-data-dir={}", profile.0.display());
    let mut run = Running::start(
        chromium,
        &[
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--no-first-run",
            "--no-default-browser-check",
            &user_data,
            "--virtual-time-budget=5000",
            "--dump-dom",
            url,
        ],
    );
    // The DOM is one long document; it ends with the closing html tag.
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    let mut dom = String::new();
    while std::time::Instant::now() < deadline {
        let line = run.line_starting("", deadline - std::time::Instant::now());
        dom.push_str(&line);
        dom.push('\n');
        if line.contains("</html>") {
            return dom;
        }
    }
    panic!(
        "Chromium did not print the page within 60 s\n{}",
        run.output()
    );
}

/// The text of the cell `field` in the row of `address`.
fn cell(dom: &str, address: &str, field: &str) -> String {
    let start = dom
        .find(&format!("<tr data-address=\"{address}\""))
        .unwrap_or_else(|| panic!("no row for {address} in the page:\n{dom}"));
    let row = &dom[start..];
    let row = &row[..row.find("</tr>").expect("end of row")];
    text_of(row, field).unwrap_or_else(|| panic!("no {field} in the row of {address}: {row}"))
}

/// The text of the first element with `data-field="field"` in `html`.
fn text_of(html: &str, field: &str) -> Option<String> {
    let at = html.find(&format!("data-field=\"{field}\""))?;
    let open = at + html[at..].find('>')? + 1;
    let close = open + html[open..].find('<')?;
    Some(html[open..close].replace(',', ""))
}

fn number(text: &str) -> f64 {
    text.parse()
        .unwrap_or_else(|_| panic!("not a number: {text:?}"))
}

#[test]
fn the_page_shows_the_burst() {
    let chromium = chromium();
    let binary = support::example("dashboard", &[]);
    let listen = format!("127.0.0.1:{}", free_port());
    let counts = [ORDERS, PRICES, QUOTES, FAILURES, UNROUTED, HELD].map(|n| n.to_string());
    let mut example = Running::start(
        &binary,
        &[
            "--listen",
            &listen,
            "--seconds",
            "120",
            "--burst",
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
            "--held",
            &counts[5],
        ],
    );
    let line = example.line_starting("serving the dashboard on ", Duration::from_secs(30));
    let url = format!("http://{listen}/");
    assert_eq!(line, format!("serving the dashboard on {url}"));

    // Everything the page needs comes from the example itself.
    let index = http_get(&url);
    for outside in ["src=\"http", "href=\"http", "src=\"//", "href=\"//"] {
        assert!(
            !index.contains(outside),
            "the page loads from elsewhere: {outside}"
        );
    }
    assert!(http_get(&format!("{url}assets/uPlot.iife.min.js")).contains("uPlot"));
    assert!(http_get(&format!("{url}assets/dashboard.js")).contains("/metrics"));
    let text = http_get(&format!("{url}metrics"));

    let dom = rendered_dom(&chromium, &url);
    assert!(
        dom.contains("id=\"status\" data-state=\"ok\""),
        "the page did not read /metrics:\n{dom}"
    );

    // The numbers of the burst, address by address.
    let expect = |address: &str, field: &str, value: u32| {
        assert_eq!(
            number(&cell(&dom, address, field)),
            f64::from(value),
            "{field} of {address}"
        );
    };
    expect("orders", "sent", ORDERS);
    expect("orders", "delivered", ORDERS);
    expect("orders", "handlers", 1);
    expect("orders", "pending", 0);
    expect("prices", "published", PRICES);
    expect("prices", "delivered", 2 * PRICES);
    expect("prices", "handlers", 2);
    expect("quotes", "sent", QUOTES);
    expect("quotes", "reply_failures", 0);
    expect("checks", "reply_failures", FAILURES);
    expect("nowhere", "reply_failures", UNROUTED);
    expect("audit", "pending", HELD);
    // Round trips of the answered requests; none for the other addresses.
    for quantile in ["p50", "p99"] {
        let shown = cell(&dom, "quotes", quantile);
        assert!(
            shown.ends_with(" µs") || shown.ends_with(" ms") || shown.ends_with(" s"),
            "{quantile} of quotes: {shown:?}"
        );
        assert_eq!(cell(&dom, "orders", quantile), "–");
    }
    // Nothing is sent after the burst: the rate is zero once two scrapes
    // have been compared.
    assert_eq!(number(&cell(&dom, "orders", "rate")), 0.0);

    // The totals, and the same numbers in the text the page read.
    let totals = &dom[dom.find("id=\"totals\"").expect("totals")..];
    let total = |field: &str| number(&text_of(totals, field).expect(field));
    assert_eq!(total("reply_failures"), f64::from(FAILURES + UNROUTED));
    assert_eq!(total("published"), f64::from(PRICES));
    for (address, field, series) in [
        ("orders", "sent", "sent_total"),
        ("prices", "delivered", "delivered_total"),
        ("audit", "pending", "pending"),
    ] {
        let name = format!("codecbus_eventbus_{series}");
        assert_eq!(
            sample(&text, &name, &[("address", address)]),
            Some(number(&cell(&dom, address, field))),
            "{series} of {address} in /metrics"
        );
    }
    drop(example);
}

#[test]
fn bad_flags_and_a_taken_port_are_errors() {
    let binary = support::example("dashboard", &[]);
    let run = |args: &[&str]| process::run_to_end(&binary, args);

    let (code, stderr) = run(&["--orders", "3"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("the burst counts need --burst"), "{stderr}");
    let (code, stderr) = run(&["--rate", "0"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("--rate must be at least 1"), "{stderr}");

    let taken = std::net::TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
    let listen = taken.local_addr().expect("local address").to_string();
    let (code, stderr) = run(&["--listen", &listen, "--burst", "--seconds", "0"]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains(&format!("cannot listen on {listen}")),
        "{stderr}"
    );
}
